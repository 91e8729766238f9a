"""Cross-fitted reference rows for the corrections whose out-of-bag rows are not held-out-like
(SPEC §9: "if a correction's OOB rows do not behave like held-out rows, use cross-fitting for
it and say so").

Under ROS every minority row is copied into most trees, and under ``weight`` scikit-learn's
bootstrap draws rows in proportion to their class weight (so a minority row is drawn into most
trees too): the minority training rows keep 6–9 of 100 out-of-bag trees on average (ROS drops
29 % of them, with no tree left), and their coarse scores give the reference rows a
class-conditional error unlike the test fold's. Measured on KEEL (8 sets × 10 folds,
``benchmarks/oob_reference.py --xfit ros,weight``), the mean |error| of the rectified score
against the test fold's true-weight score, out of bag → cross-fitted, with cM's own beside it:

============  ====================  ====================  ====================
correction    BA                    F1                    AUC
============  ====================  ====================  ====================
ros           0.0072 → 0.0052       0.0107 → 0.0082       0.0074 → 0.0034
              (cBA 0.0072)          (cF1 0.0100)          (cAUC 0.0033)
weight        0.0052 → 0.0052       0.0075 → 0.0075       0.0050 → 0.0036
              (cBA 0.0061)          (cF1 0.0082)          (cAUC 0.0032)
============  ====================  ====================  ====================

Checked on PMLB sets the choice was not made on (12 sets × 4 folds, ``--collection pmlb``),
paired over the folds where both exist: ROS 0.0136 → 0.0087 (BA), 0.0220 → 0.0142 (F1),
0.0134 → 0.0061 (AUC); ``weight`` 0.0107 → 0.0109, 0.0185 → 0.0175, 0.0101 → 0.0083. There the
out-of-bag rows were unusable (a minority subconcept without a row) in 16 of 48 ROS folds and 11
of 48 ``weight`` folds; cross-fitted rows exist in all of them.

Without a correction (every row keeps about 37 trees) and under SMOTE cross-fitting was no
better (``none`` 0.0043 → 0.0045 BA, 0.0038 → 0.0038 AUC; ``smote`` 0.0058 → 0.0062 BA,
0.0031 → 0.0040 AUC), and under RUS (not cross-fitted: its dropped rows are seen by no tree,
the kept ones keep about 37) the out-of-bag error is at cM's (BA 0.0050, cBA 0.0051), so
these keep their out-of-bag rows and need no refit.

Cross-fitting: the training part is split in :data:`FOLDS` folds stratified by subconcept
(whole groups kept together where the task has groups); for each fold, a forest with the same
correction (its own resampling) is fitted on the other folds and scores the held-out fold.
Every training row gets a score from a forest that never saw it. The subconcept posteriors
stay those of the subconcept forest's out-of-bag trees (that forest is not resampled).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

from medeval.protocol.oob import class_score, resample_with_origin
from medeval.splits import derive_seed

#: Corrections whose reference rows are cross-fitted instead of out of bag (see the module).
CROSS_FIT = ("ros", "weight")
#: Folds of the cross-fitting: each forest is fitted on (FOLDS − 1) / FOLDS of the training part.
FOLDS = 2


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
    split_seed = derive_seed(seed, "xfit", "folds")
    if groups is None:
        splitter = StratifiedKFold(folds, shuffle=True, random_state=split_seed)
    else:
        splitter = StratifiedGroupKFold(folds, shuffle=True, random_state=split_seed)
    with warnings.catch_warnings():  # a subconcept with fewer rows than folds sits in one fold
        warnings.filterwarnings("ignore", message="The least populated class", category=UserWarning)
        parts = list(splitter.split(X, strata, groups))
    if any(len(np.unique(y[fit])) < 2 for fit, _ in parts):
        return None
    out = np.full(len(y), np.nan)
    for h, (fit, held) in enumerate(parts):
        s = derive_seed(seed, "xfit", h)
        X_fit, y_fit, _ = resample_with_origin(X[fit], y[fit], method, s)
        forest = make_forest(s).fit(X_fit, y_fit)
        out[held] = class_score(forest.predict_proba(X[held]), forest.classes_)
    return out
