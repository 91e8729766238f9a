"""The rectified per-subconcept recall of the test rows, its interval, verdict and joint draws
(docs/method.md, "Per-subconcept recall").

The target is the recall of the test rows of subconcept ``s`` (class ``c``): ``θ`` solves
``Σ_T ψ_i(θ) = 0`` with ``ψ_i = [S_i = s](hit_i − θ)``. The subconcept model gives the proxy
``ψ̂_i = q̃_s(x_i)(hit_i − θ)`` on every row (``q̃``: posteriors renormalised within the row's
class); reference rows ``R`` (subconcepts known, same population) correct it:

    λ̄·mean_T ψ̂(θ) + mean_R (ψ_j(θ) − λ_j ψ̂_j(θ)) = 0            (rows of class c)

— the difference (GREG) estimator of survey sampling. Its error against the test rows' own
``θ`` is ``(mean_R e − mean_T e) / P(S = s)`` with ``e = ψ − λψ̂``, so its variance is
``Var(e)·(1/n + 1/N) / P(S = s)²`` and the best ``λ`` is the slope ``Cov(ψ, ψ̂) / Var(ψ̂)``:
0 where the subconcept model says nothing (the reference rows alone), near 1 where it is sharp.

Choices, each measured (``benchmarks/subconcept_recall_coverage.py``, docs/method.md):

* ``λ_j`` is the slope fitted without row ``j`` (leave-one-out cross-fitting), clipped to [0, 1],
  and the test side uses their mean: a slope fitted on the rows it corrects looks better than
  it is (in-sample, coverage fell to 88 % in cells with a sharp model).
* The interval is Jeffreys' on an effective number of rows: the design effect
  ``deff = Var(e) / Var(ψ)`` (both on R) turns the reference-only count
  ``(1/n_s + 1/N̂_s)⁻¹`` (``n_s`` reference and ``N̂_s`` estimated test rows of s) into
  ``n_eff = (1/n_s + 1/N̂_s)⁻¹ / deff``. At λ = 0 this is the reference rows' own small-count
  interval for the test rows' recall; ``r_ess = n_s / deff`` is the number of reference rows
  the interval is worth. Where the residuals sit on few rows, ``deff`` grows by the squared
  ratio of Student's t quantiles at the residuals' and ``ψ``'s effective degrees of freedom.
* The test rows' recall is a multiple of ``1/N_s``: a bound within half a step of 0 or 1 is
  that end (``N_s ≈ N̂_s``), so that a recall of exactly 1 is not missed by a bound of 0.97.

Joint draws for the questions that span subconcepts (which could be worst, the share of draws
in which each is worst): a Gaussian copula whose correlations are those of the residuals ``e``
of a class's subconcepts on the same reference rows, with each subconcept's Beta marginal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

#: The interval's name in ``per_subconcept.csv`` (``r_interval_method``).
R_INTERVAL_METHOD = "difference-jeffreys"
#: Fewer reference rows of a subconcept than this: no interval (a verdict of ``not known``).
MIN_REFERENCE_ROWS = 2
#: ``r_more_rows`` aims at a gap interval clear of 0 or at an interval narrower than this.
DECISIVE_WIDTH = 0.2
#: The verdicts, from the gap ``class recall − recall`` and its interval.
VERDICTS = ("below", "not below", "not known")
_TAG = 0x47524547  # the draws' own stream ("GREG")
_ITERATIONS = 6


@dataclass(frozen=True)
class ReferenceEvidence:
    """Rows whose subconcept is known, as the estimator reads them (``(n,)`` each; ``q``
    ``(n, S)`` within-class posteriors in the utilities' subconcept order)."""

    q: np.ndarray
    hit: np.ndarray
    y: np.ndarray
    subconcept: np.ndarray


@dataclass(frozen=True)
class RectifiedRecall:
    """Per subconcept ``(S,)``: ``recall``, ``low``, ``high`` (NaN without an interval),
    ``ess`` (reference rows the interval is worth), ``lam`` (the mean slope), ``deff``,
    ``n_test`` (estimated test rows ``N̂_s``), ``n_eff`` (the interval's effective rows) and
    ``n_reference``; ``draws`` ``(B, S)`` joint draws (``None`` without any)."""

    recall: np.ndarray
    low: np.ndarray
    high: np.ndarray
    ess: np.ndarray
    lam: np.ndarray
    deff: np.ndarray
    n_test: np.ndarray
    n_eff: np.ndarray
    n_reference: np.ndarray
    draws: np.ndarray | None


def _slopes_loo(psi: np.ndarray, ph: np.ndarray, pt: np.ndarray) -> np.ndarray:
    """Leave-one-out slopes ``(K, n)``: ``Cov(ψ, ψ̂) / Var(ψ̂)`` over the reference rows without
    row ``j`` (``ψ``, ``ψ̂``: ``(K, n)``); ``Var(ψ̂)`` pooled with the test rows' ``pt``
    ``(K, N)``."""
    n, big = psi.shape[1], pt.shape[1]
    if n < 3:
        return np.zeros_like(psi)
    sx, sy = ph.sum(1, keepdims=True), psi.sum(1, keepdims=True)
    sxy = (ph * psi).sum(1, keepdims=True)
    cov = ((sxy - ph * psi) - (sx - ph) * (sy - psi) / (n - 1)) / (n - 2)
    ax = pt.sum(1, keepdims=True) + sx - ph
    axx = (pt**2).sum(1, keepdims=True) + (ph**2).sum(1, keepdims=True) - ph**2
    m = big + n - 1
    var = (axx - ax**2 / m) / (m - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = np.where(var > 1e-15, cov / np.where(var > 1e-15, var, 1.0), 0.0)
    return np.clip(lam, 0.0, 1.0)


def _solve(qt, ht, qr, hr, mr, lam_rows, lam_bar) -> tuple[np.ndarray, np.ndarray]:
    """``θ`` ``(K,)`` of the estimating equation for given slopes, and its denominator
    ``P̂(S = s)`` ``(K,)``."""
    num = lam_bar * (qt * ht).mean(1) + (mr * hr - lam_rows * qr * hr).mean(1)
    den = lam_bar * qt.mean(1) + (mr - lam_rows * qr).mean(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return np.clip(theta, 0.0, 1.0), den


def _dof(x: np.ndarray) -> np.ndarray:
    """Effective degrees of freedom ``(Σ c²)² / Σ c⁴ − 1`` of each row's centred values."""
    c = x - x.mean(1, keepdims=True)
    s2, s4 = (c**2).sum(1), (c**4).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(s4 > 0, s2**2 / np.where(s4 > 0, s4, 1.0), 1.0)
    return np.maximum(d - 1.0, 1.0)


def _t(p: float, dof: np.ndarray) -> np.ndarray:
    return special.stdtrit(dof, p)


def jeffreys_bounds(
    theta: np.ndarray, n_eff: np.ndarray, grid: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Jeffreys bounds ``(K,)`` of ``θ`` on ``n_eff`` rows (bound 0 at θ = 0, 1 at θ = 1); a
    bound within half a step of 0 or 1 on the ``1/grid`` lattice the test rows' recall lives on
    is that end (the recall of 10 rows is 1 or at most 0.9: a bound of 0.97 means 1)."""
    a = (1 - confidence) / 2
    x = theta * n_eff
    with np.errstate(invalid="ignore"):
        lo = np.where(theta <= 0, 0.0, special.betaincinv(x + 0.5, n_eff - x + 0.5, a))
        hi = np.where(theta >= 1, 1.0, special.betaincinv(x + 0.5, n_eff - x + 0.5, 1 - a))
        half = 0.5 / np.maximum(grid, 1.0)
        lo = np.where(lo < half, 0.0, lo)
        hi = np.where(hi > 1 - half, 1.0, hi)
    return lo, hi


def _class_part(qt, ht, qr, hr, mr, confidence: float) -> dict[str, np.ndarray]:
    """The estimator for the ``K`` subconcepts of one class: test posteriors ``qt`` ``(K, N)``
    and hits ``ht`` ``(N,)``, reference posteriors ``qr`` ``(K, n)``, hits ``hr`` ``(n,)``
    and memberships ``mr`` ``(K, n)``."""
    k, n_ref = len(qt), mr.sum(1)
    ones = np.ones(k)
    theta, _ = _solve(qt, ht, qr, hr, mr, ones[:, None], ones)  # pilot: λ = 1
    theta = np.nan_to_num(theta, nan=0.5)
    for _ in range(_ITERATIONS):  # a fixed point: the slopes at the estimate they give
        lam = _slopes_loo(mr * (hr - theta[:, None]), qr * (hr - theta[:, None]),
                          qt * (ht - theta[:, None]))  # fmt: skip
        theta, den = _solve(qt, ht, qr, hr, mr, lam, lam.mean(1))
        theta_c = np.nan_to_num(theta, nan=0.5)
    # the residuals at a point off the bounds, so that an all-found subconcept has a spread
    th = np.clip(theta_c, 0.5 / (n_ref + 1), (n_ref + 0.5) / (n_ref + 1))[:, None]
    psi, e = mr * (hr - th), (mr - lam * qr) * (hr - th)
    with np.errstate(invalid="ignore", divide="ignore"):
        deff = e.var(1, ddof=1) / psi.var(1, ddof=1)
    p = 1 - (1 - confidence) / 2
    deff = deff * np.maximum((_t(p, _dof(e)) / _t(p, _dof(psi))) ** 2, 1.0)
    deff = np.clip(np.nan_to_num(deff, nan=1.0, posinf=1.0), 1e-4, None)
    n_test = np.maximum(den * qt.shape[1], 1.0)
    n_eff = 1.0 / (1.0 / np.maximum(n_ref, 1) + 1.0 / n_test) / deff
    lo, hi = jeffreys_bounds(theta, n_eff, n_test, confidence)
    few = n_ref < MIN_REFERENCE_ROWS
    lo, hi = np.where(few, np.nan, lo), np.where(few, np.nan, hi)
    return dict(recall=np.where(n_ref > 0, theta, np.nan), low=lo, high=hi,
                ess=np.where(few, np.nan, n_ref / deff), lam=lam.mean(1), deff=deff,
                n_test=n_test, n_eff=n_eff, residuals=e)  # fmt: skip


def rectified_recall(
    q_test: np.ndarray,
    hit_test: np.ndarray,
    y_test: np.ndarray,
    sides: np.ndarray,
    reference: ReferenceEvidence,
    *,
    confidence: float,
    n_draws: int = 0,
    seed: int = 0,
) -> RectifiedRecall:
    """The rectified recall of every subconcept's test rows (``q_test`` ``(N, S)`` within-class
    posteriors, ``hit_test`` and ``y_test`` ``(N,)``, ``sides`` ``(S,)`` each subconcept's
    class), with ``n_draws`` joint draws seeded by ``seed``. A class with a single subconcept
    gets its class's recall exactly; a subconcept without reference rows NaN."""
    s = len(sides)
    cols = {c: np.full(s, math.nan) for c in ("recall", "low", "high", "ess", "lam", "deff")}
    cols["n_test"], cols["n_eff"] = np.full(s, math.nan), np.full(s, math.nan)
    n_reference = np.bincount(reference.subconcept, minlength=s)
    draws = np.full((n_draws, s), math.nan) if n_draws > 0 else None
    rng = np.random.default_rng([int(seed), _TAG])
    for c in (0, 1):
        idx = np.flatnonzero(sides == c)
        t, r = y_test == c, reference.y == c
        if not len(idx) or not t.any():
            continue
        ht, hr = hit_test[t].astype(float), reference.hit[r].astype(float)
        if len(idx) == 1:  # the class is the subconcept: its test recall is known
            v = float(ht.mean())
            known = (("recall", v), ("low", v), ("high", v), ("n_test", t.sum()), ("n_eff", np.inf))
            for name, x in known:
                cols[name][idx] = x
            if draws is not None:
                draws[:, idx] = v
            continue
        mr = (reference.subconcept[r][None, :] == idx[:, None]).astype(float)
        part = _class_part(q_test[t][:, idx].T, ht, reference.q[r][:, idx].T, hr, mr,
                           confidence)  # fmt: skip
        for name in cols:
            cols[name][idx] = part[name]
        if draws is not None:
            draws[:, idx] = _copula_draws(rng, part, n_draws)
    return RectifiedRecall(**cols, n_reference=n_reference, draws=draws)


def _copula_draws(rng: np.random.Generator, part: dict[str, np.ndarray], b: int) -> np.ndarray:
    """``(b, K)`` draws with each subconcept's Beta marginal (its interval's, before rounding)
    and the correlations of the residuals on the shared reference rows (NaN where undefined)."""
    e, theta, n_eff = part["residuals"], part["recall"], part["n_eff"]
    k = len(theta)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.nan_to_num(np.corrcoef(e), nan=0.0) if e.shape[1] > 1 else np.eye(k)
    np.fill_diagonal(corr, 1.0)
    w, v = np.linalg.eigh(corr)
    z = rng.standard_normal((b, k)) @ (v * np.sqrt(np.clip(w, 0, None))).T
    x = np.nan_to_num(theta, nan=0.5) * n_eff
    with np.errstate(invalid="ignore"):
        out = special.betaincinv(x + 0.5, n_eff - x + 0.5, special.ndtr(z))
    ok = np.isfinite(theta) & np.isfinite(part["low"])
    return np.where(ok, out, np.nan)


def verdicts(gap_low: np.ndarray, gap_high: np.ndarray) -> np.ndarray:
    """``below`` where the gap interval lies above 0, ``not below`` where it lies at or under
    0, else ``not known`` (also where it is undefined)."""
    out = np.full(len(gap_low), VERDICTS[2], dtype=object)
    out[np.nan_to_num(gap_low, nan=-np.inf) > 0] = VERDICTS[0]
    out[np.nan_to_num(gap_high, nan=np.inf) <= 0] = VERDICTS[1]
    return out


def could_be_worst(
    recall: np.ndarray, draws: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """For the ``K`` subconcepts of one class: which could be the worst at ``confidence`` (a
    confidence set for the minimum: ``s`` is left out only where simultaneous lower bounds show
    it above another, Mogstad, Romano, Shaikh & Wilhelm 2023) and the share of draws in which
    each is the worst. ``recall`` ``(K,)``, ``draws`` ``(B, K)``; subconcepts without draws
    are neither."""
    k = len(recall)
    ok = np.isfinite(recall) & np.isfinite(draws).all(0)
    share = np.full(k, np.nan)
    inside = np.zeros(k, dtype=bool)
    j = np.flatnonzero(ok)
    if not len(j):
        return inside, share
    d = draws[:, j]
    share[j] = np.bincount(np.argmin(d, 1), minlength=len(j)) / len(d)
    if len(j) == 1:
        inside[j] = True
        return inside, share
    dev = d - d.mean(0)
    diff = dev[:, :, None] - dev[:, None, :]  # (B, K, K): draws of (θ_s − θ_t) − its centre
    se = diff.std(0)
    off = ~np.eye(len(j), dtype=bool) & (se > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(off, diff / np.where(se > 0, se, 1.0), -np.inf).max(axis=(1, 2))
    crit = float(np.quantile(t, confidence))
    est = recall[j]
    lower = (est[:, None] - est[None, :]) - crit * se  # simultaneous lower bounds of θ_s − θ_t
    above_another = np.where(off, lower > 0, False).any(1)
    inside[j] = ~above_another
    return inside, share


def more_rows(
    recall: np.ndarray,
    class_recall: np.ndarray,
    deff: np.ndarray,
    n_reference: np.ndarray,
    n_test: np.ndarray,
    confidence: float,
) -> np.ndarray:
    """Further reference rows ``(S,)`` of each subconcept that would, at today's estimate and
    design effect, bring its gap interval clear of 0 or its width under
    :data:`DECISIVE_WIDTH` (whichever needs fewer): from ``Var = θ(1 − θ)·deff·(1/n + 1/N̂_s)``.
    NaN where no number of reference rows would (the test rows' own count limits it)."""
    z = special.ndtri(1 - (1 - confidence) / 2)
    th = np.clip(recall, 0.5 / (n_reference + 1), (n_reference + 0.5) / (n_reference + 1))
    unit = z**2 * th * (1 - th) * deff
    with np.errstate(invalid="ignore", divide="ignore"):
        need = []
        for half in (np.abs(class_recall - recall), np.full(len(recall), DECISIVE_WIDTH / 2)):
            inv = half**2 / unit - 1.0 / n_test  # 1/n the interval allows
            need.append(np.where(inv > 0, 1.0 / np.where(inv > 0, inv, 1.0), np.inf))
        total = np.minimum(*need)
    extra = np.ceil(total - n_reference)
    return np.where(np.isfinite(extra), np.maximum(extra, 1.0), np.nan)


def worst_bounds(
    part: RectifiedRecall, members: np.ndarray, chosen: int, confidence: float
) -> tuple[float, float]:
    """Bounds of subconcept ``chosen`` that hold after it was chosen as the worst among
    ``members`` (indices into the subconcepts: the set that could be worst): its interval at the
    level that covers every member at once in the joint draws (locally simultaneous inference,
    Zrnic & Fithian 2024); its own interval when it alone could be worst or without draws."""
    if part.draws is None or len(members) < 2 or not np.isfinite(part.low[chosen]):
        return float(part.low[chosen]), float(part.high[chosen])
    d = part.draws[:, members]
    u = (np.argsort(np.argsort(d, 0), 0) + 0.5) / len(d)  # each member's draws as ranks
    level = float(np.quantile(np.abs(2 * u - 1).max(1), confidence))
    lo, hi = jeffreys_bounds(
        part.recall[[chosen]], part.n_eff[[chosen]], part.n_test[[chosen]], max(level, confidence)
    )
    return float(lo[0]), float(hi[0])
