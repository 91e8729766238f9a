"""Which test rows to label next: inclusion probabilities where a label lowers the open
subconcepts' variance most, with a uniform share, drawn by systematic sampling (docs/method.md,
"Labels chosen where they decide")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from medeval.evaluation.rectified_recall import (
    LabelledRows,
    RectifiedRecall,
    ReferenceEvidence,
    could_be_worst_by_class,
    rectified_recall,
    verdicts,
)

#: The share of the budget spread uniformly over the unlabelled rows.
UNIFORM_SHARE = 0.2
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


def row_scores(
    q: np.ndarray,
    hit: np.ndarray,
    y: np.ndarray,
    sides: np.ndarray,
    theta: np.ndarray,
    lam: np.ndarray,
    n_test: np.ndarray,
    aim: np.ndarray,
) -> np.ndarray:
    """``√(Σ_s E[e_s²] / N̂_s²)`` ``(N,)`` over the subconcepts aimed at (``aim`` ``(S,)``) of
    each row's class: ``q`` ``(N, S)`` within-class posteriors, ``hit`` and ``y`` ``(N,)``,
    each subconcept's ``theta``, ``lam`` and estimated test rows ``n_test`` ``(S,)``."""
    own = sides[None, :] == y[:, None]
    theta = np.nan_to_num(theta, nan=0.5)
    lam = np.clip(np.nan_to_num(lam, nan=1.0), 0.0, 1.0)
    e2 = (hit[:, None] - theta[None, :]) ** 2 * q * (1 - 2 * lam * q + lam**2 * q)
    weight = np.where(aim, 1.0 / np.maximum(np.nan_to_num(n_test, nan=1.0), 1.0) ** 2, 0.0)
    return np.sqrt(np.clip((e2 * own * weight[None, :]).sum(1), 0.0, None))


def inclusion_probabilities(score: np.ndarray, free: np.ndarray, budget: int) -> np.ndarray:
    """``π`` ``(N,)`` summing to ``budget`` over the ``free`` rows: ``(1 − u)`` of it in
    proportion to ``score``, ``u`` (:data:`UNIFORM_SHARE`) uniformly; capped at 1 with the
    excess spread over the rest (0 where not free)."""
    n_free = int(free.sum())
    budget = min(budget, n_free)
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
) -> tuple[Design, RectifiedRecall | None]:
    """The next batch for test rows ``q`` ``(N, S)`` (within-class posteriors), ``hit``, ``y``
    ``(N,)``: the rectified recall from what is known so far (``None`` when nothing is), the
    subconcepts still open, and the rows chosen for them."""
    est = (q * hit[:, None]).sum(0) / np.maximum(q.sum(0), 1e-12)  # label-free fallback
    theta, lam, n_test, verdict, worst, res = est, np.ones(len(names)), q.sum(0), None, None, None
    if reference is not None or labelled is not None:
        res = rectified_recall(
            q,
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
        lam = np.where(np.isfinite(res.lam), res.lam, 1.0)
        n_test = np.where(np.isfinite(res.n_test), res.n_test, n_test)
        cr = np.array([hit[y == c].mean() if (y == c).any() else np.nan for c in sides])
        verdict = verdicts(cr - res.high, cr - res.low)
        worst = could_be_worst_by_class(res, sides, confidence)[0]
    aim = open_subconcepts(names, sides, verdict, worst)
    if not aim.any():  # every verdict decided: spread the labels over all subconcepts
        aim = open_subconcepts(names, sides, None, None)
    done = np.isin(np.arange(len(y)), [] if labelled is None else labelled.index)
    score = row_scores(q, hit, y, sides, theta, lam, n_test, aim)
    chosen = tuple(nm for nm, a in zip(names, aim, strict=True) if a)
    return choose_rows(score, done, budget, seed=seed, aim=chosen), res
