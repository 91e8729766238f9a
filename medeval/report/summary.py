"""Rendering a run's summary: the headline table, ``report.md`` and ``report.html``, from what
:mod:`medeval.flows.rerun` passes in."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from medeval.datasets.sources import SOURCES as _SOURCES
from medeval.evaluation.quality import weak_model_warning
from medeval.report.html import Section, missing, render, warnings_section
from medeval.report.tables import recommended_mark
from medeval.scores import RECOMMENDED, WEAK_WITHIN_CLASS_BA

__all__ = [
    "SplitView",
    "config_notes",
    "interval_lines",
    "report_html",
    "report_markdown",
    "summary_table",
    "weak_model_notes",
]


@dataclass(frozen=True)
class SplitView:
    """What the run report shows of one finished split folder."""

    name: str  # split_<seed>
    metrics: dict[str, Any]  # its metrics.json
    figure_png: bytes | None = None  # subconcepts.png
    per_subconcept: pd.DataFrame | None = None  # per_subconcept.csv


def config_notes(cfg: dict | None) -> list[str]:
    """What a reader must know about a run's resolved config: synthetic data, no pretraining."""
    notes = []
    source = (cfg or {}).get("data", {}).get("source")
    if source in _SOURCES and _SOURCES[source].synthetic:
        notes.append(
            "DATA ARE SYNTHETIC: built-in chest-radiograph phantoms (medeval.datasets.synthetic), "
            "not real images; the numbers test the pipeline only."
        )
    model = (cfg or {}).get("model", {})
    if model and not model.get("pretrained") and not model.get("weights"):
        notes.append(
            f"The {model.get('backbone')} backbone was RANDOMLY INITIALISED "
            "(no pretrained weights)."
        )
    elif model:  # a training run's config: torch is loaded already
        from medeval.models.packaged import weights_source

        source = weights_source(
            str(model.get("backbone")), pretrained=True, weights=model.get("weights")
        )
        how = "frozen (only the heads trained)" if model.get("freeze") else "trained"
        notes.append(f"The {model.get('backbone')} backbone: weights {source}, {how}.")
    return notes


def summary_table(summary: dict) -> str:
    """Headline table: mean ± sd over splits; with one split, its bootstrap interval instead."""
    n = len(summary["splits"])
    one = summary["splits"][0] if n == 1 else None
    last = "95% interval (bootstrap)" if one else f"over {n} splits"
    lines = [f"{'score':<6} {'mean':>7} {'± sd':>8}   {last}"]
    recommended = set(summary.get("recommended", RECOMMENDED).values())
    for k, v in summary["scores"].items():
        mean = "   NaN" if missing(v["mean"]) else f"{v['mean']:.3f}"
        sd = "—" if missing(v["sd"]) else f"{v['sd']:.3f}"
        ci = _interval_text(summary, one, k) if one else ""
        lines.append(
            f"{k:<6} {mean:>7} {sd:>8}   {ci:<16}{recommended_mark(k, recommended)}".rstrip()
        )
    lines.append(
        "BA/F1/AUC unweighted; w = true utility weights (oracle: needs test subconcept labels); "
        "c = label-free estimate of the w score (class-conditional predicted weights); p = the "
        "paper's predicted weights (biased upward; pAUC = predicted-weight ROC AUC, not partial "
        "AUC)."
    )
    lines.append(RECTIFIED_RUN_LINE)
    return "\n".join(lines)


#: One sentence on the rectified scores of a training run (printed table and reports).
RECTIFIED_RUN_LINE = (
    "r = rectified: the c score minus its error measured on each split's reference rows R (its "
    "validation and calibration parts, not trained on; the validation part chose the "
    "checkpoint and the calibration part fitted the temperature), rM = cM(test) − (cM(R) − "
    "wM(R)), with a joint bootstrap interval of test and reference rows."
)


