"""The score table exists for any collection size, one data set included (a user's own
embeddings): printed, in summary.md and in report.html."""

import math

import pandas as pd
import pytest

from medeval.analyses.scores import score_table
from medeval.cli.benchmark import main as benchmark
from medeval.datasets import load
from medeval.protocol.store import ResultsStore
from medeval.scores import ALL_SCORES


def test_score_table_means_over_splits_and_skips_undefined():
    recs = [
        {"dataset": "d", "method": "none", "scores": {**dict.fromkeys(ALL_SCORES, 0.5)}},
        {"dataset": "d", "method": "none", "scores": {**dict.fromkeys(ALL_SCORES, 0.7)}},
    ]
    recs[1]["scores"]["pBA"] = None
    table = score_table(recs)
    assert len(table) == 1 and table.n_splits.item() == 2
    assert table.BA.item() == pytest.approx(0.6) and table.pBA.item() == pytest.approx(0.5)
    recs[0]["scores"]["pBA"] = None
    assert math.isnan(score_table(recs).pBA.item())


def test_one_data_set_benchmark_prints_and_reports_its_scores(shared_data, tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    data = load("keel", shared_data / "keel", name="vehicle")
    frame = pd.DataFrame(data.X, columns=[f"e{i}" for i in range(data.X.shape[1])])
    frame.assign(label=data.labels).to_csv(folder / "vehicle.csv", index=False)
    out = tmp_path / "res"
    args = ["--collection", str(folder), "--out", str(out), "--methods", "none"]
    assert benchmark([*args, "--n-estimators", "5", "--max-splits", "2"]) == 0
    printed = capsys.readouterr().out
    records = ResultsStore(out).records()
    ba = sum(r["scores"]["BA"] for r in records) / len(records)
    row = next(line for line in printed.splitlines() if line.startswith("| vehicle | none |"))
    assert row.split("|")[3].strip() == "2" and f"{ba:.3f}" in row
    summary = (out / "analysis" / "summary.md").read_text()
    assert row in summary
    page = (out / "analysis" / "report.html").read_text()
    assert "wBA" in page and f"{ba:.3f}"[:4] in page
    table = pd.read_csv(out / "analysis" / "scores.csv")
    assert table.BA.item() == pytest.approx(ba, abs=1e-6)
