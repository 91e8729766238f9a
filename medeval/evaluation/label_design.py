"""Which test rows to label next: the batch shared among the open verdicts by how close each is
to being decided and by its utility (or given to one ``focus`` subconcept), each share on the
rows most probably of that subconcept, with a uniform share; drawn by
systematic sampling (docs/method.md, "Labels chosen where they decide")."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from medeval.evaluation.posterior_calibration import recalibrated_for_labels
from medeval.evaluation.rectified_recall import (
    LabelledRows,
    RectifiedRecall,
    ReferenceEvidence,
    class_recall_each,
    could_be_worst_by_class,
    rectified_recall,
    verdicts,
)

#: The share of the budget spread uniformly over the unlabelled rows.
UNIFORM_SHARE = 0.2
#: Each open subconcept's least priority, against ``(|gap| / half-width)²`` (so that a verdict
#: whose gap looks like 0 today still gets a few labels: its estimate may be wrong).
PRIORITY_FLOOR = 0.05
_TAG = 0x4C41424C  # the design's own stream ("LABL")


@dataclass(frozen=True)
class Design:
    """The rows to label next: their positions ``(n,)`` among the test rows, in the order
    drawn, and each one's inclusion probability ``(n,)``; ``pi`` ``(N,)`` every unlabelled
    row's (0 for rows labelled before); ``open`` the subconcepts the design aimed at."""

    rows: np.ndarray
    inclusion: np.ndarray
    pi: np.ndarray
    open: tuple[str, ...]
    #: each open subconcept's share of the aimed (not uniform) part of the batch
    share: tuple[float, ...] = ()
    #: rows of each subconcept ``(S,)`` the batch expects (``Σ π·q``, the posteriors it used)
    expected: np.ndarray | None = None
    #: every verdict was decided before this batch (it then spreads over every subconcept)
    decided: bool = False


def open_subconcepts(
    names: tuple[str, ...],
    sides: np.ndarray,
    verdict: np.ndarray | None,
    could_be_worst: np.ndarray | None,
) -> np.ndarray:
    """Which subconcepts ``(S,)`` are still open: a verdict of ``not known``, or one of several
    that could be the worst of their class. Without verdicts (no labels yet), all of the
    classes with several subconcepts."""
    several = np.array([(sides == c).sum() > 1 for c in sides])
    if verdict is None:
        return several
    worst = np.zeros(len(names), dtype=bool) if could_be_worst is None else could_be_worst
    contested = np.array([(worst & (sides == c)).sum() > 1 for c in sides]) & worst
    return several & ((np.asarray(verdict) == "not known") | contested)


def decision_priority(
    gap: np.ndarray, gap_low: np.ndarray, gap_high: np.ndarray, utility: np.ndarray, aim: np.ndarray
) -> np.ndarray:
    """Each aimed subconcept's share ``(S,)`` of the batch (summing to 1 over ``aim``): its
    utility times ``(|gap| / half-width)² +`` :data:`PRIORITY_FLOOR`, where ``gap`` is today's
    estimate of how far it lies below its class's recall and ``gap_low``–``gap_high`` its
    interval (unknown: half-width 1). A verdict near to being decided — a gap large against its
    interval — is where a label most likely decides it; a gap of about 0 (a large subconcept
    that is its class's recall) needs more labels than any batch has."""
    half = np.where(np.isfinite(gap_low) & np.isfinite(gap_high), (gap_high - gap_low) / 2, 1.0)
    closeness = (np.nan_to_num(np.abs(gap), nan=0.0) / np.maximum(half, 1e-6)) ** 2
    raw = np.where(
        aim, np.nan_to_num(utility, nan=1.0) * (np.minimum(closeness, 9.0) + PRIORITY_FLOOR), 0.0
    )
    return raw / raw.sum() if raw.sum() > 0 else aim / max(aim.sum(), 1)


def row_scores(q: np.ndarray, y: np.ndarray, sides: np.ndarray, aim: np.ndarray) -> np.ndarray:
    """Each row's score ``(N,)``: for every subconcept ``s`` aimed at (``aim`` ``(S,)``, a
    share of the batch each, or 0/1), the posterior ``q_s`` that the row is of ``s`` over the
    rows of its class, normalised to sum to ``aim[s]``, then summed over ``s``: a subconcept's
    labels go to the rows most probably of it. ``q`` ``(N, S)`` within-class posteriors, ``y``
    ``(N,)`` the rows' classes.

    Measured against the Neyman allocation ``√E[e²|x] = |hit − θ|·√(q(1 − q))`` (the least
    variance of one batch's inverse-probability estimate under calibrated posteriors): that
    spreads a rare subconcept's labels over the many rows of its siblings where ``q_s`` is
    small but not 0, so few labelled rows are of ``s``, the recalibration learns little of it
    and its interval stays wide. Aimed at ``q_s``, a 50-row subconcept of 2,000 rows gets 11.4
    of 60 labels, not 5.9, and is decided more often at a narrower interval
    (``benchmarks/label_decide.py --grid --looks``)."""
    own = sides[None, :] == y[:, None]
    e = np.clip(np.nan_to_num(q, nan=0.0), 0.0, None) * own
    total = e.sum(0)
    share = np.where(total > 0, np.asarray(aim, dtype=float) / np.where(total > 0, total, 1), 0)
    return e @ share


