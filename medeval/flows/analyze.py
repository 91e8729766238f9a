"""RQ1–RQ4 tables and figures of a benchmark results folder (``python -m medeval.analyze``;
the files: docs/benchmark.md, "Analyses"), written whole or not at all
(:class:`medeval.io.outdir.OutputFolder`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from medeval._validation import StrOptions, TypeOf, validate_params
from medeval.analyses.agreement import (
    agreement_by_method,
    agreement_figure,
    agreement_markdown,
    agreement_table,
    reference_sources,
)
from medeval.analyses.common import dataset_means, markdown_table, subset_frame
from medeval.analyses.correlation_gap import gap_figure, gap_markdown, gap_table
from medeval.analyses.coverage import (
    COVERAGE_INTRO,
    coverage_by_dataset,
    coverage_markdown,
    coverage_view,
    low_coverage_lines,
)
from medeval.analyses.discovery import discovery_markdown, discovery_table
from medeval.analyses.quality import subconcept_model_quality, weak_markdown
from medeval.analyses.recall_panels import recall_sheets
from medeval.analyses.scores import score_table
from medeval.analyses.subconcepts import subconcept_agreement, subconcept_agreement_markdown
from medeval.analyses.weight_error import (
    weight_error_by_dataset,
    weight_error_figure,
    weight_error_markdown,
    weight_error_table,
)
from medeval.io.atomic import write_bytes, write_text
from medeval.io.outdir import OutputFolder
from medeval.options import CORRECTIONS
from medeval.protocol.store import ResultsStore
from medeval.report.benchmark import Agreement, benchmark_report
from medeval.report.figures import figure_png
from medeval.scores import FAMILIES


def timing_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Per data set: records, fold compute time, metric time and share, worker peak RSS."""
    rows = [
        (
            r["dataset"],
            r["timing"].get("unit_s", 0.0),
            r["timing"]["metrics_s"],
            r["timing"].get("worker_peak_rss_mb", float("nan")),
        )
        for r in records
    ]
    t = pd.DataFrame(rows, columns=["dataset", "unit_s", "metrics_s", "peak_rss_mb"])
    out = t.groupby("dataset").agg(
        records=("unit_s", "count"),
        compute_s=("unit_s", "sum"),
        metrics_s=("metrics_s", "sum"),
        worker_peak_rss_mb=("peak_rss_mb", "max"),
    )
    total = out.sum(numeric_only=True)
    total["worker_peak_rss_mb"] = out["worker_peak_rss_mb"].max()
    out.loc["ALL"] = total
    out["metrics_share"] = out["metrics_s"] / out["compute_s"]
    return out.reset_index()


def _csv(path: Path, frame: pd.DataFrame) -> None:
    write_text(path, frame.to_csv(index=False, float_format="%.6g"))


@validate_params(
    {
        "results": [TypeOf(str, Path, desc="a path")],
        "out": [TypeOf(str, Path, desc="a path"), None],
        "rq3_method": [StrOptions(CORRECTIONS)],
        "metric": [StrOptions(FAMILIES)],
        "what": [TypeOf(str, desc="a str")],
        "force": [TypeOf(bool, desc="a bool")],
    }
)
def analyze(
    results: str | Path,
    out: str | Path | None = None,
    *,
    rq3_method: str = "none",
    metric: str = "BA",
    what: str = "--out",
    force: bool = False,
) -> str:
    """Run RQ1–RQ3 on a results folder into ``out`` (default ``results/analysis``: new or
    empty, or with ``force`` an earlier analysis, replaced whole); return a one-line summary.
    ``what`` names ``out`` in messages."""
    store = ResultsStore(results)
    records = store.records()
    store.tasks()  # every task file readable (or an error naming it) before any output
    if not records:
        raise FileNotFoundError(f"{results}: no records (records/<data set>/<method>-<k>.json)")
    out = Path(out) if out is not None else Path(results) / "analysis"
    target = OutputFolder(out, "analyze", force=force, inputs=(results,), what=what).check()
    target.write(lambda tmp: _write_analysis(Path(results), tmp, records, rq3_method, metric))
    n_ds = len({r["dataset"] for r in records})
    return f"{len(records)} records, {n_ds} data sets -> {out} (report: {out / 'report.html'})"


