"""The rectified per-subconcept recall of the test rows (the subconcept model's proxy corrected on
reference rows, a difference or GREG estimator), its Jeffreys interval on an effective number of
rows, verdicts and joint draws (derived in docs/method.md, "Per-subconcept recall")."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

#: The interval's name in ``per_subconcept.csv`` (``r_interval_method``).
R_INTERVAL_METHOD = "difference-jeffreys"
#: ... where the reference rows come in clusters (a ``group`` column): rows counted by cluster.
R_INTERVAL_METHOD_CLUSTERED = "difference-jeffreys-clustered"
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
    ``(n, S)`` within-class posteriors in the utilities' subconcept order). ``group``: each
    row's cluster code (a patient, a lesion; ``None``: every row its own), so that rows of one
    cluster count as the evidence of one cluster, not of as many independent rows."""

    q: np.ndarray
    hit: np.ndarray
    y: np.ndarray
    subconcept: np.ndarray
    group: np.ndarray | None = None


@dataclass(frozen=True)
class LabelledRows:
    """Test rows whose subconcept a person gave: their positions ``(L,)`` among the test rows,
    subconcept codes ``(L,)``, the probability ``π`` ``(L,)`` with which each was chosen for
    labelling among the rows not labelled before, and its batch ``(L,)`` (batches labelled one
    after another, each chosen before its labels were seen; a plain random sample of ``n`` of
    ``N`` rows is one batch with ``π = n/N``)."""

    index: np.ndarray
    subconcept: np.ndarray
    pi: np.ndarray
    batch: np.ndarray
    #: the looks (batches whose verdicts are read) planned: the error is spent over them
    #: (:mod:`medeval.evaluation.looks`); ``None``: every look read at the nominal level
    looks: int | None = None

    def horvitz_thompson(self) -> tuple[np.ndarray, np.ndarray]:
        """Each row's coefficient ``(L,)`` in the estimate of a sum over all test rows, and its
        variance factor ``(L,)``. Batch ``k``'s estimate counts the rows labelled before it
        exactly and its own with weight ``1/π``; the batches' estimates are averaged with
        weights ``w_k`` proportional to their sizes, fixed before any label is seen (a
        martingale: unbiased whatever the design). Variance factor: ``w_k²(1 − π)/π²``
        (Poisson sampling)."""
        batches, sizes = np.unique(self.batch, return_counts=True)
        w = sizes / sizes.sum()
        k = np.searchsorted(batches, self.batch)
        later = np.cumsum(w[::-1])[::-1] - w  # Σ of the weights of the later batches
        coef = w[k] / self.pi + later[k]
        return coef, w[k] ** 2 * (1 - self.pi) / self.pi**2


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
    #: the level the intervals were read at (the nominal one, or this look's share of it)
    level: float = math.nan


