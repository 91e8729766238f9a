"""RQ2: the weights' error per data set against the subconcept model's quality, on toy records
whose answer is known."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from medeval.analyses.weight_error import weight_error_by_dataset, weight_error_table

from .toy_records import record


def test_the_weight_error_pools_sums_over_splits_before_averaging():
    # subconcept B: split 0 t̄ = 16/2 = 8, p̄ = 4/2 = 2; split 1 n = 6: t = 48, p = 36.
    # pooled: t̄ = 64/8 = 8, p̄ = 40/8 = 5 → |8 − 5| = 3 (a mean of split means would give 4.5)
    recs = [
        record("a", 0, 1, 1, 1, sc={"M": (10, 10.0, 10.0), "B": (2, 16.0, 4.0)}, perf=0.6),
        record("a", 1, 1, 1, 1, sc={"M": (10, 10.0, 10.0), "B": (6, 48.0, 36.0)}, perf=0.8),
        # another method of the same split must not be counted twice
        record("a", 1, 1, 1, 1, method="ros", sc={"M": (10, 10.0, 10.0), "B": (6, 48.0, 36.0)}),
    ]
    per_ds = weight_error_by_dataset(recs)
    assert per_ds.mu.item() == pytest.approx((0 + 3) / 2)
    assert per_ds.n_splits.item() == 2 and per_ds.n_subconcepts.item() == 2
    assert per_ds.balanced_accuracy.item() == pytest.approx(0.7)


def test_the_weight_error_drops_outliers_beyond_four_sd():
    rng = np.random.default_rng(2)
    n = 30
    perf = rng.uniform(0.6, 0.9, n)
    mu = 2 - 2 * perf + rng.normal(0, 0.01, n)
    mu[0] = 100.0  # |z| > 4 with 30 data sets
    frame = pd.DataFrame(
        {
            "collection": "toy",
            "dataset": [f"d{i}" for i in range(n)],
            "mu": mu,
            "auc_ovr_macro": perf,
            "balanced_accuracy": perf,
            "f1_macro": perf,
        }
    )
    table = weight_error_table(frame)
    row = table[table.performance == "balanced_accuracy"].iloc[0]
    assert row.n_dropped == 1 and row.dropped == "d0" and row.n_datasets == n - 1
    assert row.r == pytest.approx(stats.pearsonr(mu[1:], perf[1:]).statistic)
    assert row.r < -0.9
