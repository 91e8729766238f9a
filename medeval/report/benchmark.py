"""The benchmark analysis report (``report.html`` of ``python -m medeval.analyze``): the scores,
RQ1–RQ4 with their tables and figures, the run's settings, time and the warnings of the records,
rendered from what the analyses computed (:mod:`medeval.flows.analyze`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from medeval.report.html import Section, render

__all__ = ["Agreement", "benchmark_report"]


@dataclass
class Agreement:
    """RQ4 as the report shows it: its reading (``text``, the Markdown of
    :func:`medeval.analyses.agreement.agreement_markdown`), its ``table``, the weak subconcept
    models (``weak``, Markdown), and the coverage per data set (``coverage``, its ``intro``
    and the ``low`` coverage lines), each rendered as given."""

    text: str
    table: pd.DataFrame
    weak: str = ""
    coverage: pd.DataFrame | None = None
    intro: str = ""
    low: str = ""


def _agreement_section(out: Path, rq4: Agreement) -> Section:
    """Report section of RQ4: reading, table, figures, weak models and coverage."""
    sec = Section("RQ4 — do the label-free scores agree with the true-weight scores?")
    lines = rq4.text.splitlines()[1:]
    sec.text(*(t.removeprefix("- ") for t in lines if t.strip() and not t.startswith("|")))
    _figures(sec.table(rq4.table), out, "agreement*.png")
    _text_lines(sec, rq4.weak)
    if rq4.coverage is not None and not rq4.coverage.empty:
        sec.text("Coverage per data set. " + rq4.intro)
        sec.table(rq4.coverage)
        _text_lines(sec, rq4.low)
    return sec


def _figures(sec: Section, out: Path, pattern: str) -> Section:
    for png in sorted(out.glob(pattern)):
        sec.image(png.read_bytes(), caption=png.stem)
    return sec


def _text_lines(sec, md: str) -> None:
    """Markdown prose (no tables) as paragraphs of a report section."""
    lines = [t.strip() for t in md.splitlines()]
    prose = [t for t in lines if t and not t.startswith(("|", "#"))]
    sec.text(*(t.removeprefix("- ").replace("**", "") for t in prose))


def benchmark_report(
    results: Path,
    out: Path,
    records: list[dict[str, Any]],
    tables: dict[str, pd.DataFrame],
    *,
    rq4: Agreement | None = None,
    weak: str = "",
) -> str:
    """Self-contained benchmark report of the analysis written into ``out``: the ``tables``
    ``scores``, ``rq1``, ``rq2`` and ``timing`` with the figures beside them, RQ4, the run's
    settings (``results/run.json``), the weak subconcept models (``weak``, Markdown) and the
    warnings of the records and tasks."""
    scores, rq1, rq2, timing = (tables[k] for k in ("scores", "rq1", "rq2", "timing"))
    settings = results / "run.json"
    methods = sorted({r["method"] for r in records})
    head = Section("Benchmark").text(
        f"{len(records)} records (data set × method × split), "
        f"{len({r['dataset'] for r in records})} data sets, methods {', '.join(methods)}. "
        "pAUC = ROC AUC with predicted utility weights (not partial AUC)."
    )
    if settings.is_file():
        head.pre(settings.read_text())
    _text_lines(head, weak)
    head.table(scores)
    rq1_sec = Section("RQ1 — bias toward the largest subconcepts").text(
        "Pearson r across data sets between M(full) and M(largest) and M(smallest); the gap "
        "r_largest − r_smallest is positive when the full-test score tracks the largest "
        "subconcept. A good weighting shrinks it."
    )
    _figures(rq1_sec.table(rq1), out, "rq1_gap_*.png")
    rq2_sec = Section("RQ2 — does a better subconcept model give better weights?").text(
        "μ = mean over subconcepts of |mean true weight − mean predicted weight|; negative r "
        "means a better subconcept model gives closer weights."
    )
    _figures(rq2_sec.table(rq2), out, "rq2_scatter_*.png")
    rq3_sec = _figures(Section("RQ3 — why a score moves"), out, "rq3_sheet_*.png")
    time_sec = Section("Time and memory").table(timing)
    warnings = []
    for task_file in sorted((results / "tasks").glob("*.json")):
        task = json.loads(task_file.read_text())
        if not task.get("kept", True):
            warnings.append(f"{task_file.stem}: task rejected: {task.get('reason')}")
    for r in records:
        warnings += [
            f"{r['dataset']} {r['method']} split {r.get('split')}: {n}" for n in r.get("notes", [])
        ]
    sections = [head, rq1_sec, rq2_sec, rq3_sec, time_sec]
    if rq4 is not None:
        sections.insert(4, _agreement_section(out, rq4))
    if len(warnings) > 200:
        warnings[200:] = [f"... and {len(warnings) - 200} more (see the records)"]
    if warnings:
        sections.append(Section("Warnings").notes(warnings))
    return render(f"medeval benchmark: {results.name}", sections, subtitle=str(results))
