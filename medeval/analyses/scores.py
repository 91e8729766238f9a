"""The score table of a benchmark: each data set × method, every score averaged over its
splits. Defined for any number of data sets, one included (the RQ analyses need several)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from medeval.analyses.common import number
from medeval.scores import ALL_SCORES

__all__ = ["score_table"]


def score_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per (data set, method): ``n_splits`` and the mean of each score over splits.

    A score that is undefined (``None``) in a split is left out of that split's mean; a score
    undefined in every split is NaN.
    """
    rows = [
        {
            "dataset": r["dataset"],
            "method": r["method"],
            **{k: number(r["scores"].get(k)) for k in ALL_SCORES},
        }
        for r in records
    ]
    columns = ["dataset", "method", "n_splits", *ALL_SCORES]
    if not rows:
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame(rows)
    grouped = frame.groupby(["dataset", "method"], sort=True)
    out = grouped[list(ALL_SCORES)].mean()
    out.insert(0, "n_splits", grouped.size())
    return out.reset_index()[columns]
