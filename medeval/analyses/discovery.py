"""Discovery quality per data set and class, averaged over the splits: true and found subconcept
counts (``k_true``, ``k_found``), adjusted Rand index and normalised mutual information of the
training fold's clusters against the true subconcepts."""

from __future__ import annotations

from typing import Any

import pandas as pd

from medeval.analyses.common import collection_markdown, markdown_table

#: The discovery quality measures of a record, averaged over the splits.
QUALITY = ["k_true", "k_found", "ari", "nmi"]
COLUMNS = ["collection", "dataset", "method", "class", *QUALITY, "n_splits"]


def discovery_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Mean over splits per data set × method × class (0 majority, 1 minority).

    Returns:
        columns :data:`COLUMNS`; empty when no record has discovered subconcepts.
    """
    rows = [
        (
            r.get("collection", r.get("source", "")),
            r["dataset"],
            r["method"],
            q["class"],
            *(q[k] for k in QUALITY),
        )
        for r in records
        for q in (r.get("discovery") or {}).get("quality", [])
    ]
    frame = pd.DataFrame(rows, columns=COLUMNS[:-1])
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS)
    keys = ["collection", "dataset", "method", "class"]
    means = {k: (k, "mean") for k in QUALITY}
    out = frame.groupby(keys, sort=True).agg(**means, n_splits=("ari", "count"))
    return out.reset_index()[COLUMNS]


def discovery_markdown(table: pd.DataFrame) -> str:
    """Per collection: the minority class's quality per data set, then the mean of each class."""
    intro = (
        "Mean over splits; class 1 = minority (its subconcepts set the utilities), "
        "class 0 = majority. ARI / NMI of the training clusters vs the true subconcepts."
    )
    out = []
    for _, part in table.groupby("collection", sort=True):
        out += collection_markdown(part, "Discovery quality", intro)
        mean = part.groupby(["method", "class"])[QUALITY].mean()
        out.append("Mean over data sets:\n")
        out.append(markdown_table(mean.reset_index()) + "\n")
    return "\n".join(out)
