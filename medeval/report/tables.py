"""Plain-text tables of an :class:`~medeval.evaluation.Evaluation` for the terminal."""

from __future__ import annotations

import math

import pandas as pd

from medeval.evaluation import ALL_SCORES, LABEL_FREE_RECTIFIED, Evaluation
from medeval.evaluation.quality import weak_model_warning
from medeval.report.html import interval_method_text, missing


def _fmt(x: float) -> str:
    return "  NaN" if missing(x) else f"{x:.3f}"


def scores_table(ev: Evaluation) -> str:
    """The full-test scores with their intervals and, for missing ones, why."""
    pct = f"{ev.confidence:.0%}"
    head = f"{ev.n:,} test instances ({ev.n_positive:,} of class 1)"
    if ev.threshold is not None:
        head += f", predicted label = y_score >= {ev.threshold:g}"
    boot = ev.bootstrap
    if boot["n"]:
        head += f"; {pct} percentile intervals from {boot['n']:,} bootstrap replicates"
        head += f" (stratified by {boot['stratify']}, seed {boot['seed']})"
    lines = [head, "", f"{'score':<6} {'value':>6}   {pct + ' interval':<18}"]
    recommended = set(ev.recommended.values())
    rectified_missing = {ev.unavailable.get(k) for k in LABEL_FREE_RECTIFIED}
    for k in ALL_SCORES:
        if k in ev.unavailable:  # one line for the rectified family where it shares a reason
            shared = k in LABEL_FREE_RECTIFIED and len(rectified_missing) == 1
            if not shared or k == LABEL_FREE_RECTIFIED[0]:
                name = "/".join(LABEL_FREE_RECTIFIED) if shared else k
                lines.append(f"{name:<6} {'—':>6}   not computed: {ev.unavailable[k]}")
            continue
        ci = _interval(*ev.intervals.get(k, (math.nan, math.nan)))
        lines.append(f"{k:<6} {_fmt(ev.scores[k]):>6}   {ci:<18}{recommended_mark(k, recommended)}")
    lines.append(
        "w = true utility weights (oracle: needs test subconcept labels); c = label-free "
        "estimate of the w score (class-conditional predicted weights, docs/method.md); p = the "
        "paper's predicted weights (biased upward; kept for reproduction). pAUC is the "
        "predicted-weight ROC AUC, not partial AUC."
    )
    lines.append(RECTIFIED_LINE)
    for c in ev.weak_classes():
        lines.append(f"warning: {weak_model_warning(c, ev.subconcept_model[c])}.")
    return "\n".join(lines)


def recommended_mark(k: str, recommended: set[str]) -> str:
    """The printed tables' mark of a recommended score (``""`` for the others)."""
    if k not in recommended:
        return ""
    return "  <- recommended, label-free" + (", rectified" if k[0] == "r" else "")


#: One sentence on the rectified scores (the printed table and the run summary).
RECTIFIED_LINE = (
    "r = rectified: the c score minus its error measured on reference rows R, "
    "rM = cM(test) − (cM(R) − wM(R)); R must come from the same classifier, subconcept model "
    "and population as the test rows and must not have been used to fit either."
)


def subconcept_table(ev: Evaluation) -> str:
    """Per-subconcept test size, prevalence within class, utility, recall (true where test
    subconcepts are known) and the label-free recall estimate, with intervals."""
    df = ev.per_subconcept
    if df.empty:
        return "(no test subconcept labels and no posteriors: no per-subconcept results)"
    n_ref = df["n_reference"] if "n_reference" in df and df["n_reference"].notna().any() else None
    n_lab = None
    if "n_labelled" in df and pd.to_numeric(df["n_labelled"], errors="coerce").fillna(0).sum() > 0:
        n_lab = df["n_labelled"]
    rect = "r_recall" in df and df["r_recall"].notna().any()
    lines = [
        f"{'subconcept':<22} {'class':>5} {'n_test':>7} {'share':>6} {'utility':>8} "
        f"{'recall':>7} {'interval':<16} {'est.':>6} {'interval':<16}"
        + (f" {'rect.':>6} {'interval':<16} {'verdict':<10}" if rect else "")
        + (f" {'n_ref':>6}" if n_ref is not None else "")
        + (f" {'n_lab':>6}" if n_lab is not None else "")
    ]
    for i, r in enumerate(df.itertuples(index=False)):
        ci, est_ci = _interval(r.low, r.high), _interval(r.est_low, r.est_high)
        n_test = "—" if math.isnan(r.n_test) else f"{int(r.n_test):,}"
        recall = "—" if math.isnan(r.n_test) else _fmt(r.recall)  # no test labels: not computed
        share = "—" if math.isnan(r.prevalence) else f"{r.prevalence:.1%}"
        lines.append(
            f"{str(r.subconcept)[:22]:<22} {r[1]:>5} {n_test:>7} {share:>6} "
            f"{'' if math.isnan(r.utility) else f'{r.utility:.2f}':>8} {recall:>7} "
            f"{ci:<16} {_fmt(r.est_recall):>6} {est_ci:<16}"
            + (
                f" {_fmt(r.r_recall):>6} {_interval(r.r_low, r.r_high):<16} {r.r_verdict:<10}"
                if rect
                else ""
            )
            + (f" {int(n_ref.iloc[i]):>6,}" if n_ref is not None else "")
            + (f" {int(n_lab.iloc[i]):>6,}" if n_lab is not None else "")
        )
    lines.append(
        "recall: from the true test subconcepts; est.: label-free estimate from the subconcept "
        "model's posteriors renormalised within the class (no test subconcept labels needed)"
        + (
            "; rect.: the recall of its test rows, est. corrected on the reference rows; "
            "verdict: below / not below its class's recall, or not known"
            if rect
            else ""
        )
        + ("; n_ref: reference rows of the subconcept" if n_ref is not None else "")
        + ("; n_lab: its labelled test rows (--labels)" if n_lab is not None else "")
        + "."
    )
    methods = df["interval_method"].dropna().unique() if "interval_method" in df.columns else []
    named = "; ".join(interval_method_text(m) for m in methods) or "method not recorded"
    lines.append(f"intervals: {ev.confidence:.0%} {named}.")
    if rect:
        r_methods = df["r_interval_method"].dropna().unique()
        r_named = "; ".join(interval_method_text(m) for m in r_methods)
        lines.append(f"rect. intervals: {ev.confidence:.0%} {r_named}.")
    column = ev.recommended_per_subconcept
    if column:
        lines.append(f"per subconcept, read: {READ_COLUMN[column]}.")
    return "\n".join(lines)


#: What the recommended per-subconcept column is, in words.
READ_COLUMN = {
    "recall": "recall (the true test subconcepts are known)",
    "r_recall": "rect. (rectified on the reference rows)",
    "est_recall": "est. (label-free; no reference rows to correct it)",
}


def _interval(lo: float, hi: float) -> str:
    return "" if missing(lo) else f"[{_fmt(lo)}, {_fmt(hi)}]"
