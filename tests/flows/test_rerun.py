"""Run summary: mean ± sd of the nine scores over splits."""

import json
import math

import pandas as pd
import pytest

from medeval.evaluation import ALL_SCORES
from medeval.flows.rerun import summarize_run
from medeval.report.summary import summary_table


def _split(folder, value, nan_score=None):
    folder.mkdir(parents=True)
    scores = {k: value for k in ALL_SCORES}
    if nan_score:
        scores[nan_score] = None
    (folder / "metrics.json").write_text(json.dumps({"scores": scores, "intervals": {}}))


def test_mean_and_sd_over_splits(tmp_path):
    _split(tmp_path / "split_0", 0.6)
    _split(tmp_path / "split_1", 0.8, nan_score="pAUC")
    _split(tmp_path / "split_10", 0.7)
    (tmp_path / "split_2").mkdir()  # unfinished: no metrics.json, left out
    summary = summarize_run(tmp_path)
    assert summary["splits"] == ["split_0", "split_1", "split_10"]
    assert summary["scores"]["BA"]["mean"] == pytest.approx(0.7)
    assert summary["scores"]["BA"]["sd"] == pytest.approx(0.1)
    assert summary["scores"]["pAUC"]["n_splits"] == 2  # an undefined split score is left out
    assert summary["scores"]["pAUC"]["mean"] == pytest.approx(0.65)
    table = pd.read_csv(tmp_path / "summary.csv")
    assert list(table["score"]) == list(ALL_SCORES)
    # no split recommends the rectified scores (no reference rows): the class-conditional ones
    assert summary["recommended"] == {"BA": "cBA", "F1": "cF1", "AUC": "cAUC"}
    assert list(table.loc[table.recommended, "score"]) == ["cBA", "cF1", "cAUC"]
    assert math.isnan(table.set_index("score").loc["pAUC", "split_1"])
    assert "over 3 splits" in summary_table(summary)
    assert "0.700    0.100" in summary_table(summary)
    assert (tmp_path / "report.md").is_file()
    assert json.loads((tmp_path / "summary.json").read_text())["scores"]["BA"]["n_splits"] == 3


def test_run_report_warns_about_a_weak_subconcept_head(tmp_path):
    from medeval.report.summary import weak_model_notes as _weak_model_notes

    metrics = {
        "subconcept_model": {"class 0": 0.5, "class 1": 0.6},
        "weighted_classes": ["class 1"],
    }
    notes = _weak_model_notes("split_0", metrics)
    assert len(notes) == 1 and "within class 1" in notes[0] and "0.60" in notes[0]
    metrics["subconcept_model"]["class 1"] = 0.9
    assert _weak_model_notes("split_0", metrics) == []
