"""Per-subconcept recall: true, label-free and rectified, and the worst subconcept of each class
(docs/method.md, "Per-subconcept recall").

For a subconcept ``s`` of class ``c``:

* the true recall — the hits among the test rows of ``s`` (needs test subconcept labels);
* the label-free ``est_s = Σ q̃_s·hit / Σ q̃_s`` over the test rows of class ``c``, with ``q̃``
  the subconcept model's posteriors renormalised within the row's class. It shrinks toward the
  class's recall where the subconcept model is unsure, and its interval (on the soft counts)
  cannot see that;
* the rectified ``r_s = est_s(test) − (est_s(R) − recall_s(R))`` where reference rows ``R``
  (held-out rows with known subconcepts, scored by the same classifier and subconcept model)
  measure that shrinkage. Its interval comes from a joint bootstrap: the test rows as the
  evaluation's bootstrap resamples them, the reference rows within class, drawn independently.

A percentile interval over those replicates is too narrow where ``s`` has few reference rows
(the bootstrap of a proportion over a handful of rows is discrete, and ``[1, 1]`` when all were
found). The shipped construction, :data:`R_INTERVAL_METHOD`, replaces each replicate's
``recall_s(R)`` by a draw from the Jeffreys posterior Beta(k_b + ½, n_b − k_b + ½) of that
replicate's reference counts; it was chosen from the simulation of
``benchmarks/subconcept_recall_coverage.py`` (coverage and width per cell in docs/method.md).

The worst subconcept of a class and its gap to the class's recall come from the same
replicates, so their intervals are joint (:mod:`medeval.evaluation.worst_subconcept`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from medeval.errors import UserError
from medeval.metrics._checks import UndefinedMetricWarning
from medeval.metrics.bootstrap import BatchedBootstrap
from medeval.metrics.proportion import DEFAULT_METHOD, binomial_interval, soft_recall_interval
from medeval.weights import Utilities, renormalise_within_class

#: Interval constructions of the rectified recall (``benchmarks/subconcept_recall_coverage.py``
#: measures each): ``"percentile"`` of the joint replicates; ``"jeffreys-draw"``, the same
#: replicates with the reference recall drawn from its Jeffreys posterior; ``"jeffreys-realised"``,
#: those plus the test rows' own binomial noise where the posteriors are too diffuse to carry it
#: (:func:`realised_noise_scale`).
R_INTERVAL_METHODS = ("jeffreys-realised", "jeffreys-draw", "percentile")
#: The construction the outputs use (its name goes into ``per_subconcept.csv``).
R_INTERVAL_METHOD = "jeffreys-realised"
#: Below this many reference rows of a subconcept a warning names it. In the simulation of
#: ``benchmarks/subconcept_recall_coverage.py`` the interval held the true test recall in at
#: least 95 % of evaluations in every cell down to 5 reference rows (the fewest measured);
#: below 5 its coverage is not measured.
FEW_REFERENCE_ROWS_RECALL = 5
#: Where each source of the recommended per-subconcept recall lives in the table.
SOURCES = {"true": "recall", "rectified": "r_recall", "label-free": "est_recall"}
#: Bounds of each source's column.
BOUNDS = {
    "recall": ("low", "high"),
    "r_recall": ("r_low", "r_high"),
    "est_recall": ("est_low", "est_high"),
}
#: Why a rectified recall is missing, where the reference rows lack the subconcept.
NO_REFERENCE_ROWS = "no reference rows of this subconcept"
WORST_FIELDS = (
    "class",
    "subconcept",
    "recall",
    "low",
    "high",
    "gap",
    "gap_low",
    "gap_high",
    "source",
)
_JEFFREYS_TAG = 0x4A454646  # the Jeffreys draws' own stream, apart from the bootstrap's


def recommended_column(table: pd.DataFrame) -> str | None:
    """The per-subconcept column to read: the true ``recall`` where test subconcepts are known,
    else the rectified ``r_recall`` where reference rows gave it, else the label-free
    ``est_recall``; ``None`` when none has a value."""
    for col in SOURCES.values():
        if col in table and pd.to_numeric(table[col], errors="coerce").notna().any():
            return col
    return None


def source_of(column: str | None) -> str | None:
    """``"true"``, ``"rectified"`` or ``"label-free"`` for a column of :data:`SOURCES`."""
    return {v: k for k, v in SOURCES.items()}.get(column) if column else None


# -- the table: true and label-free columns ----------------------------------------------
PER_SUBCONCEPT_COLUMNS = (
    "subconcept",
    "class",
    "n_train",
    "utility",
    "n_test",
    "prevalence",
    "recall",
    "low",
    "high",
    "true_weight_sum",
    "predicted_weight_sum",
    "est_n_test",
    "est_recall",
    "est_low",
    "est_high",
    "interval_method",
    "n_reference",
    "ref_recall",
    "ref_low",
    "ref_high",
    "r_recall",
    "r_low",
    "r_high",
    "r_interval_method",
)


def _true_recall(
    plan: Any, i: int, nm: str, hit: np.ndarray, n_class: int
) -> tuple[dict[str, Any], list[str]]:
    """Row fields of subconcept ``i`` from the true test subconcepts (``hit``: ``(N,)``
    1.0 where correct), and the messages to warn."""
    m = plan.sc_codes == i
    n_test = int(m.sum())
    fields: dict[str, Any] = {
        "n_test": n_test,
        "prevalence": n_test / n_class if n_class else math.nan,
        "recall": float(hit[m].mean()) if n_test else math.nan,
    }
    if "w" in plan.weights:
        fields["true_weight_sum"] = float(plan.weights["w"][m].sum())
    if "p" in plan.weights:
        fields["predicted_weight_sum"] = float(plan.weights["p"][m].sum())
    msgs = []
    if n_test == 0:
        msgs.append(f"recall of subconcept {nm!r} is undefined: it has no test instances; NaN")
    return fields, msgs


def _estimated_recall(
    q: np.ndarray, i: int, nm: str, hit: np.ndarray
) -> tuple[dict[str, Any], list[str]]:
    """Label-free fields of subconcept ``i`` from the class-renormalised posteriors ``q``
    ``(N, S)`` (``hit``: ``(N,)``), and the messages to warn."""
    mass = float(q[:, i].sum())
    fields = {
        "est_n_test": mass,
        "est_recall": float(q[:, i] @ hit / mass) if mass > 0 else math.nan,
    }
    msgs = []
    if mass <= 0:
        msgs.append(
            f"label-free recall of subconcept {nm!r} is undefined: the subconcept model "
            "gives it no posterior mass on the test set; NaN"
        )
    return fields, msgs


def per_subconcept_rows(y, yp, plan: Any, u, confidence, notes) -> list[dict[str, Any]]:
    """One row per subconcept (``plan.sc_names`` order): true results where test subconcepts
    are known, and the label-free recall ``r̂_s = Σ q̃_s·hit / Σ q̃_s`` where posteriors are."""
    cols = list(PER_SUBCONCEPT_COLUMNS)
    hit = (yp == y).astype(np.float64)
    lo, hi, est_lo, est_hi, method = _recall_intervals(plan, hit, confidence)
    rows = []
    for i, nm in enumerate(plan.sc_names):
        side = plan.sc_side[nm]
        row = dict.fromkeys(cols, math.nan)
        row |= {
            "subconcept": nm,
            "class": side,
            "n_train": int(u.counts[u.index(nm)]) if u is not None else math.nan,
            "utility": float(u.values[u.index(nm)]) if u is not None else math.nan,
            "low": float(lo[i]),
            "high": float(hi[i]),
            "est_low": float(est_lo[i]),
            "est_high": float(est_hi[i]),
            "interval_method": method,
        }
        msgs: list[str] = []
        if plan.sc_codes is not None:
            fields, msgs = _true_recall(plan, i, nm, hit, int((y == side).sum()))
            row |= fields
        if plan.q_class is not None:
            fields, est_msgs = _estimated_recall(plan.q_class, i, nm, hit)
            row |= fields
            msgs += est_msgs
        for msg in msgs:
            notes.append(msg)
            warnings.warn(msg, UndefinedMetricWarning, stacklevel=4)
        rows.append(row)
    return rows


# -- per-subconcept recall intervals ------------------------------------------------
#: ``interval_method`` with ``groups``: the binomial interval on each subconcept's effective
#: number of rows over its clusters.
CLUSTER_INTERVAL_SUFFIX = " (effective n over groups)"


def _recall_intervals(
    plan: Any, hit: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]:
    """Bounds ``(S,)`` of the true recall (lo, hi) and of the label-free recall (est_lo,
    est_hi), and the method's name.

    A percentile bootstrap over a few rows covers badly and gives ``[1, 1]`` when all were
    found (docs/method.md, "Rectified scores"); these are Clopper–Pearson intervals
    (:data:`~medeval.metrics.proportion.DEFAULT_METHOD`, coverage ≥ 93 % by exact enumeration):
    on the hits of the subconcept's test rows, and for the label-free recall on its soft counts
    (:func:`~medeval.metrics.proportion.soft_recall_interval`). With groups (``plan.groups``:
    ``(N,)`` cluster codes) the rows of a cluster are not independent: the interval uses the
    effective number ``(Σ_g m_g)² / Σ_g m_g²`` of the subconcept's per-cluster (soft) counts
    ``m_g``, exact when a cluster's rows are all hits or all misses, conservative otherwise.
    NaN where a subconcept has no rows (its recall is NaN and warned about by the caller)."""
    k = len(plan.sc_names)
    lo, hi, est_lo, est_hi = (np.full(k, math.nan) for _ in range(4))
    g = plan.groups
    if plan.sc_codes is not None:
        member = np.bincount(plan.sc_codes, minlength=k).astype(np.float64)
        found = np.bincount(plan.sc_codes, weights=hit, minlength=k)
        if g is None:
            lo, hi = _binomial_where(found, member, member, confidence, plan.sc_names)
        else:
            per = _per_cluster(g, plan.sc_codes[:, None] == np.arange(k)[None, :])
            lo, hi = _binomial_where(found, member, (per**2).sum(0), confidence, plan.sc_names)
    if plan.q_class is not None:
        q = plan.q_class
        pos = q.sum(0) > 0
        if g is None and pos.any():
            names = tuple(nm for nm, p in zip(plan.sc_names, pos, strict=True) if p)
            ci = soft_recall_interval(q[:, pos], hit, confidence=confidence, names=names)
            est_lo[pos], est_hi[pos] = ci.low, ci.high
        elif g is not None:
            mass2 = (_per_cluster(g, q) ** 2).sum(0)
            est_lo, est_hi = _binomial_where(q.T @ hit, q.sum(0), mass2, confidence, plan.sc_names)
    method = DEFAULT_METHOD + ("" if g is None else CLUSTER_INTERVAL_SUFFIX)
    return lo, hi, est_lo, est_hi, method


def _per_cluster(g: np.ndarray, member: np.ndarray) -> np.ndarray:
    """Per-cluster sums ``(G, S)`` of the memberships ``member`` ``(N, S)`` (0/1 or soft)."""
    n_groups = int(g.max()) + 1 if len(g) else 0
    return np.stack(
        [np.bincount(g, weights=member[:, j], minlength=n_groups) for j in range(member.shape[1])],
        axis=1,
    )


def _binomial_where(
    found: np.ndarray, mass: np.ndarray, mass2: np.ndarray, confidence: float, names
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds ``(S,)`` from the hits ``found``, the rows ``mass`` and the sum of squared
    (per-row or per-cluster) counts ``mass2``: the interval of ``found / mass`` on the
    effective number ``mass² / mass2`` (``mass`` itself for independent rows); NaN where
    ``mass`` is 0."""
    lo, hi = np.full(len(mass), math.nan), np.full(len(mass), math.nan)
    pos = mass > 0
    if pos.any():
        exact = np.array_equal(mass2[pos], mass[pos])  # independent 0/1 rows: integer counts
        n_eff = mass[pos] if exact else mass[pos] ** 2 / mass2[pos]
        k_eff = found[pos] if exact else found[pos] / mass[pos] * n_eff
        names_pos = tuple(nm for nm, p in zip(names, pos, strict=True) if p)
        ci = binomial_interval(k_eff, n_eff, confidence=confidence, names=names_pos)
        lo[pos], hi[pos] = ci.low, ci.high
    return lo, hi


