"""scikit-learn's sample-weight invariance suite (sklearn/metrics/tests/test_common.py),
applied to every weighted metric at once."""

import numpy as np
import pytest
import torch

from medeval.metrics import balanced_accuracy, class_recalls, f1, roc_auc, weighted_accuracy


def _acc(y, yp, s, w):
    return weighted_accuracy(y, yp, q=0.3, sample_weight=w)


METRICS = {
    "balanced_accuracy": lambda y, yp, s, w: balanced_accuracy(y, yp, sample_weight=w),
    "f1": lambda y, yp, s, w: f1(y, yp, sample_weight=w),
    "roc_auc": lambda y, yp, s, w: roc_auc(y, s, sample_weight=w),
    "class_recalls": lambda y, yp, s, w: class_recalls(y, yp, sample_weight=w),
    "weighted_accuracy": _acc,
}


def _data(seed, n=60):
    rng = np.random.default_rng(seed)
    y = np.r_[0, 1, rng.integers(0, 2, n - 2)]
    s = rng.integers(0, 6, n) / 5.0  # ties
    yp = (rng.random(n) < 0.5).astype(int)
    return y, yp, s


@pytest.mark.parametrize("name", METRICS)
@pytest.mark.parametrize("seed", range(5))
def test_none_equals_unit_weights(name, seed):
    y, yp, s = _data(seed)
    f = METRICS[name]
    torch.testing.assert_close(f(y, yp, s, None), f(y, yp, s, np.ones(len(y))))


@pytest.mark.parametrize("name", METRICS)
@pytest.mark.parametrize("seed", range(5))
def test_integer_weights_equal_repeated_rows(name, seed):
    y, yp, s = _data(seed)
    w = np.random.default_rng(seed + 100).integers(1, 4, len(y))
    rep = np.repeat(np.arange(len(y)), w)
    f = METRICS[name]
    torch.testing.assert_close(f(y, yp, s, w), f(y[rep], yp[rep], s[rep], None))


@pytest.mark.parametrize("name", METRICS)
@pytest.mark.parametrize("seed", range(5))
def test_zero_weight_equals_dropped_row(name, seed):
    y, yp, s = _data(seed)
    rng = np.random.default_rng(seed + 200)
    w = rng.random(len(y)) + 0.1
    w[rng.random(len(y)) < 0.3] = 0
    w[:2] = 1.0  # keep both classes
    keep = w > 0
    f = METRICS[name]
    torch.testing.assert_close(f(y, yp, s, w), f(y[keep], yp[keep], s[keep], w[keep]))


@pytest.mark.parametrize("name", METRICS)
@pytest.mark.parametrize("scale", [1e-3, 0.5, 7.0, 1e4])
def test_scaling_all_weights_changes_nothing(name, scale):
    y, yp, s = _data(3)
    w = np.random.default_rng(9).random(len(y)) + 0.05
    f = METRICS[name]
    torch.testing.assert_close(f(y, yp, s, w * scale), f(y, yp, s, w))


@pytest.mark.parametrize("name", METRICS)
def test_mismatched_lengths_raise(name):
    y, yp, s = _data(4)
    f = METRICS[name]
    with pytest.raises(ValueError, match="sample_weight"):
        f(y, yp, s, np.ones(len(y) + 1))
    with pytest.raises(ValueError, match="y_true"):
        f(y[:-1], yp, s, None)
