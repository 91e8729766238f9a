"""How many more labels each open verdict needs, by simulating the label loop under today's
estimates (docs/method.md, "Labels chosen where they decide": its "When to stop").

Every test row's hit is known; what is not is the subconcept of the rows not labelled. A
*world* draws it for each of them from today's posteriors within its class — recalibrated on
the rows of known subconcept, as the estimate itself is
(:func:`~medeval.evaluation.posterior_calibration.recalibrated_for_labels`) — and then runs
the loop forward in it: batches chosen by the same design
(:func:`~medeval.evaluation.label_design.plan_batch`), their subconcepts revealed from the
world, the verdicts re-estimated after each, until each subconcept asked about is decided
(``below`` or ``not below`` its class) or ``max_labels`` more were spent. The forecast of a
subconcept is the median over the worlds of the labels it took (a world that did not decide it
counts as more than ``max_labels``). Where the posteriors are calibrated, the worlds are draws
of what the unlabelled rows may be; the forecast is then the loop's own expected cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from medeval.evaluation.label_design import plan_batch
from medeval.evaluation.posterior_calibration import recalibrated_for_labels
from medeval.evaluation.rectified_recall import (
    VERDICTS,
    LabelledRows,
    ReferenceEvidence,
    class_recall_each,
    rectified_recall,
    verdicts,
)

__all__ = ["Forecast", "labels_to_decide"]

#: Whether a world's posteriors are averaged over the map's own spread, as the estimate's are
#: (a world is a draw of what the rows may be, not an interval to cover).
WORLD_SPREAD = False
_TAG = 0x464F5243  # the worlds' own stream ("FORC")


@dataclass(frozen=True)
class Forecast:
    """Per subconcept ``(S,)``: ``median`` more labels to decide its verdict over the worlds
    (``inf`` where fewer than half decided it within ``max_labels``; NaN where it was not asked
    about), ``low`` and ``high`` the worlds' quartiles, ``decided`` the share of worlds that
    decided it; ``worlds``, ``batch`` and ``max_labels`` as simulated."""

    median: np.ndarray
    low: np.ndarray
    high: np.ndarray
    decided: np.ndarray
    worlds: int
    batch: int
    max_labels: int


def labels_to_decide(
    q: np.ndarray,
    hit: np.ndarray,
    y: np.ndarray,
    sides: np.ndarray,
    names: tuple[str, ...],
    *,
    targets: np.ndarray,
    reference: ReferenceEvidence | None = None,
    labelled: LabelledRows | None = None,
    batch: int = 20,
    max_labels: int = 200,
    worlds: int = 10,
    seed: int = 0,
    confidence: float = 0.95,
    utility: np.ndarray | None = None,
    focus: str | None = None,
    looks: int | None = None,
) -> Forecast:
    """The forecast for the subconcepts ``targets`` ``(S,)`` (bool) of test rows ``q`` ``(N, S)``
    (within-class posteriors), ``hit``, ``y`` ``(N,)``: ``worlds`` simulated continuations of
    the loop in batches of ``batch`` labels, at most ``max_labels`` more, seeded by ``seed``;
    each look read as ``evaluate`` reads it, ``looks`` planned (default: ``labelled``'s plan)."""
    s = len(names)
    targets = np.asarray(targets, dtype=bool)
    took = np.full((worlds, s), np.inf)
    if not targets.any() or worlds < 1:
        return _summary(took, targets, worlds, batch, max_labels)
    q_now = _given_hits(q, hit, y, sides, reference, labelled, confidence)
    rng = np.random.default_rng([int(seed), _TAG])
    rows0 = np.zeros(0, int) if labelled is None else labelled.index
    sub0 = np.zeros(0, int) if labelled is None else labelled.subconcept
    pi0 = np.zeros(0) if labelled is None else labelled.pi
    bt0 = np.zeros(0, int) if labelled is None else labelled.batch
    first = 1 + (int(bt0.max()) if len(bt0) else 0)
    plan = looks if looks is not None else (None if labelled is None else labelled.looks)
    cr = class_recall_each(hit, y, sides)
    for w in range(worlds):
        world = _draw_world(rng, q_now)
        world[rows0] = sub0
        rows, pi, bt = rows0, pi0, bt0
        open_ = targets.copy()
        spent, k = 0, first
        while open_.any() and spent < max_labels:
            lab = LabelledRows(rows, world[rows], pi, bt, looks=plan) if len(rows) else None
            size = int(min(batch, max_labels - spent, len(y) - len(rows)))
            if size < 1:
                break
            d, _ = plan_batch(
                q, hit, y, sides, names, reference=reference, labelled=lab, budget=size,
                seed=int(rng.integers(2**31)), confidence=confidence, utility=utility,
                focus=focus,
            )  # fmt: skip
            rows, pi = np.r_[rows, d.rows], np.r_[pi, d.inclusion]
            bt = np.r_[bt, np.full(len(d.rows), k)]
            spent, k = spent + len(d.rows), k + 1
            lab = LabelledRows(rows, world[rows], pi, bt, looks=plan)
            res = rectified_recall(q, hit, y, sides, reference, labelled=lab, confidence=confidence)
            done = open_ & (verdicts(cr - res.high, cr - res.low) != VERDICTS[2])
            took[w, done] = spent
            open_ &= ~done
    return _summary(took, targets, worlds, batch, max_labels)


def _given_hits(q, hit, y, sides, reference, labelled, confidence) -> np.ndarray:
    """Each row's subconcept posterior ``(N, S)`` given what is known of it: today's
    (recalibrated) posteriors times the likelihood of its hit under each subconcept's recall as
    estimated today, ``q_s·θ_s^hit·(1 − θ_s)^(1 − hit)`` renormalised (hits do not depend on
    what the subconcept model sees once the subconcept is known)."""
    # the worlds from the best estimate of the posteriors: recalibrated on the known rows
    q_now, _ = recalibrated_for_labels(q, y, sides, labelled, reference, spread=WORLD_SPREAD)
    theta = (q_now * hit[:, None]).sum(0) / np.maximum(q_now.sum(0), 1e-12)  # label-free
    if reference is not None or labelled is not None:
        res = rectified_recall(
            q, hit, y, sides, reference, labelled=labelled, confidence=confidence
        )
        theta = np.where(np.isfinite(res.recall), res.recall, theta)
    theta = np.clip(theta, 0.01, 0.99)
    like = np.where(hit[:, None] > 0, theta[None, :], 1 - theta[None, :])
    out = q_now * like
    return out / np.maximum(out.sum(1, keepdims=True), 1e-300)


def _draw_world(rng: np.random.Generator, q: np.ndarray) -> np.ndarray:
    """One subconcept code ``(N,)`` per row from its within-class posteriors ``q`` ``(N, S)``."""
    c = np.cumsum(q, axis=1)
    c /= c[:, -1:]
    return np.minimum((rng.random((len(q), 1)) > c).sum(1), q.shape[1] - 1)


def _summary(took, targets, worlds, batch, max_labels) -> Forecast:
    med = np.full(took.shape[1], np.nan)
    lo, hi, dec = med.copy(), med.copy(), med.copy()
    if worlds and targets.any():
        t = took[:, targets]
        med[targets] = np.quantile(t, 0.5, axis=0, method="inverted_cdf")
        lo[targets] = np.quantile(t, 0.25, axis=0, method="inverted_cdf")
        hi[targets] = np.quantile(t, 0.75, axis=0, method="inverted_cdf")
        dec[targets] = np.isfinite(t).mean(0)
    return Forecast(med, lo, hi, dec, worlds, batch, max_labels)
