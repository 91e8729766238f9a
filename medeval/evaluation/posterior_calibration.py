"""Within-class recalibration of the subconcept model's posteriors from rows whose subconcept
is known (reference rows, labelled test rows): per class, ``q̃'_s ∝ exp(b_s)·q̃_s^a`` — a shared
power ``a`` and one offset per subconcept, the Dirichlet calibration map with a shared slope
(Kull et al. 2019) — fitted by weighted, lightly penalised maximum likelihood. A model whose
posteriors spread mass over a rare subconcept's siblings (the mass that makes a rare
subconcept's rectified recall wide) is sharpened where the known rows say it should be.

A map fitted on few rows is itself uncertain, and the rows it was fitted on are the ones whose
residuals the estimate reads, so a point map is over-confident exactly where a subconcept is
small: its power comes out too large (median 1.34 where the truth is 1, a subconcept of ~14
rows nearly all labelled), the rows never labelled are under-stated as rows of it, and its
interval covered 90.3 % (1,000 seeds). The posteriors are therefore averaged over the map's
own sampling spread (the sandwich covariance of the weighted fit, ``H⁻¹JH⁻¹``) at its
``2(K+1)`` sigma points, which carry its mean and covariance exactly: 93.4 % there
(docs/method.md, "Labels chosen where they decide")."""

from __future__ import annotations

import numpy as np
from scipy import optimize, special

__all__ = [
    "apply_maps",
    "calibration_map",
    "fit_maps",
    "map_covariance",
    "recalibrate",
    "sigma_points",
]

#: Prior scale of the offsets ``b`` and of ``log a`` (a light ridge: few rows must not fit
#: a subconcept they never show to probability 0).
PRIOR_SD = 2.0
_FLOOR = 1e-6


def calibration_map(
    q: np.ndarray, subconcept: np.ndarray, weight: np.ndarray | None = None
) -> tuple[float, np.ndarray]:
    """``(a, b (K,))`` for one class's posteriors ``q`` ``(n, K)`` (within the class) of rows
    of known ``subconcept`` codes ``(n,)`` in ``0..K-1``, each with ``weight`` (default 1;
    labelled rows: ``1/π``, normalised to sum ``n``). ``(1, 0)``: no change."""
    n, k = q.shape
    if n == 0 or k < 2:
        return 1.0, np.zeros(k)
    logq, sub, w = _fit_inputs(q, subconcept, weight)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        log_a, b = theta[0], theta[1:]
        a = np.exp(log_a)
        z = a * logq + b[None, :]
        lp = z - special.logsumexp(z, axis=1, keepdims=True)
        p = np.exp(lp)
        nll = -(w * lp[np.arange(n), sub]).sum()
        onehot = np.eye(k)[sub]
        g_z = (p - onehot) * w[:, None]  # d nll / d z
        g_b = g_z.sum(0) + b / PRIOR_SD**2
        g_loga = (g_z * logq).sum() * a + log_a / PRIOR_SD**2
        pen = 0.5 * ((b**2).sum() + log_a**2) / PRIOR_SD**2
        return nll + pen, np.r_[g_loga, g_b]

    res = optimize.minimize(loss, np.zeros(k + 1), jac=True, method="L-BFGS-B")
    return float(np.exp(res.x[0])), res.x[1:]


