"""medeval/metrics/classification.py: weighted recalls, balanced accuracy, F1 and accuracy
standardised to a class mix, on a problem small enough to count by hand."""

import math

import numpy as np
import pytest
import torch

from medeval.errors import UserError
from medeval.metrics import UndefinedMetricWarning
from medeval.metrics.classification import (
    ConfusionSums,
    ba_from_sums,
    balanced_accuracy,
    class_recalls,
    confusion_sums,
    f1,
    f1_from_sums,
    weighted_accuracy,
)

# negatives: weights 1 (right), 3 (wrong); positives: 2 (right), 1 (wrong), 1 (right)
Y = [0, 0, 1, 1, 1]
PRED = [0, 1, 1, 0, 1]
W = [1.0, 3.0, 2.0, 1.0, 1.0]


def test_confusion_sums_are_the_weighted_counts():
    s = confusion_sums(
        torch.tensor(Y, dtype=float), torch.tensor(PRED, dtype=float), torch.tensor(W)
    )
    assert [float(v) for v in s] == [4.0, 3.0, 4.0, 1.0]  # pos, tp, neg, tn


def test_recalls_ba_and_f1_by_hand():
    np.testing.assert_allclose(class_recalls(Y, PRED, sample_weight=W), [0.25, 0.75])
    assert balanced_accuracy(Y, PRED, sample_weight=W) == pytest.approx(0.5)
    assert f1(Y, PRED, sample_weight=W) == pytest.approx(2 * 3 / (2 * 3 + 3 + 1))
    assert balanced_accuracy(Y, PRED) == pytest.approx(0.5 * (1 / 2 + 2 / 3))


def test_weighted_accuracy_mixes_the_class_recalls_by_q():
    assert weighted_accuracy(Y, PRED, q=0.25, sample_weight=W) == pytest.approx(0.375)
    assert weighted_accuracy(Y, PRED, q=0.5, sample_weight=W) == pytest.approx(0.5)
    np.testing.assert_allclose(weighted_accuracy(Y, PRED, q=[[0.0], [1.0]]), [[0.5], [2 / 3]])


def test_weighted_accuracy_does_not_need_a_class_whose_coefficient_is_zero():
    assert weighted_accuracy([1, 1, 1], [1, 0, 1], q=1.0) == pytest.approx(2 / 3)
    with pytest.warns(UndefinedMetricWarning, match="class 0 has zero total weight"):
        assert math.isnan(weighted_accuracy([1, 1, 1], [1, 0, 1], q=0.5))


@pytest.mark.parametrize("q", [-0.1, 1.5, float("nan")])
def test_q_outside_the_unit_interval_is_refused(q):
    with pytest.raises(UserError, match=r"q must lie in \[0, 1\]"):
        weighted_accuracy(Y, PRED, q=q)


def test_a_missing_class_gives_nan_and_a_warning_naming_it():
    with pytest.warns(UndefinedMetricWarning, match="class 0 has zero total weight"):
        assert math.isnan(balanced_accuracy([1, 1], [1, 0]))
    with pytest.warns(UndefinedMetricWarning, match="class 1 has zero total weight"):
        assert math.isnan(f1([0, 0], [1, 0]))


def test_f1_needs_only_class_1():
    assert f1([1, 1], [1, 0]) == pytest.approx(2 / 3)


def test_string_labels_with_pos_label_and_batched_rows():
    y = ["benign", "malignant", "malignant", "benign"]
    pred = ["benign", "malignant", "benign", "benign"]
    assert balanced_accuracy(y, pred, pos_label="malignant") == pytest.approx(0.75)
    batched = balanced_accuracy(np.array([Y, Y]), np.array([PRED, Y]), sample_weight=W)
    assert isinstance(batched, np.ndarray)
    np.testing.assert_allclose(batched, [0.5, 1.0])


def test_results_from_sums_are_nan_where_a_class_has_no_weight():
    zero, one = torch.tensor([0.0]), torch.tensor([1.0])
    assert torch.isnan(ba_from_sums(ConfusionSums(one, one, zero, zero))).all()
    assert torch.isnan(f1_from_sums(ConfusionSums(zero, zero, one, zero))).all()
