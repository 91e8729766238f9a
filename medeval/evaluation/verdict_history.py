"""Verdicts that reopen: each subconcept's verdict after every earlier batch of labels, and the
words that say why one decided before (below, not below) is now ``not known``.

The state after batch ``k`` is the estimate :func:`~medeval.evaluation.rectified_recall.
rectified_recall` gives from the reference rows and the labelled rows of batches ``1..k`` (the
estimate ``label`` and ``evaluate`` gave when only those were labelled: a batch's inclusion
probabilities are fixed before its labels are seen, so the earlier batches alone are a valid
set of labels); state 0 is the reference rows alone."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from medeval.evaluation.rectified_recall import (
    VERDICTS,
    LabelledRows,
    ReferenceEvidence,
    class_recall_each,
    rectified_recall,
    verdicts,
)

__all__ = ["REOPENED", "Reopened", "reopened", "reopened_lines"]

#: How a reopened verdict's note starts (the printed lines of ``label`` and ``evaluate``).
REOPENED = "verdict reopened — "

#: Changes smaller than this (in recall) are not called a move or a widening.
_SMALL = 0.005


@dataclass(frozen=True)
class Reopened:
    """A verdict that was decided after an earlier batch and is now ``not known``: the
    subconcept, its class's recall, the state it was decided at (0: the reference rows alone)
    and the current one, the verdict then, each state's recall, bounds and effective rows, and
    the labelled rows that entered since (all of them, and those of the subconcept)."""

    name: str
    class_recall: float
    then: int
    now: int
    verdict: str
    recall: tuple[float, float]
    low: tuple[float, float]
    high: tuple[float, float]
    n_eff: tuple[float, float]
    entered: int
    entered_own: int
    #: each state's level (the looks planned read each at its share of the error)
    level: tuple[float, float] = (float("nan"), float("nan"))


def _state(labelled: LabelledRows, k: int) -> LabelledRows | None:
    """The labelled rows of batches ``1..k`` (``None`` for none)."""
    keep = labelled.batch <= k
    if not keep.any():
        return None
    return replace(
        labelled,
        index=labelled.index[keep],
        subconcept=labelled.subconcept[keep],
        pi=labelled.pi[keep],
        batch=labelled.batch[keep],
    )


def reopened(
    q: np.ndarray,
    hit: np.ndarray,
    y: np.ndarray,
    sides: np.ndarray,
    names: tuple[str, ...],
    reference: ReferenceEvidence | None,
    labelled: LabelledRows | None,
    *,
    confidence: float,
) -> list[Reopened]:
    """The subconcepts whose verdict is ``not known`` now (with every batch of ``labelled``)
    and was decided after an earlier batch, the latest such (``q`` ``(N, S)`` within-class
    posteriors, ``hit``, ``y`` ``(N,)``, ``sides`` ``(S,)``)."""
    if labelled is None or not len(labelled.index):
        return []
    last = int(labelled.batch.max())
    cr = class_recall_each(hit, y, sides)
    several = np.array([(sides == c).sum() > 1 for c in sides])
    states = []
    for k in range(last + 1):
        lab = _state(labelled, k)
        if lab is None and reference is None:
            states.append(None)  # nothing known: no verdict to reopen
            continue
        res = rectified_recall(
            q, hit, y, sides, reference, labelled=lab, confidence=confidence, n_draws=0
        )
        states.append((res, verdicts(cr - res.high, cr - res.low)))
    now, v_now = states[-1]
    out = []
    for s in np.flatnonzero(several & (v_now == VERDICTS[2])):
        decided = [
            k for k, st in enumerate(states[:-1]) if st is not None and st[1][s] != VERDICTS[2]
        ]
        if not decided:
            continue
        k = decided[-1]
        then, v_then = states[k]
        since = labelled.batch > k
        out.append(
            Reopened(
                name=str(names[s]),
                class_recall=float(cr[s]),
                then=k,
                now=last,
                verdict=str(v_then[s]),
                recall=(float(then.recall[s]), float(now.recall[s])),
                low=(float(then.low[s]), float(now.low[s])),
                high=(float(then.high[s]), float(now.high[s])),
                n_eff=(float(then.n_eff[s]), float(now.n_eff[s])),
                entered=int(since.sum()),
                entered_own=int((since & (labelled.subconcept == s)).sum()),
                level=(float(then.level), float(now.level)),
            )
        )
    return out


def _after(k: int) -> str:
    return "with the reference rows alone" if k == 0 else f"after batch {k}"


def _batches(a: int, b: int) -> str:
    return f"batch {b}" if a == b else f"batches {a}–{b}"


def _level_change(then: float, now: float) -> str:
    """``; read at 99.93 %, was 95 %`` where the two states' levels differ (a planned look
    reads its intervals at its share of the error), else nothing."""
    if not (np.isfinite(then) and np.isfinite(now)) or f"{then:.2%}" == f"{now:.2%}":
        return ""
    return f"; read at {now:.2%}, was {then:.2%}"


def reopened_lines(found: list[Reopened]) -> list[str]:
    """One line per reopened verdict, in words: what it was and when, what it is now, and what
    changed its interval (the estimate moved, the interval widened) as which rows entered."""
    lines = []
    for r in found:
        (r0, r1), (l0, l1), (h0, h1) = r.recall, r.low, r.high
        w0, w1 = h0 - l0, h1 - l1
        moves = []
        if f"{r0:.2f}" != f"{r1:.2f}":  # a move the printed figures show
            moves.append(f"its estimate {'fell' if r1 < r0 else 'rose'} from {r0:.2f} to {r1:.2f}")
        span = f"from [{l0:.2f}, {h0:.2f}] to [{l1:.2f}, {h1:.2f}]"
        verb = "widened" if w1 > w0 + _SMALL else ("narrowed" if w1 < w0 - _SMALL else "moved")
        moves.append(
            f"its interval {verb} {span} (effective rows {r.n_eff[0]:.0f} → {r.n_eff[1]:.0f}"
            + _level_change(*r.level)
            + ")"
        )
        holds = (
            f"now holds its class's recall {r.class_recall:.2f}"
            if np.isfinite(l1)
            else "has no interval now"
        )
        own = "none of them" if not r.entered_own else f"{r.entered_own} of them"
        lines.append(
            f"{REOPENED}{r.name}: was {r.verdict} {_after(r.then)}; now not known: "
            + " and ".join(moves)
            + f", so that it {holds}, as the {r.entered} labelled rows of "
            f"{_batches(r.then + 1, r.now)} entered ({own} {r.name})"
        )
    return lines
