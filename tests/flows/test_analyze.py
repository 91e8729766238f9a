"""The analyze flow: every table and figure of a results folder, and its report."""

import numpy as np
import pandas as pd
import pytest
from analyses.toy_records import PNG, record

from medeval.flows.analyze import analyze
from medeval.protocol.store import ResultsStore


def test_analyze_writes_every_table_and_figure(tmp_path):
    store = ResultsStore(tmp_path / "res")
    rng = np.random.default_rng(3)
    for i in range(5):
        for k in range(2):
            store.write(record(f"d{i}", k, *rng.uniform(0.5, 1, 3), perf=rng.uniform()))
    msg = analyze(tmp_path / "res")
    assert "10 records, 5 data sets" in msg
    out = tmp_path / "res" / "analysis"
    rq1 = pd.read_csv(out / "rq1.csv")
    assert len(rq1) == 9 and rq1.n_datasets.eq(5).all()
    assert pd.read_csv(out / "rq2_datasets.csv").shape[0] == 5
    for name in ("rq1_gap_toy.png", "rq2_scatter_toy.png", "rq3_sheet_toy_1.png", "rq3/d0.png"):
        assert (out / name).read_bytes().startswith(PNG)
    summary = (out / "summary.md").read_text()
    assert "RQ1 — toy (5 data sets)" in summary and "| ALL | 10 |" in summary
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("data:image/png;base64,") >= 3
    assert "RQ1" in page and "RQ2" in page and "RQ3" in page and "report.html" in msg
    with pytest.raises(FileNotFoundError, match="no records"):
        analyze(tmp_path / "empty")
