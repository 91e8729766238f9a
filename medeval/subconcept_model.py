"""The subconcept model ``q_s(x)`` (docs/method.md, "Label-free scores"; docs/own_model.md);
columns: class 0's subconcepts, then class 1's, each by name."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.utils.validation import check_is_fitted

from medeval.errors import UserError
from medeval.weights import Utilities, utilities_from_train_sizes

__all__ = [
    "SUBCONCEPT_MODELS",
    "SubconceptModel",
    "subconcept_classes",
    "subconcept_estimator",
    "subconcept_forest",
    "subconcept_logistic",
    "train_sizes",
]

#: The subconcept models a tool can fit (``--subconcept-model``); ``auto``: ``logistic`` on an
#: image embedding table of pretrained weights (its record says which), else ``forest``.
#: Measured on ImageNet EfficientNet-Lite0 embeddings of real dermoscopy
#: (benchmarks/subconcept_model_choice.py, 20 lesion splits): the logistic regression's
#: within-class accuracy 0.752 against the forest's 0.697, log loss 0.652 against 0.872,
#: calibration error 0.033 against 0.147, better in 20 of 20 splits on each
#: (docs/own_model.md); on tables the forest stays (the paper's protocol).
SUBCONCEPT_MODELS = ("auto", "forest", "logistic")


def subconcept_forest(n_estimators: int = 100, seed: int = 0) -> RandomForestClassifier:
    """The subconcept forest, unfitted: the one of the forest protocol, of discovery and of
    :class:`SubconceptModel` by default. ``n_jobs=1``: parallelism comes from the caller (the
    benchmark's grid)."""
    return RandomForestClassifier(n_estimators=n_estimators, random_state=seed, n_jobs=1)


def subconcept_logistic(min_count: int | None = None) -> Any:
    """Standardised features → multinomial logistic regression, its strength ``C`` chosen by
    3-fold cross-validated log loss among 1e-3, 1e-2, 1e-1 on the training rows (what calibrates
    it; no test row is seen), unfitted. ``min_count``: the fewest rows of any subconcept; below 3
    the folds shrink to it, below 2 ``C`` is fixed at 1e-2."""
    from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    folds = 3 if min_count is None else min(3, int(min_count))
    if folds < 2:
        return make_pipeline(StandardScaler(), LogisticRegression(C=1e-2, max_iter=3000))
    import inspect

    newer = {"l1_ratios": (0.0,), "use_legacy_attributes": False}  # an L2 penalty, said (1.8+)
    known = inspect.signature(LogisticRegressionCV).parameters
    cv = LogisticRegressionCV(
        Cs=[1e-3, 1e-2, 1e-1],
        cv=folds,
        scoring="neg_log_loss",
        max_iter=3000,
        **{k: v for k, v in newer.items() if k in known},
    )
    return make_pipeline(StandardScaler(), cv)


def subconcept_estimator(
    kind: str, *, n_estimators: int = 100, seed: int = 0, min_count: int | None = None
) -> Any:
    """The unfitted estimator of ``kind`` (``forest`` or ``logistic``, :data:`SUBCONCEPT_MODELS`
    less ``auto``, which the caller resolves)."""
    if kind == "forest":
        return subconcept_forest(n_estimators, seed)
    if kind == "logistic":
        return subconcept_logistic(min_count)
    raise ValueError(f"subconcept model {kind!r}: expected forest or logistic")


class SubconceptModel(BaseEstimator):
    """Posteriors of the training subconcepts, from any scikit-learn classifier.

    Args:
        estimator: an unfitted scikit-learn classifier with ``predict_proba``; cloned by
            :meth:`fit`. ``None``: a random forest of ``n_estimators`` trees seeded with
            ``random_state`` (the forest protocol's subconcept model).
        n_estimators: trees of the default forest (unused with ``estimator``).
        random_state: seed of the default forest (unused with ``estimator``).

    Attributes (after :meth:`fit`):
        classes_: ``(S,)`` subconcept names, the columns of :meth:`predict_proba`.
        class_of_: ``(S,)`` class (0/1) of each subconcept.
        counts_: ``(S,)`` training rows of each subconcept.
        estimator_: the fitted classifier (fitted on codes ``0..S-1`` into ``classes_``).
        n_features_in_: number of features seen in :meth:`fit`.
    """

    def __init__(
        self, estimator: Any = None, *, n_estimators: int = 100, random_state: int = 0
    ) -> None:
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.random_state = random_state

    def fit(self, X: Any, subconcept: Any, y: Any) -> SubconceptModel:
        """Fit on ``X (N, F)``, subconcept names ``(N,)`` and classes ``y (N,)`` in {0, 1}.

        Raises:
            ValueError: mismatched lengths, non-finite features, a class outside {0, 1}, a
                subconcept found in both classes (naming it and a row of each), an estimator
                without ``predict_proba``.
        """
        X = checked_features(X)
        names = np.asarray(subconcept).astype(str)
        y = np.asarray(y)
        if names.shape != (len(X),) or y.shape != (len(X),):
            raise UserError(
                f"X has {len(X)} rows but subconcept has {names.shape} and y {y.shape}: "
                "one of each per row"
            )
        if not np.isin(y, (0, 1)).all():
            i = int(np.argmax(~np.isin(y, (0, 1))))
            raise UserError(f"row {i}: class {y.tolist()[i]!r} is not 0 or 1")
        sizes = train_sizes(names, y)
        code = {n: j for j, n in enumerate(sizes)}
        codes = np.array([code[n] for n in names], dtype=np.int64)
        est = (
            clone(self.estimator)
            if self.estimator is not None
            else subconcept_forest(self.n_estimators, self.random_state)
        )
        if not hasattr(est, "predict_proba"):
            raise UserError(f"estimator {type(est).__name__} has no predict_proba")
        self.estimator_ = est.fit(X, codes)
        self.classes_ = np.array(list(sizes), dtype=object)
        self.class_of_ = np.array([e["class"] for e in sizes.values()], dtype=np.int64)
        self.counts_ = np.array([e["n"] for e in sizes.values()], dtype=np.int64)
        self.n_features_in_ = X.shape[1]
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """``(N, F)`` → ``(N, S)`` posteriors, columns :attr:`classes_`, rows summing to 1."""
        check_is_fitted(self, "estimator_")
        X = checked_features(X)
        if X.shape[1] != self.n_features_in_:
            raise UserError(
                f"X has {X.shape[1]} features but the model was fitted on {self.n_features_in_}"
            )
        out = np.zeros((len(X), len(self.classes_)))
        # an estimator may drop a code it never predicts; its classes_ say which columns it has
        cols = np.asarray(self.estimator_.classes_, dtype=np.int64)
        out[:, cols] = self.estimator_.predict_proba(X)
        return out

    def posteriors(self, X: Any) -> pd.DataFrame:
        """:meth:`predict_proba` as a DataFrame with the subconcept names as columns."""
        return pd.DataFrame(self.predict_proba(X), columns=[str(n) for n in self.classes_])

    @property
    def train_sizes_(self) -> dict[str, dict[str, int]]:
        """``{name: {"class": 0|1, "n": count}}``: the ``train_sizes.json`` of the fit."""
        check_is_fitted(self, "estimator_")
        return {
            str(n): {"class": int(c), "n": int(k)}
            for n, c, k in zip(self.classes_, self.class_of_, self.counts_, strict=True)
        }

    @property
    def utilities_(self) -> Utilities:
        """The utilities of the training subconcepts (:mod:`medeval.weights`)."""
        return utilities_from_train_sizes(self.train_sizes_)


def train_sizes(names: Any, y: Any) -> dict[str, dict[str, int]]:
    """``{name: {"class": 0|1, "n": count}}`` of training rows with subconcept ``names`` and
    classes ``y`` (``(N,)`` each), in the model's column order (class 0's subconcepts, then
    class 1's, each by name): the :attr:`SubconceptModel.train_sizes_` a fit on them gives.

    Raises:
        ValueError: a subconcept found in both classes (see :func:`subconcept_classes`).
    """
    names = np.asarray(names).astype(str)
    y = np.asarray(y).astype(np.int64)
    sides = subconcept_classes(names, y)
    counts = pd.Series(names).value_counts()
    order = sorted(sides, key=lambda n: (sides[n], n))
    return {n: {"class": sides[n], "n": int(counts[n])} for n in order}


def subconcept_classes(names: np.ndarray, y: np.ndarray) -> dict[str, int]:
    """``{subconcept: class}`` from ``(N,)`` names and classes.

    Raises:
        ValueError: a subconcept with rows of both classes (naming it and a row of each,
            counted from 0).
    """
    sides: dict[str, int] = {}
    for name in map(str, pd.unique(names)):
        rows = np.flatnonzero(names == name)
        classes = y[rows]
        if (classes != classes[0]).any():
            other = int(rows[np.argmax(classes != classes[0])])
            raise UserError(
                f"subconcept {name!r} has rows of both classes (row {int(rows[0])}: class "
                f"{int(classes[0])}, row {other}: class {int(y[other])}); a subconcept "
                "belongs to one class"
            )
        sides[name] = int(classes[0])
    return sides


def checked_features(X: Any) -> np.ndarray:
    """``X`` as a finite ``(N, F)`` float64 array (a :class:`UserError` naming a bad cell)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise UserError(f"X must be (N, F); got shape {X.shape}")
    if not np.isfinite(X).all():
        r, c = np.argwhere(~np.isfinite(X))[0]
        raise UserError(f"X[{r}, {c}] (row {r}) is {float(X[r, c])!r}; features must be finite")
    return X
