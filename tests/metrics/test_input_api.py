"""The public metrics for numpy users: input kinds, label coding, result types, weight scale.

Each relabelling and rescaling is checked against scikit-learn on the hypothesis problems.
"""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import balanced_accuracy_score, f1_score, recall_score, roc_auc_score

from medeval.metrics import (
    UndefinedMetricWarning,
    balanced_accuracy,
    class_recalls,
    f1,
    roc_auc,
    weighted_accuracy,
)

from .conftest import ALLOW_UNDEFINED, binary_problems

TOL = 1e-9
Y = np.array([0, 0, 1, 1, 1])
P = np.array([0, 1, 1, 0, 1])
S = np.array([0.1, 0.7, 0.8, 0.3, 0.9])

# (name, coding of class 0, coding of class 1, pos_label to pass)
CODINGS = [
    ("zero-one", 0, 1, None),
    ("minus-one-one", -1, 1, None),
    ("booleans", False, True, None),
    ("strings", "benign", "malignant", "malignant"),
    ("booleans-as-strings", "False", "True", "True"),
    ("positive-is-the-smaller-number", 2, 1, 1),
    ("positive-is-zero", 1, 0, 0),
]


def _code(y: np.ndarray, neg, pos) -> np.ndarray:
    return np.where(y == 1, np.array(pos, dtype=object), np.array(neg, dtype=object)).astype(
        type(pos) if not isinstance(pos, bool) else bool
    )


def _both_classes(y, w):
    return w[y == 0].sum() > 0 and w[y == 1].sum() > 0


@pytest.mark.parametrize(("coding", "neg", "pos", "pos_label"), CODINGS)
@pytest.mark.filterwarnings(ALLOW_UNDEFINED)
@settings(max_examples=60, deadline=None)
@given(problem=binary_problems(max_rows=1))
def test_any_two_labels_equal_sklearn(coding, neg, pos, pos_label, problem):
    y, yp, s, w = (a[0] for a in problem)
    yc, pc = _code(y, neg, pos), _code(yp, neg, pos)
    sk_pos = pos if pos_label is not None else 1
    ba = balanced_accuracy(yc, pc, sample_weight=w, pos_label=pos_label)
    f = f1(yc, pc, sample_weight=w, pos_label=pos_label)
    auc = roc_auc(yc, s, sample_weight=w, pos_label=pos_label)
    rec = class_recalls(yc, pc, sample_weight=w, pos_label=pos_label)
    assert all(isinstance(v, float) for v in (ba, f, auc)) and rec.shape == (2,)
    if _both_classes(y, w):
        assert abs(ba - balanced_accuracy_score(yc, pc, sample_weight=w)) <= TOL
        assert abs(auc - roc_auc_score(yc == pos, s, sample_weight=w)) <= TOL
        assert abs(rec[0] - recall_score(y, yp, pos_label=0, sample_weight=w)) <= TOL
    else:
        assert math.isnan(ba) and math.isnan(auc)
    if w[y == 1].sum() > 0:
        ref = f1_score(yc, pc, pos_label=sk_pos, sample_weight=w, zero_division=np.nan)
        assert abs(f - ref) <= TOL
        assert abs(rec[1] - recall_score(yc, pc, pos_label=sk_pos, sample_weight=w)) <= TOL


@pytest.mark.filterwarnings(ALLOW_UNDEFINED)
@settings(max_examples=100, deadline=None)
@given(binary_problems(max_rows=1))
def test_column_vectors_are_instances_as_in_sklearn(problem):
    y, yp, s, w = (a[0] for a in problem)
    col = {"y": y[:, None], "yp": yp[:, None], "s": s[:, None], "w": w[:, None]}
    assert roc_auc(col["y"], col["s"], sample_weight=col["w"]) == pytest.approx(
        roc_auc(y, s, sample_weight=w), nan_ok=True, abs=0
    )
    got = balanced_accuracy(col["y"], col["yp"], sample_weight=w)
    if _both_classes(y, w):
        assert isinstance(got, float)
        assert abs(got - balanced_accuracy_score(col["y"], col["yp"], sample_weight=w)) <= TOL
        assert abs(roc_auc(col["y"], s) - roc_auc_score(col["y"], col["s"])) <= TOL


@pytest.mark.filterwarnings(ALLOW_UNDEFINED)
@settings(max_examples=150, deadline=None)
@given(binary_problems(), st.sampled_from([1e-300, 1e-160, 1e160, 1e300]))
def test_every_metric_is_exact_at_any_weight_scale(problem, scale):
    """Weights near 1e±160 (whose products leave float64) or 1e±300 give sklearn's values."""
    y, yp, s, w = problem
    auc = roc_auc(y, s, sample_weight=w * scale)
    ba = balanced_accuracy(y, yp, sample_weight=w * scale)
    f = f1(y, yp, sample_weight=w * scale)
    for r in range(len(y)):
        if _both_classes(y[r], w[r]):
            assert abs(auc[r] - roc_auc_score(y[r], s[r], sample_weight=w[r])) <= TOL
            assert abs(ba[r] - balanced_accuracy_score(y[r], yp[r], sample_weight=w[r])) <= TOL
        else:
            assert np.isnan(auc[r]) and np.isnan(ba[r])
        if w[r][y[r] == 1].sum() > 0:
            ref = f1_score(y[r], yp[r], sample_weight=w[r], zero_division=np.nan)
            assert abs(f[r] - ref) <= TOL