# -- the reference side ---------------------------------------------------------------------
@dataclass(frozen=True)
class ReferenceSide:
    """The reference rows' per-subconcept sums, point and (``B``, S) replicates.

    ``num``/``den``: soft hits and soft rows ``Σ q̃_s·hit``, ``Σ q̃_s``; ``k``/``n``: hits and
    rows of the reference rows of each subconcept; ``own``: the soft mass ``Σ q̃_s`` that lies
    on the rows of ``s`` itself. Points are ``(S,)``, replicates ``(B, S)`` (``None`` without a
    bootstrap)."""

    num: np.ndarray
    den: np.ndarray
    k: np.ndarray
    n: np.ndarray
    own: np.ndarray
    reps: dict[str, np.ndarray] | None


def _reference_columns(reference: Any, u: Utilities) -> np.ndarray:
    """Per-row columns ``(R, 4·S)``: ``q̃_s·hit``, ``q̃_s``, ``[s_j = s]·hit``, ``[s_j = s]``."""
    q = renormalise_within_class(torch.from_numpy(reference.posteriors), u, reference.y_true)
    q = q.q.cpu().numpy()
    hit = (reference.y_pred == reference.y_true).astype(np.float64)
    member = (reference.subconcept[:, None] == np.arange(len(u.names))[None, :]).astype(float)
    return np.concatenate([q * hit[:, None], q, member * hit[:, None], member], axis=1)