def interval_lines(summary: dict) -> list[str]:
    """Per split the recommended scores with their intervals and the reference rows."""
    out = []
    for split in summary["splits"]:
        parts = []
        for k in summary.get("recommended", RECOMMENDED).values():
            v = summary["scores"][k]["per_split"].get(split)
            ci = _interval_text(summary, split, k)
            parts.append(f"{k} {'NaN' if missing(v) else f'{v:.3f}'}{' ' * bool(ci)}{ci}")
        ref = (summary.get("reference") or {}).get(split)
        if ref:
            parts.append(f"reference rows: {ref['n']} ({ref['source']})")
        out.append(f"{split}: " + ", ".join(parts))
    return out


def _interval_text(summary: dict, split: str, k: str) -> str:
    iv = summary.get("intervals", {}).get(split, {}).get(k) or {}
    lo, hi = iv.get("low"), iv.get("high")
    return "" if missing(lo) or missing(hi) else f"[{lo:.3f}, {hi:.3f}]"


def worst_run_lines(summary: dict) -> list[str]:
    """Per split, the worst subconcept of each class in words (class 1 first)."""
    from medeval.evaluation.worst_subconcept import describe_worst

    out = []
    for split, entries in (summary.get("worst_subconcepts") or {}).items():
        for w in sorted(entries, key=lambda w: -w["class"]):
            clean = {k: (math.nan if v is None else v) for k, v in w.items()}
            out.append(f"{split}, worst of class {w['class']}: {describe_worst(clean)}")
    return out


