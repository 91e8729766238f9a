"""Out-of-bag reference rows without refitting (docs/benchmark.md, "Reference rows: out of bag
or cross-fitted"): ``origin[j]`` (or row ``origin[j, :]``) lists the original rows fitted row j
was made from (``-1``: none, SMOTE); a row with no out-of-bag tree gets NaN."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier

from medeval.io.predictions import POSTERIOR_PREFIX
from medeval.scores import labels_from_scores

__all__ = [
    "OutOfBag",
    "ReferenceRows",
    "class_score",
    "forest_oob",
    "full_posteriors",
    "reference_rows",
    "resample_with_origin",
    "seen_by_tree",
]


@dataclass(frozen=True)
class OutOfBag:
    """Out-of-bag predictions of one fitted forest.

    Attributes:
        proba: ``(N, C)`` mean class probabilities over each row's out-of-bag trees, columns in
            ``classes_`` order; NaN rows where no tree is out of bag.
        n_trees: ``(N,)`` out-of-bag trees per row.
        test_proba: ``(N_test, C)`` the forest's ``predict_proba`` on the test rows (the same
            numbers, computed in the same pass over the trees), or None.
    """

    proba: np.ndarray
    n_trees: np.ndarray
    test_proba: np.ndarray | None = None

    @property
    def n_missing(self) -> int:
        """Rows with no out-of-bag tree (NaN in ``proba``)."""
        return int(np.sum(self.n_trees == 0))


@dataclass(frozen=True)
class ReferenceRows:
    """Reference rows of a fold, kept training rows only, with the rows left out.

    Attributes:
        y_true, y_score, y_pred: ``(R,)`` class, out-of-bag score for class 1 and its label.
        subconcept: ``(R,)`` true subconcept names (object array).
        posteriors: ``(R, S)`` out-of-bag subconcept posteriors, column k = ``names[k]``.
        names: ``(S,)`` subconcept names.
        rows: ``(R,)`` positions of the kept rows within the training part.
        n_dropped: rows without an out-of-bag tree, per forest (``"binary"``, ``"subconcept"``)
            and in all (``"total"``; a row can miss both).
        dropped_by_subconcept: rows dropped per subconcept name (every name, 0 included).
    """

    y_true: np.ndarray
    y_score: np.ndarray
    y_pred: np.ndarray
    subconcept: np.ndarray
    posteriors: np.ndarray
    names: tuple[str, ...]
    rows: np.ndarray
    n_dropped: dict[str, int]
    dropped_by_subconcept: dict[str, int]

    @cached_property
    def table(self) -> pd.DataFrame:
        """The rows in the predictions-table format of ``evaluate``."""
        table = pd.DataFrame({k: getattr(self, k) for k in ("y_true", "y_score", "y_pred")})
        table["subconcept"] = self.subconcept
        q = pd.DataFrame(self.posteriors, columns=[POSTERIOR_PREFIX + n for n in self.names])
        return pd.concat([table, q], axis=1)


def resample_with_origin(
    X: np.ndarray, y: np.ndarray, method: str, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A correction's resampling of the training part (imbalanced-learn's sampler with
    ``random_state=seed``), and which original row each result came from.

    Args:
        X: ``(N, F)`` training features; y: ``(N,)`` labels.
        method: ``"none"``, ``"weight"`` (not resampled), ``"ros"``, ``"rus"`` or ``"smote"``.

    Returns:
        ``X_res (M, F)``, ``y_res (M,)`` and ``origin``: ``(M,)`` original row of each resampled
        row (SMOTE's synthetic rows ``-1``).
    """
    if method in ("none", "weight"):
        return X, y, np.arange(len(y))
    if method in ("ros", "rus"):
        from imblearn.over_sampling import RandomOverSampler
        from imblearn.under_sampling import RandomUnderSampler

        cls = RandomOverSampler if method == "ros" else RandomUnderSampler
        sampler = cls(random_state=seed)
        X_res, y_res = sampler.fit_resample(X, y)
        return X_res, y_res, np.asarray(sampler.sample_indices_, dtype=np.int64)
    if method == "smote":
        from imblearn.over_sampling import SMOTE

        X_res, y_res = SMOTE(random_state=seed).fit_resample(X, y)
        origin = np.full(len(y_res), -1, dtype=np.int64)
        origin[: len(y)] = np.arange(len(y))  # SMOTE keeps the original rows first, in order
        return X_res, y_res, origin
    raise ValueError(f"unknown method {method!r}")


