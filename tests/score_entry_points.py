"""Every way medeval computes a score, behind one signature, so that one suite checks them all
(``tests/test_score_entry_points.py``: the weight invariances and scikit-learn parity).

An entry point is called as ``call(y, yp, s, w)``: 0/1 labels, predicted labels, scores and
instance weights (or ``None``) of one length, numpy arrays. It returns ``{key: value}`` with
keys from :data:`KEYS`; ``BA``, ``F1`` and ``AUC`` are compared with scikit-learn. Entry points
that take no ``sample_weight`` (the evaluation, the streaming metric) get the weights as
utilities: each row's subconcept is its (class, weight) pair, whose utility is the weight, so
that the utility-weighted scores wBA / wF1 / wAUC are the weighted metrics; with ``w=None``
they give their unweighted BA / F1 / AUC.

A new score entry point is added here, and the suite checks it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from hypothesis import strategies as st

from medeval.evaluation import evaluate_predictions
from medeval.metrics import (
    UndefinedMetricWarning,
    balanced_accuracy,
    class_recalls,
    f1,
    roc_auc,
    weighted_accuracy,
)
from medeval.metrics.bootstrap import BatchedBootstrap
from medeval.metrics.streaming import SubconceptScores
from medeval.weights import Utilities

WEIGHTS = ["none", "float", "int", "uint8", "uint32", "uint64", "sparse"]


@st.composite
def problems(draw, min_n: int = 0, max_n: int = 50):
    """``(y, yp, s, w)`` of one length: 0/1 labels (sometimes one class only), predicted
    labels, scores with ties, weights (``None``, float, integer of several widths, or sparse
    with zeros)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(min_n, max_n))
    p1 = draw(st.sampled_from([0.0, 0.2, 0.5, 0.8, 1.0]))
    y = (rng.random(n) < p1).astype(np.int64)
    yp = (rng.random(n) < 0.5).astype(np.int64)
    levels = draw(st.sampled_from([2, 4, 1000]))  # few levels: many ties
    s = rng.integers(0, levels, n) / levels + 0.3 * y * rng.random(n)
    kind = draw(st.sampled_from(WEIGHTS))
    if kind == "none":
        w = None
    elif kind == "float":
        w = rng.random(n) * 5
    elif kind == "sparse":
        w = rng.random(n) * (rng.random(n) < 0.4)
    else:
        dtype = {"int": np.int64, "uint8": np.uint8, "uint32": np.uint32, "uint64": np.uint64}
        w = rng.integers(0, 4, n).astype(dtype[kind])
    return y, yp, s, w


@st.composite
def binary_problems(draw, max_rows: int = 4, max_n: int = 40):
    """``(y_true, y_pred, y_score, w)`` each ``(B, N)``: coarse scores (ties), zero weights.

    N >= 2: a ``(B, 1)`` array is a column of B instances (as in scikit-learn), not B rows.
    """
    seed = draw(st.integers(0, 2**32 - 1))
    b = draw(st.integers(1, max_rows))
    n = draw(st.integers(2, max_n))
    rng = np.random.default_rng(seed)
    p1 = draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]))
    y = (rng.random((b, n)) < p1).astype(np.int64)
    levels = draw(st.sampled_from([2, 5, 1000]))  # few levels → many ties
    s = rng.integers(0, levels, (b, n)) / levels + 0.3 * y * rng.random((b, n))
    yp = (rng.random((b, n)) < 0.5).astype(np.int64)
    kind = draw(st.sampled_from(["ones", "float", "int", "sparse"]))
    if kind == "ones":
        w = np.ones((b, n))
    elif kind == "float":
        w = rng.random((b, n)) * 5
    elif kind == "int":
        w = rng.integers(0, 4, (b, n)).astype(np.float64)
    else:
        w = rng.random((b, n)) * (rng.random((b, n)) < 0.3)
    return y, yp, s, w


KEYS = ("BA", "F1", "AUC", "recall_0", "recall_1", "accuracy")
SKLEARN_KEYS = ("BA", "F1", "AUC")

Call = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None], dict[str, np.ndarray]]


@dataclass(frozen=True)
class EntryPoint:
    """One way to compute scores.

    Attributes:
        call: ``(y, yp, s, w) -> {key: value}``.
        batched: takes ``(B, N)`` inputs and gives ``(B,)`` values (the functional metrics).
        undefined_ok: gives NaN (with an :class:`UndefinedMetricWarning`) where a class has no
            weight or no instance; otherwise the suite gives it defined problems only.
        examples: random problems per property (composite entry points are slower).
        length_errors: what the ``ValueError`` says for weights / labels of another length
            (``None``: not refused yet, a known gap the suite marks as an expected failure).
    """

    call: Call
    batched: bool = True
    undefined_ok: bool = True
    examples: int = 100
    length_errors: tuple[str | None, str] = ("sample_weight", "y_true")


def _arr(x) -> np.ndarray:
    return np.asarray(x.cpu() if isinstance(x, torch.Tensor) else x, dtype=np.float64)


def _recalls(y, yp, s, w):
    r = _arr(class_recalls(y, yp, sample_weight=w))
    return {"recall_0": r[..., 0], "recall_1": r[..., 1]}


