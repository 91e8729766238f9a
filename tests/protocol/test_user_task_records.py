"""The benchmark of a table that python -m medeval.embed recorded with the user's task
(``<name>.embedding.json``'s ``task``): it builds that task, and records made for another task
are not resumed as if they were this one's."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from medeval.cli.benchmark import main


def _collection(root, positive):
    rng = np.random.default_rng(0)
    labels = np.repeat(["a", "b", "c", "d"], [40, 30, 24, 20])
    frame = pd.DataFrame(rng.normal(size=(len(labels), 3)), columns=["f0000", "f0001", "f0002"])
    frame["f0000"] += (labels == "c") * 2.0
    frame["label"] = labels
    root.mkdir(exist_ok=True)
    frame.to_parquet(root / "toy.parquet", index=False)
    task = {"positive": positive, "negative": None, "drop": [], "downsample": False}
    (root / "toy.embedding.json").write_text(json.dumps({"name": "toy", "task": task}))


def test_the_recorded_task_is_built_and_a_changed_one_is_not_resumed(tmp_path, capsys):
    coll, out = tmp_path / "emb", tmp_path / "bench"
    _collection(coll, ["c", "d"])
    argv = ["--collection", str(coll), "--methods", "none", "--max-splits", "1",
            "--n-estimators", "5", "--no-analyze", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    task = json.loads(next((out / "tasks").iterdir()).read_text())
    assert [s["name"] for s in task["minority"]] == ["c", "d"]  # the user's classes, no ladder
    assert [s["n"] for s in task["minority"]] == [24, 20]
    assert json.loads((out / "run.json").read_text())["tasks"]["toy"]["positive"] == ["c", "d"]
    _collection(coll, ["b"])  # embed run again with other labels of class 1
    assert main([*argv, "--resume"]) == 2
    assert "results were made with tasks=" in capsys.readouterr().err
    assert main([*argv, "--force"]) == 0
    task = json.loads(next((out / "tasks").iterdir()).read_text())
    assert [s["name"] for s in task["minority"]] == ["b"]
    record = json.loads((out / "records" / "toy" / "none-0.json").read_text())
    assert {r["subconcept"] for r in record["per_subconcept"] if r["class"] == 1} == {"b"}


def test_benchmark_positive_sets_the_task_of_every_data_set(tmp_path, capsys):
    coll, out = tmp_path / "emb", tmp_path / "bench"
    _collection(coll, ["c", "d"])  # recorded with the table; --positive is said over it
    argv = ["--collection", str(coll), "--methods", "none", "--max-splits", "1",
            "--n-estimators", "5", "--no-analyze", "--out", str(out)]  # fmt: skip
    assert main([*argv, "--positive", "XX"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "label 'XX' in --positive" in err
    assert not out.exists()  # refused before the results folder was touched
    assert main([*argv, "--positive", "a", "--negative", "b", "--drop", "c,d"]) == 0
    task = json.loads(next((out / "tasks").iterdir()).read_text())
    assert [s["name"] for s in task["minority"]] == ["a"] and task["n"] == 70
