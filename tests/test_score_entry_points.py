"""Every score entry point (``tests/score_entry_points.py``: the functional metrics, the
evaluation, the streaming metric, the bootstrap's point estimate) has scikit-learn's
sample-weight invariances (sklearn/metrics/tests/test_common.py) and gives scikit-learn's
balanced_accuracy_score, f1_score and roc_auc_score, with weights, on random inputs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from score_entry_points import ENTRY_POINTS, SKLEARN_KEYS, EntryPoint, binary_problems, problems
from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

from medeval.metrics import UndefinedMetricWarning

TOL = 1e-9  # scikit-learn's numbers, float64 against float64
SCALES = (2.0**-40, 1e-3, 0.5, 3.7, 7.0, 1e4, 1e6)  # the scale of the weights changes nothing


def _values(entry: EntryPoint, y, yp, s, w) -> np.ndarray:
    """The entry point's values in key order; NaN where undefined (its warning recorded)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = entry.call(y, yp, s, w)
    assert all(issubclass(c.category, UndefinedMetricWarning) for c in caught), caught
    return np.hstack([np.asarray(out[k], dtype=np.float64).ravel() for k in sorted(out)])


def _same(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13, equal_nan=True)


def _defined(y: np.ndarray, w: np.ndarray | None) -> bool:
    """Both classes have positive total weight."""
    wf = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
    return all(wf[y == c].sum() > 0 for c in (0, 1))


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_weight_invariances(name):
    entry = ENTRY_POINTS[name]

    @settings(max_examples=entry.examples, deadline=None)
    @given(problems(max_n=50 if entry.batched else 24))
    def check(problem):
        y, yp, s, w = problem
        if not entry.undefined_ok:
            assume(_defined(y, None) and (w is None or _defined(y, w)))
        base = _values(entry, y, yp, s, None)
        _same(base, _values(entry, y, yp, s, np.ones(len(y))))  # None == all ones
        if w is None:
            return
        wf = w.astype(np.float64)
        weighted = _values(entry, y, yp, s, w)
        kept = wf > 0  # a zero weight == the row dropped (down to no rows at all)
        _same(weighted, _values(entry, y[kept], yp[kept], s[kept], wf[kept]))
        for c in SCALES:
            _same(weighted, _values(entry, y, yp, s, wf * c))
        if np.all(wf == np.round(wf)):  # integer weights == rows repeated that many times
            reps = wf.astype(np.int64)
            _same(weighted, _values(entry, *(np.repeat(a, reps) for a in (y, yp, s)), None))

    check()


def _length_cases():
    for name, entry in ENTRY_POINTS.items():
        weights_error, labels_error = entry.length_errors
        gap = pytest.mark.xfail(strict=True, reason=f"{name} takes weights of another length")
        yield pytest.param(name, "sample_weight", weights_error, marks=[gap] * (not weights_error))
        yield pytest.param(name, "y_true", labels_error)


@pytest.mark.parametrize(("name", "which", "message"), list(_length_cases()))
def test_mismatched_lengths_raise(name, which, message):
    rng = np.random.default_rng(4)
    y = np.r_[0, 1, rng.integers(0, 2, 18)]
    yp, s = (rng.random(20) < 0.5).astype(int), rng.integers(0, 6, 20) / 5.0
    call = ENTRY_POINTS[name].call
    with pytest.raises(ValueError, match=message or None):
        if which == "sample_weight":
            call(y, yp, s, np.ones(len(y) + 1))
        else:
            call(y[:-1], yp, s, None)


ORACLES = {
    "BA": (lambda y, yp, s, w: balanced_accuracy_score(y, yp, sample_weight=w), (0, 1)),
    "F1": (lambda y, yp, s, w: f1_score(y, yp, sample_weight=w, zero_division=np.nan), (1,)),
    "AUC": (lambda y, yp, s, w: roc_auc_score(y, s, sample_weight=w), (0, 1)),  # ties: 1/2
}


def _rows(entry: EntryPoint, y, yp, s, w) -> dict[str, np.ndarray]:
    """``{key: (B,)}``: batched in one call, or row by row (defined rows only, NaN elsewhere)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # NaN is the answer there
        if entry.batched:
            out = entry.call(y, yp, s, w)
            assert all(np.shape(v) == y.shape[:-1] for v in out.values())  # the leading shape
            return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}
        per_row = [
            entry.call(y[r], yp[r], s[r], w[r]) if _defined(y[r], w[r]) else None
            for r in range(len(y))
        ]
    keys = next((sorted(o) for o in per_row if o is not None), SKLEARN_KEYS)
    return {k: np.array([np.nan if o is None else o[k] for o in per_row]) for k in keys}


# no scikit-learn twin with weights: checked by formula in tests/metrics/test_oracle.py
BY_FORMULA = {"metrics.class_recalls", "metrics.weighted_accuracy"}


@pytest.mark.parametrize("name", [n for n in ENTRY_POINTS if n not in BY_FORMULA])
def test_equals_sklearn_with_the_same_weights(name):
    entry = ENTRY_POINTS[name]

    @settings(max_examples=4 * entry.examples, deadline=None)
    @given(binary_problems(max_rows=4 if entry.batched else 1, max_n=40 if entry.batched else 24))
    def check(problem):
        y, yp, s, w = problem
        got = _rows(entry, y, yp, s, w)
        scored = set(got) & set(SKLEARN_KEYS)
        assert scored
        for key in scored:
            oracle, classes = ORACLES[key]
            for r in range(len(y)):
                if all(w[r][y[r] == c].sum() > 0 for c in classes) and (
                    entry.undefined_ok or _defined(y[r], w[r])
                ):
                    want = oracle(y[r], yp[r], s[r], w[r])
                    assert abs(got[key][r] - want) <= TOL, (key, r)
                else:
                    assert np.isnan(got[key][r]), (key, r)

    check()
