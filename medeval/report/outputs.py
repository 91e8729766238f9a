"""An :class:`~medeval.evaluation.Evaluation` → the files a user reads (metrics.json, metrics.csv,
per_subconcept.csv, subconcepts.png, report.html), rendered in memory before any is written."""

from __future__ import annotations

from medeval.evaluation import Evaluation
from medeval.io.atomic import json_text

__all__ = ["output_files"]


def output_files(ev: Evaluation, title: str, source: str = "") -> dict[str, bytes]:
    """Everything the command writes, prepared in memory before anything touches the disk:
    metrics.json, metrics.csv, per_subconcept.csv, subconcepts.png and report.html."""
    from medeval.report.figures import figure_png, subconcept_figure
    from medeval.report.html import Section, evaluation_sections, render

    files = {
        "metrics.json": json_text(ev.to_dict()).encode(),
        "metrics.csv": ev.subsets.to_csv(index=False).encode(),
    }
    if not ev.per_subconcept.empty:
        files["per_subconcept.csv"] = ev.per_subconcept.to_csv(index=False).encode()
        fig = subconcept_figure(
            ev.per_subconcept, ev.scores, title=f"{title}: subconcept prevalence and recall"
        )
        files["subconcepts.png"] = figure_png(fig)
    sections = evaluation_sections(ev, figure_png=files.get("subconcepts.png"))
    if source:
        sections.append(Section("Inputs").pre(source))
    files["report.html"] = render(f"medeval evaluation: {title}", sections).encode()
    return files
