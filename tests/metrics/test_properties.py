"""Property-based tests of the metric API's input handling, against scikit-learn.

Random labels in every accepted encoding (int64, uint8/16/32/64, bool, {-1, 1}, strings or
numbers with ``pos_label``), scores with ties, weights with zeros (float and unsigned), numpy
or torch, lengths 0 to 50. Where scikit-learn's score is defined (every class the metric needs
has positive total weight) the results agree with it; otherwise they are NaN with an
:class:`UndefinedMetricWarning`. Plus the rejection of iterables that are not arrays. The
weight invariances of every metric (and of every other score entry point) are in
``tests/test_score_entry_points.py``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from score_entry_points import problems
from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

from medeval.metrics import (
    UndefinedMetricWarning,
    balanced_accuracy,
    class_recalls,
    f1,
    roc_auc,
    weighted_accuracy,
)

FAST = settings(max_examples=100, deadline=None)  # about 10 s on a loaded 2-core machine

# label encodings: name -> (encode 0/1 labels, pos_label)
ENCODINGS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], object]] = {
    "int64": (lambda y: y.astype(np.int64), None),
    "uint8": (lambda y: y.astype(np.uint8), None),
    "uint16": (lambda y: y.astype(np.uint16), None),
    "uint32": (lambda y: y.astype(np.uint32), None),
    "uint64": (lambda y: y.astype(np.uint64), None),
    "bool": (lambda y: y.astype(bool), None),
    "float": (lambda y: y.astype(np.float64), None),
    "pm1": (lambda y: np.where(y == 1, 1, -1), None),
    "str": (lambda y: np.where(y == 1, "malignant", "benign"), "malignant"),
    # the positive class is the smaller number: pos_label, not the order, decides
    "pos3": (lambda y: np.where(y == 1, 3, 7).astype(np.uint16), 3),
}


def _tensor(a: np.ndarray | None) -> torch.Tensor | np.ndarray | None:
    """A tensor of ``a`` where torch has the dtype (not for strings)."""
    return a if a is None or a.dtype.kind == "U" else torch.from_numpy(a)


def _record(call: Callable[[], object]) -> tuple[object, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call()
    return out, caught


def _ours(call: Callable[[], object], undefined: bool) -> float:
    """The metric's value; NaN with an UndefinedMetricWarning exactly when ``undefined``."""
    out, caught = _record(call)
    value = float(out)
    assert all(issubclass(c.category, UndefinedMetricWarning) for c in caught), caught
    if undefined:
        assert math.isnan(value)
        assert caught and all("zero total weight" in str(c.message) for c in caught)
    else:
        assert not caught and not math.isnan(value)
    return value


def _sklearn(call: Callable[[], float]) -> float:
    return float(_record(call)[0])  # sklearn's own warnings are not under test here


@FAST
@given(problems(), st.sampled_from(sorted(ENCODINGS)), st.booleans())
def test_agrees_with_sklearn_or_is_nan_with_a_warning(problem, encoding, as_torch):
    y, yp, s, w = problem
    encode, pos_label = ENCODINGS[encoding]
    yt, ypt, wt = encode(y), encode(yp), w
    if as_torch:
        yt, ypt, s_in, wt = _tensor(yt), _tensor(ypt), torch.from_numpy(s), _tensor(w)
    else:
        s_in = s
    wf = np.ones(len(y)) if w is None else w.astype(np.float64)
    pos, neg = wf[y == 1].sum(), wf[y == 0].sum()
    kw = {"sample_weight": wt, "pos_label": pos_label}

    ba = _ours(lambda: balanced_accuracy(yt, ypt, **kw), undefined=pos == 0 or neg == 0)
    f = _ours(lambda: f1(yt, ypt, **kw), undefined=pos == 0)
    auc = _ours(lambda: roc_auc(yt, s_in, **kw), undefined=pos == 0 or neg == 0)
    if pos > 0 and neg > 0:
        want = _sklearn(lambda: balanced_accuracy_score(y, yp, sample_weight=wf))
        assert ba == pytest.approx(want, rel=1e-12, abs=1e-12)
        want = _sklearn(lambda: roc_auc_score(y, s, sample_weight=wf))
        assert auc == pytest.approx(want, rel=1e-12, abs=1e-12)
    if pos > 0:  # sklearn with the labels as given, pos_label included
        sk_pos = 1 if pos_label is None else pos_label
        want = _sklearn(lambda: f1_score(encode(y), encode(yp), sample_weight=wf, pos_label=sk_pos))
        assert f == pytest.approx(want, rel=1e-12, abs=1e-12)


CONTAINERS: dict[str, tuple[Callable[[list], object], str]] = {
    "generator": (lambda v: (x for x in v), "got a generator"),
    "map": (lambda v: map(float, v), "got a map"),
    "set": (lambda v: set(v), "got a set"),
    "frozenset": (lambda v: frozenset(v), "got a frozenset"),
    "dict": (lambda v: dict(enumerate(v)), "got a dict"),
    "dict_values": (lambda v: dict(enumerate(v)).values(), "got a dict_values"),
}
NOUNS = {"y_true": "labels", "y_pred": "labels", "y_score": "scores", "sample_weight": "weights"}


