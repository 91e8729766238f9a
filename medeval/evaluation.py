"""One-call evaluation: the nine scores, their subsets, per-subconcept recall and bootstrap
intervals (SPEC §2, §3, §6).

``evaluate_predictions`` takes a model's test predictions (plus, optionally, the true test
subconcepts, a subconcept model's posteriors and the training subconcept sizes) and returns an
:class:`Evaluation`. Point estimates use the exact metric formulas; intervals come from one
batched bootstrap computation (:mod:`medeval.metrics.bootstrap`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd
import torch

from ._validation import ArrayLike, Interval, StrOptions, TypeOf, validate_params
from .checks import bootstrap_info as _bootstrap_info
from .checks import codes as _codes
from .checks import labels as _labels
from .checks import strata
from .metrics._checks import UndefinedMetricWarning
from .metrics.bootstrap import MEMORY_BUDGET, BatchedBootstrap, percentile_interval
from .metrics.classification import ba_from_sums, confusion_sums, f1_from_sums
from .metrics.ranking import auc_from_sums, auc_sums
from .per_subconcept import class_indicators, per_subconcept
from .rectified import (
    FEW_REFERENCE_ROWS,
    VARIANTS,
    RectifiedResult,
    ReferenceRows,
    TargetRows,
    combine,
    rectify_test_side,
    reference_seed,
    reference_subset_scores,
)
from .reference import within_class_ba_from_codes, within_class_ba_from_q
from .scores import (
    ALL_SCORES,
    FAMILIES,
    LABEL_FREE_RECTIFIED,
    PAPER_SCORES,
    RECOMMENDED,
    RECOMMENDED_RECTIFIED,
    SCORE_DESCRIPTIONS,
    SCORED_WEIGHTINGS,
    STRATIFY,
    WEAK_WITHIN_CLASS_BA,
)
from .subconcept_recall import recommended_column, reference_side
from .weights import (
    Utilities,
    align_posteriors,
    expected_class_utility,
    expected_utility,
    renormalise_within_class,
    utilities_from_train_sizes,
)
from .worst_subconcept import SubconceptRecall, subconcept_recall_frame

# Importers that take the vocabulary from this module keep working; it lives in medeval.scores.
SCORES = PAPER_SCORES
#: Why the AUC family is unavailable without scores.
NO_SCORES = "no y_score (scores are needed for ROC AUC)"
#: Every score of an :class:`Evaluation`: the rectified ones are NaN without reference rows.
EVALUATION_SCORES = ALL_SCORES  # medeval.scores.ALL_SCORES holds the rectified ones
#: Why the rectified scores are missing when no reference rows were given.
NO_REFERENCE = (
    "no reference rows (held-out rows with known subconcepts, scored by the same classifier and "
    "subconcept model); pass reference= (evaluate: --reference)"
)
#: :data:`medeval.scores.SCORE_DESCRIPTIONS` (it describes the rectified scores too).
EVALUATION_DESCRIPTIONS = SCORE_DESCRIPTIONS


@dataclass
class Evaluation:
    """Result of :func:`evaluate_predictions`.

    Attributes:
        scores: the nine scores of the paper, the label-free ``cBA``, ``cF1``, ``cAUC`` and the
            rectified ``rBA``, ``rF1``, ``rAUC`` (:data:`EVALUATION_SCORES`) on the full test
            set; NaN where undefined or unavailable (the rectified ones without reference rows).
        intervals: ``{score: (low, high)}`` percentile intervals (full test set; for the
            rectified scores those of the joint bootstrap of test and reference rows).
        unavailable: ``{score: reason}`` for scores that could not be computed at all.
        subsets: long table, one row per subset × score: ``subset, subconcept, score, value,
            low, high, n_undefined`` (``largest`` and ``smallest`` repeat ``sub_1`` and
            ``sub_k``). With reference rows the rectified scores follow the others, on
            ``sub_i`` from the reference rows of ``sub_i`` too; their joint bootstrap runs on
            the full set only, so their ``low`` / ``high`` are NaN on ``sub_i``.
        per_subconcept: one row per subconcept: class, training size, utility, test size,
            prevalence within its class, recall (with interval), true and predicted weight
            sums over its test instances, and the label-free recall estimate ``est_recall``
            (with interval ``est_low``, ``est_high``) and soft test size ``est_n_test``; the
            intervals' method (``interval_method``: Clopper–Pearson, see ``_recall_intervals``) and
            the subconcept's reference rows (``n_reference``, NaN without reference rows).
        subconcept_model: within-class balanced accuracy of the subconcept model
            (``{"class 0": ..., "class 1": ...}``) on the test set when it has true
            subconcepts, else on reference data if given (``subconcept_model_source``).
        notes: undefined scores and other things a reader must know.
        rectified: the rectified scores' full result (correction terms, replicates, reference
            counts) when reference rows gave them, else ``None``.
        reference: the reference rows given: ``{"source", "n", "per_subconcept": {name:
            rows}, "few_rows": [minority subconcepts under FEW_REFERENCE_ROWS]}``, else
            ``None``.
    """

    scores: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    unavailable: dict[str, str]
    subsets: pd.DataFrame
    per_subconcept: pd.DataFrame
    confidence: float
    bootstrap: dict[str, Any]
    n: int
    n_positive: int
    threshold: float | None
    notes: list[str] = field(default_factory=list)
    subconcept_model: dict[str, float] = field(default_factory=dict)
    subconcept_model_source: str = "test set"
    weighted_classes: list[str] = field(default_factory=lambda: ["class 1"])
    rectified: RectifiedResult | None = None
    reference: dict[str, Any] | None = None
    worst_subconcepts: list[dict[str, Any]] = field(default_factory=list)
    class_recall: dict[int, float] = field(default_factory=dict)

    @property
    def recommended_per_subconcept(self) -> str | None:
        """The per-subconcept column to read: ``"recall"`` (true test subconcepts known), else
        ``"r_recall"`` (rectified by reference rows), else ``"est_recall"`` (label-free: it
        shrinks toward the class's recall where the subconcept model is unsure)."""
        return recommended_column(self.per_subconcept)

    def by_subconcept(self) -> SubconceptRecall:
        """The recommended per-subconcept recall shaped like fairlearn's ``MetricFrame``:
        ``overall`` (each class's recall), ``by_group`` (per subconcept, with interval and
        source), ``worst`` (per class: the worst subconcept and its gap with intervals),
        ``group_min()`` and ``difference()``."""
        return subconcept_recall_frame(
            self.per_subconcept, self.class_recall, self.worst_subconcepts
        )

    @property
    def recommended(self) -> dict[str, str]:
        """The label-free score to read per family: the rectified one (``rBA``…) where
        reference rows gave it, else the class-conditional one (``cBA``…)."""
        if self.rectified is None:
            return dict(RECOMMENDED)
        return {
            m: r if r not in self.unavailable else RECOMMENDED[m]
            for m, r in RECOMMENDED_RECTIFIED.items()
        }

    def weak_classes(self) -> list[str]:
        """Classes whose label-free weights rest on the subconcept model (their subconcepts
        differ in utility: in practice the minority class) and in which its within-class
        balanced accuracy is below :data:`WEAK_WITHIN_CLASS_BA`."""
        return [
            c
            for c, v in self.subconcept_model.items()
            if c in self.weighted_classes and not math.isnan(v) and v < WEAK_WITHIN_CLASS_BA
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: top-level ``"scores"`` maps the nine names of the paper, the label-free
        ``cBA``, ``cF1``, ``cAUC`` and the rectified ``rBA``, ``rF1``, ``rAUC`` to a number or
        None; ``"recommended"`` names the label-free score to read per family; ``"reference"``
        and ``"rectification"`` (None without reference rows) describe the reference rows and
        the size of the correction."""
        return {
            "scores": {k: _num(self.scores[k]) for k in EVALUATION_SCORES},
            "recommended": {**self.recommended, "per_subconcept": self.recommended_per_subconcept},
            "intervals": {
                k: {"low": _num(lo), "high": _num(hi), "n_undefined": self._n_undef(k)}
                for k, (lo, hi) in self.intervals.items()
            },
            "confidence": self.confidence,
            "unavailable": dict(self.unavailable),
            "descriptions": EVALUATION_DESCRIPTIONS,
            "subsets": _records(self.subsets),
            "per_subconcept": _records(self.per_subconcept),
            "bootstrap": self.bootstrap,
            "n": self.n,
            "n_positive": self.n_positive,
            "threshold": self.threshold,
            "subconcept_model": {k: _num(v) for k, v in self.subconcept_model.items()},
            "subconcept_model_source": self.subconcept_model_source,
            "weighted_classes": list(self.weighted_classes),
            "notes": list(self.notes),
            "reference": self.reference,
            "rectification": _rectification_block(self.rectified),
            "worst_subconcepts": [
                {k: _num(v) if isinstance(v, float) else v for k, v in w.items()}
                for w in self.worst_subconcepts
            ],
        }

    def _n_undef(self, score: str) -> int | None:
        if self.rectified is not None and score in self.rectified.n_undefined:
            return self.rectified.n_undefined[score]
        row = self.subsets[(self.subsets.subset == "full") & (self.subsets.score == score)]
        return (
            None if row.empty or pd.isna(row.n_undefined.iloc[0]) else int(row.n_undefined.iloc[0])
        )

    def table(self) -> pd.DataFrame:
        """The full-test scores with their intervals (a readable summary)."""
        rows = []
        for k in EVALUATION_SCORES:
            lo, hi = self.intervals.get(k, (math.nan, math.nan))
            rows.append(
                {
                    "score": k,
                    "value": self.scores[k],
                    "low": lo,
                    "high": hi,
                    "note": self.unavailable.get(k, ""),
                }
            )
        return pd.DataFrame(rows)


def _num(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _rectification_block(res: RectifiedResult | None) -> dict[str, Any] | None:
    """Variant, per family cM(test), cM(R), wM(R), the correction cM(R) − wM(R) subtracted
    from cM(test) and λ, and how the joint bootstrap resampled; None without rectified
    scores."""
    if res is None:
        return None
    return {
        "variant": res.variant,
        "families": {
            m: {
                "class_conditional_test": _num(res.class_conditional[m]),
                "class_conditional_reference": _num(res.reference_scores[m]["c"]),
                "true_weight_reference": _num(res.reference_scores[m]["w"]),
                "correction": _num(res.correction[m]),
                "lambda": _num(res.lam[m]),
            }
            for m in res.correction
        },
        "bootstrap": dict(res.bootstrap),
    }


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for rec in df.to_dict(orient="records"):
        out.append({k: (_num(v) if isinstance(v, float) else v) for k, v in rec.items()})
    return out


@dataclass
class _Plan:
    """What can be computed from the given inputs."""

    weights: dict[str, np.ndarray]  # weighting key → (N,) instance weights
    subsets: dict[str, np.ndarray]  # subset name → (N,) bool
    subset_subconcept: dict[str, str | None]
    sc_names: tuple[str, ...]  # subconcepts for per-subconcept results
    sc_codes: np.ndarray | None  # (N,) codes into sc_names
    sc_side: dict[str, int]
    unavailable: dict[str, str]
    q_class: np.ndarray | None = None  # (N, S) class-renormalised posteriors, sc_names order
    n_fallback: int = 0  # rows with no posterior mass on their own class
    groups: np.ndarray | None = None  # (N,) cluster codes, for the per-subconcept intervals


def _sides_of(u: Utilities) -> dict[str, int]:
    """``{subconcept: class}`` from the utilities."""
    return {nm: int(c) for nm, c in zip(u.names, u.sides, strict=True)}


def _true_subconcepts(
    y: np.ndarray, subconcept: Sequence[str], u: Utilities | None
) -> tuple[tuple[str, ...], np.ndarray, dict[str, int]]:
    """Names ``(S,)``, each instance's code ``(N,)`` into them and each name's class, checked
    against the training sizes (when given) and against ``y``."""
    n = len(y)
    uniq, inverse = _name_codes(subconcept, n)  # vectorised name → code lookup
    sc = _Names(uniq, inverse)
    if u is not None:
        unknown = [i for i, nm in enumerate(uniq) if nm not in set(u.names)]
        if unknown:
            i = int(np.flatnonzero(np.isin(inverse, unknown))[0])
            raise ValueError(
                f"subconcept at index {i} is {str(sc[i])!r}, which has no training size; "
                f"known subconcepts: {', '.join(u.names)}"
            )
        sc_names = u.names
        sc_side = _sides_of(u)
    else:
        sc_names = tuple(str(nm) for nm in uniq)
        sc_side = {}
        for k, nm in enumerate(sc_names):
            sides = set(y[inverse == k].tolist())
            if len(sides) > 1:
                raise ValueError(f"subconcept {nm!r} holds instances of both classes")
            sc_side[nm] = sides.pop()
    lookup = {nm: i for i, nm in enumerate(sc_names)}
    sc_codes = np.array([lookup[str(nm)] for nm in uniq], dtype=np.int64)[inverse]
    side_of = np.array([sc_side[nm] for nm in sc_names])[sc_codes]
    wrong = np.flatnonzero(side_of != y)
    if len(wrong):
        i = int(wrong[0])
        raise ValueError(
            f"index {i}: subconcept {str(sc[i])!r} belongs to class {side_of[i]} "
            f"but y_true is {y[i]}"
        )
    return sc_names, sc_codes, sc_side


def _posterior_weights(
    y: np.ndarray, posteriors: Any, posterior_columns: Sequence[str] | None, u: Utilities
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Predicted weights ``(N,)``, class-renormalised posteriors ``(N, S)``, class-conditional
    weights ``(N,)`` and the number of rows that fell back to the class mean."""
    n = len(y)
    q = align_posteriors(posteriors, u, columns=posterior_columns)  # validated once, in order
    a = expected_utility(q, u)  # q is checked once; the weightings below reuse it
    if a.shape != (n,):
        raise ValueError(f"posteriors must have one row per instance ({n}); got {a.shape}")
    cp = renormalise_within_class(q, u, y)
    q_class = cp.q.cpu().numpy()
    c = expected_class_utility(cp, u, y).cpu().numpy()
    return a.cpu().numpy(), q_class, c, int(cp.fallback.sum())


def _subsets(
    y: np.ndarray,
    sc_names: tuple[str, ...],
    sc_codes: np.ndarray | None,
    sc_side: dict[str, int],
    u: Utilities | None,
) -> tuple[dict[str, np.ndarray], dict[str, str | None]]:
    """Subset masks ``{name: (N,) bool}`` and each subset's minority subconcept."""
    # Subsets (SPEC §6): full, and sub_i = majority ∪ minority subconcept i, largest first.
    n = len(y)
    subsets = {"full": np.ones(n, dtype=bool)}
    subset_sc: dict[str, str | None] = {"full": None}
    if sc_codes is not None:
        minority = [nm for nm in sc_names if sc_side[nm] == 1]
        if u is not None:
            minority = list(u.minority)
        else:  # no training sizes: order by test size
            minority.sort(key=lambda nm: (-int((sc_codes == sc_names.index(nm)).sum()), nm))
        for i, nm in enumerate(minority, start=1):
            subsets[f"sub_{i}"] = (y == 0) | (sc_codes == sc_names.index(nm))
            subset_sc[f"sub_{i}"] = nm
    return subsets, subset_sc


def _plan(
    y: np.ndarray,
    subconcept: Sequence[str] | None,
    posteriors: Any,
    posterior_columns: Sequence[str] | None,
    u: Utilities | None,
) -> _Plan:
    """What can be computed: instance weights, subsets and subconcepts, checked (``y``:
    ``(N,)``)."""
    n = len(y)
    weights = {"": np.ones(n)}
    unavailable: dict[str, str] = {}
    sc_codes, sc_names, sc_side = None, (), {}
    if subconcept is not None:
        sc_names, sc_codes, sc_side = _true_subconcepts(y, subconcept, u)
    no_sizes = "no training subconcept sizes (train sizes), so no utilities"
    if u is None:
        unavailable["w"] = unavailable["p"] = no_sizes
    if subconcept is None:
        unavailable.setdefault("w", "no true test subconcept labels (column 'subconcept')")
    elif u is not None:
        weights["w"] = u.values[np.array([u.index(nm) for nm in sc_names])][sc_codes]
    q_class, n_fallback = None, 0
    if posteriors is None:
        unavailable.setdefault("p", "no subconcept posteriors (columns 'q_<subconcept>')")
    elif u is not None:
        weights["p"], q_class, weights["c"], n_fallback = _posterior_weights(
            y, posteriors, posterior_columns, u
        )
        if sc_codes is None:  # label-free per-subconcept results still need the names
            sc_names = u.names
            sc_side = _sides_of(u)
    if "p" in unavailable:
        unavailable["c"] = unavailable["p"]
    subsets, subset_sc = _subsets(y, sc_names, sc_codes, sc_side, u)
    return _Plan(
        weights, subsets, subset_sc, sc_names, sc_codes, sc_side, unavailable, q_class, n_fallback
    )


def _name_codes(subconcept: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct names ``(K,)`` and each instance's code ``(N,)``; a categorical
    (as :func:`~medeval.predictions.read_predictions` returns) skips the string sort."""
    if isinstance(subconcept, pd.Series) and isinstance(subconcept.dtype, pd.CategoricalDtype):
        subconcept = subconcept.array
    if isinstance(subconcept, pd.Categorical):
        if subconcept.shape != (n,):
            raise ValueError(
                f"subconcept must have one entry per instance ({n}); got {subconcept.shape}"
            )
        codes = np.asarray(subconcept.codes)
        if (codes < 0).any():
            raise ValueError(f"subconcept is missing at index {int(np.argmax(codes < 0))}")
        cats = np.asarray(subconcept.categories).astype(str)
        uniq, remap = np.unique(cats, return_inverse=True)  # duplicates after str() merge
        used = np.zeros(len(uniq), dtype=bool)
        used[remap[np.unique(codes)]] = True
        keep = np.cumsum(used) - 1  # drop categories no instance uses, like np.unique would
        return uniq[used], keep[remap][codes]
    sc = np.asarray(subconcept).astype(str)
    if sc.shape != (n,):
        raise ValueError(f"subconcept must have one entry per instance ({n}); got {sc.shape}")
    return np.unique(sc, return_inverse=True)


class _Names:
    """``sc[i]`` → the name of instance i, without materialising N strings."""

    def __init__(self, uniq: np.ndarray, inverse: np.ndarray) -> None:
        self.uniq, self.inverse = uniq, inverse

    def __getitem__(self, i: int) -> str:
        return str(self.uniq[self.inverse[i]])


_POINT_BLOCK = 2**22  # elements of one (subsets, N) weight block for the point estimates


def _point_scores(y, y_pred, y_score, plan: _Plan, notes: list[str]) -> dict[tuple, np.ndarray]:
    """``{(weighting, metric): (n_subsets,)}`` exact point estimates, batched over subsets in
    blocks of at most :data:`_POINT_BLOCK` weights (bounded memory on millions of rows)."""
    masks = np.stack(list(plan.subsets.values()))
    step = max(1, _POINT_BLOCK // max(1, len(y)))
    yt = torch.as_tensor(y, dtype=torch.float64)
    yp = torch.as_tensor(y_pred, dtype=torch.float64) if y_pred is not None else None
    if y_score is not None:  # one sort serves every subset and weighting
        order = torch.as_tensor(np.argsort(y_score, kind="stable"))
        s_sorted = torch.as_tensor(y_score, dtype=torch.float64)[order]
        y_sorted = yt[order]
    out: dict[tuple, np.ndarray] = {}
    for key, w in plan.weights.items():
        w_t = torch.as_tensor(w, dtype=torch.float64)
        parts: dict[str, list[np.ndarray]] = {}
        for a in range(0, len(masks), step):
            ws = torch.as_tensor(masks[a : a + step], dtype=torch.float64) * w_t
            if yp is not None:
                s = confusion_sums(yt, yp, ws)
                parts.setdefault("BA", []).append(ba_from_sums(s).numpy())
                parts.setdefault("F1", []).append(f1_from_sums(s).numpy())
            if y_score is not None:
                ws_o = ws[:, order]
                del ws
                a_s = auc_sums(y_sorted, s_sorted.expand_as(ws_o), ws_o, presorted=True)
                parts.setdefault("AUC", []).append(auc_from_sums(a_s).numpy())
        for metric, vals in parts.items():
            out[(key, metric)] = np.concatenate(vals)
    names = list(plan.subsets)
    for (key, metric), vals in out.items():
        for j in np.flatnonzero(np.isnan(vals)):
            sub, sc = names[j], plan.subset_subconcept[names[j]]
            what = f"{key}{metric} on subset {sub}" + (f" (subconcept {sc!r})" if sc else "")
            msg = (
                f"{what} is undefined: a class has zero total weight there "
                "(e.g. the subconcept is absent from the test set); reported as NaN"
            )
            notes.append(msg)
            warnings.warn(msg, UndefinedMetricWarning, stacklevel=3)
    return out


@validate_params(
    {
        "threshold": [Interval(Real, None, None)],
        "n_bootstrap": [Interval(Integral, 0, None)],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "stratify": [StrOptions(STRATIFY), ArrayLike()],
        "seed": [Interval(Integral, 0, None)],
        "device": [str, torch.device],
        "progress": [TypeOf(bool, np.bool_, desc="a bool")],
        "memory_budget": [MEMORY_BUDGET, None],
        "reference": [TypeOf(ReferenceRows, desc="ReferenceRows"), None],
        "reference_variant": [StrOptions(VARIANTS)],
    }
)
def evaluate_predictions(
    y_true: Any,
    *,
    y_score: Any = None,
    y_pred: Any = None,
    threshold: float = 0.5,
    subconcept: Sequence[str] | None = None,
    posteriors: Any = None,
    posterior_columns: Sequence[str] | None = None,
    train_sizes: Mapping[str, Mapping[str, int]] | Utilities | None = None,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    stratify: str | np.ndarray = "class",
    groups: Any = None,
    seed: int = 0,
    device: str | torch.device = "cpu",
    progress: bool = False,
    memory_budget: int | None = None,
    pos_label: Any = None,
    reference: ReferenceRows | None = None,
    reference_variant: str = "rectified",
) -> Evaluation:
    """Evaluate test predictions with unweighted, true-weight and predicted-weight scores.

    Args:
        y_true: ``(N,)`` true labels, 1 = minority class: {0, 1}, booleans, {-1, 1} or two
            labels with ``pos_label`` (the rule of every metric in :mod:`medeval.metrics`).
        y_score: ``(N,)`` scores for class 1 (needed for AUC).
        y_pred: ``(N,)`` predicted labels, encoded like ``y_true``; default
            ``y_score >= threshold`` (:func:`medeval.scores.labels_from_scores`).
        subconcept: ``(N,)`` true test subconcept names (wBA, subsets, per-subconcept recall).
        posteriors: ``(N, S)`` subconcept model posteriors (DataFrame with subconcept-named
            columns, or an array with ``posterior_columns``) for pBA.
        train_sizes: ``{name: {"class": 0/1, "n": count}}`` training subconcept sizes, or
            :class:`~medeval.weights.Utilities`.
        n_bootstrap: replicates B (0 = no intervals).
        stratify: ``"class"`` (default), ``"subconcept"``, ``"none"`` or ``(N,)`` stratum codes.
        groups: ``(N,)`` cluster ids (e.g. patients): resample whole clusters.
        seed: bootstrap seed; the same seed gives the same intervals.
        device: where the bootstrap runs (``"cpu"``, ``"cuda"``…).
        memory_budget: bytes the bootstrap's work buffers may take (default from the machine,
            :func:`~medeval.metrics.bootstrap.default_memory_budget`); never changes numbers.
        pos_label: the positive class (1, the minority class) when the labels are not {0, 1},
            booleans or {-1, 1}.
        reference: :class:`~medeval.rectified.ReferenceRows` (held-out rows with true
            subconcepts, from the test rows' population) for rBA, rF1, rAUC (SPEC §9; also needs
            ``posteriors`` and ``train_sizes``); paired with cBA's replicates (same ``seed``).
        reference_variant: ``"rectified"`` (default) or ``"ppi++"``
            (:func:`~medeval.rectified.rectified_scores`).

    Per-subconcept recalls get Clopper–Pearson intervals (also with ``n_bootstrap=0``).
    """
    return evaluate_core(
        y_true, y_score=y_score, y_pred=y_pred, threshold=threshold, subconcept=subconcept,
        posteriors=posteriors, posterior_columns=posterior_columns, train_sizes=train_sizes,
        n_bootstrap=n_bootstrap, confidence=confidence, stratify=stratify, groups=groups,
        seed=seed, device=device, progress=progress, memory_budget=memory_budget,
        pos_label=pos_label, reference=reference, reference_variant=reference_variant,
    )  # fmt: skip


def evaluate_core(
    y_true: Any,
    *,
    y_score: Any = None,
    y_pred: Any = None,
    threshold: float = 0.5,
    subconcept: Sequence[str] | None = None,
    posteriors: Any = None,
    posterior_columns: Sequence[str] | None = None,
    train_sizes: Mapping[str, Mapping[str, int]] | Utilities | None = None,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    stratify: str | np.ndarray = "class",
    groups: Any = None,
    seed: int = 0,
    device: str | torch.device = "cpu",
    progress: bool = False,
    memory_budget: int | None = None,
    pos_label: Any = None,
    reference: ReferenceRows | None = None,
    reference_variant: str = "rectified",
) -> Evaluation:
    """:func:`evaluate_predictions` without its declared checks of the options: the core both
    fronts share, the array one (:func:`evaluate_predictions`) and the table one of every tool
    (:func:`medeval.flows.evaluate.evaluate_table`, whose settings object checked them when it
    was built). It holds ``posteriors`` only until it has made its weights, so a caller that
    hands them over (and keeps no reference) lets them be freed before the bootstrap."""
    y, s, yp = _labels(y_true, y_score, y_pred, threshold, pos_label)
    u = train_sizes
    if u is not None and not isinstance(u, Utilities):
        u = utilities_from_train_sizes(u)
    plan = _plan(y, subconcept, posteriors, posterior_columns, u)
    posteriors = None  # what follows reads the plan's weights: the matrix can be freed
    plan.groups = None if groups is None else _codes(groups, len(y), "groups")
    if s is None:
        for w in SCORED_WEIGHTINGS:
            plan.unavailable.setdefault(f"{w.prefix}AUC", NO_SCORES)
    notes = _first_notes(plan, u)
    point = _point_scores(y, yp, s, plan, notes)
    reps = _replicates(
        y, yp, s, plan, stratify, groups, n_bootstrap, seed=seed, device=device,
        memory_budget=memory_budget, progress=progress,
    )  # fmt: skip
    boot_info = _bootstrap_info(n_bootstrap, seed, stratify)
    thr = float(threshold) if y_pred is None else None  # only when labels came from scores
    inputs = _RectifyInputs(y, yp, s, u, plan, point)
    opts = dict(seed=seed, device=device, memory_budget=memory_budget)
    res, why, rows, row_notes = _rectified_parts(
        reference, reference_variant, inputs, reps, confidence, boot_info, **opts
    )
    ref_side = None
    if not why:  # the rectified per-subconcept recalls need what the rectified scores need
        ref_side = reference_side(
            reference, u, n_bootstrap=0 if reps is None else reps.n,
            seed=reference_seed(seed), device=device, memory_budget=memory_budget,
        )  # fmt: skip
    ev = _assemble(
        y, yp, plan, u, point, reps, confidence, notes, bootstrap=boot_info, threshold=thr,
        extra_rows=rows, reference=ref_side, seed=seed,
    )  # fmt: skip
    ev = _with_reference(ev, reference, res, why, inputs, row_notes)
    return _with_quality(ev, reference, u)


def _replicates(y, yp, s, plan: _Plan, stratify, groups, n_bootstrap: int, **opts: Any) -> Any:
    """Every score's bootstrap replicates (``None`` for ``n_bootstrap`` 0). The bootstrap's
    statistics (0.4 GB at 2M rows) are freed on return: nothing after needs them."""
    if n_bootstrap <= 0:
        return None
    seed, progress = opts.pop("seed"), opts.pop("progress")
    boot = BatchedBootstrap(
        y, y_pred=yp, y_score=s, **_resampling(plan, stratify, groups, y), **opts
    )
    return boot.run(n_bootstrap, seed=seed, progress=progress)


def _first_notes(plan: _Plan, u: Utilities | None) -> list[str]:
    """The first notes: a single class-1 subconcept (nothing is weighted), and how many rows
    fell back to their class's mean utility."""
    notes: list[str] = []
    if u is not None and len(u.minority) == 1:
        notes.append(
            f"the training sizes hold a single class-1 subconcept ({u.minority[0]!r}): every "
            "class-1 row has the same utility, so wBA, cBA and rBA equal BA (and wAUC, cAUC, "
            "rAUC equal AUC; the weighted F1s only rescale class 1 against class 0): no "
            "weighting can show a failure hidden within class 1; give two or more class-1 "
            "subconcepts"
        )
    if plan.n_fallback:
        notes.append(
            f"{plan.n_fallback} instance(s) have zero posterior mass on the subconcepts of their "
            "own class; their class-conditional weight is the mean utility of that class (§8)"
        )
    return notes


def _resampling(plan: _Plan, stratify: str | np.ndarray, groups: Any, y: np.ndarray) -> dict:
    """:class:`BatchedBootstrap` keyword arguments from the plan: weights, subsets,
    subconcepts, strata ``(N,)`` and clusters ``(N,)``; with subconcepts, the soft columns
    ``[q̃ (S) | class indicators (2)]`` (the label-free recalls' and the classes' replicates,
    which the rectified recalls and the worst subconcept's gap read:
    :func:`medeval.per_subconcept.per_subconcept`)."""
    soft = None
    if plan.sc_names:
        soft = class_indicators(y)
        if plan.q_class is not None:
            soft = np.concatenate([plan.q_class, soft], axis=1)
    return dict(
        weights=plan.weights,
        subsets=plan.subsets,
        subconcept=plan.sc_codes,
        n_subconcepts=len(plan.sc_names),
        soft_subconcept=soft,
        strata=_strata(stratify, y, plan),
        clusters=None if groups is None else _codes(groups, len(y), "groups"),
    )


def _strata(stratify: str | np.ndarray, y: np.ndarray, plan: _Plan) -> np.ndarray:
    return strata(stratify, y, plan.sc_codes)


def _aliases(subset_names: list[str]) -> list[tuple[str, int]]:
    """``(row label, subset index)`` pairs: every subset, then ``largest`` and ``smallest``
    (the first and last minority subsets) when there are any."""
    aliases = [(k, i) for i, k in enumerate(subset_names)]
    if subset_names[1:]:
        aliases += [("largest", 1), ("smallest", len(subset_names) - 1)]
    return aliases


def _all_intervals(reps, confidence: float) -> dict[tuple[str, str], tuple[np.ndarray, ...]]:
    """``{(weighting, metric): (low, high, n_undefined)}``, each ``(n_subsets,)``: one
    percentile computation for every score at once."""
    keys = list(reps.scores)
    if not keys:
        return {}
    lo, hi, nu = (
        v.cpu().numpy()
        for v in percentile_interval(torch.stack([reps.scores[k] for k in keys], 1), confidence)
    )
    return {k: (lo[i], hi[i], nu[i]) for i, k in enumerate(keys)}


def _subset_frame(columns: dict[str, list], parts: list[list[np.ndarray]], reps) -> pd.DataFrame:
    """The long subsets table from its label columns and the ``value, low, high,
    n_undefined`` parts (one ``(n_rows_of_score,)`` array per score in each)."""

    def cat(p: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(p).astype(np.float64) if p else np.array([], dtype=np.float64)

    names = ("value", "low", "high", "n_undefined")
    values = {nm: cat(p) for nm, p in zip(names, parts, strict=True)}
    if reps is not None:  # counts of replicates: whole numbers (converted before the frame
        nu = values["n_undefined"]  # is built, which costs half as much as converting after)
        if not np.isfinite(nu).all():
            raise ValueError("undefined-replicate counts must be finite")
        values["n_undefined"] = nu.astype(np.int64)
    return pd.DataFrame({**columns, **values})


def _score_tables(plan: _Plan, point, reps, confidence, notes, extra_rows=None) -> tuple:
    """Full-test scores, their intervals, unavailable scores and the long subsets table (with
    ``extra_rows``, columns of further rows such as the rectified scores', after the others)."""
    subset_names = list(plan.subsets)
    aliases = _aliases(subset_names)
    idx = [j for _, j in aliases]
    columns: dict[str, list] = {c: [] for c in ("subset", "subconcept", "score")}
    parts: list[list[np.ndarray]] = [[], [], [], []]  # value, low, high, n_undefined
    scores = dict.fromkeys(ALL_SCORES, math.nan)
    intervals: dict[str, tuple[float, float]] = {}
    unavailable: dict[str, str] = {}
    nan_row = np.full(len(subset_names), math.nan)
    bounds = _all_intervals(reps, confidence) if reps is not None else {}
    for key in (w.prefix for w in SCORED_WEIGHTINGS):
        for metric in FAMILIES:
            score = f"{key}{metric}"
            if (key, metric) not in point:
                unavailable[score] = plan.unavailable.get(score) or plan.unavailable.get(key, "n/a")
                continue
            vals = point[(key, metric)]
            lo = hi = nu = nan_row
            if reps is not None:
                lo, hi, nu = bounds[(key, metric)]
                intervals[score] = (float(lo[0]), float(hi[0]))
                if nu[0] > 0:
                    notes.append(
                        f"{score}: {int(nu[0])} of {reps.n} bootstrap replicates undefined, "
                        "excluded"
                    )
            scores[score] = float(vals[0])
            columns["subset"] += [a for a, _ in aliases]
            columns["subconcept"] += [plan.subset_subconcept[subset_names[j]] for j in idx]
            columns["score"] += [score] * len(idx)
            for part, a in zip(parts, (vals, lo, hi, nu), strict=True):
                part.append(a[idx])
    if extra_rows:
        for c in columns:
            columns[c] += extra_rows[c]
        for part, c in zip(parts, ("value", "low", "high", "n_undefined"), strict=True):
            part.append(np.asarray(extra_rows[c], dtype=np.float64))
    return scores, intervals, unavailable, _subset_frame(columns, parts, reps)


def _assemble(
    y, yp, plan: _Plan, u, point, reps, confidence, notes, *, bootstrap: dict, threshold,
    extra_rows: dict[str, list] | None = None, reference=None, seed: int = 0,
) -> Evaluation:  # fmt: skip
    scores, intervals, unavailable, subsets = _score_tables(
        plan, point, reps, confidence, notes, extra_rows
    )
    per_sc = per_subconcept(
        y, yp, plan, u, confidence, notes, reps=reps, reference=reference, seed=seed
    )
    return Evaluation(
        scores=scores,
        intervals=intervals,
        unavailable=unavailable,
        subsets=subsets,
        per_subconcept=per_sc.table,
        worst_subconcepts=per_sc.worst,
        class_recall=per_sc.class_recall,
        confidence=confidence,
        bootstrap=bootstrap,
        n=len(y),
        n_positive=int(y.sum()),
        threshold=threshold,
        notes=notes,
        subconcept_model=_within_class_ba(y, plan),
        weighted_classes=_weighted_classes(u),
    )


def _weighted_classes(u: Utilities | None) -> list[str]:
    """Classes whose subconcepts have different utilities: only there do the label-free
    weights depend on the subconcept model (a class of equal utilities gets them exactly)."""
    if u is None:
        return []
    out = []
    for c in (0, 1):
        vals = u.values[u.sides == c]
        if len(vals) and not np.all(vals == vals[0]):
            out.append(f"class {c}")
    return out


def _within_class_ba(y: np.ndarray, plan: _Plan) -> dict[str, float]:
    """Balanced accuracy of the subconcept model among each class's subconcepts (argmax of the
    class-renormalised posteriors vs the true subconcept); needs true test subconcepts."""
    if plan.q_class is None or plan.sc_codes is None:
        return {}
    return within_class_ba_from_codes(y, plan.sc_codes, plan.q_class)


# -- rectified scores (SPEC §9) --------------------------------------------------------------
@dataclass
class _RectifyInputs:
    """The checked test inputs the rectified scores need (``y``, ``yp``, ``s``: ``(N,)``), the
    plan (its class-conditional weights) and the exact scores on every subset."""

    y: np.ndarray
    yp: np.ndarray
    s: np.ndarray | None
    u: Utilities | None
    plan: _Plan
    point: dict[tuple, np.ndarray]


def _rectified_unavailable(reference: ReferenceRows | None, inputs: _RectifyInputs) -> str:
    """Why the rectified scores cannot be computed, or ``""`` when they can."""
    if reference is None:
        return NO_REFERENCE
    if inputs.u is None:
        return "reference rows given, but no training subconcept sizes (train sizes)"
    if "c" not in inputs.plan.weights:
        return "reference rows given, but no test posteriors: the rectified scores correct cM"
    return ""


def _rectified_parts(
    reference: ReferenceRows | None,
    variant: str,
    inputs: _RectifyInputs,
    reps: Any,
    confidence: float,
    boot_info: dict,
    **opts: Any,
) -> tuple[RectifiedResult | None, str, dict[str, list] | None, list[str]]:
    """The rectified scores (or why not), their rows of the subsets table and the notes those
    rows raise; computed before the tables, so that the rows are built with them."""
    why = _rectified_unavailable(reference, inputs)
    if why:
        return None, why, None, []
    res = _rectify(reference, variant, inputs, reps, confidence, boot_info, **opts)
    notes: list[str] = []
    return res, why, _rectified_rows(reference, res, inputs, notes), notes


def _with_quality(ev: Evaluation, reference: ReferenceRows | None, u: Any) -> Evaluation:
    """``ev`` with the subconcept model's within-class balanced accuracy on the reference rows
    (a note) and, when the test set has no subconcepts to measure it on, as
    ``subconcept_model`` itself (source: the reference rows), so that
    :meth:`Evaluation.weak_classes` can warn on every road."""
    if reference is None or u is None:
        return ev
    quality = within_class_ba_from_q(
        reference.y_true, reference.subconcept, reference.posteriors, u
    )
    text = ", ".join(f"{c}: {v:.3f}" for c, v in quality.items()) or "no class has two subconcepts"
    ev.notes.append(
        f"subconcept model on the reference data {reference.source}: within-class BA {text}"
    )
    if not ev.subconcept_model:
        ev.subconcept_model = quality
        ev.subconcept_model_source = f"reference data ({PurePath(reference.source).name})"
    return ev


def _with_reference(
    ev: Evaluation,
    reference: ReferenceRows | None,
    res: RectifiedResult | None,
    why: str,
    inputs: _RectifyInputs,
    row_notes: list[str],
) -> Evaluation:
    """``ev`` with rBA, rF1, rAUC (or ``why`` not) and each subconcept's reference rows."""
    if reference is not None:
        counts = reference.counts()
        ev.per_subconcept["n_reference"] = [
            counts.get(str(nm), 0) for nm in ev.per_subconcept["subconcept"]
        ]
        minority = inputs.u.minority if inputs.u is not None else ()
        ev.reference = {
            "source": reference.source,
            "n": len(reference),
            "per_subconcept": counts,
            "few_rows": [nm for nm in minority if counts.get(nm, 0) < FEW_REFERENCE_ROWS],
        }
    if res is None:
        for name in LABEL_FREE_RECTIFIED:
            ev.scores[name] = math.nan
            ev.unavailable[name] = why
        return ev
    ev.rectified = res
    for name in LABEL_FREE_RECTIFIED:
        ev.scores[name] = float(res.scores[name])
        if name in res.intervals:
            ev.intervals[name] = res.intervals[name]
        if name in res.unavailable:
            ev.unavailable[name] = res.unavailable[name]
    # the test rows' fallback is already noted by the evaluation itself
    ev.notes += [n for n in res.notes if " test row(s) have zero posterior mass" not in n]
    ev.notes += row_notes
    return ev


def _rectified_rows(
    reference: ReferenceRows, res: RectifiedResult, inputs: _RectifyInputs, notes: list[str]
) -> dict[str, list]:
    """The subsets table's rows of rBA, rF1, rAUC on every subset (SPEC §6), as columns.

    On ``sub_i`` the point estimate is ``cM(test ∩ sub_i) − (cM(R ∩ sub_i) − wM(R ∩ sub_i))``
    (``R ∩ sub_i``: the reference rows of the majority class and of minority subconcept i; the
    ``"ppi++"`` variant keeps the full set's λ). The joint bootstrap runs on the full set only,
    so ``low`` / ``high`` are NaN on ``sub_i`` (and ``n_undefined`` 0: no replicates).

    Built from the exact subset scores and plain lists, with the rest of the table: this runs on
    every fold of the benchmark grid, where pandas' lookups cost more than the scores."""
    plan = inputs.plan
    names = list(plan.subsets)
    aliases = [(label, j, plan.subset_subconcept[names[j]]) for label, j in _aliases(names)]
    ref_scores = reference_subset_scores(
        reference, inputs.u, list(dict.fromkeys(nm for _, _, nm in aliases if nm is not None))
    )
    new: dict[str, list] = {c: [] for c in ("subset", "subconcept", "score", "value", "low")}
    new |= {"high": [], "n_undefined": []}
    for family, name in RECOMMENDED_RECTIFIED.items():
        if name in res.unavailable or family not in res.lam or ("c", family) not in inputs.point:
            continue
        for label, j, nm in aliases:
            if nm is None:  # full
                v, (lo, hi) = res.scores[name], res.intervals.get(name, (math.nan, math.nan))
                undef = res.n_undefined.get(name, 0)
            else:
                tc = inputs.point[("c", family)][j]
                v = _rectified_on_subset(notes, res, ref_scores[nm], family, label, nm, tc)
                lo = hi = math.nan
                undef = 0
            for c, x in zip(new, (label, nm, name, v, lo, hi, undef), strict=True):
                new[c].append(x)
    return new


def _rectified_on_subset(
    notes: list[str], res: RectifiedResult, ref: dict, family: str, sub: str, nm: str, tc: float
) -> float:
    """rM on ``sub_i`` from cM on its test rows ``tc`` (the subsets table) and cM, wM on its
    reference rows ``ref``; NaN with a note and an :class:`UndefinedMetricWarning` where
    undefined."""
    tc = float(tc)
    rc, rw = ref.get(("c", family), math.nan), ref.get(("w", family), math.nan)
    value = combine(tc, rc, rw, variant=res.variant, lam=res.lam[family])
    if math.isnan(value) and sub not in ("largest", "smallest"):  # aliases: warned once
        where = "its test rows" if math.isnan(tc) else "its reference rows"
        msg = (
            f"{RECOMMENDED_RECTIFIED[family]} on subset {sub} (subconcept {nm!r}) is undefined on "
            f"{where}; NaN"
        )
        notes.append(msg)
        warnings.warn(msg, UndefinedMetricWarning, stacklevel=5)
    return float(value)


def _rectify(
    reference: ReferenceRows,
    variant: str,
    inputs: _RectifyInputs,
    reps: Any,
    confidence: float,
    boot_info: dict,
    seed: int,
    device: str | torch.device,
    memory_budget: int | None,
) -> RectifiedResult:
    """The rectified scores from this evaluation's class-conditional weights, its exact cM on
    the full test set and its bootstrap's replicates of cM (``reps``; none when
    ``n_bootstrap`` is 0), so that nothing is computed twice and rM and cM are paired."""
    test_reps = None
    if reps is not None:
        test_reps = {
            m: reps.scores[("c", m)][:, 0] for m in ("BA", "F1", "AUC") if ("c", m) in reps.scores
        }
    p = inputs.plan
    point = {m: float(v[0]) for (k, m), v in inputs.point.items() if k == "c"}
    test = TargetRows(inputs.y, inputs.yp, inputs.s, p.weights["c"], p.n_fallback, inputs.y, None)
    test.point = point
    res = rectify_test_side(
        test, reference, inputs.u, variant=variant, n_bootstrap=0 if reps is None else reps.n,
        confidence=confidence, stratify=boot_info["stratify"], reference_stratify="class",
        seed=seed, device=device, memory_budget=memory_budget, test_replicates=test_reps,
    )  # fmt: skip
    # the test side was resampled as this evaluation's bootstrap says
    res.bootstrap["method"] = (
        f"percentile; joint: test rows as the evaluation's bootstrap "
        f"(within {boot_info['stratify']}), reference rows within "
        f"{res.bootstrap['reference_stratify']}, drawn independently"
    )
    return res
