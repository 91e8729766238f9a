"""Test predictions (+ the labels given so far, + reference rows) → the test rows to label next:
``python -m medeval.label`` (docs/own_model.md, "Label next"); the same inputs and seed propose
the same rows."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from medeval.errors import InputError
from medeval.evaluation.checks import ScoreRangeWarning, input_notes
from medeval.evaluation.checks import labels as checked_labels
from medeval.evaluation.label_design import Design, plan_batch
from medeval.evaluation.looks import DEFAULT_LOOKS, looks_note
from medeval.evaluation.rectified_recall import (
    LabelledRows,
    RectifiedRecall,
    class_recall_each,
    verdicts,
)
from medeval.evaluation.subconcept_recall import reference_evidence
from medeval.evaluation.verdict_history import reopened, reopened_lines
from medeval.io.labels import (
    label_files,
    labels_note,
    last_batch,
    planned_looks,
    read_ids,
    read_labels,
    sheet,
)
from medeval.io.predictions import read_predictions, read_train_sizes
from medeval.options import LabelSettings
from medeval.weights import renormalise_within_class

__all__ = ["FORECAST_MAX_ROWS", "LabelBatch", "LabelSettings", "label_next"]

#: The forecast of labels still needed runs by default on up to this many test rows (each
#: world re-plans every batch: seconds at 2,000 rows, minutes at 100,000); ``--forecast W``
#: asks for it on any number.
FORECAST_MAX_ROWS = 20_000
#: Worlds of the forecast by default, and the most labels it looks ahead.
FORECAST_WORLDS = 10
FORECAST_HORIZON = 200


@dataclass(frozen=True)
class LabelBatch:
    """The next batch: ``frame`` (``to_label.csv``), its number, the design, the estimate
    from what was known before it (``None`` when nothing was), lines to print, and each
    class's subconcepts in the training order (``{class: names}``)."""

    frame: pd.DataFrame
    batch: int
    design: Design | None  # None: the labelling budget is spent, no batch proposed
    known: RectifiedRecall | None
    lines: list[str]
    notes: list[str]
    images: bool
    subconcepts: dict[int, tuple[str, ...]] = field(default_factory=dict)


def label_next(
    predictions: str | Path,
    train_sizes: str | Path,
    *,
    labels: str | Path | Sequence[str | Path] | None = None,
    reference: str | Path | None = None,
    settings: LabelSettings | None = None,
) -> LabelBatch:
    """The next batch of test rows to label: what is known so far (each subconcept's rectified
    recall and verdict), then the rows where a label decides most
    (:func:`medeval.evaluation.label_design.plan_batch`).

    Raises:
        InputError: a predictions file without ``id`` or posteriors, probability scores with
            a threshold outside [0, 1], or a bad labels file, naming the file, row and value.
    """
    s = settings or LabelSettings()
    got = _read_inputs(predictions, train_sizes, labels, reference, s)
    u, y, q, hit, labelled, ref, notes = (
        got.u,
        got.y,
        got.q,
        got.hit,
        got.labelled,
        got.ref,
        got.notes,
    )
    if s.focus is not None:
        _check_focus(s.focus, u, predictions)
    n_lab = 0 if labelled is None else len(labelled.index)
    size = _batch_size(s, len(y), n_lab, got.files, notes)
    if size == 0:
        return _spent(s, q, hit, y, u, ref, labelled, notes, got.batch, got.images)
    design, known = plan_batch(
        q,
        hit,
        y,
        u.sides,
        tuple(u.names),
        reference=ref,
        labelled=labelled,
        budget=size,
        # each batch's own draw, from the run's seed and the batch number
        seed=int(np.random.SeedSequence([int(s.seed), int(got.batch)]).generate_state(1)[0]),
        confidence=s.confidence,
        utility=u.values,
        focus=s.focus,
    )
    frame = sheet(
        design.rows, design.inclusion, got.batch, got.ids, y, q, u, got.images, looks=got.looks
    )
    lines = _lines(design, known, q, hit, y, u, got.batch)
    found = reopened(q, hit, y, u.sides, tuple(u.names), ref, labelled, confidence=s.confidence)
    lines[-1:-1] = reopened_lines(found)  # after the verdicts so far, before the batch
    lines[-1:-1] = _forecast_lines(
        s, design, known, q, hit, y, u, ref, labelled, n_lab, got.batch, got.looks
    )
    return LabelBatch(
        frame, got.batch, design, known, lines, notes, got.images is not None, _subconcepts(u)
    )


@dataclass(frozen=True)
class _Inputs:
    """What ``label`` reads: the train sizes' utilities, the test rows (ids, images, classes,
    within-class posteriors, hits), the labels so far and the next batch's number, the
    reference rows, and the notes reading them left."""

    u: object
    ids: np.ndarray
    images: object
    y: np.ndarray
    q: np.ndarray
    hit: np.ndarray
    labelled: LabelledRows | None
    batch: int
    looks: int
    files: list | None
    ref: object
    notes: list[str]