@FAST
@given(
    problems(min_n=1),
    st.sampled_from(sorted(CONTAINERS)),
    st.sampled_from(["y_true", "y_pred", "y_score", "sample_weight"]),
)
def test_iterables_that_are_not_arrays_are_rejected_naming_them(problem, container, arg):
    y, yp, s, _ = problem
    wrap, said = CONTAINERS[container]
    args = {"y_true": y, "y_pred": yp, "y_score": s, "sample_weight": np.ones(len(y))}
    args[arg] = wrap(args[arg].tolist())
    metric = roc_auc if arg == "y_score" else balanced_accuracy
    second = args["y_score"] if arg == "y_score" else args["y_pred"]
    with pytest.raises(TypeError, match=f"{arg} must be an array-like of {NOUNS[arg]}.*{said}"):
        metric(args["y_true"], second, sample_weight=args["sample_weight"])


# ---- plain tests: empty input and unsigned arrays ------------------------------------------

EMPTY_CALLS = {
    "balanced_accuracy": lambda y, s, w: balanced_accuracy(y, y, sample_weight=w),
    "f1": lambda y, s, w: f1(y, y, sample_weight=w),
    "roc_auc": lambda y, s, w: roc_auc(y, s, sample_weight=w),
    "weighted_accuracy": lambda y, s, w: weighted_accuracy(y, y, q=0.3, sample_weight=w),
    "class_recalls": lambda y, s, w: class_recalls(y, y, sample_weight=w),
}


@pytest.mark.parametrize("metric", sorted(EMPTY_CALLS))
@pytest.mark.parametrize(
    ("make", "shape"),
    [
        (lambda shape: np.zeros(shape), (0,)),
        (lambda shape: [], (0,)),
        (lambda shape: np.zeros(shape, dtype=np.uint16), (0,)),
        (lambda shape: torch.zeros(shape), (0,)),
        (lambda shape: np.zeros(shape), (3, 0)),
        (lambda shape: torch.zeros(shape, dtype=torch.uint8), (2, 0)),
    ],
    ids=["numpy", "list", "numpy-uint16", "torch", "numpy-batched", "torch-uint8-batched"],
)
def test_empty_input_is_nan_with_a_warning(metric, make, shape):
    y, s, w = make(shape), make(shape), make(shape)
    with pytest.warns(UndefinedMetricWarning, match="zero total weight"):
        out = EMPTY_CALLS[metric](y, s, w)
    lead = shape[:-1] + ((2,) if metric == "class_recalls" else ())
    assert tuple(np.shape(out)) == lead
    assert isinstance(out, torch.Tensor) == isinstance(y, torch.Tensor)
    assert np.all(np.isnan(np.asarray(out)))


def test_empty_input_with_pos_label_and_without_weights():
    with pytest.warns(UndefinedMetricWarning, match="class 1 has zero total weight"):
        assert math.isnan(f1(np.array([], dtype=str), [], pos_label="malignant"))
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(roc_auc([], []))


Y = np.array([0, 1, 1, 0, 1, 0, 0, 1])
P = np.array([0, 1, 0, 0, 1, 1, 0, 1])
S = np.array([0.1, 0.9, 0.3, 0.3, 0.8, 0.6, 0.2, 0.3])
W = np.array([1, 2, 0, 3, 1, 2, 5, 1])


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
@pytest.mark.parametrize("as_torch", [False, True])
def test_unsigned_labels_scores_and_weights(dtype, as_torch):
    y, p, s, w = (a.astype(dtype) for a in (Y, P, (S * 10).round(), W))
    if as_torch:
        y, p, s, w = (torch.from_numpy(a) for a in (y, p, s, w))
    wf = W.astype(float)
    assert float(balanced_accuracy(y, p, sample_weight=w)) == pytest.approx(
        balanced_accuracy_score(Y, P, sample_weight=wf), rel=1e-12
    )
    assert float(f1(y, p, sample_weight=w)) == pytest.approx(
        f1_score(Y, P, sample_weight=wf), rel=1e-12
    )
    assert float(roc_auc(y, s, sample_weight=w)) == pytest.approx(
        roc_auc_score(Y, S, sample_weight=wf), rel=1e-12
    )


def test_uint64_beyond_int64_weights_and_labels():
    # weights of 2**63 and more do not fit int64: read as float64, not wrapped to negatives
    w = np.array([2**63, 2**63 + 2**12, 2**64 - 2**12, 5, 1, 1, 1, 1], dtype=np.uint64)
    for weights in (w, torch.from_numpy(w)):
        assert float(roc_auc(Y, S, sample_weight=weights)) == pytest.approx(
            roc_auc_score(Y, S, sample_weight=w.astype(float)), rel=1e-12
        )
    # a label of 2**64 - 1 named by pos_label keeps its exact value
    big = np.where(Y == 1, 2**64 - 1, 0).astype(np.uint64)
    assert balanced_accuracy(big, big, pos_label=2**64 - 1) == 1.0
    assert balanced_accuracy(big, np.zeros(len(Y), np.uint64), pos_label=2**64 - 1) == 0.5


def test_pandas_nullable_unsigned_labels():
    y = pd.Series(Y, dtype="UInt16")
    assert balanced_accuracy(y, P, sample_weight=pd.Series(W, dtype="UInt8")) == pytest.approx(
        balanced_accuracy_score(Y, P, sample_weight=W.astype(float)), rel=1e-12
    )


def test_weights_of_every_integer_width_give_one_result():
    # 255 in uint8 is a weight of 255 (the scale of the weights does not matter), and the
    # non-negativity check still catches a signed -1
    assert balanced_accuracy(Y, P, sample_weight=np.full(8, 255, np.uint8)) == balanced_accuracy(
        Y, P
    )
    with pytest.raises(ValueError, match="must be non-negative; found -1.0 at index 2"):
        balanced_accuracy(Y, P, sample_weight=W.astype(np.int8) - 1)
