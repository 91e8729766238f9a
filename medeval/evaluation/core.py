"""The evaluation itself: :func:`evaluate` (a table of predictions, utilities, reference rows and
one :class:`EvaluateSettings`), the one front of every tool, and :func:`evaluate_predictions`."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from medeval._validation import ArrayLike, StrOptions, TypeOf, declared, validate_params
from medeval.evaluation.checks import bootstrap_info as _bootstrap_info
from medeval.evaluation.checks import input_notes, strata
from medeval.evaluation.checks import labels as _labels
from medeval.evaluation.labelled import labelled_reference, pooled
from medeval.evaluation.per_subconcept import class_indicators, per_subconcept
from medeval.evaluation.plan import _aliases, _Plan, _plan
from medeval.evaluation.rectification import (
    _rectified_parts,
    _RectifyInputs,
    _with_reference,
)
from medeval.evaluation.rectified import (
    FewReferenceRowsWarning,
    batched_point_scores,
    fallback_note,
)
from medeval.evaluation.rectified_recall import LabelledRows
from medeval.evaluation.result import NO_SCORES, Evaluation
from medeval.evaluation.subconcept_recall import reference_evidence
from medeval.evaluation.verdict_history import reopened, reopened_lines
from medeval.io.predictions import PredictionTable
from medeval.io.reference import (
    ReferenceRows,
    absent_minority,
    check_against_test,
    missing_note,
)
from medeval.metrics._checks import UndefinedMetricWarning
from medeval.metrics.bootstrap import BatchedBootstrap, percentile_interval
from medeval.metrics.multiclass import within_class_ba
from medeval.options import STRATIFY, EvaluationOptions
from medeval.scores import ALL_SCORES, FAMILIES, SCORED_WEIGHTINGS
from medeval.weights import Utilities, utilities_from_train_sizes

_POINT_BLOCK = 2**22  # elements of one (subsets, N) weight block for the point estimates


def _point_scores(y, y_pred, y_score, plan: _Plan, notes: list[str]) -> dict[tuple, np.ndarray]:
    """``{(weighting, metric): (n_subsets,)}`` exact point estimates, in blocks of subsets."""
    masks = np.stack(list(plan.subsets.values()))
    step = max(1, _POINT_BLOCK // max(1, len(y)))
    order = None  # one sort serves every subset and weighting
    if y_score is not None:
        order = torch.as_tensor(np.argsort(y_score, kind="stable"))
    out: dict[tuple, np.ndarray] = {}
    for key, w in plan.weights.items():
        w_t = torch.as_tensor(w, dtype=torch.float64)
        parts: dict[str, list[np.ndarray]] = {}
        for a in range(0, len(masks), step):
            ws = torch.as_tensor(masks[a : a + step], dtype=torch.float64) * w_t
            for metric, v in batched_point_scores(y, y_pred, y_score, ws, order).items():
                parts.setdefault(metric, []).append(v.numpy())
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


#: Said when the label-free scores rest on the subconcept model alone (no test subconcepts, no
#: reference rows).
NO_REFERENCE_NOTE = (
    "no test subconcepts and no reference rows: the intervals of cBA / cF1 / cAUC resample the "
    "test rows and treat the subconcept model's posteriors as exact, so they cannot see that "
    "model's error (a model miscalibrated within a class biases cBA, and its interval still "
    "looks narrow). Give reference rows — held-out rows with the true 'subconcept', scored by "
    "the same classifier and subconcept model, from the same population and used to fit "
    "neither (e.g. a labelled validation set) — with --reference FILE (the predictions columns "
    "plus 'subconcept' and every q_<subconcept>): evaluate then reports the rectified rBA / rF1 "
    "/ rAUC, which correct that error, and recommends them."
)

#: Warnings whose messages the evaluation states in its notes; passed on after the others.
STATED = (UndefinedMetricWarning, FewReferenceRowsWarning)


@declared(
    {
        "device": [TypeOf(str, torch.device, desc="a device name or a torch.device")],
        "progress": [TypeOf(bool, np.bool_, desc="a bool")],
    }
)
@dataclass(frozen=True, kw_only=True)
class EvaluateSettings(EvaluationOptions):
    """How to evaluate: the user's :class:`~medeval.options.EvaluationOptions` plus where the
    bootstrap runs and whether it shows a progress bar.

    Raises:
        InvalidParameterError: a value outside its declared constraints, naming the field.
    """

    device: Any = "cpu"  # a name ("cpu", "cuda:1") or a torch.device
    progress: bool = False


@validate_params(
    {
        "table": [TypeOf(PredictionTable, desc="a PredictionTable")],
        "utilities": [TypeOf(Utilities, desc="Utilities"), None],
        "reference": [TypeOf(ReferenceRows, desc="ReferenceRows"), None],
        "labels": [TypeOf(LabelledRows, desc="LabelledRows"), None],
        "settings": [TypeOf(EvaluateSettings, desc="EvaluateSettings"), None],
    }
)
def evaluate(
    table: PredictionTable,
    utilities: Utilities | None = None,
    *,
    reference: ReferenceRows | None = None,
    labels: LabelledRows | None = None,
    settings: EvaluateSettings | None = None,
) -> Evaluation:
    """The evaluation of every tool and of :func:`evaluate_predictions`: a table of test
    predictions, the train sizes' utilities, checked reference rows and one settings object.

    Notes about the inputs themselves (one class only, scores that are not probabilities:
    :func:`~medeval.evaluation.checks.input_notes`) come first; undefined scores are NaN with a
    note and an :class:`~medeval.metrics.UndefinedMetricWarning`. Every warning reaches the
    caller, those the notes state (:data:`STATED`) after the others. With reference rows the
    evaluation gives the rectified scores rBA / rF1 / rAUC, which are then recommended
    (docs/method.md, "Rectified scores"), and the subconcept model's within-class balanced
    accuracy on them. ``labels``, test rows whose subconcept a person gave (with the
    probabilities they were chosen with), count as such rows for the test rows themselves: in
    the rectified recall of every subconcept and, weighted, in the rectified scores. Without
    test subconcepts, reference rows or labels the notes say why the label-free intervals
    cannot see the subconcept model's error (:data:`NO_REFERENCE_NOTE`).

    The table's ``posteriors`` are handed over: ``table.posteriors`` is ``None`` afterwards,
    and they are freed once the weights are made, before the bootstrap (on millions of rows
    they are the largest input).

    Raises:
        InputError: probability scores with a threshold outside [0, 1], naming the table.
        UserError: inputs that do not fit together (subconcepts, posteriors, train sizes).
    """
    s = settings or EvaluateSettings()
    if reference is not None:
        check_against_test(reference, table, float(s.threshold))
    first = input_notes(table, float(s.threshold))
    has_posteriors = table.posteriors is not None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = _evaluation(table, utilities, reference, s, labels)
    for w in sorted(caught, key=lambda w: issubclass(w.category, STATED)):
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    ev.notes = [*first, *ev.notes]
    alone = reference is None and labels is None and table.subconcept is None
    if alone and has_posteriors and utilities is not None:
        ev.notes.append(NO_REFERENCE_NOTE)
    return ev


@validate_params(
    {
        "y_true": [ArrayLike()],
        **{key: [ArrayLike(), None] for key in ("y_score", "y_pred", "subconcept", "posteriors")},
        "posterior_columns": [ArrayLike(), None],
        "train_sizes": [TypeOf(Mapping, Utilities, desc="train sizes or Utilities"), None],
        **EvaluateSettings.constraints,  # threshold, n_bootstrap, confidence, seed, ...
        "stratify": [StrOptions(STRATIFY), ArrayLike()],  # ... or per-row stratum codes
        "groups": [ArrayLike(), None],
        "pos_label": [TypeOf(object, desc="a label")],
        "reference": [TypeOf(ReferenceRows, desc="ReferenceRows"), None],
        "labels": [TypeOf(LabelledRows, desc="LabelledRows"), None],
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
    pos_label: Any = None,
    reference: ReferenceRows | None = None,
    labels: LabelledRows | None = None,
) -> Evaluation:
    """Evaluate test predictions given as arrays: :func:`evaluate` of the table they make.

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
        pos_label: the positive class (1, the minority class) when the labels are not {0, 1},
            booleans or {-1, 1}.
        reference: :class:`~medeval.io.reference.ReferenceRows` (held-out rows with true
            subconcepts, from the test rows' population) for rBA, rF1, rAUC (docs/method.md,
            "Rectified scores"; also needs ``posteriors`` and ``train_sizes``); paired with cBA's
            replicates (same ``seed``).
        labels: :class:`~medeval.evaluation.rectified_recall.LabelledRows`, test rows whose
            subconcept a person gave (positions, subconcept codes in the train sizes' order,
            inclusion probabilities, batches): see :func:`evaluate`.

    Per-subconcept recalls get Clopper–Pearson intervals (also with ``n_bootstrap=0``).
    """
    y, s, yp = _labels(y_true, y_score, y_pred, threshold, pos_label)
    if posteriors is not None and posterior_columns is not None:
        posteriors = pd.DataFrame(np.asarray(posteriors), columns=list(posterior_columns))
    codes = not isinstance(stratify, str)
    table = PredictionTable(
        Path("evaluate_predictions"), y, s, None if y_pred is None else yp, subconcept,
        posteriors, groups=groups, strata=stratify if codes else None,
    )  # fmt: skip
    settings = EvaluateSettings(
        threshold=threshold, n_bootstrap=n_bootstrap, confidence=confidence,
        stratify="class" if codes else stratify, seed=seed, device=device, progress=progress,
    )  # fmt: skip
    u = train_sizes
    if u is not None and not isinstance(u, Utilities):
        u = utilities_from_train_sizes(u)
    return evaluate(table, u, reference=reference, labels=labels, settings=settings)


def _evaluation(
    table: PredictionTable,
    utilities: Utilities | None,
    reference: ReferenceRows | None,
    s: Any,
    labels: LabelledRows | None = None,
) -> Evaluation:
    """The evaluation of :func:`evaluate`; the posteriors are dropped before the bootstrap."""
    y, sc, yp = _labels(table.y_true, table.y_score, table.y_pred, s.threshold)
    posteriors, table.posteriors = table.posteriors, None
    # the rectified per-subconcept recalls read the held-out reference rows alone: the labelled
    # rows enter them with their inclusion probabilities, not as reference rows
    held_out = reference
    if labels is not None and posteriors is not None and utilities is not None:
        given = labelled_reference(labels, y, yp, sc, posteriors, utilities)
        reference = pooled(reference, given)
    plan = _plan(y, table.subconcept, posteriors, utilities, table.groups)
    if labels is not None and table.subconcept is None and utilities is not None:
        plan.unavailable["w"] += labelled_for_w(len(labels.index), len(y))
    posteriors = None  # what follows reads the plan's weights: the matrix can be freed
    stratify = s.stratify if table.strata is None else table.strata
    if sc is None:
        for w in SCORED_WEIGHTINGS:
            plan.unavailable.setdefault(f"{w.prefix}AUC", NO_SCORES)
    notes = _first_notes(plan, utilities)
    if held_out is not None and (missing := missing_note(held_out)):
        notes.append(missing)
    point = _point_scores(y, yp, sc, plan, notes)
    reps = _replicates(y, yp, sc, plan, stratify, s)
    boot_info = _bootstrap_info(s.n_bootstrap, s.seed, stratify)
    inputs = _RectifyInputs(y, yp, sc, utilities, plan, point)
    # the given reference rows (with the labelled test rows pooled in) must hold every minority
    # subconcept; labelled rows alone, a sample of the test rows, are not checked so
    absent = ""
    if held_out is not None and utilities is not None:
        absent = absent_minority(reference, utilities)
    res, why, rows, row_notes = _rectified_parts(
        reference, inputs, reps, s.confidence, boot_info, seed=s.seed, device=s.device,
        absent=absent,
    )  # fmt: skip
    scores, intervals, unavailable, subsets = _score_tables(
        plan, point, reps, s.confidence, notes, rows
    )
    # the rectified per-subconcept recalls need what the rectified scores need, but for a
    # minority subconcept without reference rows: the others' recalls still read them
    blocked = bool(why) and why != absent
    ref_side = None if blocked or held_out is None else reference_evidence(held_out, utilities)
    per_sc = per_subconcept(
        y, yp, plan, utilities, s.confidence, notes, reps=reps, reference=ref_side,
        labelled=None if blocked else labels, seed=s.seed,
    )  # fmt: skip
    if labels is not None and not blocked and plan.q_class is not None and plan.sc_codes is None:
        sides = np.array([plan.sc_side[nm] for nm in plan.sc_names])
        hit = (yp == y).astype(np.float64)
        found = reopened(
            plan.q_class, hit, y, sides, plan.sc_names, ref_side, labels, confidence=s.confidence
        )
        notes += reopened_lines(found)
    no_codes = plan.q_class is None or plan.sc_codes is None  # no subconcept model to measure
    ev = Evaluation(
        scores=scores,
        intervals=intervals,
        unavailable=unavailable,
        subsets=subsets,
        per_subconcept=per_sc.table,
        worst_subconcepts=per_sc.worst,
        class_recall=per_sc.class_recall,
        confidence=s.confidence,
        bootstrap=boot_info,
        n=len(y),
        n_positive=int(y.sum()),
        threshold=float(s.threshold) if table.y_pred is None else None,  # labels from scores
        notes=notes,
        subconcept_model={} if no_codes else within_class_ba(y, plan.sc_codes, plan.q_class),
        weighted_classes=_weighted_classes(utilities),
    )
    return _with_reference(ev, reference, res, why, inputs, row_notes)


def labelled_for_w(n_labelled: int, n: int) -> str:
    """What the unavailable true-weight scores say of the labelled test rows."""
    return (
        f"; {n_labelled} of {n} test rows are labelled (--labels): they count in the rectified "
        "scores and in each subconcept's rect. recall and verdict, while the w scores need the "
        "subconcept of every test row"
    )


def _replicates(y, yp, s, plan: _Plan, stratify, settings: EvaluateSettings) -> Any:
    """Bootstrap replicates (``None`` for 0), with the soft columns ``[q̃ (S) | classes (2)]``."""
    if settings.n_bootstrap <= 0:
        return None
    soft = None
    if plan.sc_names:
        soft = class_indicators(y)
        if plan.q_class is not None and plan.sc_codes is None:  # true subconcepts: q̃ unread
            soft = np.concatenate([plan.q_class, soft], axis=1)
    boot = BatchedBootstrap(
        y,
        y_pred=yp,
        y_score=s,
        weights=plan.weights,
        subsets=plan.subsets,
        subconcept=plan.sc_codes,
        n_subconcepts=len(plan.sc_names),
        soft_subconcept=soft,
        strata=strata(stratify, y, plan.sc_codes),
        clusters=plan.groups,
        device=settings.device,
    )
    return boot.run(settings.n_bootstrap, seed=settings.seed, progress=settings.progress)


def _first_notes(plan: _Plan, utilities: Utilities | None) -> list[str]:
    """Notes on a single class-1 subconcept and on rows that fell back to the class mean."""
    notes: list[str] = []
    if utilities is not None and len(utilities.minority) == 1:
        notes.append(
            "the training sizes hold a single class-1 subconcept "
            f"({utilities.minority[0]!r}): every class-1 row has the same utility, so wBA, cBA "
            "and rBA equal BA (and wAUC, cAUC, rAUC equal AUC; the weighted F1s only rescale "
            "class 1 against class 0): no weighting can show a failure hidden within class 1; "
            "give two or more class-1 subconcepts"
        )
    if plan.n_fallback:
        notes.append(fallback_note(plan.n_fallback, "instance(s)"))
    return notes


def _score_tables(plan: _Plan, point, reps, confidence, notes, extra_rows=None) -> tuple:
    """Full-test scores, intervals, unavailable scores and the long subsets table."""
    subset_names = list(plan.subsets)
    aliases = _aliases(subset_names)
    idx = [j for _, j in aliases]
    columns: dict[str, list] = {c: [] for c in ("subset", "subconcept", "score")}
    names = ("value", "low", "high", "n_undefined")
    parts: dict[str, list[np.ndarray]] = {c: [np.empty(0)] for c in names}
    scores = dict.fromkeys(ALL_SCORES, math.nan)
    intervals: dict[str, tuple[float, float]] = {}
    unavailable: dict[str, str] = {}
    nan_row = np.full(len(subset_names), math.nan)
    bounds: dict[tuple, tuple] = {}  # (weighting, metric) → (low, high, n_undefined) (n_subsets,)
    if reps is not None and reps.scores:
        keys = list(reps.scores)
        stacked = torch.stack([reps.scores[k] for k in keys], 1)
        b = [v.cpu().numpy() for v in percentile_interval(stacked, confidence)]
        bounds = {k: (b[0][i], b[1][i], b[2][i]) for i, k in enumerate(keys)}
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
            for c, a in zip(names, (vals, lo, hi, nu), strict=True):
                parts[c].append(a[idx])
    if extra_rows:
        for c in columns:
            columns[c] += extra_rows[c]
        for c in names:
            parts[c].append(np.asarray(extra_rows[c], dtype=np.float64))
    values = {c: np.concatenate(p) for c, p in parts.items()}
    if reps is not None:  # counts of replicates: whole numbers
        values["n_undefined"] = values["n_undefined"].astype(np.int64)
    return scores, intervals, unavailable, pd.DataFrame({**columns, **values})


def _weighted_classes(utilities: Utilities | None) -> list[str]:
    """Classes whose subconcepts differ in utility (only there the model matters)."""
    if utilities is None:
        return []
    vals = [utilities.values[utilities.sides == c] for c in (0, 1)]
    return [f"class {c}" for c, v in enumerate(vals) if len(v) and not np.all(v == v[0])]
