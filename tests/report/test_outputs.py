"""medeval/report/outputs.py: an evaluation's files, prepared in memory."""

import dataclasses
import io
import json

import pandas as pd

from medeval.report.outputs import output_files


def test_every_file_is_prepared_and_reads_back_as_the_evaluation(ev):
    files = output_files(ev, "probe", source="predictions.csv (400 rows)")
    assert set(files) == {
        "metrics.json",
        "metrics.csv",
        "per_subconcept.csv",
        "subconcepts.png",
        "report.html",
    }
    assert json.loads(files["metrics.json"])["n"] == ev.n
    subsets = pd.read_csv(io.BytesIO(files["metrics.csv"]))
    assert len(subsets) == len(ev.subsets)
    per_sc = pd.read_csv(io.BytesIO(files["per_subconcept.csv"]))
    assert per_sc["subconcept"].tolist() == ev.per_subconcept["subconcept"].tolist()
    assert files["subconcepts.png"].startswith(b"\x89PNG")
    html = files["report.html"].decode()
    assert "medeval evaluation: probe" in html and "predictions.csv (400 rows)" in html


def test_without_subconcepts_there_is_no_per_subconcept_file_or_figure(ev):
    bare = dataclasses.replace(ev, per_subconcept=ev.per_subconcept.iloc[0:0])
    files = output_files(bare, "probe")
    assert set(files) == {"metrics.json", "metrics.csv", "report.html"}
    assert "Inputs" not in files["report.html"].decode()