def reference_side(
    reference: Any,
    u: Utilities,
    *,
    n_bootstrap: int,
    seed: int,
    device: str | torch.device = "cpu",
    memory_budget: int | None = None,
) -> ReferenceSide:
    """Sums of :class:`ReferenceSide` on the reference rows (a
    :class:`~medeval.io.reference.ReferenceRows` with ``y_pred``), and ``n_bootstrap`` replicates
    resampled within class with ``seed`` (pass the rectified scores' reference seed: the same
    draws as their reference bootstrap)."""
    cols = _reference_columns(reference, u)
    k = len(u.names)
    tot = cols.sum(0)
    own = (cols[:, k : 2 * k] * cols[:, 3 * k :]).sum(0)  # Σ_{j ∈ s} q̃_s(j)
    reps = None
    if n_bootstrap > 0:
        boot = BatchedBootstrap(
            reference.y_true, y_pred=reference.y_pred, y_score=reference.y_score,
            weights={"c": np.ones(len(reference))},
            subsets={"full": np.ones(len(reference), dtype=bool)},
            strata=reference.y_true, device=device, memory_budget=memory_budget,
        )  # fmt: skip
        v = torch.as_tensor(cols, dtype=torch.float64, device=boot.device)
        parts = [
            (c.to(torch.float64) @ v).cpu().numpy()
            for c in boot.iter_counts(n_bootstrap, seed=seed)
        ]
        s = np.concatenate(parts) if parts else np.empty((0, 4 * k))
        reps = {nm: s[:, i * k : (i + 1) * k] for i, nm in enumerate(("num", "den", "k", "n"))}
    return ReferenceSide(*(tot[i * k : (i + 1) * k] for i in range(4)), own=own, reps=reps)


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)