def _write_analysis(
    results: Path, out: Path, records: list[dict[str, Any]], rq3_method: str, metric: str
) -> None:
    scores = score_table(records)
    _csv(out / "scores.csv", scores)
    write_text(out / "scores.md", scores_markdown(scores))
    means = dataset_means(subset_frame(records))
    rq1 = gap_table(means)
    _csv(out / "rq1.csv", rq1)
    write_text(out / "rq1.md", gap_markdown(rq1))
    per_ds = weight_error_by_dataset(records)
    rq2 = weight_error_table(per_ds)
    _csv(out / "rq2_datasets.csv", per_ds)
    _csv(out / "rq2.csv", rq2)
    write_text(out / "rq2.md", weight_error_markdown(rq2))
    collections = sorted(rq1["collection"].unique())
    for c in collections:
        write_bytes(out / f"rq1_gap_{c}.png", figure_png(gap_figure(rq1, c)))
        write_bytes(out / f"rq2_scatter_{c}.png", figure_png(weight_error_figure(per_ds, rq2, c)))
        recs = [r for r in records if r.get("collection") == c]
        panels, sheets = recall_sheets(recs, method=rq3_method, metric=metric)
        for name, png in panels.items():
            write_bytes(out / "rq3" / f"{name}.png", png)
        for i, png in enumerate(sheets, start=1):
            write_bytes(out / f"rq3_sheet_{c}_{i}.png", png)
    agreement = write_agreement(records, out)
    quality = subconcept_model_quality(records)
    _csv(out / "subconcept_model.csv", quality)
    coverage = coverage_by_dataset(records, quality)
    _csv(out / "coverage_by_dataset.csv", coverage)
    per_sc = subconcept_agreement(records)
    if not per_sc.empty:
        _csv(out / "subconcept_agreement.csv", per_sc)
        _csv(
            out / "subconcept_agreement_by_dataset.csv",
            subconcept_agreement(records, by_dataset=True),
        )
    disc = discovery_table(records)
    if not disc.empty:  # runs with --subconcepts discovered
        _csv(out / "discovery.csv", disc)
        write_text(out / "discovery.md", discovery_markdown(disc))
    timing = timing_table(records)
    _csv(out / "timing.csv", timing)
    summary = _summary(records, scores, rq1, rq2, timing, quality)
    sources = reference_sources(records)
    summary += (
        "\n" + agreement_markdown(agreement, quality, sources) + "\n" + coverage_markdown(coverage)
    )
    summary += "\n" + subconcept_agreement_markdown(per_sc)
    write_text(out / "summary.md", summary)
    view = None if coverage.empty else coverage_view(coverage)
    low = "" if coverage.empty else "\n".join(low_coverage_lines(coverage))
    rq4 = Agreement(
        agreement_markdown(agreement, sources=sources), agreement, weak_markdown(quality), view,
        COVERAGE_INTRO, low,
    )  # fmt: skip
    tables = {"scores": scores, "rq1": rq1, "rq2": rq2, "timing": timing}
    weak = weak_markdown(quality) if quality["weak"].any() else ""
    write_text(
        out / "report.html", benchmark_report(results, out, records, tables, rq4=rq4, weak=weak)
    )


def scores_markdown(scores: pd.DataFrame) -> str:
    """The score table as markdown, with the line that says what the letters mean."""
    return "\n".join(
        [
            "### Scores (mean over splits)\n",
            markdown_table(scores),
            "",
            "w = true utility weights (oracle), p = predicted utility weights, c = "
            "class-conditional predicted weights (label-free; recommended without reference "
            "rows), r = c rectified with reference rows (label-free, prediction-powered; "
            "recommended where present); pAUC is the predicted-weight ROC AUC, not partial AUC.",
            "",
        ]
    )


def write_agreement(records: list[dict[str, Any]], out: Path) -> pd.DataFrame:
    """RQ4: ``agreement.csv``, ``agreement_by_method.csv`` and the figure(s); returns the table."""
    table = agreement_table(records)
    _csv(out / "agreement.csv", table)
    _csv(out / "agreement_by_method.csv", agreement_by_method(records))
    if table["subconcepts"].nunique() > 1:
        for kind in sorted(table["subconcepts"].unique()):
            fig = agreement_figure(records, table, kind=kind)
            write_bytes(out / f"agreement_{kind}.png", figure_png(fig))
    else:
        write_bytes(out / "agreement.png", figure_png(agreement_figure(records, table)))
    return table


def _summary(records, scores, rq1, rq2, timing, quality) -> str:
    total = timing[timing.dataset == "ALL"].iloc[0]
    lines = [
        "# Benchmark analyses\n",
        f"{len(records)} records; {len({r['dataset'] for r in records})} data sets; methods "
        f"{', '.join(sorted({r['method'] for r in records}))}.\n",
        "pAUC = ROC AUC with predicted utility weights (not partial AUC).\n",
        "### Subconcept model\n",
        weak_markdown(quality),
        scores_markdown(scores),
        gap_markdown(rq1),
        weight_error_markdown(rq2),
        "### Time\n",
        f"Fold compute {total.compute_s:.1f} s (sum over workers), of which metrics "
        f"{total.metrics_s:.2f} s = {total.metrics_share:.2%}.\n",
        markdown_table(timing),
        "",
    ]
    return "\n".join(lines)