def seen_by_tree(
    forest: RandomForestClassifier, n_rows: int, origin: np.ndarray | None = None
) -> np.ndarray:
    """``(T, n_rows)`` bool: tree t saw original row i (drew it or a row made from it).

    Args:
        forest: a fitted forest with ``bootstrap=True``.
        n_rows: original rows N.
        origin: ``(M,)`` or ``(M, P)`` original rows of the M fitted rows (``-1`` = none);
            default: the forest was fitted on the N rows themselves.
    """
    return np.stack([~oob for oob in _oob_masks(forest, n_rows, origin)])


def _oob_masks(forest, n_rows: int, origin):
    """Yield, per tree, the ``(n_rows,)`` mask of original rows it did not see."""
    if not forest.bootstrap:
        raise ValueError("out-of-bag rows need a forest fitted with bootstrap=True")
    if origin is None:
        origin = np.arange(n_rows)
    origin = np.asarray(origin, dtype=np.int64)
    n_fit = getattr(forest, "_n_samples", len(origin))
    if len(origin) != n_fit:
        raise ValueError(f"origin has {len(origin)} rows, the forest was fitted on {n_fit}")
    if origin.max(initial=-1) >= n_rows:
        raise ValueError(f"origin refers to row {origin.max()} of {n_rows}")
    direct = origin.ndim == 1 and origin.min(initial=0) >= 0
    for drawn in _in_bag_draws(forest):
        rows = origin[drawn].ravel()
        if not direct:
            rows = rows[rows >= 0]
        yield np.bincount(rows, minlength=n_rows) == 0


def _in_bag_draws(forest):
    """Each tree's in-bag draws ``(M_boot,)`` (fallback: ``estimators_samples_``)."""
    from sklearn.ensemble._forest import _generate_sample_indices

    n_fit = getattr(forest, "_n_samples", None)
    n_boot = getattr(forest, "_n_samples_bootstrap", None)
    if n_fit is None or n_boot is None or not hasattr(forest, "_sample_weight"):
        yield from forest.estimators_samples_
        return
    weight = forest._sample_weight  # class weights under class_weight="balanced"
    if weight is not None:
        # RandomState.choice(n, size, p=p) with replacement is a search of uniforms in the
        # cumulative p; building that once instead of per tree (and p as scikit-learn does).
        cdf = (weight / np.sum(weight)).cumsum()
        cdf /= cdf[-1]
    rs = np.random.RandomState(0)
    for t, tree in enumerate(forest.estimators_):
        rs.seed(tree.random_state)
        if weight is None:
            drawn = rs.randint(0, n_fit, n_boot)
        else:
            drawn = cdf.searchsorted(rs.random_sample(n_boot), side="right")
        if t == 0:
            reference = _generate_sample_indices(tree.random_state, n_fit, n_boot, weight)
            if not np.array_equal(drawn, reference):
                yield from forest.estimators_samples_
                return
        yield drawn


