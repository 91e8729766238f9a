"""Rectified label-free scores ``rM = cM(test) − (cM(R) − wM(R))`` from reference rows R, with
their joint bootstrap interval (test rows and, independently, R) and the warning of few reference
rows (docs/method.md, "Rectified scores")."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from medeval.errors import UserError
from medeval.evaluation.checks import bootstrap_info
from medeval.io.reference import ReferenceDataError, ReferenceRows
from medeval.metrics._checks import UndefinedMetricWarning
from medeval.metrics.bootstrap import BatchedBootstrap, percentile_interval
from medeval.metrics.classification import ba_from_sums, confusion_sums, f1_from_sums
from medeval.metrics.ranking import auc_from_sums, auc_sums
from medeval.scores import FAMILIES, RECOMMENDED_RECTIFIED
from medeval.weights import Utilities

#: A minority subconcept with fewer reference rows than this is warned about
#: (docs/method.md, "Rectified scores").
FEW_REFERENCE_ROWS = 5
#: Mixed into ``seed`` to derive the reference side's seed (ASCII "REFR").
REFERENCE_SEED_TAG = 0x52454652


class FewReferenceRowsWarning(UserWarning):
    """A minority subconcept has fewer than :data:`FEW_REFERENCE_ROWS` reference rows."""


def reference_seed(seed: int) -> int:
    """The reference side's bootstrap seed, derived from the evaluation's ``seed``.

    Not ``SeedSequence(seed).spawn``: the bootstrap seeds its generator blocks with
    ``SeedSequence(seed, spawn_key=(j,))``, exactly the spawned children, so the two sides would
    share streams.
    """
    ss = np.random.SeedSequence([int(seed), REFERENCE_SEED_TAG])
    return int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1))


def point_scores(
    y: np.ndarray,
    y_pred: np.ndarray | None,
    y_score: np.ndarray | None,
    weights: Mapping[str, np.ndarray],
) -> dict[tuple[str, str], float]:
    """Exact ``{(weighting, family): score}`` for each weighting ``(N,)``; NaN where undefined
    (warnings are the caller's, who knows which set it is)."""
    keys = list(weights)
    w = torch.stack([torch.as_tensor(weights[k], dtype=torch.float64) for k in keys])
    batched = batched_point_scores(y, y_pred, y_score, w)
    return {(k, m): float(v[i]) for m, v in batched.items() for i, k in enumerate(keys)}


def batched_point_scores(
    y: np.ndarray,
    y_pred: np.ndarray | None,
    y_score: np.ndarray | None,
    w: torch.Tensor,
    order: torch.Tensor | None = None,
) -> dict[str, torch.Tensor]:
    """``{family: (K,)}`` scores of ``K`` weightings ``w`` ``(K, N)`` of the same rows (a row
    weighted 0 is left out), from one pass: the scores are sorted once for every weighting
    (``order`` ``(N,)``: their stable sort, where the caller has it)."""
    yt = torch.as_tensor(y, dtype=torch.float64)
    out: dict[str, torch.Tensor] = {}
    if y_pred is not None:
        s = confusion_sums(yt, torch.as_tensor(y_pred, dtype=torch.float64), w)
        out["BA"], out["F1"] = ba_from_sums(s), f1_from_sums(s)
    if y_score is not None:
        s_sorted = torch.as_tensor(y_score, dtype=torch.float64)
        if order is None:
            s_sorted, order = torch.sort(s_sorted, stable=True)
        else:
            s_sorted = s_sorted[order]
        a = auc_sums(yt[order], s_sorted.expand(len(w), -1), w[:, order], presorted=True)
        out["AUC"] = auc_from_sums(a)
    return out


def reference_subset_scores(
    reference: ReferenceRows, utilities: Utilities, subconcepts: Sequence[str]
) -> dict[str, dict[tuple[str, str], float]]:
    """``{subconcept: {("c" | "w", family): score}}`` on each ``R ∩ sub_i``: the reference rows
    of the majority class and those of minority subconcept ``sub_i`` (the subsets of
    docs/method.md, "Evaluation subsets and analyses");
    NaN where undefined (warnings are the caller's). AUC only where the rows carry ``y_score``.
    The weights are row-wise, so every subset is one row of a ``(2·K, R)`` weight matrix."""
    if not subconcepts:
        return {}
    c_all, w_all, _ = _reference_weights(reference, utilities)
    codes = np.array([utilities.index(nm) for nm in subconcepts])
    member = (reference.y_true == 0) | (reference.subconcept == codes[:, None])  # (K, R)
    w = torch.as_tensor(np.concatenate([member * c_all, member * w_all]), dtype=torch.float64)
    scores = batched_point_scores(reference.y_true, reference.y_pred, reference.y_score, w)
    k = len(subconcepts)
    return {
        nm: {("c", m): float(v[i]) for m, v in scores.items()}
        | {("w", m): float(v[k + i]) for m, v in scores.items()}
        for i, nm in enumerate(subconcepts)
    }


@dataclass
class RectifiedResult:
    """Result of a rectification (:func:`rectify_test_side`).

    Attributes:
        scores: ``{"rBA", "rF1", "rAUC": value}``; NaN where undefined or unavailable.
        intervals: ``{score: (low, high)}`` percentile intervals of the joint bootstrap.
        n_undefined: ``{score: replicates left out as undefined}``.
        class_conditional: ``{family: cM(test)}``.
        reference_scores: ``{family: {"c": cM(R), "w": wM(R)}}``.
        correction: ``{family: cM(R) − wM(R)}`` (subtracted from cM(test)).
        reference_counts: ``{subconcept: reference rows}``.
        few_reference: minority subconcepts with fewer than :data:`FEW_REFERENCE_ROWS` rows.
        replicates: ``{score: (B,)}`` joint-bootstrap replicates of each score (for RQ4).
        components: ``{family: {"test_c", "ref_c", "ref_w": (B,)}}`` the replicates of cM(test),
            cM(R), wM(R) (another estimator can be formed from them).
        unavailable: ``{score: reason}``.
        notes: things a reader must know (undefined scores, few reference rows, fallbacks).
        bootstrap: ``{"n", "seed", "reference_seed", "method"}``.
    """

    scores: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    n_undefined: dict[str, int]
    class_conditional: dict[str, float]
    reference_scores: dict[str, dict[str, float]]
    correction: dict[str, float]
    reference_counts: dict[str, int]
    few_reference: list[str]
    replicates: dict[str, torch.Tensor]
    components: dict[str, dict[str, torch.Tensor]]
    unavailable: dict[str, str]
    confidence: float
    bootstrap: dict[str, Any]
    n_test: int
    n_reference: int
    source: str
    notes: list[str] = field(default_factory=list)


def _reference_weights(reference: ReferenceRows, utilities: Utilities) -> tuple:
    """Reference rows' class-conditional and true weights ``(R,)`` and their fallbacks."""
    c, fallback = reference.class_weights(utilities)
    w = utilities.values[reference.subconcept]
    if reference.row_weight is not None:
        c, w = c * reference.row_weight, w * reference.row_weight
    return c, w, fallback


@dataclass
class TargetRows:
    """The checked rows a rectification scores (the test rows, or the reference rows): classes,
    labels, scores ``(N,)`` (``s`` may be ``None``), class-conditional weights ``(N,)`` and how
    many rows fell back to the class mean, bootstrap strata and clusters ``(N,)`` (``clusters``
    may be ``None``), and, where the caller has them, the exact ``{family: cM(test)}``
    (``point``; computed when ``None``)."""

    y: np.ndarray
    yp: np.ndarray
    s: np.ndarray | None
    c: np.ndarray
    fallback: int
    strata: np.ndarray
    clusters: np.ndarray | None = None
    point: Mapping[str, float] | None = None


def rectify_test_side(
    test: TargetRows,
    reference: ReferenceRows,
    utilities: Utilities,
    *,
    n_bootstrap: int,
    confidence: float,
    stratify: Any,
    reference_stratify: str,
    seed: int,
    device: str | torch.device = "cpu",
    chunk_size: int | None = None,
    test_replicates: Mapping[str, torch.Tensor] | None = None,
) -> RectifiedResult:
    """rBA, rF1, rAUC of the checked test rows ``test``, corrected with the reference rows
    (docs/method.md, "Rectified scores"): ``rM = cM(test) − (cM(R) − wM(R))`` with its joint
    bootstrap interval (the test rows within ``test.strata`` and ``test.clusters``, the
    reference rows within ``reference_stratify``: ``"class"`` or ``"subconcept"``).

    :func:`medeval.evaluation.evaluate` passes the class-conditional weights, point estimates
    and replicates (``test_replicates``: ``{family: (B,)}``, drawn with ``seed``) it already
    has, so that nothing is computed twice and cM and rM are paired. ``device``,
    ``chunk_size`` change speed and memory only (on the CPU never the
    numbers).

    Raises:
        ReferenceDataError: reference rows checked against other subconcepts.
    """
    if tuple(reference.names) != tuple(utilities.names):
        raise ReferenceDataError(
            f"reference rows were checked against subconcepts {list(reference.names)}, "
            f"not these training sizes' {list(utilities.names)}",
            column="subconcept",
        )
    if test_replicates is not None:  # the evaluation's replicates: their number is B
        lengths = {len(v) for v in test_replicates.values()}
        if len(lengths) != 1:
            raise UserError(f"test_replicates must share one length; got {sorted(lengths)}")
        n_bootstrap = lengths.pop()
    c_ref, w_ref, fb_ref = _reference_weights(reference, utilities)
    auc = test.s is not None and reference.y_score is not None
    ref_strata = reference.subconcept if reference_stratify == "subconcept" else reference.y_true
    s_r = reference.y_score if auc else None
    ref = TargetRows(reference.y_true, reference.y_pred, s_r, c_ref, fb_ref, ref_strata)
    test = test if auc else replace(test, s=None)
    unavailable = {} if auc else {"rAUC": "needs y_score on the test and the reference rows"}
    if test.point is None:
        point = point_scores(test.y, test.yp, test.s, {"c": test.c})
    else:  # the families the test side can score
        point = {("c", m): float(v) for m, v in test.point.items() if m != "AUC" or auc}
    ref_point = point_scores(ref.y, ref.yp, ref.s, {"c": ref.c, "w": w_ref})
    point |= {("ref_" + k, m): v for (k, m), v in ref_point.items()}
    families = [m for m in FAMILIES if m != "AUC" or auc]
    boot = {"n_bootstrap": n_bootstrap, "seed": seed, "device": device, "chunk_size": chunk_size}
    comps = _components(families, test, ref, w_ref, test_replicates, **boot)
    fallbacks = ((test.fallback, "test row(s)"), (ref.fallback, "reference row(s)"))
    notes = [fallback_note(n, rows) for n, rows in fallbacks if n]
    result = _combine(families, point, comps, confidence, notes)
    return RectifiedResult(
        **result,
        reference_counts=reference.counts(),
        few_reference=_few_reference(reference.counts(), utilities, notes),
        components=comps,
        unavailable=unavailable,
        confidence=confidence,
        bootstrap=bootstrap_info(
            n_bootstrap,
            seed,
            stratify,
            reference_stratify=reference_stratify,
            reference_seed=reference_seed(seed),
        ),
        n_test=len(test.y),
        n_reference=len(reference),
        source=reference.source,
        notes=notes,
    )


def _components(families, test, ref, w_ref, test_replicates, **boot) -> dict[str, dict]:
    """Replicates ``(B,)`` of cM(test), cM(R) and wM(R) per family (``boot``: the keywords of
    :func:`_whole_set`; the reference rows are drawn with :func:`reference_seed`)."""
    if test_replicates is not None:
        missing = [m for m in families if m not in test_replicates]
        if missing:
            raise UserError(f"test_replicates lack the families {missing}")
        tc = {
            ("c", m): torch.as_tensor(test_replicates[m]).to("cpu", torch.float64) for m in families
        }
    if boot["n_bootstrap"] <= 0:
        empty = torch.empty(0, dtype=torch.float64)
        return {m: {"test_c": empty, "ref_c": empty, "ref_w": empty} for m in families}
    if test_replicates is None:
        tc = _whole_set(test, {"c": test.c}, **boot)
    rc = _whole_set(ref, {"c": ref.c, "w": w_ref}, **boot | {"seed": reference_seed(boot["seed"])})
    return {
        m: {"test_c": tc[("c", m)], "ref_c": rc[("c", m)], "ref_w": rc[("w", m)]} for m in families
    }


def _whole_set(rows: TargetRows, weights, *, n_bootstrap, seed, device, chunk_size) -> dict:
    """``{(weighting, family): (B,)}`` float64 CPU replicates on all of ``rows`` (within their
    strata and clusters)."""
    boot = BatchedBootstrap(
        rows.y,
        y_pred=rows.yp,
        y_score=rows.s,
        weights=weights,
        subsets={"full": np.ones(len(rows.y), dtype=bool)},
        strata=rows.strata,
        clusters=rows.clusters,
        device=device,
    )
    reps = boot.run(n_bootstrap, seed=seed, chunk_size=chunk_size)
    return {k: v[:, 0].to("cpu", torch.float64) for k, v in reps.scores.items()}


def combine(test_c: Any, ref_c: Any, ref_w: Any) -> Any:
    """The rectified score from its parts (floats or ``(B,)`` replicates):
    ``test_c − (ref_c − ref_w)``."""
    return test_c - (ref_c - ref_w)


def _combine(families, point, comps, confidence, notes) -> dict[str, Any]:
    """Point estimates, intervals and replicates of each family's score."""
    out: dict[str, Any] = {"scores": dict.fromkeys(RECOMMENDED_RECTIFIED.values(), math.nan)}
    for k in ("intervals", "n_undefined", "class_conditional", "reference_scores", "correction"):
        out[k] = {}
    out["replicates"] = {}  # of the families scored, in their order
    for m in families:
        name, parts = RECOMMENDED_RECTIFIED[m], comps[m]
        tc, rc, rw = point[("c", m)], point[("ref_c", m)], point[("ref_w", m)]
        value = combine(tc, rc, rw)
        out["scores"][name] = value
        out["class_conditional"][m] = tc
        out["reference_scores"][m] = {"c": rc, "w": rw}
        out["correction"][m] = rc - rw
        if math.isnan(value):
            _warn_undefined(name, tc, rc, rw, notes)
        out["replicates"][name] = combine(parts["test_c"], parts["ref_c"], parts["ref_w"])
    names = [nm for nm, r in out["replicates"].items() if len(r)]
    if names:  # one percentile computation for every family (each column on its own)
        stacked = torch.stack([out["replicates"][nm] for nm in names], 1)
        bounds = [v.tolist() for v in percentile_interval(stacked, confidence)]
        for nm, lo, hi, nu in zip(names, *bounds, strict=True):
            out["intervals"][nm] = (float(lo), float(hi))
            out["n_undefined"][nm] = int(nu)
            if int(nu):
                notes.append(
                    f"{nm}: {int(nu)} of {len(stacked)} joint bootstrap replicates undefined "
                    "(a class or subconcept drawn with zero weight), excluded"
                )
    for name in out["replicates"]:
        _note_out_of_range(name, out["scores"][name], out["intervals"].get(name), notes)
    return out


#: How far past 0 or 1 a score may lie from floating-point round-off alone (1.0000000000000007
#: is 1): below it, no note.
_ROUND_OFF = 1e-9


def _note_out_of_range(
    name: str, value: float, interval: tuple[float, float] | None, notes: list[str]
) -> None:
    """A note where the score or a bound lies outside [0, 1] (reported, not clipped)."""
    outside = [
        f"{what} {x:.4f}"
        for what, x in [("the score", value), *zip(("low", "high"), interval or (), strict=False)]
        if not math.isnan(x) and not -_ROUND_OFF <= x <= 1.0 + _ROUND_OFF
    ]
    if outside:
        notes.append(
            f"{name}: {', '.join(outside)} outside [0, 1], the range of the score: the correction "
            "measured on the reference rows is larger than the room the class-conditional score "
            "leaves (a score near 0 or 1, few reference rows); reported as computed, not clipped"
        )


def _warn_undefined(name: str, tc: float, rc: float, rw: float, notes: list[str]) -> None:
    where = "the test rows" if math.isnan(tc) else "the reference rows"
    msg = (
        f"{name} is undefined: a class has zero total weight in {where} "
        "(e.g. no reference row of class 0); reported as NaN"
    )
    notes.append(msg)
    warnings.warn(msg, UndefinedMetricWarning, stacklevel=4)


def _few_reference(counts: dict[str, int], utilities: Utilities, notes: list[str]) -> list[str]:
    """Minority subconcepts with fewer than :data:`FEW_REFERENCE_ROWS` rows, warned about."""
    few = [nm for nm in utilities.minority if counts[nm] < FEW_REFERENCE_ROWS]
    if few:
        listing = ", ".join(f"{nm!r} ({counts[nm]})" for nm in few)
        msg = (
            f"few reference rows for minority subconcept(s) {listing}, under "
            f"{FEW_REFERENCE_ROWS}: the correction of the rectified scores is noisy there and "
            "their intervals wide; add reference rows of these subconcepts"
        )
        notes.append(msg)
        warnings.warn(msg, FewReferenceRowsWarning, stacklevel=3)
    return few


def fallback_note(n: int, rows: str) -> str:
    """The note on ``n`` ``rows`` whose weight fell back to their class's mean utility."""
    return (
        f"{n} {rows} have zero posterior mass on the subconcepts of their own class; their "
        "class-conditional weight is the mean utility of that class "
        '(docs/method.md, "Label-free scores")'
    )