def rectified_point(est_test: np.ndarray, ref: ReferenceSide) -> np.ndarray:
    """``r_s = est_s(test) − (est_s(R) − recall_s(R))`` ``(S,)``; NaN where a part is."""
    return est_test - (_ratio(ref.num, ref.den) - _ratio(ref.k, ref.n))


def realised_noise_scale(test_mass: np.ndarray, ref: ReferenceSide) -> np.ndarray:
    """``(S,)`` scale ``√(max(0, 1 − 2·w_s) / n̂_s)`` of the test rows' binomial noise that the
    bootstrap of the soft test counts does not carry.

    The target is the recall of the test rows of ``s``, ``p_s + ε_s`` with ``Var ε_s =
    p_s(1 − p_s)/n_s``. Where the posteriors put only a share ``w_s`` of s's soft mass on the
    rows of ``s`` (the rest on other rows of its class), ``est_s(test)`` follows ``ε_s`` with
    weight ``w_s``: the estimate misses ``(1 − w_s)·ε_s`` while the test-side replicates carry
    ``w_s·ε_s``; the difference of the variances is ``(1 − 2·w_s)·Var ε_s`` (first order, in a
    model where the posteriors do not vary within a subconcept). ``w_s`` is measured on the
    reference rows (``own / den``) and ``n_s`` estimated as ``Σ_test q̃_s · n_s(R) / Σ_R q̃_s``
    (rows of ``s`` per unit of soft mass, from the reference rows). 0 where a part is undefined.
    """
    purity = _ratio(ref.own, ref.den)
    n_hat = test_mass * _ratio(ref.n, ref.den)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.sqrt(np.clip(1 - 2 * purity, 0, None) / n_hat)
    return np.where(np.isfinite(scale), scale, 0.0)


