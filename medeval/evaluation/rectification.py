"""The rectified scores of an evaluation (docs/method.md, "Rectified scores"): rBA, rF1, rAUC from
its class-conditional weights, exact scores and bootstrap replicates, their rows of the subsets
table, and the reference rows' notes."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import numpy as np
import torch

from medeval.evaluation.plan import _aliases, _Plan
from medeval.evaluation.quality import within_class_ba_from_q
from medeval.evaluation.rectified import (
    FEW_REFERENCE_ROWS,
    RectifiedResult,
    TargetRows,
    combine,
    rectify_test_side,
    reference_subset_scores,
)
from medeval.evaluation.result import NO_REFERENCE, Evaluation
from medeval.io.reference import ReferenceRows
from medeval.metrics._checks import UndefinedMetricWarning
from medeval.scores import LABEL_FREE_RECTIFIED, RECOMMENDED_RECTIFIED
from medeval.weights import Utilities


# -- rectified scores (docs/method.md, "Rectified scores") ----------------------------------
@dataclass
class _RectifyInputs:
    """The checked test inputs, the plan and the exact scores the rectified scores need."""

    y: np.ndarray
    yp: np.ndarray
    s: np.ndarray | None
    utilities: Utilities | None
    plan: _Plan
    point: dict[tuple, np.ndarray]


def _rectified_parts(
    reference: ReferenceRows | None,
    inputs: _RectifyInputs,
    reps: Any,
    confidence: float,
    boot_info: dict,
    *,
    seed: int,
    device: str | torch.device,
    absent: str = "",
) -> tuple[RectifiedResult | None, str, dict[str, list] | None, list[str]]:
    """The rectified scores (or why not: ``absent``, a minority subconcept without a reference
    row, :func:`~medeval.io.reference.absent_minority`), their subsets-table rows and those
    rows' notes."""
    why = ""
    if reference is None:
        why = NO_REFERENCE
    elif inputs.utilities is None:
        why = "reference rows given, but no training subconcept sizes (train sizes)"
    elif "c" not in inputs.plan.weights:
        why = "reference rows given, but no test posteriors: the rectified scores correct cM"
    else:
        why = absent
    if why:
        return None, why, None, []
    test_reps = None  # cM's replicates, this evaluation's own
    if reps is not None:
        test_reps = {
            m: reps.scores[("c", m)][:, 0] for m in ("BA", "F1", "AUC") if ("c", m) in reps.scores
        }
    p = inputs.plan
    point = {m: float(v[0]) for (k, m), v in inputs.point.items() if k == "c"}
    test = TargetRows(
        inputs.y, inputs.yp, inputs.s, p.weights["c"], p.n_fallback, inputs.y, None, point
    )
    res = rectify_test_side(
        test, reference, inputs.utilities, n_bootstrap=0 if reps is None else reps.n,
        confidence=confidence, stratify=boot_info["stratify"], reference_stratify="class",
        seed=seed, device=device, test_replicates=test_reps,
    )  # fmt: skip
    # the test side was resampled as this evaluation's bootstrap says
    res.bootstrap["method"] = (
        f"percentile; joint: test rows as the evaluation's bootstrap "
        f"(within {boot_info['stratify']}), reference rows within "
        f"{res.bootstrap['reference_stratify']}, drawn independently"
    )
    notes: list[str] = []
    return res, why, _rectified_rows(reference, res, inputs, notes), notes


def _with_reference(
    ev: Evaluation,
    reference: ReferenceRows | None,
    res: RectifiedResult | None,
    why: str,
    inputs: _RectifyInputs,
    row_notes: list[str],
) -> Evaluation:
    """``ev`` with rBA, rF1, rAUC (or why not), the reference rows and the model's quality."""
    if reference is not None:
        counts = reference.counts()
        if ev.per_subconcept["n_reference"].isna().all():  # else the rectified recall's count
            ev.per_subconcept["n_reference"] = [
                counts.get(str(nm), 0) for nm in ev.per_subconcept["subconcept"]
            ]
        minority = inputs.utilities.minority if inputs.utilities is not None else ()
        ev.reference = {
            "source": reference.source,
            "n": len(reference),
            "per_subconcept": counts,
            "few_rows": [nm for nm in minority if counts.get(nm, 0) < FEW_REFERENCE_ROWS],
        }
    if res is None:
        for name in LABEL_FREE_RECTIFIED:
            ev.scores[name] = math.nan
            ev.unavailable[name] = why
    else:
        ev.rectified = res
        for name in LABEL_FREE_RECTIFIED:
            ev.scores[name] = float(res.scores[name])
            if name in res.intervals:
                ev.intervals[name] = res.intervals[name]
            if name in res.unavailable:
                ev.unavailable[name] = res.unavailable[name]
        # the test rows' fallback is already noted by the evaluation itself
        ev.notes += [n for n in res.notes if " test row(s) have zero posterior mass" not in n]
        ev.notes += row_notes
    u = inputs.utilities
    if reference is None or u is None:
        return ev
    quality = within_class_ba_from_q(
        reference.y_true, reference.subconcept, reference.posteriors, u
    )
    text = ", ".join(f"{c}: {v:.3f}" for c, v in quality.items()) or "no class has two subconcepts"
    ev.notes.append(
        f"subconcept model on the reference data {reference.source}: within-class BA {text}"
    )
    if not ev.subconcept_model:
        ev.subconcept_model = quality
        ev.subconcept_model_source = f"reference data ({PurePath(reference.source).name})"
    return ev


def _rectified_rows(
    reference: ReferenceRows, res: RectifiedResult, inputs: _RectifyInputs, notes: list[str]
) -> dict[str, list]:
    """The subsets table's rows of rBA, rF1, rAUC, as columns: on ``sub_i``
    ``cM(test ∩ sub_i) − (cM(R ∩ sub_i) − wM(R ∩ sub_i))``, without interval (the joint
    bootstrap runs on the full set only)."""
    plan = inputs.plan
    names = list(plan.subsets)
    aliases = [(label, j, plan.subset_subconcept[names[j]]) for label, j in _aliases(names)]
    ref_scores = reference_subset_scores(
        reference,
        inputs.utilities,
        list(dict.fromkeys(nm for _, _, nm in aliases if nm is not None)),
    )
    new: dict[str, list] = {c: [] for c in ("subset", "subconcept", "score", "value", "low")}
    new |= {"high": [], "n_undefined": []}
    for family, name in RECOMMENDED_RECTIFIED.items():
        missing = family not in res.correction or ("c", family) not in inputs.point
        if name in res.unavailable or missing:
            continue
        for label, j, nm in aliases:
            if nm is None:  # full
                v, (lo, hi) = res.scores[name], res.intervals.get(name, (math.nan, math.nan))
                undef = res.n_undefined.get(name, 0)
            else:  # cM on the subset's test rows, cM and wM on its reference rows
                tc = float(inputs.point[("c", family)][j])
                rc, rw = (ref_scores[nm].get((k, family), math.nan) for k in ("c", "w"))
                v, lo, hi, undef = float(combine(tc, rc, rw)), math.nan, math.nan, 0
                if math.isnan(v) and label not in ("largest", "smallest"):  # aliases: warned once
                    where = "its test rows" if math.isnan(tc) else "its reference rows"
                    msg = (
                        f"{name} on subset {label} (subconcept {nm!r}) is undefined on {where}; NaN"
                    )
                    notes.append(msg)
                    warnings.warn(msg, UndefinedMetricWarning, stacklevel=4)
            for c, x in zip(new, (label, nm, name, v, lo, hi, undef), strict=True):
                new[c].append(x)
    return new
