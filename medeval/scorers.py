"""scikit-learn model selection by subconcept-aware scores; the subconcept labels travel by
metadata routing (scikit-learn >= 1.4; docs/integrations.md, docs/method.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sklearn
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.metadata_routing import MetadataRequest
from sklearn.utils.validation import check_is_fitted

from medeval.errors import UserError
from medeval.metrics import balanced_accuracy, f1, roc_auc
from medeval.metrics.streaming import SubconceptScores, instance_weights
from medeval.scores import (
    SCORED_WEIGHTINGS,
    instance_score,
    labels_from_scores,
    weighting,
)
from medeval.subconcept_model import train_sizes
from medeval.weights import Utilities, utilities_from_train_sizes

__all__ = [
    "SubconceptAware",
    "SubconceptScorer",
    "make_subconcept_scorer",
    "pooled_cross_val_scores",
]

_ROUTING_HELP = (
    "call sklearn.set_config(enable_metadata_routing=True) and pass subconcept=<training "
    "subconcept labels> to fit (GridSearchCV.fit, or cross_validate(..., params=...))"
)


class SubconceptAware(ClassifierMixin, BaseEstimator):
    """A binary classifier plus a subconcept model, fitted on the same training rows.

    Args:
        classifier: a scikit-learn classifier with ``predict_proba`` for labels {0, 1}.
        subconcept_model: a multiclass classifier with ``predict_proba`` over all subconcepts
            (majority and minority).

    Attributes:
        classifier_, subconcept_model_: the fitted clones.
        utilities_: :class:`~medeval.weights.Utilities` from the training subconcept counts,
            in the order of ``subconcept_model_.classes_``.
    """

    # subconcept is requested by default: GridSearchCV routes it to fit without set_fit_request
    __metadata_request__fit = {"subconcept": True}  # noqa: RUF012 - scikit-learn's convention

    def __init__(self, classifier: Any, subconcept_model: Any) -> None:
        self.classifier = classifier
        self.subconcept_model = subconcept_model

    def fit(self, X: Any, y: Any, subconcept: Any = None) -> SubconceptAware:
        """Fit both models; ``subconcept`` ``(N,)`` holds the training subconcept labels."""
        if subconcept is None:
            raise UserError(
                "SubconceptAware.fit needs subconcept: the training subconcept label of every "
                f"row. Pass it to fit; inside GridSearchCV or cross_validate, {_ROUTING_HELP}"
            )
        y = np.asarray(y)
        sc = np.asarray(subconcept)
        if sc.shape != y.shape:
            raise UserError(f"subconcept has shape {sc.shape} but y has {y.shape}")
        if not np.isin(y, (0, 1)).all():
            raise UserError("y must contain only 0 and 1 (1 = the minority class)")
        self.classifier_ = clone(self.classifier).fit(X, y)
        self.subconcept_model_ = clone(self.subconcept_model).fit(X, sc)
        self.classes_ = self.classifier_.classes_
        sizes = train_sizes(sc, y)  # in the order of the subconcept model's columns:
        columns = map(str, self.subconcept_model_.classes_)
        self.utilities_ = utilities_from_train_sizes({n: sizes[n] for n in columns})
        return self

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        return self.classifier_.predict(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        return self.classifier_.predict_proba(X)

    def score_positive(self, X: Any) -> np.ndarray:
        """``(N,)`` probability of class 1."""
        check_is_fitted(self)
        return self.classifier_.predict_proba(X)[:, list(self.classes_).index(1)]

    def predict_subconcept_proba(self, X: Any) -> np.ndarray:
        """``(N, S)`` subconcept posteriors, columns in ``utilities_.names`` order."""
        check_is_fitted(self)
        return self.subconcept_model_.predict_proba(X)

    def subconcept_codes(self, subconcept: Any) -> np.ndarray:
        """``(N,)`` codes into ``utilities_.names``; an error names an unknown subconcept."""
        check_is_fitted(self)
        return self.utilities_.codes(subconcept, "subconcept {} was not in the training rows")


class SubconceptScorer:
    """``scorer(estimator, X, y_true, subconcept=None)`` → one score of a fitted
    :class:`SubconceptAware` on ``X`` (see :func:`make_subconcept_scorer`)."""

    def __init__(self, name: str, *, threshold: float = 0.5) -> None:
        self._weighting = weighting(instance_score(name)[0])  # unknown, rectified: refused
        self.name = name
        self.threshold = float(threshold)

    def __repr__(self) -> str:
        return f"make_subconcept_scorer({self.name!r}, threshold={self.threshold})"

    def __call__(self, estimator: Any, X: Any, y_true: Any, subconcept: Any = None) -> float:
        if not sklearn.get_config().get("enable_metadata_routing", False):
            raise RuntimeError(
                f"the {self.name} scorer needs scikit-learn's metadata routing, which is off: "
                + _ROUTING_HELP
            )
        if not isinstance(getattr(estimator, "utilities_", None), Utilities):
            raise TypeError(
                f"the {self.name} scorer scores a fitted medeval.scorers.SubconceptAware; got "
                f"{type(estimator).__name__}"
            )
        kw = {}
        if self._weighting.needs_subconcept:
            if subconcept is None:
                raise UserError(
                    f"{self.name} needs the test subconcept labels (it is the oracle score): "
                    + _ROUTING_HELP
                )
            kw["subconcept"] = torch.from_numpy(estimator.subconcept_codes(subconcept))
        elif self._weighting.needs_posteriors:
            kw["posteriors"] = torch.as_tensor(estimator.predict_subconcept_proba(X))
        metric = SubconceptScores(
            estimator.utilities_, scores=[self.name], threshold=self.threshold
        )
        y_score = torch.as_tensor(np.asarray(estimator.score_positive(X), dtype=np.float64))
        metric.update(y_score, torch.as_tensor(np.asarray(y_true)), **kw)
        return float(metric.compute()[self.name])

    def get_metadata_routing(self) -> MetadataRequest:
        """The scorer asks for ``subconcept`` in ``score`` (used by the w-scores)."""
        request = MetadataRequest(owner=type(self).__name__)
        request.score.add_request(param="subconcept", alias=True)
        return request


def make_subconcept_scorer(name: str, *, threshold: float = 0.5) -> SubconceptScorer:
    """A scikit-learn scorer for score ``name`` (one of :data:`medeval.scores.INSTANCE_SCORES`).

    The predicted label is ``P(y=1 | x) >= threshold``. p- and c-scores use the subconcept
    model's posteriors and the training fold's utilities; w-scores (oracle) need the test
    subconcept labels, routed as ``subconcept``. Requires metadata routing to be on.
    """
    return SubconceptScorer(name, threshold=threshold)


def _rows(X: Any, idx: np.ndarray) -> Any:
    return X.iloc[idx] if hasattr(X, "iloc") else np.asarray(X)[idx]


def pooled_cross_val_scores(
    estimator: SubconceptAware,
    X: Any,
    y: Any,
    *,
    subconcept: Any,
    scores: Sequence[str] = ("BA", "pBA", "cBA"),
    cv: int | Any = 5,
    threshold: float = 0.5,
    random_state: int = 0,
) -> dict[str, float]:
    """Cross-validate, pool the out-of-fold predictions, and score them once.

    Each test row gets its weight from its own fold (that fold's subconcept model and
    training utilities); the weighted confusion sums and AUC are then taken over all rows.

    Args:
        subconcept: ``(N,)`` subconcept labels (for fitting; and for the w-scores).
        cv: number of folds (stratified on the subconcept, shuffled with ``random_state``, so
            every fold holds every subconcept) or a splitter with ``split(X, y)``.

    Returns:
        ``{score: value}``; NaN with an ``UndefinedMetricWarning`` where undefined.
    """
    y = np.asarray(y)
    sc = np.asarray(subconcept)
    parsed = [instance_score(s) for s in scores]
    keys = [w.prefix for w in SCORED_WEIGHTINGS if any(w.prefix == key for key, _ in parsed)]
    need_posteriors = any(weighting(k).needs_posteriors for k in keys)
    need_codes = any(weighting(k).needs_subconcept for k in keys)
    if isinstance(cv, int):
        folds = StratifiedKFold(cv, shuffle=True, random_state=random_state).split(X, sc)
    else:
        folds = cv.split(X, y)
    ys, ss, ws = [], [], {k: [] for k in keys}
    for train, test in folds:
        model = clone(estimator).fit(_rows(X, train), y[train], subconcept=sc[train])
        Xt, yt = _rows(X, test), torch.as_tensor(y[test], dtype=torch.float64)
        posteriors = model.predict_subconcept_proba(Xt) if need_posteriors else None
        codes = model.subconcept_codes(sc[test]) if need_codes else None
        w = instance_weights(keys, model.utilities_, yt, subconcept=codes, posteriors=posteriors)
        ys.append(yt)
        ss.append(torch.as_tensor(np.asarray(model.score_positive(Xt), dtype=np.float64)))
        for k in keys:
            ws[k].append(w[k])
    y_all, s_all = torch.cat(ys), torch.cat(ss)
    y_pred = labels_from_scores(s_all, threshold)
    functions = {
        "BA": lambda w: balanced_accuracy(y_all, y_pred, sample_weight=w),
        "F1": lambda w: f1(y_all, y_pred, sample_weight=w),
        "AUC": lambda w: roc_auc(y_all, s_all, sample_weight=w),
    }
    return {
        name: float(functions[family](torch.cat(ws[key])))
        for name, (key, family) in zip(scores, parsed, strict=True)
    }
