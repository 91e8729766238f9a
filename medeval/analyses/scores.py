"""The score table of a benchmark: each data set × method, every score averaged over its
splits. Defined for any number of data sets, one included (the RQ analyses need several)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from medeval.scores import ALL_SCORES

__all__ = ["score_table"]

#: The scores in table order: the paper's nine, then the label-free estimates.


def _value(x: Any) -> float:
    return np.nan if x is None else float(x)


def score_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per (data set, method): ``n_splits`` and the mean of each score over splits.

    A score that is undefined (``None``) in a split is left out of that split's mean; a score
    undefined in every split is NaN.
    """
    rows = [
        {
            "dataset": r["dataset"],
            "method": r["method"],
            **{
                k: np.nan if r["scores"].get(k) is None else float(r["scores"][k])
                for k in ALL_SCORES
            },
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