def forest_oob(
    forest: RandomForestClassifier,
    X: np.ndarray,
    origin: np.ndarray | None = None,
    *,
    X_test: np.ndarray | None = None,
) -> OutOfBag:
    """Out-of-bag class probabilities of a fitted forest on its original training rows, and
    with ``X_test`` the exact ``forest.predict_proba(X_test)`` from the same pass.

    Args:
        forest: fitted on ``X`` itself, or on rows resampled from it as ``origin`` describes.
        X: ``(N, F)`` original training rows.
        origin: see :func:`seen_by_tree`.
        X_test: ``(N_test, F)`` optional test rows.
    """
    if forest.n_outputs_ != 1:
        raise ValueError("out-of-bag rows are computed for single-output forests")
    X32 = np.ascontiguousarray(X, dtype=np.float32)  # what predict_proba converts to
    n, c = len(X32), int(forest.n_classes_)
    test = None
    if X_test is not None:
        X_test32 = np.ascontiguousarray(X_test, dtype=np.float32)
        test = np.zeros((len(X_test32), c))
    total, n_trees = np.zeros((n, c)), np.zeros(n, dtype=np.int64)
    for tree, oob in zip(forest.estimators_, _oob_masks(forest, n, origin), strict=True):
        rows = np.flatnonzero(oob)
        # tree by tree in scikit-learn's order: its oob sums, bit for bit
        total[rows] += tree.predict_proba(np.take(X32, rows, axis=0), check_input=False)
        n_trees += oob
        if test is not None:
            test += tree.predict_proba(X_test32, check_input=False)
    proba = np.full((n, c), np.nan)
    np.divide(total, n_trees[:, None], out=proba, where=n_trees[:, None] > 0)
    if test is not None:
        test /= len(forest.estimators_)
    return OutOfBag(proba=proba, n_trees=n_trees, test_proba=test)


def class_score(proba: np.ndarray, classes: np.ndarray, label: int = 1) -> np.ndarray:
    """``(N,)`` probability of ``label`` from ``(N, C)`` probabilities in ``classes`` order
    (0 where the forest never saw the label; NaN rows stay NaN)."""
    classes = list(classes)
    if label in classes:
        return proba[:, classes.index(label)]
    return np.where(np.isnan(proba).any(axis=1), np.nan, 0.0)


def full_posteriors(proba: np.ndarray, classes: np.ndarray, n_codes: int) -> np.ndarray:
    """``(N, n_codes)`` posteriors, column k = subconcept code k, from a forest's ``(N, C)``
    probabilities over the codes it saw (``classes``); NaN rows stay NaN."""
    out = np.zeros((len(proba), n_codes))
    out[:, np.asarray(classes, dtype=np.int64)] = proba
    out[np.isnan(proba).any(axis=1)] = np.nan
    return out


def reference_rows(
    y_true: np.ndarray,
    y_score: np.ndarray,
    subconcept: np.ndarray,
    posteriors: np.ndarray,
    names: list[str],
    *,
    threshold: float,
) -> ReferenceRows:
    """The reference table of a fold from its out-of-bag predictions.

    Args:
        y_true: ``(N,)`` training labels; y_score: ``(N,)`` out-of-bag score for class 1 (NaN
            where no tree is out of bag).
        subconcept: ``(N,)`` true subconcept names.
        posteriors: ``(N, S)`` out-of-bag subconcept posteriors, column k = ``names[k]``.
        threshold: the protocol's decision threshold (labels by
            :func:`medeval.io.predictions.labels_from_scores`).
    """
    y_score = np.asarray(y_score, dtype=np.float64)
    posteriors = np.asarray(posteriors, dtype=np.float64)
    bad_binary = np.isnan(y_score)
    bad_sub = np.isnan(posteriors).any(axis=1)
    rows = np.flatnonzero(~(bad_binary | bad_sub))
    names_all = np.asarray(subconcept, dtype=object)
    n_dropped = {
        "binary": int(bad_binary.sum()),
        "subconcept": int(bad_sub.sum()),
        "total": int(len(y_score) - len(rows)),
    }
    dropped, counts = np.unique(names_all[bad_binary | bad_sub].astype(str), return_counts=True)
    lost = dict(zip(dropped.tolist(), counts.tolist(), strict=True))
    return ReferenceRows(
        y_true=np.asarray(y_true)[rows].astype(np.int64),
        y_score=y_score[rows],
        y_pred=labels_from_scores(y_score[rows], threshold),
        subconcept=names_all[rows],
        posteriors=posteriors[rows],
        names=tuple(names),
        rows=rows,
        n_dropped=n_dropped,
        dropped_by_subconcept={n: int(lost.get(n, 0)) for n in names},
    )