def ratio(a: np.ndarray, b: np.ndarray, fill: float = math.nan) -> np.ndarray:
    """``a / b`` where ``b > 0``, else ``fill`` (never a division warning)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), fill)


def _slopes_loo(psi: np.ndarray, ph: np.ndarray, pt: np.ndarray) -> np.ndarray:
    """Leave-one-out slopes ``Cov(ψ, ψ̂) / Var(ψ̂)`` ``(K, n)``, ``Var(ψ̂)`` pooled with ``pt``."""
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


def _toward_one(lam: np.ndarray) -> np.ndarray:
    """The slopes ``(K, n)`` shrunk toward 1 by their own jackknife noise (docs/method.md)."""
    n = lam.shape[1]
    if n < 2:
        return lam
    bar = lam.mean(1, keepdims=True)
    se2 = (n - 1) / n * ((lam - bar) ** 2).sum(1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        keep = np.clip(1 - se2 / np.maximum((bar - 1) ** 2, 1e-12), 0.0, 1.0)
    return 1 + (lam - 1) * keep


def _solve(qt, ht, ev: _Evidence, lam_rows, lam_bar, coef) -> tuple[np.ndarray, np.ndarray]:
    """``θ`` ``(K,)`` of the estimating equation for given slopes, and its denominator ``N̂_s``."""
    w = coef * (ev.m - lam_rows * ev.q)
    num = lam_bar * (qt * ht).sum(1) + (w * ev.h).sum(1)
    den = lam_bar * qt.sum(1) + w.sum(1)
    return np.clip(ratio(num, den), 0.0, 1.0), den


def jeffreys_bounds(
    theta: np.ndarray, n_eff: np.ndarray, grid: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Jeffreys bounds ``(K,)`` of ``θ`` on ``n_eff`` rows (bound 0 at θ = 0, 1 at θ = 1); a
    bound within half a step of 0 or 1 on the ``1/grid`` lattice the test rows' recall lives on
    is that end (the recall of 10 rows is 1 or at most 0.9: a bound of 0.97 means 1), and the
    interval holds the point of the lattice nearest ``θ``."""
    a = (1 - confidence) / 2
    with np.errstate(invalid="ignore"):  # θ = 0 on infinitely many rows: NaN, replaced below
        x = theta * n_eff
        lo = np.where(theta <= 0, 0.0, special.betaincinv(x + 0.5, n_eff - x + 0.5, a))
        hi = np.where(theta >= 1, 1.0, special.betaincinv(x + 0.5, n_eff - x + 0.5, 1 - a))
        half = 0.5 / np.maximum(grid, 1.0)
        lo = np.where(lo < half, 0.0, lo)
        hi = np.where(hi > 1 - half, 1.0, hi)
    # the test rows' recall is a point of the grid: the interval holds the point nearest θ
    g = np.maximum(np.round(grid), 1.0)
    near = np.round(theta * g) / g
    lo, hi = (
        np.fmin(np.where(np.isinf(n_eff), theta, lo), near),
        np.fmax(np.where(np.isinf(n_eff), theta, hi), near),
    )
    return lo, hi


@dataclass(frozen=True)
class _Evidence:
    """The rows of one class whose subconcept is known, as the estimator weighs them."""

    q: np.ndarray
    m: np.ndarray
    h: np.ndarray
    reference: np.ndarray
    ht_coef: np.ndarray
    ht_var: np.ndarray
    test_labelled: np.ndarray  # (N,) the class's test rows that are labelled
    weight: np.ndarray  # (n,) each row's weight in the design effect (1; labelled rows 1/π)
    cluster: np.ndarray  # (n,) cluster codes (labelled test rows: each its own)


def _coefficients(ev: _Evidence, n_class: int, n_test: np.ndarray) -> tuple[np.ndarray, ...]:
    """Each evidence row's coefficient ``(K, n)`` and each source's variance ``(K,)``."""
    ref, lab = ev.reference, ~ev.reference
    n_ref = (ev.m * ref).sum(1)
    unlabelled = np.maximum(n_test - (ev.m * lab).sum(1), 0.0)  # test rows of s not labelled
    with np.errstate(invalid="ignore", divide="ignore"):
        v_ref = np.where(
            n_ref > 0, (unlabelled / n_test) ** 2 * (1 / n_ref + 1 / unlabelled), np.inf
        )
        v_ref = np.where((unlabelled > 0) | (n_ref == 0), v_ref, 0.0)
        v_lab = np.where(lab.any(), (ev.q * ev.ht_var * lab).sum(1) / n_test**2, np.inf)
        alpha = np.where(
            np.isinf(v_lab),
            0.0,
            np.where(np.isinf(v_ref), 1.0, v_ref / np.where(v_ref + v_lab > 0, v_ref + v_lab, 1.0)),
        )
    n_r = max(int(ref.sum()), 1)
    n_unlab_rows = n_class - int(lab.sum())
    coef = (1 - alpha)[:, None] * np.where(ref, n_unlab_rows / n_r, 1.0)[None, :]
    coef = coef + alpha[:, None] * np.where(ref, 0.0, ev.ht_coef)[None, :]
    return coef, v_ref, v_lab


