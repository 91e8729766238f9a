"""What every analysis shares: Pearson's r and the per-data-set means of the fold scores."""

import math

import numpy as np
import pytest
from scipy import stats

from medeval.analyses.common import dataset_means, pearson, subset_frame

from .toy_records import record


def test_pearson_matches_scipy_and_is_nan_when_undefined():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=20), rng.normal(size=20)
    r, p, n = pearson(x, y)
    ref = stats.pearsonr(x, y)
    assert (r, p, n) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue), 20)
    x[3] = np.nan
    assert pearson(x, y)[2] == 19
    assert math.isnan(pearson(np.ones(5), y[:5])[0])
    assert math.isnan(pearson(x[:2], y[:2])[0])


def test_fold_scores_are_averaged_per_data_set():
    recs = [record("a", 0, 0.2, 0.2, 0.2), record("a", 1, 0.4, 0.4, float("nan"))]
    means = dataset_means(subset_frame(recs))
    full = means[(means.subset == "full") & (means.score == "BA")]
    assert full.value.item() == pytest.approx(0.3)
    small = means[(means.subset == "smallest") & (means.score == "BA")]
    assert small.value.item() == pytest.approx(0.2) and small.n_splits.item() == 1