def inclusion_probabilities(score: np.ndarray, free: np.ndarray, budget: int) -> np.ndarray:
    """``π`` ``(N,)`` summing to ``budget`` over the ``free`` rows: ``(1 − u)`` of it in
    proportion to ``score``, ``u`` (:data:`UNIFORM_SHARE`) uniformly; capped at 1 with the
    excess spread over the rest (0 where not free)."""
    n_free = int(free.sum())
    budget = min(budget, n_free)
    if budget <= 0:  # every row labelled already: nothing left to draw
        return np.zeros(len(free))
    s = np.where(free, np.nan_to_num(score, nan=0.0), 0.0)
    share = s / s.sum() if s.sum() > 0 else free / n_free
    pi = budget * ((1 - UNIFORM_SHARE) * share + UNIFORM_SHARE * free / n_free)
    for _ in range(len(pi)):  # at most one row reaches 1 per round
        if not (pi > 1).any():
            break
        fixed = pi >= 1
        pi[fixed] = 1.0
        rest = free & ~fixed
        left = budget - fixed.sum()
        pi[rest] = pi[rest] * left / pi[rest].sum() if pi[rest].sum() > 0 else left / rest.sum()
    return np.where(free, np.clip(pi, 0.0, 1.0), 0.0)


def systematic_sample(pi: np.ndarray, seed: int) -> np.ndarray:
    """Positions of a fixed-size sample with inclusion probabilities ``pi`` ``(N,)``
    (``Σ pi`` whole): systematic sampling over a random order (Madow 1949), seeded."""
    rng = np.random.default_rng([int(seed), _TAG])
    order = rng.permutation(len(pi))
    cum = np.cumsum(pi[order])
    n = int(np.rint(cum[-1])) if len(cum) else 0
    if n:
        cum = cum * (n / cum[-1])  # round-off must not push the last point past the end
    points = rng.random() + np.arange(n)
    picked = np.searchsorted(cum, points, side="right")
    return order[np.clip(picked, 0, len(pi) - 1)]


def choose_rows(
    score: np.ndarray, labelled: np.ndarray, budget: int, *, seed: int, aim: tuple[str, ...]
) -> Design:
    """The next batch: ``budget`` of the rows not yet ``labelled`` ``(N,)`` (all of them when
    fewer are left), drawn with probabilities from the rows' ``score``."""
    free = ~labelled
    pi = inclusion_probabilities(score, free, budget)
    rows = systematic_sample(pi, seed)
    return Design(rows=rows, inclusion=pi[rows], pi=pi, open=aim)


def plan_batch(
    q: np.ndarray,
    hit: np.ndarray,
    y: np.ndarray,
    sides: np.ndarray,
    names: tuple[str, ...],
    *,
    reference: ReferenceEvidence | None,
    labelled: LabelledRows | None,
    budget: int,
    seed: int,
    confidence: float = 0.95,
    utility: np.ndarray | None = None,
    focus: str | None = None,
) -> tuple[Design, RectifiedRecall | None]:
    """The next batch for test rows ``q`` ``(N, S)`` (within-class posteriors), ``hit``, ``y``
    ``(N,)``: the rectified recall from what is known so far (``None`` when nothing is), the
    subconcepts still open, each one's share of the batch (:func:`decision_priority`, by its
    ``utility`` ``(S,)``, default 1), and the rows chosen for them. ``focus``: one subconcept's
    question ("is it below its class?") takes the whole aimed part, open or not."""
    # the design reads the posteriors recalibrated within class on the rows of known subconcept
    # (as rectified_recall does for its proxy): the rows of a rare subconcept are where they say
    q_raw, (q, _) = q, recalibrated_for_labels(q, y, sides, labelled, reference)
    est = (q * hit[:, None]).sum(0) / np.maximum(q.sum(0), 1e-12)  # label-free fallback
    verdict, worst, res = None, None, None
    cr = class_recall_each(hit, y, sides)
    if reference is not None or labelled is not None:
        res = rectified_recall(
            q_raw,
            hit,
            y,
            sides,
            reference,
            labelled=labelled,
            confidence=confidence,
            n_draws=400,
            seed=seed,
        )
        ok = np.isfinite(res.recall)
        theta = np.where(ok, res.recall, est)
        verdict = verdicts(cr - res.high, cr - res.low)
        worst = could_be_worst_by_class(res, sides, res.level)[0]
        gap, gap_low, gap_high = cr - theta, cr - res.high, cr - res.low
    else:
        gap = cr - est
        gap_low = gap_high = np.full(len(names), np.nan)
    decided = False
    if focus is not None:
        aim = np.asarray(names) == focus
    else:
        aim = open_subconcepts(names, sides, verdict, worst)
        decided = verdict is not None and not aim.any()
        if decided:  # every verdict decided: spread the labels over all subconcepts
            aim = open_subconcepts(names, sides, None, None)
    u = np.ones(len(names)) if utility is None else np.asarray(utility, dtype=float)
    share = decision_priority(gap, gap_low, gap_high, u, aim)
    done = np.isin(np.arange(len(y)), [] if labelled is None else labelled.index)
    score = row_scores(q, y, sides, share)
    chosen = [(nm, float(sh)) for nm, a, sh in zip(names, aim, share, strict=True) if a]
    design = choose_rows(score, done, budget, seed=seed, aim=tuple(nm for nm, _ in chosen))
    expected = (design.pi[:, None] * q).sum(0)
    design = replace(design, share=tuple(sh for _, sh in chosen), expected=expected)
    return replace(design, decided=decided), res
