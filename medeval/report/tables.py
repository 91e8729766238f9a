"""Plain-text tables of an :class:`~medeval.evaluation.Evaluation` for the terminal."""

from __future__ import annotations

import math

from ..evaluation import SCORES, Evaluation


def _fmt(x: float) -> str:
    return "  NaN" if x is None or math.isnan(x) else f"{x:.3f}"


def scores_table(ev: Evaluation) -> str:
    """The nine full-test scores with their intervals and, for missing ones, why."""
    pct = f"{ev.confidence:.0%}"
    head = f"{ev.n:,} test instances ({ev.n_positive:,} of class 1)"
    if ev.threshold is not None:
        head += f", predicted label = y_score >= {ev.threshold:g}"
    boot = ev.bootstrap
    if boot["n"]:
        head += f"; {pct} percentile intervals from {boot['n']:,} bootstrap replicates"
        head += f" (stratified by {boot['stratify']}, seed {boot['seed']})"
    lines = [head, "", f"{'score':<6} {'value':>6}   {pct + ' interval':<18}"]
    for k in SCORES:
        if k in ev.unavailable:
            lines.append(f"{k:<6} {'—':>6}   not computed: {ev.unavailable[k]}")
            continue
        lo, hi = ev.intervals.get(k, (math.nan, math.nan))
        ci = "" if math.isnan(lo) else f"[{_fmt(lo)}, {_fmt(hi)}]"
        lines.append(f"{k:<6} {_fmt(ev.scores[k]):>6}   {ci}")
    lines.append(
        "w = true utility weights (oracle), p = predicted utility weights; "
        "pAUC is the predicted-weight ROC AUC, not partial AUC."
    )
    return "\n".join(lines)


def subconcept_table(ev: Evaluation) -> str:
    """Per-subconcept test size, prevalence within class, utility and recall."""
    df = ev.per_subconcept
    if df.empty:
        return "(no test subconcept labels: no per-subconcept results)"
    lines = [
        f"{'subconcept':<22} {'class':>5} {'n_test':>7} {'share':>6} {'utility':>8} "
        f"{'recall':>7}  interval"
    ]
    for r in df.itertuples(index=False):
        ci = "" if math.isnan(r.low) else f"[{_fmt(r.low)}, {_fmt(r.high)}]"
        lines.append(
            f"{str(r.subconcept)[:22]:<22} {r[1]:>5} {r.n_test:>7,} {r.prevalence:>6.1%} "
            f"{'' if math.isnan(r.utility) else f'{r.utility:.2f}':>8} {_fmt(r.recall):>7}  {ci}"
        )
    return "\n".join(lines)
