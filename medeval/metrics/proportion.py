"""Small-sample intervals for proportions (per-subconcept recalls, true and label-free), their
exact coverage, and the soft counts' interval on the Kish effective number of rows
(docs/method.md, "Per-subconcept recall")."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Real

import numpy as np
from scipy import special  # scipy.stats costs 0.4 s at import; special holds the same functions

from medeval._validation import ArrayLike, Interval, StrOptions, TypeOf, validate_params
from medeval.errors import UserError
from medeval.options import CONFIDENCE

from ._checks import UndefinedMetricWarning

#: Stable method names, as written to ``per_subconcept.csv`` and the report.
METHODS = ("wilson", "jeffreys", "clopper-pearson")
#: The default: the only one of :data:`METHODS` that keeps its exact coverage near nominal on
#: small n (docs/method.md, "Per-subconcept recall").
DEFAULT_METHOD = "clopper-pearson"


@dataclass(frozen=True)
class ProportionInterval:
    """Point estimates and interval bounds, each ``(S,)`` (one entry per subconcept).

    Attributes:
        estimate: ``k / n``; NaN where ``n == 0``.
        low, high: interval bounds; NaN where ``n == 0``.
        n: rows behind each estimate (the effective number for soft counts).
        method: one of :data:`METHODS`.
        confidence: nominal coverage.
    """

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n: np.ndarray
    method: str
    confidence: float


#: The options of every interval here, declared once.
_OPTIONS = {
    "confidence": [CONFIDENCE],
    "method": [StrOptions(METHODS)],
    "names": [TypeOf(tuple, desc="a tuple of subconcept names"), None],
}
_COUNTS = [ArrayLike(), Interval(Real, 0, None)]


def _bounds(k: np.ndarray, n: np.ndarray, method: str, alpha: float) -> tuple[np.ndarray, ...]:
    """Bounds for ``n > 0`` (``k`` and ``n`` may be non-integer: soft counts)."""
    if method == "wilson":
        z = special.ndtri(1 - alpha / 2)
        p = k / n
        centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
        half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
        lo, hi = centre - half, centre + half
        # exact 0 and 1 where all or none were found (the formula gives them up to rounding)
        return np.where(k <= 0, 0.0, np.clip(lo, 0, 1)), np.where(k >= n, 1.0, np.clip(hi, 0, 1))
    if method == "jeffreys":
        lo = special.betaincinv(k + 0.5, n - k + 0.5, alpha / 2)
        hi = special.betaincinv(k + 0.5, n - k + 0.5, 1 - alpha / 2)
        return np.where(k <= 0, 0.0, lo), np.where(k >= n, 1.0, hi)
    with np.errstate(invalid="ignore", divide="ignore"):  # k = 0 or k = n: bounds set below
        lo = special.betaincinv(k, n - k + 1, alpha / 2)
        hi = special.betaincinv(k + 1, n - k, 1 - alpha / 2)
    return np.where(k <= 0, 0.0, lo), np.where(k >= n, 1.0, hi)


@validate_params({"k": _COUNTS, "n": _COUNTS, **_OPTIONS})
def binomial_interval(
    k: np.ndarray | float,
    n: np.ndarray | float,
    *,
    confidence: float = 0.95,
    method: str = DEFAULT_METHOD,
    names: tuple[str, ...] | None = None,
) -> ProportionInterval:
    """Interval for a proportion from ``k`` successes in ``n`` rows, vectorised.

    Args:
        k: ``(S,)`` successes (hits), ``0 <= k <= n``; may be non-integer (soft counts).
        n: ``(S,)`` rows (totals); ``n == 0`` gives NaN and an :class:`UndefinedMetricWarning`.
        method: one of :data:`METHODS`.
        names: ``(S,)`` names for the warning (e.g. subconcept names).
    """
    k_a = np.atleast_1d(np.asarray(k, dtype=np.float64))
    n_a = np.atleast_1d(np.asarray(n, dtype=np.float64))
    k_a, n_a = np.broadcast_arrays(k_a, n_a)
    if not (np.isfinite(k_a).all() and np.isfinite(n_a).all()):
        raise UserError("k and n must be finite")
    eps = 1e-9 * np.maximum(n_a, 1)  # soft counts: k may exceed n by rounding
    if (k_a < -eps).any() or (k_a > n_a + eps).any() or (n_a < 0).any():
        raise UserError("need 0 <= k <= n")
    k_a = np.clip(k_a, 0, n_a)
    empty = n_a <= 0
    safe_n = np.where(empty, 1.0, n_a)
    lo, hi = _bounds(np.where(empty, 0.0, k_a), safe_n, method, 1 - confidence)
    nan = np.full(k_a.shape, np.nan)
    if empty.any():
        which = [names[i] if names else str(i) for i in np.flatnonzero(empty)]
        warnings.warn(
            f"proportion undefined (no rows) for {', '.join(map(repr, which))}; NaN",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    return ProportionInterval(
        estimate=np.where(empty, nan, k_a / safe_n),
        low=np.where(empty, nan, lo),
        high=np.where(empty, nan, hi),
        n=n_a.copy(),
        method=method,
        confidence=confidence,
    )


def exact_coverage(
    n: int, p: float, *, confidence: float = 0.95, method: str = DEFAULT_METHOD
) -> tuple[float, float]:
    """Exact coverage and mean width of an interval for ``n`` rows at true proportion ``p``.

    Sums over the ``n + 1`` binomial outcomes: ``Σ_k P(K = k) [low_k ≤ p ≤ high_k]`` and
    ``Σ_k P(K = k) (high_k − low_k)``.
    """
    k = np.arange(n + 1)
    ci = binomial_interval(k, np.full(n + 1, n), confidence=confidence, method=method)
    from scipy import stats  # only for measuring coverage

    pmf = stats.binom.pmf(k, n, p)
    covered = (ci.low <= p) & (p <= ci.high)
    return float(pmf @ covered), float(pmf @ (ci.high - ci.low))


@validate_params({"q_class": [ArrayLike()], "hit": [ArrayLike()], **_OPTIONS})
def soft_recall_interval(
    q_class: np.ndarray,
    hit: np.ndarray,
    *,
    confidence: float = 0.95,
    method: str = DEFAULT_METHOD,
    names: tuple[str, ...] | None = None,
) -> ProportionInterval:
    """Label-free per-subconcept recall ``r̂_s = Σ q̃_s·hit / Σ q̃_s`` with an interval.

    Args:
        q_class: ``(N, S)`` class-renormalised posteriors ``q̃`` (zero outside each row's class,
            :func:`medeval.weights.class_posteriors`), so column s only counts rows of s's class.
        hit: ``(N,)`` 1 where the row was classified correctly (``ŷ = y``).
        names: ``(S,)`` subconcept names for warnings.

    Returns:
        Estimates and bounds ``(S,)``; ``n`` is the Kish effective number of rows
        ``(Σ q̃_s)² / Σ q̃_s²``. A subconcept with no posterior mass is NaN with a warning.
    """
    q = np.asarray(q_class, dtype=np.float64)
    h = np.asarray(hit, dtype=np.float64)
    if q.ndim != 2 or h.shape != (q.shape[0],):
        raise UserError(f"need q_class (N, S) and hit (N,); got {q.shape} and {h.shape}")
    mass, mass2 = q.sum(0), (q**2).sum(0)
    found = q.T @ h
    pos = mass > 0
    n_eff = np.where(pos, mass**2 / np.where(pos, mass2, 1.0), 0.0)
    k_eff = np.where(pos, found / np.where(pos, mass, 1.0), 0.0) * n_eff
    return binomial_interval(k_eff, n_eff, confidence=confidence, method=method, names=names)