def worst_over_splits(summary: dict) -> list[str]:
    """Per class (class 1 first), the worst subconcept over the splits in one sentence:
    ``"worst subconcept of class 1 over 10 splits — MEL in 7, AK in 2, BCC in 1; below class 1
    as a whole (the gap's interval above 0) in 6 of the 10"``."""
    entries = [w for ws in (summary.get("worst_subconcepts") or {}).values() for w in ws]
    n = len(summary.get("worst_subconcepts") or {})
    out = []
    for c in sorted({int(w["class"]) for w in entries}, reverse=True):
        mine = [w for w in entries if int(w["class"]) == c]
        counts: dict[str, int] = {}
        for w in mine:
            counts[str(w["subconcept"])] = counts.get(str(w["subconcept"]), 0) + 1
        named = ", ".join(f"{k} in {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
        below = sum(_below(w) for w in mine)
        out.append(
            f"worst subconcept of class {c} over {n} splits — {named}; below class {c} as a "
            f"whole (the gap's interval above 0) in {below} of the {len(mine)}"
        )
    return out


def _below(w: dict) -> bool:
    """Whether a split's worst is known to be below its class."""
    if w.get("verdict") is not None:
        return w["verdict"] == "below"
    low = w.get("gap_low")
    return low is not None and not missing(low) and float(low) > 0


def recommended_run_line(summary: dict) -> str:
    """``"Recommended: rBA 0.750 ± 0.031, … (mean ± sd over 10 splits)"``."""
    parts = []
    for k in dict.fromkeys(summary.get("recommended", RECOMMENDED).values()):
        v = summary["scores"].get(k, {})
        mean = "NaN" if missing(v.get("mean")) else f"{v['mean']:.3f}"
        sd = "" if missing(v.get("sd")) else f" ± {v['sd']:.3f}"
        parts.append(f"{k} {mean}{sd}")
    n = len(summary["splits"])
    over = f"mean ± sd over {n} splits" if n > 1 else "1 split"
    return f"Recommended: {', '.join(parts)} ({over})"


def run_figure(splits: list[SplitView], summary: dict) -> bytes | None:
    """The per-subconcept figure of the run: with one split its own; with several, each
    subconcept's mean over the splits, the bars' error lines from the lowest split to the
    highest, and the mean scores as lines (``None`` without any per-subconcept table)."""
    frames = [v.per_subconcept for v in splits if v.per_subconcept is not None]
    frames = [f for f in frames if not f.empty]
    if len(splits) == 1 or not frames:
        return splits[0].figure_png if len(splits) == 1 else None
    from medeval.evaluation.subconcept_recall import BOUNDS
    from medeval.report.figures import figure_png, subconcept_figure

    both = pd.concat(frames, ignore_index=True)
    both["subconcept"] = both["subconcept"].astype(str)
    names = list(dict.fromkeys(both["subconcept"]))
    by = both.groupby("subconcept")

    def over(col: str, how: str) -> np.ndarray:
        return (
            pd.to_numeric(both[col], errors="coerce")
            .groupby(both["subconcept"])
            .agg(how)[names]
            .to_numpy()
        )

    df = pd.DataFrame({"subconcept": names, "class": by["class"].first()[names].to_numpy()})
    for col in ("prevalence", "est_n_test", *BOUNDS):
        if col in both.columns:
            df[col] = over(col, "mean")
    for col, (lo, hi) in BOUNDS.items():
        if col in both.columns and both[col].notna().any():
            df[lo], df[hi] = over(col, "min"), over(col, "max")
    df = df.sort_values("class", kind="stable").reset_index(drop=True)
    scores = {k: v["mean"] for k, v in summary["scores"].items() if not missing(v.get("mean"))}
    fig = subconcept_figure(
        df,
        scores,
        title=f"Mean over {len(frames)} splits (error bars: lowest to highest split)",
        recommended=list(summary.get("recommended", RECOMMENDED).values()),
    )
    return figure_png(fig)


def report_markdown(summary: dict) -> str:
    """``report.md``: notes, which subconcept fails, the headline table and the calibration
    per split."""
    out = [f"# medeval run `{summary['run']}`", ""]
    for note in summary["notes"]:
        out += [f"**{note}**", ""]
    worst = worst_run_lines(summary)
    if worst:
        out += ["## Which subconcept fails?", ""] + [f"- {line}" for line in worst] + [""]
    out += ["", "## Scores, mean ± sd over splits", "", "```", summary_table(summary), "```"]
    out += ["", "## Recommended scores per split (95% intervals)", ""]
    out += [f"- {line}" for line in interval_lines(summary)]
    if summary["calibration"]:
        out += [
            "",
            "## Subconcept-head calibration (temperature scaling)",
            "",
            "| split | T | ECE cal. before | after | ECE test before | after |",
            "|---|---|---|---|---|---|",
        ]
        for s, c in summary["calibration"].items():
            out.append(
                f"| {s} | {c['temperature']:.3f} | {c['ece_calibration_before']:.3f} | "
                f"{c['ece_calibration_after']:.3f} | {c['ece_test_before']:.3f} | "
                f"{c['ece_test_after']:.3f} |"
            )
    out += [
        "",
        "Per split: `split_<seed>/metrics.json`, `per_subconcept.csv`, "
        "`subconcepts.png`, `log.csv`, `predictions.csv`.",
        "",
    ]
    return "\n".join(out)


_HEAD_TEXT = (
    "{n} split(s). BA/F1/AUC unweighted; w = true utility weights "
    "(oracle: needs test subconcept labels); c = the label-free estimate of the w score, "
    "from the calibrated subconcept head's posteriors renormalised within each instance's "
    "known class (recommended without reference rows: cBA, cF1, cAUC); r = rectified (below); "
    "p = the paper's predicted utility weights, "
    "kept for reproduction (biased upward; pAUC = predicted-weight ROC AUC, not partial "
    "AUC). When cBA lies below BA, the small subconcepts are the hard ones: look at the "
    "per-subconcept recalls."
)


def report_html(
    title: str,
    subtitle: str,
    summary: dict,
    rows: list[dict],
    config: str,
    task: dict | None,
    splits: list[SplitView],
) -> str:
    """Self-contained run report, the answer first: the recommended scores, which subconcept
    fails and the per-subconcept figure; then every warning (undefined scores, skipped files,
    synthetic data) in one folded list, the headline table, calibration, data set, per-split
    figures and the resolved config."""
    warn = list(summary["notes"])
    lead = _lead_section(summary, splits)
    sections = [] if lead is None else [lead]
    sections.append(_head_section(summary, rows))
    if summary["calibration"]:
        sections.append(_calibration_section(summary["calibration"]))
    if task is not None:
        sections.append(Section("Data set and task").pre(task["text"]))
        warn += [
            f"skipped unreadable file {s['path']} (row {s['row']}): {s['reason']}"
            for s in task.get("skipped", [])
        ]
    for split in splits:
        sections.append(_split_section(split))
        warn += [f"{split.name}: {n}" for n in split.metrics.get("notes", [])]
        warn += weak_model_notes(split.name, split.metrics)
    if config:
        sections.append(Section("Resolved configuration").pre(config))
    folded = warnings_section(warn)
    if folded is not None:
        sections.insert(1 if sections and sections[0].lead else 0, folded)
    return render(title, sections, subtitle=subtitle)


def _lead_section(summary: dict, splits: list[SplitView]) -> Section | None:
    """The section "Which subconcept fails?": the recommended scores, the worst subconcepts and
    the run's figure (``None`` with neither worst subconcepts nor a figure)."""
    worst = worst_run_lines(summary)
    png = run_figure(splits, summary) if splits else None
    if not worst and png is None:
        return None
    lead = Section("Which subconcept fails?", lead=True)
    lead.html(f'<p class="rec">{html.escape(recommended_run_line(summary))}</p>')
    several = len(summary["splits"]) > 1
    lead.text(*(worst_over_splits(summary) if several else worst))
    if png is not None:
        lead.image(
            png,
            caption=(
                "Each subconcept's mean over the splits (error bars: the lowest to the "
                "highest split)"
                if several
                else "Subconcept prevalence and recall"
            )
            + " (solid: true; hatched: label-free estimate; dotted: rectified); lines: "
            "the full-test BA variants, labelled at the right, the recommended one so "
            "marked in the legend.",
        )
    if several and worst:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in worst)
        lead.html(
            f"<details><summary>Each split's worst subconcepts ({len(worst)})</summary>"
            f"<ul>{items}</ul></details>"
        )
    return lead


