"""Per-subconcept recall: true, label-free (``Σ q̃_s·hit / Σ q̃_s``) and rectified on reference
rows (:mod:`medeval.evaluation.rectified_recall`), the table's columns and which to read
(docs/method.md, "Per-subconcept recall")."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from medeval.evaluation.rectified_recall import (
    DECISIVE_WIDTH,
    MIN_REFERENCE_ROWS,
    VERDICTS,
    LabelledRows,
    RectifiedRecall,
    ReferenceEvidence,
    could_be_worst_by_class,
    more_rows,
    ratio,
    rectified_recall,
    verdicts,
)
from medeval.metrics._checks import UndefinedMetricWarning
from medeval.metrics.proportion import DEFAULT_METHOD, binomial_interval, soft_recall_interval
from medeval.weights import Utilities, renormalise_within_class

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
    "verdict",
    "could_be_worst",
)


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
    "n_labelled",
    "ref_recall",
    "ref_low",
    "ref_high",
    "r_recall",
    "r_low",
    "r_high",
    "r_ess",
    "r_gap",
    "r_gap_low",
    "r_gap_high",
    "r_verdict",
    "r_could_be_worst",
    "r_p_worst",
    "r_more_rows",
    "r_interval_method",
)


def per_subconcept_rows(y, hit, plan: Any, u, confidence, notes) -> list[dict[str, Any]]:
    """One row per subconcept (``plan.sc_names`` order): true results where test subconcepts
    are known, and the label-free recall ``r̂_s = Σ q̃_s·hit / Σ q̃_s`` where posteriors are
    (``hit`` ``(N,)``: 1 where the row is classified correctly)."""
    lo, hi, est_lo, est_hi, method = _recall_intervals(plan, hit, confidence)
    rows = []
    for i, nm in enumerate(plan.sc_names):
        side = plan.sc_side[nm]
        row = dict.fromkeys(PER_SUBCONCEPT_COLUMNS, math.nan)
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
        msgs = []
        if plan.sc_codes is not None:
            m = plan.sc_codes == i
            n_test, n_class = int(m.sum()), int((y == side).sum())
            row["n_test"], row["recall"] = n_test, float(hit[m].mean()) if n_test else math.nan
            row["prevalence"] = n_test / n_class if n_class else math.nan
            if "w" in plan.weights:
                row["true_weight_sum"] = float(plan.weights["w"][m].sum())
            if "p" in plan.weights:
                row["predicted_weight_sum"] = float(plan.weights["p"][m].sum())
            if n_test == 0:
                msgs.append(
                    f"recall of subconcept {nm!r} is undefined: it has no test instances; NaN"
                )
        if plan.q_class is not None:
            mass = float(plan.q_class[:, i].sum())
            row["est_n_test"] = mass
            row["est_recall"] = float(plan.q_class[:, i] @ hit / mass) if mass > 0 else math.nan
            if mass <= 0:
                msgs.append(
                    f"label-free recall of subconcept {nm!r} is undefined: the subconcept model "
                    "gives it no posterior mass on the test set; NaN"
                )
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
    """Bounds ``(S,)`` of the true and label-free recalls, and the interval's name."""
    k = len(plan.sc_names)
    lo, hi, est_lo, est_hi = (np.full(k, math.nan) for _ in range(4))
    g = plan.groups
    if plan.sc_codes is not None:
        member = np.bincount(plan.sc_codes, minlength=k).astype(np.float64)
        found = np.bincount(plan.sc_codes, weights=hit, minlength=k)
        mass2 = member  # with groups: the effective number of rows over the clusters
        if g is not None:
            mass2 = (_per_cluster(g, plan.sc_codes[:, None] == np.arange(k)[None, :]) ** 2).sum(0)
        lo, hi = _binomial_where(found, member, mass2, confidence, plan.sc_names)
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
    """Bounds ``(S,)`` of ``found / mass`` on ``mass² / mass2`` rows; NaN where none."""
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


# -- the reference rows and the rectified columns --------------------------------------------
def reference_evidence(reference: Any, u: Utilities) -> ReferenceEvidence:
    """The reference rows (a :class:`~medeval.io.reference.ReferenceRows` with ``y_pred``) as
    the rectified recall reads them: posteriors renormalised within each row's class, hits,
    classes and subconcept codes (the utilities' order)."""
    q = renormalise_within_class(torch.from_numpy(reference.posteriors), u, reference.y_true)
    hit = (reference.y_pred == reference.y_true).astype(np.float64)
    return ReferenceEvidence(
        q.q.cpu().numpy(), hit, reference.y_true, reference.subconcept,
        group=getattr(reference, "group", None),
    )  # fmt: skip