def _torch_metrics(y, yp, s, w):
    """The functional metrics on tensors (the path taken on GPUs and in training)."""
    t = [None if a is None else torch.as_tensor(a) for a in (y, yp, s, w)]
    yt, ypt, st, wt = t
    return {
        "BA": _arr(balanced_accuracy(yt, ypt, sample_weight=wt)),
        "F1": _arr(f1(yt, ypt, sample_weight=wt)),
        "AUC": _arr(roc_auc(yt, st, sample_weight=wt)),
    }


def as_utilities(y: np.ndarray, w: np.ndarray) -> tuple[list[str], Utilities]:
    """Each row's subconcept, ``"<class>:<weight>"``, and utilities that give it its weight."""
    keys = [f"{int(c)}:{float(v)!r}" for c, v in zip(y, w, strict=True)]
    names = tuple(dict.fromkeys(keys))
    sides = np.array([int(k.partition(":")[0]) for k in names], dtype=np.int64)
    values = np.array([float(k.partition(":")[2]) for k in names])
    if not (sides == 0).any():  # utilities need a majority subconcept, even an unused one
        names, sides, values = (*names, "0:unused"), np.r_[sides, 0], np.r_[values, 1.0]
    return keys, Utilities(names, sides, np.ones(len(names), np.int64), values)


def _y_w(y, w, n):
    """Utilities of the rows; weights of another length than ``y`` give as many subconcepts."""
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    y_for_w = np.resize(y, len(w)) if len(w) != len(y) else y
    return as_utilities(y_for_w, w)


def _evaluation(y, yp, s, w):
    keys, u = _y_w(y, w, len(y))
    with warnings.catch_warnings():  # sub_i of an absent or weightless subconcept: NaN there
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        ev = evaluate_predictions(
            y, y_score=s, y_pred=yp, subconcept=keys, train_sizes=u, n_bootstrap=0
        )
    p = "" if w is None else "w"
    return {m: np.float64(ev.scores[p + m]) for m in SKLEARN_KEYS}


def _streaming(y, yp, s, w):
    """Two batches each; BA / F1 from the predicted labels as scores (threshold 0.5)."""
    keys, u = _y_w(y, w, len(y))
    codes = torch.tensor([u.names.index(k) for k in keys], dtype=torch.int64)
    p = "" if w is None else "w"
    out = {}
    for names, score in (((p + "BA", p + "F1"), yp), ((p + "AUC",), s)):
        metric = SubconceptScores(u, scores=list(names))
        half = len(y) // 2
        for part in (slice(0, half), slice(half, None)):
            yt = torch.as_tensor(np.asarray(y)[part])
            metric.update(torch.as_tensor(np.asarray(score, np.float64)[part]), yt, codes[part])
        out |= {k.removeprefix(p): _arr(v) for k, v in metric.compute().items()}
    return out


def _all_ones(self, buf, start, b, state):
    """Counts of one for every instance: the replicate that is the sample itself."""
    units = buf["U"][:b]
    units[:, 1:].fill_(1)
    counts = buf["C"][:b]
    if not self.identity:
        torch.index_select(units, 1, self._col_unit, out=counts)
    return counts


def _bootstrap_point(y, yp, s, w):
    """The bootstrap's statistics of the sample itself (every count 1)."""
    n = len(y)
    weights = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    boot = BatchedBootstrap(
        np.asarray(y), y_pred=yp, y_score=s, weights={"": weights}, subsets={"full": np.ones(n)}
    )
    boot._fill_counts = _all_ones.__get__(boot)
    reps = boot.run(1, seed=0)
    return {m: reps.scores[("", m)][0, 0].numpy() for m in SKLEARN_KEYS}


COMPOSITE = {"batched": False, "undefined_ok": False, "examples": 25}

ENTRY_POINTS: dict[str, EntryPoint] = {
    "metrics.balanced_accuracy": EntryPoint(
        lambda y, yp, s, w: {"BA": _arr(balanced_accuracy(y, yp, sample_weight=w))}
    ),
    "metrics.f1": EntryPoint(lambda y, yp, s, w: {"F1": _arr(f1(y, yp, sample_weight=w))}),
    "metrics.roc_auc": EntryPoint(
        lambda y, yp, s, w: {"AUC": _arr(roc_auc(y, s, sample_weight=w))}
    ),
    "metrics.class_recalls": EntryPoint(_recalls),
    "metrics.weighted_accuracy": EntryPoint(
        lambda y, yp, s, w: {"accuracy": _arr(weighted_accuracy(y, yp, q=0.3, sample_weight=w))}
    ),
    "metrics on tensors": EntryPoint(_torch_metrics, examples=40),  # also test_properties.py
    "evaluate_predictions": EntryPoint(
        _evaluation,
        **COMPOSITE,
        length_errors=("subconcept must have one entry per instance", "must have shape"),
    ),
    "streaming.SubconceptScores": EntryPoint(
        _streaming,
        **COMPOSITE,
        length_errors=("subconcept must be integer codes of shape", "entries but y_true has"),
    ),
    "bootstrap point estimate": EntryPoint(
        _bootstrap_point,
        **COMPOSITE,
        length_errors=("one entry per instance", "need to be the same shape"),
    ),
}