def _read_inputs(predictions, train_sizes, labels, reference, s: LabelSettings) -> _Inputs:
    """Read and check the predictions, train sizes, labels files and reference rows."""
    u = read_train_sizes(train_sizes)
    table = read_predictions(predictions, u)
    with warnings.catch_warnings():  # the threshold's rule of evaluate; a warning is a note
        warnings.simplefilter("ignore", ScoreRangeWarning)
        notes = input_notes(table, s.threshold)
    if table.posteriors is None:
        raise InputError(
            predictions,
            "choosing rows needs the subconcept model's posteriors "
            "(a q_<subconcept> column for every subconcept)",
        )
    ids, images = read_ids(predictions)
    y, _, yp = checked_labels(table.y_true, table.y_score, table.y_pred, s.threshold)
    q = renormalise_within_class(
        torch.tensor(table.posteriors[list(u.names)].to_numpy()), u, y
    ).q.numpy()
    hit = (yp == y).astype(np.float64)
    labelled, batch, looks = None, 1, _planned(s)
    files = None if labels is None else label_files(labels)
    if files is not None:
        fields, read_notes = read_labels(files, ids, y, u)
        notes += [*read_notes, labels_note(fields, files, len(ids))]
        batch = last_batch(files) + 1  # after every batch given, one all unsure included
        given = _looks_given(files, s, looks, notes)
        if len(fields["index"]):  # read as evaluate --labels reads the same files
            labelled = LabelledRows(**fields, looks=given)
            notes.append(looks_note(s.confidence, int(labelled.batch.max()), given))
        looks = looks if given is None else given
    ref = None
    if reference is not None:
        from medeval.io.reference import load_reference

        rows, _ = load_reference(reference, u, threshold=s.threshold)
        ref = reference_evidence(rows, u)
    return _Inputs(u, ids, images, y, q, hit, labelled, batch, looks, files, ref, notes)