def rectified_columns(
    names: Sequence[str],
    sides: np.ndarray,
    q_test: np.ndarray,
    hit: np.ndarray,
    y: np.ndarray,
    evidence: ReferenceEvidence | None,
    class_recall: dict[int, float],
    *,
    labelled: LabelledRows | None = None,
    confidence: float,
    n_draws: int,
    seed: int,
) -> tuple[dict[str, np.ndarray], RectifiedRecall, list[str]]:
    """``{column: (S,)}`` of the rectified recall of every subconcept's test rows (``r_*``, see
    :mod:`medeval.evaluation.rectified_recall`) from the reference rows ``evidence`` and the
    ``labelled`` test rows, and of the reference rows' own recall (``ref_*``, ``n_reference``;
    ``n_labelled``), the estimate itself (its joint draws for the worst subconcept) and the
    notes: subconcepts without rows of known subconcept, or too few for an interval."""
    # with labelled test rows rectified_recall recalibrates the posteriors within class first
    res = rectified_recall(
        q_test, hit, y, sides, evidence, labelled=labelled, confidence=confidence,
        n_draws=n_draws, seed=seed,
    )  # fmt: skip
    n, k = np.zeros(len(names)), np.zeros(len(names))
    if evidence is not None:
        n = np.bincount(evidence.subconcept, minlength=len(names)).astype(np.float64)
        k = np.bincount(evidence.subconcept, weights=evidence.hit, minlength=len(names))
    n_lab = res.n_reference - n.astype(np.int64)  # rows of known subconcept: reference, labelled
    cr = np.array([class_recall.get(int(c), math.nan) for c in sides])
    gap_lo, gap_hi = cr - res.high, cr - res.low
    ref_low, ref_high = _binomial_where(k, n, n, confidence, names)
    cols = {
        "n_reference": n.astype(np.int64),
        "n_labelled": n_lab,
        "ref_recall": ratio(k, n),
        "ref_low": ref_low,
        "ref_high": ref_high,
        "r_recall": res.recall,
        "r_low": res.low,
        "r_high": res.high,
        "r_ess": res.ess,
        "r_gap": cr - res.recall,
        "r_gap_low": gap_lo,
        "r_gap_high": gap_hi,
        "r_verdict": verdicts(gap_lo, gap_hi),
        "r_could_be_worst": np.full(len(names), math.nan, dtype=object),
    }
    # labelled rows read at this look's level (medeval.evaluation.looks): the worst set too
    inside, cols["r_p_worst"] = could_be_worst_by_class(res, sides, res.level)
    defined = np.isfinite(cols["r_p_worst"])
    cols["r_could_be_worst"][defined] = inside[defined]
    open_ = (cols["r_verdict"] == VERDICTS[2]) & np.isfinite(res.low)
    more = more_rows(
        res.recall, cr, res.deff, res.n_reference.astype(float), res.n_test, res.level,
        n_eff=res.n_eff, labelled=n_lab > 0,
    )  # fmt: skip
    narrow = res.high - res.low < DECISIVE_WIDTH  # already decisive: close to its class
    cols["r_more_rows"] = np.where(open_, np.where(narrow, 0.0, more), math.nan)
    rows = "reference rows" if labelled is None else "reference or labelled rows"
    notes = []
    missing = [nm for nm, c in zip(names, res.n_reference, strict=True) if c == 0]
    if missing:
        notes.append(
            f"rectified recall undefined for {', '.join(map(repr, missing))}: "
            f"{NO_REFERENCE_ROWS}; NaN (r_recall needs at least one, an interval "
            f"{MIN_REFERENCE_ROWS})"
        )
    few = [
        f"{nm!r} ({int(c)}; needs {MIN_REFERENCE_ROWS - int(c)} more)"
        for nm, c in zip(names, res.n_reference, strict=True)
        if 0 < c < MIN_REFERENCE_ROWS
    ]
    if few:
        notes.append(
            f"fewer than {MIN_REFERENCE_ROWS} {rows} for {', '.join(few)}: no interval "
            f"for their rectified recall and a verdict of 'not known'; add {rows} of them"
        )
    return cols, res, notes