def rectified_replicates(
    est_test: np.ndarray,
    ref: dict[str, np.ndarray],
    *,
    method: str,
    seed: int,
    noise_scale: np.ndarray | None = None,
) -> np.ndarray:
    """Replicates ``(B, S)`` of ``r_s`` from the test side's ``est_s`` replicates ``(B, S)``
    and the reference side's replicated sums (:attr:`ReferenceSide.reps`).

    ``method`` (:data:`R_INTERVAL_METHODS`): ``"percentile"`` uses each replicate's reference
    recall ``k_b / n_b``; ``"jeffreys-draw"`` a draw from Beta(k_b + ½, n_b − k_b + ½), seeded
    by ``seed`` (its own stream), so that a subconcept with few reference rows carries the
    uncertainty of a small-count interval; ``"jeffreys-realised"`` adds to those
    ``N(0, 1)·√(p_b(1 − p_b))·noise_scale`` (:func:`realised_noise_scale`; ``p_b`` the drawn
    recall), the test rows' noise the soft counts do not carry. NaN where a replicate has no
    reference row of the subconcept or no soft mass."""
    if method not in R_INTERVAL_METHODS:
        raise UserError(f"method must be one of {', '.join(R_INTERVAL_METHODS)}; got {method!r}")
    k, n = ref["k"], ref["n"]
    if method == "percentile":
        recall = _ratio(k, n)
    else:
        rng = np.random.default_rng([int(seed), _JEFFREYS_TAG])
        ok = n > 0
        draw = rng.beta(np.where(ok, k, 0.0) + 0.5, np.where(ok, n - k, 0.0) + 0.5)
        recall = np.where(ok, draw, np.nan)
    out = est_test - (_ratio(ref["num"], ref["den"]) - recall)
    if method == "jeffreys-realised":
        if noise_scale is None:
            raise UserError("method 'jeffreys-realised' needs noise_scale")
        z = rng.standard_normal(out.shape)
        out = out + z * np.sqrt(np.clip(recall * (1 - recall), 0, None)) * noise_scale
    return out