def _fit_inputs(q, subconcept, weight) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``log q`` (floored), the codes and the weights normalised to sum ``n``."""
    n = len(q)
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=float)
    return np.log(np.clip(q, _FLOOR, 1.0)), np.asarray(subconcept, dtype=np.intp), w * (n / w.sum())


def map_covariance(
    q: np.ndarray, subconcept: np.ndarray, weight: np.ndarray | None, a: float, b: np.ndarray
) -> np.ndarray:
    """The sampling covariance ``(K+1, K+1)`` of the map ``(log a, b)`` that
    :func:`calibration_map` fitted on these rows: the sandwich ``H⁻¹JH⁻¹`` of the penalised,
    weighted fit (``H`` its Hessian, ``J`` the sum of the rows' squared weighted scores), robust
    to the ``1/π`` weights and to a map that is not the truth. The posterior ``H⁻¹`` instead
    carries the ridge's whole prior where rows are few: a tiny subconcept's interval 4× wider
    at 99.7 % coverage."""
    logq, sub, w = _fit_inputs(q, subconcept, weight)
    n, k = logq.shape
    p = special.softmax(a * logq + b[None, :], axis=1)
    # d z_ij / d(log a, b): (n, K, K+1)
    dz = np.concatenate([(a * logq)[:, :, None], np.broadcast_to(np.eye(k), (n, k, k))], axis=2)
    resid = p - np.eye(k)[sub]
    spread = p[:, :, None] * np.eye(k)[None] - p[:, :, None] * p[:, None, :]
    h = np.einsum("i,ijp,ijl,ilq->pq", w, dz, spread, dz)
    h[0, 0] += (w[:, None] * resid * a * logq).sum()  # log a enters z non-linearly
    h = h + np.eye(k + 1) / PRIOR_SD**2
    score = np.einsum("ij,ijp->ip", resid * w[:, None], dz)
    h_inv = np.linalg.pinv(0.5 * (h + h.T))
    return h_inv @ (score.T @ score) @ h_inv


def fit_maps(
    q: np.ndarray,
    y: np.ndarray,
    subconcept: np.ndarray,
    sides: np.ndarray,
    weight=None,
) -> dict[int, tuple[float, np.ndarray, np.ndarray]]:
    """Per class ``{c: (a, b, cov)}`` (the map and its :func:`map_covariance`) from rows of
    known ``subconcept`` codes ``(m,)`` (into ``sides``), their posteriors ``q`` ``(m, S)``
    within their class ``y`` ``(m,)`` and ``weight`` ``(m,)``; a class with one subconcept or
    no such row has no map (a few rows are enough: the ridge keeps their map near no change,
    and :func:`map_covariance` says how unsure it is)."""
    w = np.ones(len(y)) if weight is None else np.asarray(weight, dtype=float)
    maps = {}
    for c in (0, 1):
        cols = np.flatnonzero(sides == c)
        mine = np.asarray(y) == c
        if len(cols) < 2 or not mine.any():
            continue
        local = np.searchsorted(cols, np.asarray(subconcept)[mine])
        qc = q[np.ix_(np.flatnonzero(mine), cols)]
        a, b = calibration_map(qc, local, w[mine])
        maps[c] = (a, b, map_covariance(qc, local, w[mine], a, b))
    return maps


def apply_maps(
    q: np.ndarray, y: np.ndarray, sides: np.ndarray, maps: dict, spread: bool = True
) -> np.ndarray:
    """``q`` ``(N, S)`` with each class's map of :func:`fit_maps` applied to its rows,
    averaged over the map's sampling spread (:func:`sigma_points`; ``spread=False``: the
    point map alone)."""
    out = np.array(q, dtype=float, copy=True)
    for c, (a, b, cov) in maps.items():
        cols, rows = np.flatnonzero(sides == c), np.flatnonzero(np.asarray(y) == c)
        if len(rows):
            logq = np.log(np.clip(q[np.ix_(rows, cols)], _FLOOR, 1.0))
            theta = np.r_[np.log(a), b]
            points = sigma_points(theta, cov) if spread else theta[None, :]
            out[np.ix_(rows, cols)] = np.mean(
                [special.softmax(np.exp(t[0]) * logq + t[None, 1:], axis=1) for t in points],
                axis=0,
            )
    return out


def sigma_points(theta: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """``2d`` points ``(2d, d)`` about ``theta`` ``(d,)``, ``θ ± √d·(column of cov's root)``,
    whose equally weighted mean and covariance are ``theta`` and ``cov`` (the unscented
    transform without its centre point; deterministic, so the same rows give the same answer)."""
    d = len(theta)
    vals, vecs = np.linalg.eigh(0.5 * (cov + cov.T))
    root = (vecs * np.sqrt(np.clip(vals, 0.0, None) * d)).T  # (d, d): one direction a row
    return np.vstack([theta + root, theta - root])


def recalibrate(
    q: np.ndarray,
    y: np.ndarray,
    sides: np.ndarray,
    known: np.ndarray,
    subconcept: np.ndarray,
    weight: np.ndarray | None = None,
) -> np.ndarray:
    """``q`` ``(N, S)`` (posteriors within each row's class ``y``) recalibrated per class on
    the rows ``known`` (positions ``(m,)``) whose subconcept codes ``(m,)`` (into ``sides``) are
    known, each with ``weight`` ``(m,)``; a class with no known row, or one subconcept, is kept."""
    known = np.asarray(known, dtype=np.intp)
    maps = fit_maps(q[known], np.asarray(y)[known], subconcept, sides, weight)
    return apply_maps(q, y, sides, maps)


def recalibrated_for_labels(
    q_test: np.ndarray,
    y_test: np.ndarray,
    sides: np.ndarray,
    labelled,
    reference,
    spread: bool = True,
) -> tuple[np.ndarray, object]:
    """The label loop's posteriors: the test rows' ``q_test`` ``(N, S)`` and the reference
    rows' (a :class:`~medeval.evaluation.rectified_recall.ReferenceEvidence` or None) through
    one within-class map per class, fitted on every row whose subconcept is known — the
    labelled test rows (:class:`~medeval.evaluation.rectified_recall.LabelledRows`), each
    standing for ``1/π`` test rows, and the reference rows, each for ``N/n`` — so that the
    rectified recall's proxy is as sharp as the known rows show it can be. Measured by
    simulation in ``benchmarks/label_decide.py``
    (docs/method.md, "Labels chosen where they decide"); without labelled rows both come back as
    they are; any known row of a class gives it a map. ``spread``: the posteriors averaged over
    the map's own sampling spread (the estimate and the design), or through the point map alone
    (``False``)."""
    import dataclasses

    if labelled is None or not len(labelled.index):
        return q_test, reference
    q_known = [q_test[labelled.index]]
    y_known = [np.asarray(y_test)[labelled.index]]
    sub_known = [np.asarray(labelled.subconcept)]
    w_known = [1.0 / np.asarray(labelled.pi, dtype=float)]
    if reference is not None and len(reference.y):
        q_known.append(reference.q)
        y_known.append(reference.y)
        sub_known.append(reference.subconcept)
        w_known.append(np.full(len(reference.y), len(y_test) / len(reference.y)))
    maps = fit_maps(
        np.vstack(q_known), np.concatenate(y_known), np.concatenate(sub_known), sides,
        np.concatenate(w_known),
    )  # fmt: skip
    q_new = apply_maps(q_test, y_test, sides, maps, spread)
    if reference is None:
        return q_new, None
    return q_new, dataclasses.replace(
        reference, q=apply_maps(reference.q, reference.y, sides, maps, spread)
    )
