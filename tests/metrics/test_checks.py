"""Ill-defined scores are NaN with a warning naming the class; bad input raises naming it."""

import math

import numpy as np
import pytest

from medeval.metrics import (
    UndefinedMetricWarning,
    balanced_accuracy,
    class_recalls,
    f1,
    roc_auc,
    weighted_accuracy,
)

Y = np.array([0, 0, 1, 1])
P = np.array([0, 1, 1, 0])
S = np.array([0.1, 0.7, 0.8, 0.3])


@pytest.mark.parametrize(
    ("call", "cls"),
    [
        (lambda y, w: balanced_accuracy(y, P, sample_weight=w), 1),
        (lambda y, w: roc_auc(y, S, sample_weight=w), 1),
        (lambda y, w: f1(y, P, sample_weight=w), 1),
    ],
)
def test_absent_class_is_nan_with_warning(call, cls):
    y = np.zeros(4, dtype=int)
    with pytest.warns(UndefinedMetricWarning, match=f"class {cls} has zero total weight"):
        assert math.isnan(call(y, None))
    # present but with zero total weight is just as undefined
    with pytest.warns(UndefinedMetricWarning, match=f"class {cls}"):
        assert math.isnan(call(Y, np.array([1.0, 1.0, 0.0, 0.0])))


def test_absent_class_zero_is_nan_for_ba_and_auc_but_not_f1():
    y = np.ones(4, dtype=int)
    with pytest.warns(UndefinedMetricWarning, match="class 0"):
        assert math.isnan(balanced_accuracy(y, P))
    with pytest.warns(UndefinedMetricWarning, match="class 0"):
        assert math.isnan(roc_auc(y, S))
    assert f1(y, P) == pytest.approx(2 * 2 / (2 * 2 + 2))  # class 0 is not needed


def test_batched_warning_counts_rows():
    y = np.array([[0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]])
    with pytest.warns(UndefinedMetricWarning, match="in 2 of 3 rows"):
        out = balanced_accuracy(y, P)
    assert not math.isnan(out[0]) and bool(np.isnan(out[1:]).all())


def test_recalls_nan_only_for_absent_class():
    with pytest.warns(UndefinedMetricWarning, match="class 1"):
        r = class_recalls(np.zeros(4, dtype=int), P)
    assert r[0] == pytest.approx(0.5) and math.isnan(r[1])


def test_weighted_accuracy_needs_a_class_only_if_its_coefficient_is_nonzero():
    y = np.zeros(4, dtype=int)
    assert weighted_accuracy(y, P, q=0.0) == pytest.approx(0.5)
    with pytest.warns(UndefinedMetricWarning, match="class 1"):
        assert math.isnan(weighted_accuracy(y, P, q=0.2))
    with pytest.raises(ValueError, match="q must lie in"):
        weighted_accuracy(Y, P, q=1.5)


@pytest.mark.parametrize(
    ("kwargs", "arg"),
    [
        ({"y_true": [0, 2, 1, 0]}, "y_true"),
        ({"y_true": [0.5, 1, 1, 0]}, "y_true"),
        ({"y_pred": [0, 1, -1, 0]}, "y_pred"),
        ({"sample_weight": [1, -1, 1, 1]}, "sample_weight"),
        ({"sample_weight": [1, np.nan, 1, 1]}, "sample_weight"),
        ({"sample_weight": [1, np.inf, 1, 1]}, "sample_weight"),
        ({"y_true": ["a", "b", "a", "b"]}, "y_true"),
    ],
)
def test_invalid_label_or_weight_names_the_argument(kwargs, arg):
    args = {"y_true": Y, "y_pred": P, "sample_weight": None, **kwargs}
    with pytest.raises(ValueError, match=arg):
        balanced_accuracy(args["y_true"], args["y_pred"], sample_weight=args["sample_weight"])


def test_nan_scores_raise_and_infinite_scores_rank():
    with pytest.raises(ValueError, match="y_score contains NaN at index 2"):
        roc_auc(Y, np.array([0.1, 0.2, np.nan, 0.3]))
    assert roc_auc(Y, np.array([-np.inf, 0.0, np.inf, 1.0])) == 1.0


def test_shapes_that_do_not_broadcast_raise():
    with pytest.raises(ValueError, match="broadcast"):
        balanced_accuracy(np.zeros((3, 4), int), np.zeros((2, 4), int))