def _together(v_ref: np.ndarray, v_lab: np.ndarray) -> np.ndarray:
    """The variance ``(K,)`` of the two sources combined with inverse-variance weights."""
    with np.errstate(invalid="ignore", divide="ignore"):
        both = v_ref * v_lab / np.where(v_ref + v_lab > 0, v_ref + v_lab, 1.0)
    return np.where(np.isinf(v_lab), v_ref, np.where(np.isinf(v_ref), v_lab, both))


def _weighted_var(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each row's variance ``(K,)`` of ``x`` ``(K, n)`` with row weights ``w`` ``(n,)``."""
    w = w / w.sum() if w.sum() > 0 else np.full(len(w), 1 / max(len(w), 1))
    mean = (x * w).sum(1, keepdims=True)
    n_eff = 1.0 / (w**2).sum() if len(w) else 0.0
    scale = n_eff / (n_eff - 1) if n_eff > 1 else np.nan
    return ((x - mean) ** 2 * w).sum(1) * scale


def _design_effect(psi, e, weight, e2, psi2, confidence: float) -> np.ndarray:
    """The design effect ``(K,)`` of the residuals ``e`` against ``ψ`` (``(K, n)`` each, on
    the rows of known subconcept with ``weight`` ``(n,)``): ``Var(e)/Var(ψ)``, never below the
    one calibrated posteriors imply, ``Σ e2 / Σ psi2`` over the test rows (``(K, N)`` each).
    One guard, not two: a Student-t ratio stacked on it (``benchmarks/interval_construction.py``
    ``with_t``) made sharp models' intervals 1.6x wider at 98.9 % coverage. ``confidence`` is
    kept for the construction's signature (the benchmark swaps others in)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return _floored(_weighted_var(e, weight) / _weighted_var(psi, weight), e2, psi2)


def _floored(measured: np.ndarray, e2: np.ndarray, psi2: np.ndarray) -> np.ndarray:
    """A measured design effect ``(K,)`` never below the calibrated one, ``Σ e2 / Σ psi2``;
    1 where neither is defined."""
    with np.errstate(invalid="ignore", divide="ignore"):
        deff = np.fmax(measured, e2.sum(1) / psi2.sum(1))
    return np.clip(np.nan_to_num(deff, nan=1.0, posinf=1.0), 1e-4, None)


def _one_outcome_effect(ev: _Evidence, e, th, e2, psi2) -> np.ndarray:
    """The design effect ``(K,)`` where the rows of ``s`` all hit (or all miss): their ``ψ``
    has no spread to measure, so ``e``'s variance is taken over the binomial spread
    ``p_s θ(1 − θ)`` at the estimate off the bounds (``p_s`` the weighted share of ``s``),
    never below the calibrated floor. Measured over ``ψ``'s few alike rows it made a sharp
    model's interval that of the reference rows alone (benchmarks/interval_construction.py)."""
    w = ev.weight / ev.weight.sum() if ev.weight.sum() > 0 else ev.weight
    spread = (ev.m * w).sum(1) * th * (1 - th)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _floored(_weighted_var(e, ev.weight) / spread, e2, psi2)


def interval_method(reference: ReferenceEvidence | None) -> str:
    """The interval's name for ``per_subconcept.csv``: clustered where reference rows share
    a cluster."""
    g = None if reference is None else reference.group
    clustered = g is not None and len(np.unique(g)) < len(g)
    return R_INTERVAL_METHOD_CLUSTERED if clustered else R_INTERVAL_METHOD


def cluster_effect(e: np.ndarray, cluster: np.ndarray) -> np.ndarray:
    """How much the rows' clustering inflates the variance of the mean of ``e`` ``(K, n)``:
    ``Σ_g (Σ_{i∈g} ẽ_i)² / Σ_i ẽ_i²`` with ``ẽ`` centred (the cluster-robust variance over the
    independent-rows one), never below 1 (a ratio under 1 is noise, not credited); 1 where
    every row is its own cluster (``cluster`` ``(n,)`` codes)."""
    k, n = e.shape
    if n < 2 or len(np.unique(cluster)) == n:
        return np.ones(k)
    c = e - e.mean(1, keepdims=True)
    _, g = np.unique(cluster, return_inverse=True)
    sums = np.zeros((k, g.max() + 1))
    np.add.at(sums, (slice(None), g), c)
    return np.fmax(ratio((sums**2).sum(1), (c**2).sum(1), 1.0), 1.0)


def _labelled_rows_variance(ev: _Evidence, th, lam_bar, deff, implied) -> np.ndarray:
    """The variance ``(K,)`` of the labelled rows' inverse-probability sum: each row's
    ``w²(1 − π)/π²`` times its own expected squared residual ``E[e²|x]`` (calibrated
    posteriors: ``(hit − θ)²·q(1 − 2λq + λ²q)``), scaled up by the measured design effect over
    the calibrated one where the residuals show more spread than the posteriors imply. The
    class's average design effect on every row instead understates it when the labels went to
    rows most probably of ``s`` (small residuals) and the few rows of ``s`` with a small ``q``
    carry the error: intervals about 0.6× the error's spread
    (docs/method.md, "Labels chosen where they decide").
    ``implied`` ``(K,)``: the design effect calibrated posteriors imply, ``Σ E[e²] / Σ E[ψ²]``
    over the test rows."""
    r2 = (ev.h[None, :] - th) ** 2
    own = r2 * ev.q * (1 - 2 * lam_bar * ev.q + lam_bar**2 * ev.q)
    excess = np.fmax(ratio(deff, implied, 1.0), 1.0)
    return (own * ev.ht_var).sum(1) * excess  # ht_var is 0 on reference rows


def _class_part(qt, ht, ev: _Evidence, confidence: float) -> dict[str, np.ndarray]:
    """The estimator for the ``K`` subconcepts of one class."""
    k, n_known = len(qt), ev.m.sum(1)
    n_class = qt.shape[1]
    n_test = np.maximum(qt.sum(1), 1.0)
    if ev.m.shape[1] == 0:  # no row of known subconcept in this class: nothing to estimate
        none = np.full(k, np.nan)
        return dict(
            recall=none, low=none, high=none, ess=none, lam=none, deff=np.ones(k),
            n_test=n_test, n_eff=none, residuals=np.zeros((k, 0)),
        )  # fmt: skip
    coef, _, _ = _coefficients(ev, n_class, n_test)
    ones = np.ones(k)
    theta, den = _solve(qt, ht, ev, ones[:, None], ones, coef)  # pilot: λ = 1
    theta = np.nan_to_num(theta, nan=0.5)
    hits = (ev.m * ev.h).sum(1)
    # only on reference rows alone: with labelled rows as well it cost coverage (the label
    # design's test: 88 % where the package holds 90 %), so there the measured slope stays
    one_outcome = ((hits == 0) | (hits == n_known)) & ~ev.test_labelled.any()
    # ... and only where λ = 1 counts s's test rows above 0 (posteriors that name s on many
    # rows of its siblings can make the pilot's count negative: no estimate at all)
    one_outcome &= np.nan_to_num(den, nan=0.0) > 0
    for _ in range(_ITERATIONS):  # a fixed point: the slopes at the estimate they give
        n_test = np.maximum(np.nan_to_num(den, nan=1.0), 1.0)
        coef, v_ref, v_lab = _coefficients(ev, n_class, n_test)
        resid = ht - theta[:, None]
        psi, ph = ev.m * (ev.h - theta[:, None]), ev.q * (ev.h - theta[:, None])
        lam = _toward_one(_slopes_loo(psi, ph, qt * resid))
        # rows of s that all hit (or all miss) say nothing of how the proxy tracks a miss: the
        # slope is not identified, and the measured one collapses to 0 (θ = 1, the reference
        # rows' own 5 of 5, is then a fixed point however sharp the model); calibrated
        # posteriors' slope is 1 (benchmarks/interval_construction.py)
        lam = np.where(one_outcome[:, None], 1.0, lam)
        theta, den = _solve(qt, ht, ev, lam, lam.mean(1), coef)
        theta_c = np.nan_to_num(theta, nan=0.5)
    # the residuals at a point off the bounds, so that an all-found subconcept has a spread
    th = np.clip(theta_c, 0.5 / (n_known + 1), (n_known + 0.5) / (n_known + 1))[:, None]
    psi, e = ev.m * (ev.h - th), (ev.m - lam * ev.q) * (ev.h - th)
    # each test row's e² expected if the posteriors are calibrated (a floor of the design
    # effect and, on the unlabelled rows, of the labelled rows' variance)
    lam_bar = lam.mean(1, keepdims=True)
    r2 = (ht[None, :] - th) ** 2
    e2, psi2 = r2 * qt * (1 - 2 * lam_bar * qt + lam_bar**2 * qt), r2 * qt
    deff = _design_effect(psi, e, ev.weight, e2, psi2, confidence)
    deff = np.where(one_outcome, _one_outcome_effect(ev, e, th[:, 0], e2, psi2), deff)
    # rows of one cluster (a lesion's images) are not independent evidence; the test rows,
    # split like the reference rows, are taken to cluster alike
    deff = deff * cluster_effect(e, ev.cluster)
    n_test = np.maximum(np.nan_to_num(den, nan=1.0), 1.0)
    if ev.test_labelled.any():
        unit = n_test**2 * (th[:, 0] * (1 - th[:, 0])) * deff
        implied = ratio(e2.sum(1), psi2.sum(1), 1.0)
        v_lab = np.fmax(v_lab, _labelled_rows_variance(ev, th, lam_bar, deff, implied) / unit)
        v_lab = np.fmax(v_lab, (e2 * ~ev.test_labelled[None, :]).sum(1) / unit)
    with np.errstate(divide="ignore"):
        n_eff = 1.0 / (_together(v_ref, v_lab) * deff)
    lo, hi = jeffreys_bounds(theta, n_eff, n_test, confidence)
    few = n_known < MIN_REFERENCE_ROWS
    lo, hi = np.where(few, np.nan, lo), np.where(few, np.nan, hi)
    return dict(
        recall=np.where(n_known > 0, theta, np.nan),
        low=lo,
        high=hi,
        ess=np.where(few, np.nan, n_known / deff),
        lam=lam.mean(1),
        deff=deff,
        n_test=n_test,
        n_eff=n_eff,
        residuals=e,
    )


def rectified_recall(
    q_test: np.ndarray,
    hit_test: np.ndarray,
    y_test: np.ndarray,
    sides: np.ndarray,
    reference: ReferenceEvidence | None,
    *,
    labelled: LabelledRows | None = None,
    confidence: float,
    n_draws: int = 0,
    seed: int = 0,
) -> RectifiedRecall:
    """The rectified recall of every subconcept's test rows (``q_test`` ``(N, S)`` within-class
    posteriors, ``hit_test`` and ``y_test`` ``(N,)``, ``sides`` ``(S,)`` each subconcept's
    class) from held-out ``reference`` rows, ``labelled`` test rows or both, with ``n_draws``
    joint draws seeded by ``seed``. A class with a single subconcept gets its class's recall
    exactly; a subconcept with no row of known subconcept NaN.

    With labelled test rows the posteriors (the test rows' and the reference rows') are first
    recalibrated within class on every row of known subconcept
    (:func:`~medeval.evaluation.posterior_calibration.recalibrated_for_labels`): the one place
    the label loop's proxy is made, so ``evaluate --labels``, ``label`` and the verdicts read
    after each batch all estimate alike. Without labelled rows the posteriors are used as given.

    ``confidence`` is the level over every look: labelled rows with ``looks`` planned are read
    at this look's share of it (:func:`~medeval.evaluation.looks.look_confidence`; the look is
    the last batch given), and ``level`` says which."""
    from medeval.evaluation.looks import look_confidence
    from medeval.evaluation.posterior_calibration import recalibrated_for_labels

    if labelled is not None and len(labelled.batch):
        confidence = look_confidence(confidence, int(labelled.batch.max()), labelled.looks)

    q_test, reference = recalibrated_for_labels(q_test, y_test, sides, labelled, reference)
    s = len(sides)
    names = ("recall", "low", "high", "ess", "lam", "deff", "n_test", "n_eff")
    cols = {c: np.full(s, math.nan) for c in names}
    sources = [x.subconcept for x in (reference, labelled) if x is not None]
    known = sum((np.bincount(x, minlength=s) for x in sources), np.zeros(s, dtype=np.int64))
    draws = np.full((n_draws, s), math.nan) if n_draws > 0 else None
    rng = np.random.default_rng([int(seed), _TAG])
    for c in (0, 1):
        idx = np.flatnonzero(sides == c)
        t = y_test == c
        if not len(idx) or not t.any():
            continue
        ht = hit_test[t].astype(float)
        if len(idx) == 1:  # the class is the subconcept: its test recall is known
            v = float(ht.mean())
            exact = (("recall", v), ("low", v), ("high", v), ("n_test", t.sum()), ("n_eff", np.inf))
            for name, x in exact:
                cols[name][idx] = x
            if draws is not None:
                draws[:, idx] = v
            continue
        ev = _evidence(c, idx, t, q_test, hit_test, reference, labelled)
        part = _class_part(q_test[t][:, idx].T, ht, ev, confidence)
        for name in cols:
            cols[name][idx] = part[name]
        if draws is not None:
            draws[:, idx] = _copula_draws(rng, part, n_draws)
    return RectifiedRecall(**cols, n_reference=known, draws=draws, level=confidence)


def _evidence(c, idx, t, q_test, hit_test, reference, labelled) -> _Evidence:
    """The rows of class ``c`` of known subconcept: reference rows, then labelled test rows."""
    q, h, sub, is_ref, coef, var, weight, cluster = [], [], [], [], [], [], [], []
    offset = 0
    if reference is not None:
        r = reference.y == c
        g = reference.group
        g = np.arange(len(r)) if g is None else np.asarray(g, dtype=np.int64)
        cluster.append(g[r])
        offset = int(g.max()) + 1 if len(g) else 0
        q.append(reference.q[r][:, idx])
        h.append(reference.hit[r].astype(float))
        sub.append(reference.subconcept[r])
        is_ref.append(np.ones(r.sum(), dtype=bool))
        coef.append(np.zeros(r.sum()))
        weight.append(np.ones(r.sum()))
        var.append(np.zeros(r.sum()))
    if labelled is not None:
        mine = t[labelled.index]
        rows = labelled.index[mine]
        a, v = labelled.horvitz_thompson()
        q.append(q_test[rows][:, idx])
        h.append(hit_test[rows].astype(float))
        sub.append(labelled.subconcept[mine])
        is_ref.append(np.zeros(len(rows), dtype=bool))
        coef.append(a[mine])
        cluster.append(offset + np.arange(len(rows)))
        inverse = 1.0 / labelled.pi[mine]
        weight.append(inverse * len(inverse) / max(inverse.sum(), 1e-12))
        var.append(v[mine])
    codes = np.concatenate(sub) if sub else np.zeros(0, dtype=int)
    return _Evidence(
        q=np.concatenate(q).T if q else np.zeros((len(idx), 0)),
        m=(codes[None, :] == idx[:, None]).astype(float),
        h=np.concatenate(h) if h else np.zeros(0),
        reference=np.concatenate(is_ref) if is_ref else np.zeros(0, dtype=bool),
        ht_coef=np.concatenate(coef) if coef else np.zeros(0),
        ht_var=np.concatenate(var) if var else np.zeros(0),
        test_labelled=np.isin(np.flatnonzero(t), [] if labelled is None else labelled.index),
        weight=np.concatenate(weight) if weight else np.zeros(0),
        cluster=np.concatenate(cluster) if cluster else np.zeros(0, dtype=np.int64),
    )


def _copula_draws(rng: np.random.Generator, part: dict[str, np.ndarray], b: int) -> np.ndarray:
    """``(b, K)`` joint draws: Beta marginals, correlations of the shared residuals."""
    e, theta, n_eff = part["residuals"], part["recall"], part["n_eff"]
    k = len(theta)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.nan_to_num(np.corrcoef(e), nan=0.0) if e.shape[1] > 1 else np.eye(k)
    np.fill_diagonal(corr, 1.0)
    w, v = np.linalg.eigh(corr)
    z = rng.standard_normal((b, k)) @ (v * np.sqrt(np.clip(w, 0, None))).T
    with np.errstate(invalid="ignore"):  # infinitely many rows' worth: the estimate exactly
        x = np.nan_to_num(theta, nan=0.5) * n_eff
        out = special.betaincinv(x + 0.5, n_eff - x + 0.5, special.ndtr(z))
    out = np.where(np.isinf(n_eff), np.broadcast_to(theta, out.shape), out)
    ok = np.isfinite(theta) & np.isfinite(part["low"])
    return np.where(ok, out, np.nan)


def class_recall_each(hit: np.ndarray, y: np.ndarray, sides: np.ndarray) -> np.ndarray:
    """Each subconcept's class's recall on the test rows ``(S,)`` (``hit``, ``y`` ``(N,)``;
    ``sides`` ``(S,)`` each subconcept's class), NaN for a class without test rows: what a
    subconcept's recall is compared with."""
    return np.array([hit[y == c].mean() if (y == c).any() else np.nan for c in sides])


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
    if not off.any():  # no pair whose difference varies: none can be shown above another
        inside[j] = True
        return inside, share
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(off, diff / np.where(se > 0, se, 1.0), -np.inf).max(axis=(1, 2))
    crit = float(np.quantile(t, confidence))
    est = recall[j]
    lower = (est[:, None] - est[None, :]) - crit * se  # simultaneous lower bounds of θ_s − θ_t
    above_another = np.where(off, lower > 0, False).any(1)
    inside[j] = ~above_another
    return inside, share


def could_be_worst_by_class(
    res: RectifiedRecall, sides: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`could_be_worst` within each class ``sides`` ``(S,)`` from ``res``'s draws: which
    subconcepts ``(S,)`` could be the worst of their class, and the share of draws in which each
    is (NaN without draws)."""
    inside, share = np.zeros(len(sides), dtype=bool), np.full(len(sides), np.nan)
    if res.draws is not None:
        for c in (0, 1):
            idx = np.flatnonzero(sides == c)
            inside[idx], share[idx] = could_be_worst(res.recall[idx], res.draws[:, idx], confidence)
    return inside, share


def more_rows(
    recall: np.ndarray,
    class_recall: np.ndarray,
    deff: np.ndarray,
    n_known: np.ndarray,
    n_test: np.ndarray,
    confidence: float,
    n_eff: np.ndarray | None = None,
    labelled: np.ndarray | None = None,
) -> np.ndarray:
    """Further rows of known subconcept ``(S,)`` each subconcept needs, at today's estimate and
    design effect, for its interval (the same Jeffreys interval) to clear its class's recall
    or to be narrower than :data:`DECISIVE_WIDTH`, whichever needs fewer. Reference rows: the
    effective rows ``(1/n + 1/N̂_s)⁻¹ / deff`` grow with ``n``; NaN where no number of them
    would do (the test rows' own count limits it). Labelled test rows (``labelled`` ``(S,)``):
    today's effective rows ``n_eff`` ``(S,)`` grow in proportion to the labelled rows."""
    lab = np.zeros(len(recall), dtype=bool) if labelled is None else labelled
    total = np.full(len(recall), np.inf)
    n = np.maximum(n_known, 1.0)
    for factor in _FACTORS:
        more = n * factor
        with np.errstate(divide="ignore", invalid="ignore"):
            grown = 1.0 / (1.0 / more + 1.0 / n_test) / deff
            if n_eff is not None:
                grown = np.where(lab, n_eff * factor, grown)
        lo, hi = jeffreys_bounds(recall, grown, n_test, confidence)
        decided = (lo > class_recall) | (hi < class_recall) | (hi - lo < DECISIVE_WIDTH)
        total = np.where(decided & np.isinf(total), more, total)
    extra = np.ceil(total - n_known)
    return np.where(np.isfinite(extra) & np.isfinite(recall), np.maximum(extra, 1.0), np.nan)


#: The multiples of today's rows of known subconcept that :func:`more_rows` tries.
_FACTORS = np.geomspace(1.05, 200, 120)


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
