"""The benchmark analysis report renders what the analyses computed: every section, the figures
written beside it, the weak subconcept models and the records' warnings."""

from __future__ import annotations

import pandas as pd

from medeval.report.benchmark import Agreement, benchmark_report

PNG = b"\x89PNG\r\n\x1a\n"


def _tables() -> dict[str, pd.DataFrame]:
    return {
        "scores": pd.DataFrame({"score": ["BA"], "value": [0.8]}),
        "rq1": pd.DataFrame({"measure": ["BA"], "gap": [0.1]}),
        "rq2": pd.DataFrame({"performance": ["balanced_accuracy"], "r": [-0.5]}),
        "timing": pd.DataFrame({"dataset": ["ALL"], "compute_s": [1.0]}),
    }


def test_the_report_holds_every_section_its_figures_and_the_warnings(tmp_path):
    out = tmp_path / "analysis"
    out.mkdir()
    (out / "rq1_gap_keel.png").write_bytes(PNG)
    (out / "agreement.png").write_bytes(PNG)
    (tmp_path / "run.json").write_text('{"seed": 0}')
    records = [{"dataset": "vehicle", "method": "none", "split": 0, "notes": ["rBA undefined"]}]
    rq4 = Agreement(
        "### RQ4\n- the label-free scores agree", pd.DataFrame({"estimator": ["cBA"]}),
        weak="- **weak** subconcept model on vehicle",
    )  # fmt: skip
    page = benchmark_report(tmp_path, out, records, _tables(), rq4=rq4, weak="- one weak model")
    for heading in ("RQ1", "RQ2", "RQ3", "RQ4", "Time and memory", "Warnings"):
        assert heading in page, heading
    assert page.count("data:image/png;base64,") == 2
    assert "vehicle none split 0: rBA undefined" in page
    assert "the label-free scores agree" in page and "weak subconcept model on vehicle" in page
    assert "one weak model" in page and "**" not in page
    assert "&quot;seed&quot;: 0" in page or '"seed": 0' in page


def test_without_rq4_the_report_has_no_agreement_section(tmp_path):
    page = benchmark_report(tmp_path, tmp_path, [], _tables())
    assert "RQ4" not in page and "Warnings" not in page
