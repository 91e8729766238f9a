"""The metrics without a scikit-learn twin (class recalls, weighted accuracy) by formula, the
the example of docs/method.md, "Why subconcepts", and the result's shape and device. That BA, F1 and
AUC equal scikit-learn with the same weights, for every score entry point, is
``tests/test_score_entry_points.py``."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings

from medeval.metrics import balanced_accuracy, class_recalls, roc_auc, weighted_accuracy

from .conftest import ALLOW_UNDEFINED, binary_problems

TOL = 1e-9


@pytest.mark.filterwarnings(ALLOW_UNDEFINED)
@settings(max_examples=300, deadline=None)
@given(binary_problems())
def test_class_recalls_and_weighted_accuracy(problem):
    y, yp, _, w = problem
    rec = class_recalls(y, yp, sample_weight=w)
    assert rec.shape == (*y.shape[:-1], 2)
    # q = weighted prevalence gives ordinary weighted accuracy; q = 1/2 gives BA.
    for r in range(len(y)):
        total = w[r].sum()
        if total == 0:
            continue
        m1, m0 = w[r][y[r] == 1].sum(), w[r][y[r] == 0].sum()
        q = m1 / (m1 + m0)  # exactly 0 or 1 when a class has no weight
        acc = weighted_accuracy(y[r], yp[r], q=q, sample_weight=w[r])
        ref = (w[r] * (y[r] == yp[r])).sum() / total
        assert abs(acc - ref) <= TOL
        for c in (0, 1):
            mass = w[r][y[r] == c].sum()
            if mass > 0:
                exp = (w[r] * ((y[r] == c) & (yp[r] == c))).sum() / mass
                assert abs(rec[r, c] - exp) <= TOL
            else:
                assert np.isnan(rec[r, c])
        half = weighted_accuracy(y[r], yp[r], q=0.5, sample_weight=w[r])
        ba = balanced_accuracy(y[r], yp[r], sample_weight=w[r])
        assert (np.isnan(half) and np.isnan(ba)) or abs(half - ba) <= TOL


def test_spec_example_minority_recall():
    """docs/method.md, "Why subconcepts": A (90 %, recall .95) + B (10 %, recall .10) → BA hides B;
    equal influence not."""
    n_a, n_b, n_0 = 900, 100, 1000
    y = np.r_[np.zeros(n_0), np.ones(n_a + n_b)].astype(int)
    yp = np.r_[
        np.r_[np.ones(50), np.zeros(950)],  # majority recall .95
        np.r_[np.ones(855), np.zeros(45)],  # A: .95
        np.r_[np.ones(10), np.zeros(90)],  # B: .10
    ].astype(int)
    ba = balanced_accuracy(y, yp)
    assert ba == pytest.approx(0.5 * (0.95 + 0.865))
    u = np.r_[np.ones(n_0), np.full(n_a, n_0 / n_a), np.full(n_b, n_0 / n_b)]
    wba = balanced_accuracy(y, yp, sample_weight=u)
    assert wba == pytest.approx(0.5 * (0.95 + 0.525))


def test_results_live_on_input_device_and_keep_leading_shape():
    y = torch.tensor([[0, 1, 1, 0]] * 3).reshape(3, 1, 4).expand(3, 2, 4)
    s = torch.rand(3, 2, 4, generator=torch.Generator().manual_seed(0))
    out = roc_auc(y, s)
    assert out.shape == (3, 2) and out.dtype == torch.float64 and out.device == y.device
    w = torch.rand(5, 4, dtype=torch.float64)  # (B, N) weights against (N,) labels
    ba = balanced_accuracy(np.array([0, 1, 1, 0]), np.array([0, 1, 0, 0]), sample_weight=w)
    assert ba.shape == (5,)