def _planned(s: LabelSettings) -> int:
    """The looks to plan at the first batch: ``--looks``, else ``--max-labels / --budget``,
    else :data:`~medeval.evaluation.looks.DEFAULT_LOOKS`."""
    if s.looks is not None:
        return int(s.looks)
    if s.max_labels is not None:
        return max(-(-int(s.max_labels) // int(s.budget)), 1)
    return DEFAULT_LOOKS


def _looks_given(files, s: LabelSettings, planned: int, notes: list[str]) -> int | None:
    """The plan the labels files carry (fixed by their first batch; ``None`` where they carry
    none: written by hand, or before plans were written — the new sheet then plans
    ``planned``, and the labels given are read as evaluate reads them, each look alone)."""
    given, said = planned_looks(files)
    notes += said
    if given is None:
        notes.append(f"looks: the new sheet plans {planned} looks, the batches given among them")
        return None
    if s.looks is not None and s.looks != given:
        notes.append(
            f"--looks {s.looks}: the labels files planned {given} looks at their first batch; "
            "that plan is kept (a plan changed after looking would not keep the error)"
        )
    return given


def _batch_size(s: LabelSettings, n: int, n_lab: int, files, notes: list[str]) -> int:
    """Rows in the next batch: ``--budget``, cut to the rows not yet labelled and to what is
    left of ``--max-labels`` (each cut said in ``notes``); 0 once that budget is spent."""
    free = n - n_lab
    if free == 0:
        raise InputError(files[-1], "every test row is labelled already: nothing left to choose")
    if s.budget > free:
        notes.append(
            f"--budget {s.budget} is more than the {free} rows not yet labelled: "
            f"all {free} are proposed"
        )
    size = min(s.budget, free)
    if s.max_labels is not None:
        left = s.max_labels - n_lab
        if left <= 0:
            return 0
        if left < size:
            notes.append(f"--max-labels {s.max_labels}: {left} labels left, so {left} rows")
            size = left
    return size


def _subconcepts(u) -> dict[int, tuple[str, ...]]:
    """Each class's subconcepts in the training order."""
    return {
        int(c): tuple(str(nm) for nm, side in zip(u.names, u.sides, strict=True) if side == c)
        for c in (0, 1)
    }


def _spent(s, q, hit, y, u, ref, labelled, notes, batch, images) -> LabelBatch:
    """The labelling budget is spent: what is decided and what is still open, and no batch."""
    from medeval.evaluation.rectified_recall import rectified_recall

    known = rectified_recall(q, hit, y, u.sides, ref, labelled=labelled, confidence=s.confidence)
    lines = _verdict_lines(known, hit, y, u)
    lines.append(
        f"the labelling budget (--max-labels {s.max_labels}) is spent: "
        f"{len(labelled.index) if labelled is not None else 0} rows labelled; "
        "no batch is proposed — stop here, or raise --max-labels"
    )
    return LabelBatch(
        pd.DataFrame(), batch, None, known, lines, notes, images is not None, _subconcepts(u)
    )


def _forecast_lines(
    s, design, known, q, hit, y, u, ref, labelled, n_lab, batch, looks
) -> list[str]:
    """When the loop can stop (every verdict decided), or how many more labels each open
    verdict needs by simulation (:func:`medeval.evaluation.label_forecast.labels_to_decide`)."""
    if known is None:
        return []
    if design.decided:
        return [
            f"every verdict is decided ({n_lab} rows labelled): the loop can stop here; the "
            "batch below, spread over every subconcept, only checks them"
        ]
    cr = class_recall_each(hit, y, u.sides)
    several = np.array([(u.sides == c).sum() > 1 for c in u.sides])
    targets = several & (verdicts(cr - known.high, cr - known.low) == "not known")
    if s.focus is not None:
        targets &= np.asarray(u.names) == s.focus
    worlds = s.forecast
    if worlds is None:
        worlds = FORECAST_WORLDS if len(y) <= FORECAST_MAX_ROWS else 0
        if worlds == 0 and targets.any():
            return [
                f"labels still needed: not simulated for {len(y):,} test rows (over "
                f"{FORECAST_MAX_ROWS:,}; --forecast {FORECAST_WORLDS} runs it)"
            ]
    if worlds == 0 or not targets.any():
        return []
    from medeval.evaluation.label_forecast import labels_to_decide

    horizon = FORECAST_HORIZON
    if s.max_labels is not None:
        horizon = max(min(horizon, s.max_labels - n_lab - len(design.rows)), 0)
    f = labels_to_decide(
        q, hit, y, u.sides, tuple(u.names), targets=targets, reference=ref, labelled=labelled,
        batch=s.budget, max_labels=max(horizon, 1), worlds=worlds,
        seed=int(np.random.SeedSequence([int(s.seed), int(batch), 7]).generate_state(1)[0]),
        confidence=s.confidence, utility=u.values, focus=s.focus, looks=looks,
    )  # fmt: skip
    said = []
    for i in np.flatnonzero(targets):
        nm = u.names[i]
        if np.isinf(f.median[i]):
            said.append(f"{nm} more than {f.max_labels} (decided in {f.decided[i]:.0%} of worlds)")
        else:
            lo, hi = f.low[i], f.high[i]
            span = f"{lo:.0f}–{hi:.0f}" if np.isfinite(hi) else f"{lo:.0f} to over {f.max_labels}"
            said.append(f"{nm} ~{f.median[i]:.0f}" + (f" ({span})" if lo != hi else ""))
    return [
        "labels still needed to decide, this batch included (simulated: "
        f"{f.worlds} worlds drawn from today's estimates, batches of {f.batch}): " + ", ".join(said)
    ]


def _check_focus(focus: str, u, predictions) -> None:
    """``--focus``: a subconcept of the training sizes whose class has another to compare."""
    from medeval.errors import UserError

    names = list(u.names)
    if focus not in names:
        raise UserError(
            f"--focus {focus!r}: no such subconcept in the train sizes of {predictions} "
            f"(they are {', '.join(map(repr, names))})"
        )
    side = int(u.sides[names.index(focus)])
    if (u.sides == side).sum() < 2:
        raise UserError(
            f"--focus {focus!r}: the only subconcept of class {side}, so it is its class and "
            "has no verdict to decide; choose a subconcept of a class with several"
        )


def _verdict_lines(known: RectifiedRecall, hit, y, u) -> list[str]:
    """Per class with several subconcepts: which are below, not below, not known so far."""
    names = np.asarray(u.names)
    cr = class_recall_each(hit, y, u.sides)
    v = verdicts(cr - known.high, cr - known.low)
    out = []
    for c in (1, 0):
        idx = np.flatnonzero(u.sides == c)
        if len(idx) < 2:
            continue
        said = [
            f"{w}: {', '.join(names[idx][v[idx] == w])}"
            for w in ("below", "not below", "not known")
            if (v[idx] == w).any()
        ]
        out.append(f"class {c}, so far — " + "; ".join(said))
    return out


def _lines(design: Design, known, q, hit, y, u, batch: int) -> list[str]:
    """What the labels so far decided, per class, and what the next batch is for."""
    names = np.asarray(u.names)
    out = [] if known is None else _verdict_lines(known, hit, y, u)
    expected = design.expected  # rows of each subconcept the batch expects
    if expected is None:
        expected = (design.pi[:, None] * q).sum(0)
    shares = dict(zip(design.open, design.share, strict=False))
    aims = [
        f"{nm} (~{expected[list(names).index(nm)]:.1f} rows"
        + (f", {shares[nm]:.0%} of the aimed labels" if nm in shares else "")
        + ")"
        for nm in design.open
    ]
    out.append(
        f"batch {batch}: {len(design.rows)} rows to label, aimed at "
        + (", ".join(aims) if aims else "every subconcept")
    )
    if known is None:
        out.append("no labels yet: this batch aims at every subconcept of a class with several")
    return out