@pytest.mark.filterwarnings(ALLOW_UNDEFINED)
@settings(max_examples=150, deadline=None)
@given(binary_problems())
def test_roc_auc_is_exact_when_the_classes_have_opposite_weight_scales(problem):
    """Positive weights ×1e160, negative ×1e-160: each pair product is ~1, sums are not."""
    y, _, s, w = problem
    scaled = w * np.where(y == 1, 1e160, 1e-160)
    got = roc_auc(y, s, sample_weight=scaled)
    for r in range(len(y)):
        if _both_classes(y[r], w[r]):
            assert abs(got[r] - roc_auc_score(y[r], s[r], sample_weight=w[r])) <= TOL
        else:
            assert np.isnan(got[r])


@pytest.mark.parametrize("power", [-1060, -1000, 1000, 1020])
def test_extreme_powers_of_two_change_nothing(power):
    """Exactly representable weights from subnormal (2**-1060) to near the float64 maximum."""
    w = np.array([1.0, 3.0, 2.0, 1.0, 5.0]) * 2.0**power
    for metric in (
        roc_auc,
        lambda y, s, sample_weight: f1(y, s > 0.5, sample_weight=sample_weight),
    ):
        assert metric(Y, S, sample_weight=w) == metric(Y, S, sample_weight=w / 2.0**power)
    assert balanced_accuracy(Y, P, sample_weight=w) == balanced_accuracy(
        Y, P, sample_weight=w / 2.0**power
    )


def test_result_types_follow_the_input():
    w = np.ones((3, len(Y)))
    for y in (Y, Y.tolist(), pd.Series(Y), pd.Series(Y, dtype="category")):
        assert type(balanced_accuracy(y, P)) is float
        assert type(roc_auc(y, pd.Series(S))) is float
    batched = roc_auc(Y, S, sample_weight=w)
    assert isinstance(batched, np.ndarray) and batched.shape == (3,)
    assert isinstance(class_recalls(Y, P), np.ndarray)
    # any tensor in → tensors out, on the inputs' device
    for out in (
        roc_auc(torch.from_numpy(Y), S),
        roc_auc(Y, S, sample_weight=torch.ones(len(Y))),
        weighted_accuracy(torch.from_numpy(Y), P, q=0.3),
    ):
        assert isinstance(out, torch.Tensor) and out.shape == () and out.dtype == torch.float64


def test_pandas_boolean_and_object_labels():
    yb = pd.Series(Y.astype(bool), dtype="boolean")
    assert balanced_accuracy(yb, P) == balanced_accuracy(Y, P)
    assert roc_auc(pd.Series(Y, dtype=object), S) == roc_auc(Y, S)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: roc_auc(1, 0.5), "y_true must be an array of instances, got a scalar"),
        (lambda: f1(Y, np.int64(1)), "y_pred must be an array of instances"),
        (lambda: roc_auc(Y, S, sample_weight=2.0), "sample_weight must be an array"),
        (lambda: roc_auc(["b", "m", "m", "b", "m"], S), r"y_true holds the labels \['b', 'm'\]"),
        (lambda: f1(["b", "m", "m", "b", "x"], ["b"] * 5, pos_label="m"), "hold 3 labels"),
        (lambda: f1(["b", "m", "m", "b", "m"], ["b"] * 5, pos_label="x"), "pos_label='x' is not"),
        (lambda: f1([0, 1, 1, 0, 1], [-1, 1, 1, -1, 1]), "found -1 at index 0"),
        (lambda: balanced_accuracy(["b", None, "m", "b", "m"], P, pos_label="m"), "missing"),
        (lambda: balanced_accuracy([0, np.nan, 1, 0, 1], P, pos_label=1), "missing"),
        (
            lambda: balanced_accuracy(np.array([0, "a", 1, 0, 1], dtype=object), P, pos_label=1),
            "mixes label types",
        ),
    ],
)
def test_bad_inputs_raise_naming_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_one_class_with_pos_label_is_undefined_not_an_error():
    benign = np.array(["benign"] * 5)
    with pytest.warns(UndefinedMetricWarning, match="class 1 has zero total weight"):
        assert math.isnan(roc_auc(benign, S, pos_label="malignant"))
    # the negative class alone is enough for its own recall
    assert weighted_accuracy(benign, ["malignant"] * 5, q=0.0, pos_label="malignant") == 0.0
