"""medeval/metrics/ranking.py: the weighted ROC AUC with ties counted ½."""

import math

import numpy as np
import pytest
import torch

from medeval.metrics import UndefinedMetricWarning
from medeval.metrics.ranking import AucSums, auc_from_sums, auc_sums, roc_auc

Y = [0, 0, 1, 1]
S = [0.1, 0.5, 0.5, 0.9]  # one positive ties with one negative


def test_a_tie_counts_half():
    assert roc_auc(Y, S) == pytest.approx(3.5 / 4)


def test_weights_count_pairs_by_hand():
    # positives 1, 1; negatives 2 (at 0.1), 1 (at 0.5): (2 + ½·1) + 3 over 2 · 3
    assert roc_auc(Y, S, sample_weight=[2.0, 1.0, 1.0, 1.0]) == pytest.approx(5.5 / 6)


def test_the_scale_of_the_weights_changes_nothing():
    w = np.array([2.0, 1.0, 1.0, 1.0])
    assert roc_auc(Y, S, sample_weight=w * 1e160) == pytest.approx(5.5 / 6)
    assert roc_auc(Y, S, sample_weight=w * 1e-160) == pytest.approx(5.5 / 6)


def test_sums_of_presorted_scores_equal_sorted_ones():
    y, s, w = (torch.tensor(v, dtype=torch.float64) for v in (Y, S, [2, 1, 1, 1]))
    order = torch.tensor([2, 0, 3, 1])
    unsorted = auc_sums(y[order], s[order], w[order])
    presorted = auc_sums(y, s, w, presorted=True)
    assert [float(v) for v in unsorted] == [float(v) for v in presorted] == [5.5, 2.0, 3.0]


def test_batched_rows_are_scored_apart():
    out = roc_auc(torch.tensor([Y, Y]), torch.tensor([S, [0.9, 0.5, 0.5, 0.1]]))
    assert isinstance(out, torch.Tensor) and out.shape == (2,)
    torch.testing.assert_close(out, torch.tensor([0.875, 0.125], dtype=out.dtype))


def test_a_class_without_weight_gives_nan_and_a_warning():
    with pytest.warns(UndefinedMetricWarning, match="class 0 has zero total weight"):
        assert math.isnan(roc_auc([1, 1], [0.2, 0.4]))
    zero = torch.tensor(0.0)
    assert torch.isnan(auc_from_sums(AucSums(zero, torch.tensor(2.0), zero)))
