"""Cross-fitted reference rows for ROS and ``weight``, whose out-of-bag rows are not held-out-like:
each of :data:`FOLDS` folds, stratified by subconcept, is scored by a forest fitted on the others
(docs/benchmark.md, "Reference rows: out of bag or cross-fitted")."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

from medeval.protocol.oob import class_score, resample_with_origin
from medeval.splits import derive_seed, group_codes_of

#: Corrections whose reference rows are cross-fitted instead of out of bag (see the module).
CROSS_FIT = ("ros", "weight")
#: Folds of the cross-fitting: each forest is fitted on (FOLDS − 1) / FOLDS of the training part.
FOLDS = 2


def trees_per_fold(n_estimators: int, folds: int = FOLDS) -> int:
    """Trees of each cross-fitted forest: ``n_estimators // folds``, at least 1."""
    return max(1, int(n_estimators) // int(folds))


def cross_fit_scores(
    X: np.ndarray,
    y: np.ndarray,
    strata: np.ndarray,
    method: str,
    *,
    seed: int,
    make_forest: Callable[[int], RandomForestClassifier],
    groups: np.ndarray | None = None,
    folds: int = FOLDS,
) -> np.ndarray | None:
    """``(N,)`` class-1 scores of the training rows ``X`` ``(N, F)``, each from a forest fitted
    on the other folds under ``method``'s correction; ``None`` when a fold's fitting rows lack a
    class (the caller keeps the out-of-bag rows then).

    Args:
        y: ``(N,)`` labels 0/1; strata: ``(N,)`` subconcept codes (the folds' stratification).
        seed: the method's seed; fold h's sampler and forest get ``derive_seed(seed, "xfit", h)``.
        make_forest: ``seed -> unfitted forest`` with the method's settings (e.g. class weights).
        groups: ``(N,)`` group ids kept within one fold, or ``None``.
    """
    y = np.asarray(y)
    if min(np.sum(y == 0), np.sum(y == 1)) < folds:
        return None  # some fold's fitting rows would lack a class
    split_seed = derive_seed(seed, "xfit", "folds")
    if groups is None:
        splitter = StratifiedKFold(folds, shuffle=True, random_state=split_seed)
    else:
        splitter = StratifiedGroupKFold(folds, shuffle=True, random_state=split_seed)
        groups = group_codes_of(groups)  # an empty id is a group of its own, as in the splits
    parts = list(splitter.split(X, _pooled(strata, y, folds), groups))
    if any(len(np.unique(y[fit])) < 2 for fit, _ in parts):
        return None
    out = np.full(len(y), np.nan)
    for h, (fit, held) in enumerate(parts):
        s = derive_seed(seed, "xfit", h)
        X_fit, y_fit, _ = resample_with_origin(X[fit], y[fit], method, s)
        forest = make_forest(s).fit(X_fit, y_fit)
        out[held] = class_score(forest.predict_proba(X[held]), forest.classes_)
    return out


def _pooled(strata: np.ndarray, y: np.ndarray, folds: int) -> np.ndarray:
    """Stratum codes ``(N,)``: subconcepts, one rarer than ``folds`` pooled within its class."""
    _, inverse, counts = np.unique(strata, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    out = inverse.copy()
    rare = counts[inverse] < folds
    for c in (0, 1):
        pool, common = rare & (y == c), ~rare & (y == c)
        if pool.any():
            out[pool] = np.bincount(inverse[common]).argmax() if common.any() else -1 - c
    return out