def boundary_rule(
    lo: np.ndarray, hi: np.ndarray, k: np.ndarray, n: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds ``(S,)`` with the upper bound 1 where every reference row of the subconcept was
    found (``k = n``) and the lower bound 0 where none was (``k = 0``), as the Jeffreys
    interval's boundary modification does: those rows cannot tell a recall of 1 (or 0) from
    one just below (above). Without it the realised recall 1 of an easy subconcept — common:
    39 of the 41 misses on the KEEL grid without correction — lay just above intervals that
    ended at 0.999."""
    has = n > 0
    hi = np.where(has & (k >= n), 1.0, hi)
    lo = np.where(has & (k <= 0), 0.0, lo)
    return lo, hi


def percentile_bounds(reps: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bounds ``(S,)`` over the replicate axis, undefined replicates left out; NaN
    where none is defined."""
    alpha = (1 - confidence) / 2
    lo, hi = np.full(reps.shape[1:], math.nan), np.full(reps.shape[1:], math.nan)
    ok = np.isfinite(reps).any(0)
    if ok.any():
        b = np.nanquantile(reps[:, ok], [alpha, 1 - alpha], axis=0)
        lo[ok], hi[ok] = b[0], b[1]
    return lo, hi


# -- the table's rectified and reference columns ---------------------------------------------
def rectified_columns(
    names: Sequence[str],
    est_test: np.ndarray,
    est_reps: np.ndarray | None,
    ref: ReferenceSide,
    *,
    test_mass: np.ndarray,
    confidence: float,
    seed: int,
    method: str = R_INTERVAL_METHOD,
) -> tuple[dict[str, np.ndarray], np.ndarray | None, list[str]]:
    """``{column: (S,)}`` of ``r_recall, r_low, r_high, ref_recall, ref_low, ref_high,
    n_reference``, the replicates ``(B, S)`` of ``r_recall`` (``None`` without a bootstrap) and
    the notes (subconcepts without reference rows, or under
    :data:`FEW_REFERENCE_ROWS_RECALL`)."""
    notes: list[str] = []
    # a recall lies in [0, 1]: the point and the replicates are projected onto it (the
    # correction can carry them past a bound; the projection only moves them toward the truth)
    point = np.clip(rectified_point(est_test, ref), 0.0, 1.0)
    lo = hi = np.full(len(names), math.nan)
    reps = None
    if est_reps is not None and ref.reps is not None:
        scale = realised_noise_scale(test_mass, ref)
        reps = rectified_replicates(est_reps, ref.reps, method=method, seed=seed, noise_scale=scale)
        reps = np.clip(reps, 0.0, 1.0)
        lo, hi = percentile_bounds(reps, confidence)
        if method != "percentile":  # the Jeffreys interval's boundary rule (Brown et al. 2001)
            lo, hi = boundary_rule(lo, hi, ref.k, ref.n)
    has = ref.n > 0
    r_lo, r_hi = np.full(len(names), math.nan), np.full(len(names), math.nan)
    if has.any():
        ci = binomial_interval(ref.k[has], ref.n[has], confidence=confidence)
        r_lo[has], r_hi[has] = ci.low, ci.high
    missing = [nm for nm, h in zip(names, has, strict=True) if not h]
    if missing:
        notes.append(
            f"rectified recall undefined for {', '.join(map(repr, missing))}: "
            f"{NO_REFERENCE_ROWS}; NaN (r_recall needs at least one)"
        )
    few = [
        f"{nm!r} ({int(c)})"
        for nm, c, h in zip(names, ref.n, has, strict=True)
        if h and c < FEW_REFERENCE_ROWS_RECALL
    ]
    if few:
        notes.append(
            f"fewer than {FEW_REFERENCE_ROWS_RECALL} reference rows for {', '.join(few)}: "
            "their rectified recall rests on a handful of rows (its interval's coverage is "
            "measured from 5 rows up); add reference rows of them"
        )
    cols = {
        "r_recall": point,
        "r_low": lo,
        "r_high": hi,
        "ref_recall": _ratio(ref.k, ref.n),
        "ref_low": r_lo,
        "ref_high": r_hi,
        "n_reference": ref.n.astype(np.int64),
    }
    return cols, reps, notes