def _head_section(summary: dict, rows: list[dict]) -> Section:
    """ "Scores over the splits": the headline table, each split's intervals and reports."""
    head = Section("Scores over the splits")
    head.text(_HEAD_TEXT.format(n=len(summary["splits"])), RECTIFIED_RUN_LINE)
    recommended = ", ".join(summary.get("recommended", RECOMMENDED).values())
    head.text(f"Recommended (column 'recommended'): {recommended}. Per split, with intervals:")
    head.pre("\n".join(interval_lines(summary)))
    head.table(pd.DataFrame(rows))
    head.links(
        [(f"{s}/report.html", f"{s}: scores, per-subconcept recalls and subsets of this split")
         for s in summary["splits"]],
        intro="Each split's own report:",
    )  # fmt: skip
    return head


def _calibration_section(calibration: dict) -> Section:
    """The subconcept head's calibration error before and after temperature scaling, per split."""
    cal = [
        {"split": s, **{k: v for k, v in c.items() if not isinstance(v, dict | list)}}
        for s, c in calibration.items()
    ]
    return (
        Section("Subconcept-head calibration (temperature scaling)")
        .text(
            "Expected calibration error before and after fitting a temperature on the "
            "calibration part."
        )
        .table(pd.DataFrame(cal))
    )


def _split_section(split: SplitView) -> Section:
    """One split's figure, per-subconcept table and link to its own report."""
    sec = Section(f"Split {split.name.split('_')[1]}")
    if split.figure_png is not None:
        sec.image(
            split.figure_png,
            caption="Subconcept prevalence and recall (solid: true; hatched: label-free "
            "estimate); lines: the full-test BA variants, labelled at the right.",
        )
    if split.per_subconcept is not None:
        confidence = split.metrics.get("confidence", 0.95)
        sec.per_subconcept(split.per_subconcept, confidence=confidence)
    return sec.links([(f"{split.name}/report.html", f"{split.name}: full report")])


def weak_model_notes(split: str, metrics: dict) -> list[str]:
    """A warning per class whose label-free weights rest on a weak subconcept head."""
    weighted = metrics.get("weighted_classes", ["class 1"])
    return [
        f"{split}: {weak_model_warning(c, v)}"
        for c, v in (metrics.get("subconcept_model") or {}).items()
        if c in weighted and v is not None and v < WEAK_WITHIN_CLASS_BA
    ]
