"""The evaluation itself: :func:`evaluate` (a table of test predictions, the utilities, the
reference rows and one :class:`EvaluateSettings`), the one front of every tool, and
:func:`evaluate_predictions`, which makes that table of arrays; the point estimates, the bootstrap
intervals and the tables they put together."""

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
from medeval.evaluation.checks import codes as _codes
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
from medeval.evaluation.rectified import FewReferenceRowsWarning
from medeval.evaluation.rectified_recall import LabelledRows
from medeval.evaluation.result import NO_SCORES, Evaluation
from medeval.evaluation.subconcept_recall import reference_evidence
from medeval.io.predictions import PredictionTable
from medeval.io.reference import ReferenceRows, check_against_test
from medeval.metrics._checks import UndefinedMetricWarning
from medeval.metrics.bootstrap import BatchedBootstrap, percentile_interval
from medeval.metrics.classification import ba_from_sums, confusion_sums, f1_from_sums
from medeval.metrics.multiclass import within_class_ba
from medeval.metrics.ranking import auc_from_sums, auc_sums
from medeval.options import STRATIFY, EvaluationOptions
from medeval.scores import ALL_SCORES, FAMILIES, SCORED_WEIGHTINGS
from medeval.weights import Utilities, utilities_from_train_sizes

_POINT_BLOCK = 2**22  # elements of one (subsets, N) weight block for the point estimates


def _point_scores(y, y_pred, y_score, plan: _Plan, notes: list[str]) -> dict[tuple, np.ndarray]:
    """``{(weighting, metric): (n_subsets,)}`` exact point estimates, in blocks of subsets."""
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
    """The point estimates, the bootstrap, the rectified scores and the tables of
    :func:`evaluate`. The table's posteriors are taken out of it and dropped once the plan
    holds its weights, so no frame holds them during the bootstrap."""
    y, sc, yp = _labels(table.y_true, table.y_score, table.y_pred, s.threshold)
    posteriors, table.posteriors = table.posteriors, None
    if labels is not None and posteriors is not None and utilities is not None:
        given = labelled_reference(labels, y, yp, sc, posteriors, utilities)
        reference = pooled(reference, given)
    plan = _plan(y, table.subconcept, posteriors, None, utilities)
    posteriors = None  # what follows reads the plan's weights: the matrix can be freed
    groups = table.groups
    stratify = s.stratify if table.strata is None else table.strata
    plan.groups = None if groups is None else _codes(groups, len(y), "groups")
    if sc is None:
        for w in SCORED_WEIGHTINGS:
            plan.unavailable.setdefault(f"{w.prefix}AUC", NO_SCORES)
    notes = _first_notes(plan, utilities)
    point = _point_scores(y, yp, sc, plan, notes)
    seed, device = s.seed, s.device
    reps = _replicates(y, yp, sc, plan, stratify, s)
    boot_info = _bootstrap_info(s.n_bootstrap, seed, stratify)
    thr = float(s.threshold) if table.y_pred is None else None  # labels made from scores
    inputs = _RectifyInputs(y, yp, sc, utilities, plan, point)
    opts = dict(seed=seed, device=device)
    res, why, rows, row_notes = _rectified_parts(
        reference, inputs, reps, s.confidence, boot_info, **opts
    )
    # the rectified per-subconcept recalls need what the rectified scores need; the labelled
    # rows enter them with their inclusion probabilities, not as reference rows
    held_out = None if why or reference is None else _held_out(reference, labels)
    ref_side = None if held_out is None else reference_evidence(held_out, utilities)
    ev = _assemble(
        y, yp, plan, utilities, point, reps, s.confidence, notes, bootstrap=boot_info,
        threshold=thr, extra_rows=rows, reference=ref_side, seed=seed,
        labelled=None if why else labels,
    )  # fmt: skip
    return _with_reference(ev, reference, res, why, inputs, row_notes)


def _replicates(y, yp, s, plan: _Plan, stratify, settings: EvaluateSettings) -> Any:
    """Every score's bootstrap replicates (``None`` for ``n_bootstrap`` 0); with subconcepts
    also of the soft columns ``[q̃ (S) | class indicators (2)]``, which the per-subconcept
    recalls and the worst subconcept's gap read (:func:`per_subconcept`)."""
    if settings.n_bootstrap <= 0:
        return None
    soft = None
    if plan.sc_names:
        soft = class_indicators(y)
        if plan.q_class is not None:
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
    """The first notes: a single class-1 subconcept (nothing is weighted), and how many rows
    fell back to their class's mean utility."""
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
        notes.append(
            f"{plan.n_fallback} instance(s) have zero posterior mass on the subconcepts of their "
            "own class; their class-conditional weight is the mean utility of that class "
            '(docs/method.md, "Label-free scores")'
        )
    return notes


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
    names = ("value", "low", "high", "n_undefined")
    values = {nm: np.concatenate([np.empty(0), *p]) for nm, p in zip(names, parts, strict=True)}
    if reps is not None:  # counts of replicates: whole numbers (converted before the frame
        values["n_undefined"] = values["n_undefined"].astype(np.int64)  # is built: cheaper)
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


def _held_out(reference: ReferenceRows, labels: LabelledRows | None) -> ReferenceRows | None:
    """The held-out reference rows of a pooled set (the labelled test rows come last)."""
    if labels is None:
        return reference
    n = len(reference) - len(labels.index)
    if n == 0:
        return None
    keep = slice(0, n)
    return ReferenceRows(
        reference.y_true[keep], reference.subconcept[keep], reference.posteriors[keep],
        reference.names, reference.y_pred[keep],
        None if reference.y_score is None else reference.y_score[keep], source=reference.source,
    )  # fmt: skip


def _assemble(
    y, yp, plan: _Plan, u, point, reps, confidence, notes, *, bootstrap: dict, threshold,
    extra_rows: dict[str, list] | None = None, reference=None, seed: int = 0, labelled=None,
) -> Evaluation:  # fmt: skip
    scores, intervals, unavailable, subsets = _score_tables(
        plan, point, reps, confidence, notes, extra_rows
    )
    no_codes = plan.q_class is None or plan.sc_codes is None  # no subconcept model to measure
    per_sc = per_subconcept(
        y, yp, plan, u, confidence, notes, reps=reps, reference=reference, labelled=labelled,
        seed=seed,
    )  # fmt: skip
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
        subconcept_model={} if no_codes else within_class_ba(y, plan.sc_codes, plan.q_class),
        weighted_classes=_weighted_classes(u),
    )


def _weighted_classes(utilities: Utilities | None) -> list[str]:
    """Classes whose subconcepts have different utilities: only there do the label-free
    weights depend on the subconcept model (a class of equal utilities gets them exactly)."""
    if utilities is None:
        return []
    out = []
    for c in (0, 1):
        vals = utilities.values[utilities.sides == c]
        if len(vals) and not np.all(vals == vals[0]):
            out.append(f"class {c}")
    return out
