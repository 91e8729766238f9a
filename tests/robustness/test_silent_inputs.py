"""Inputs that were taken silently and gave wrong or empty results (a cut-off predictions file,
numbers written with a decimal comma, an option that does nothing): each is now refused with exit
code 2 and one line naming it, or goes on with one ``warning:`` line, and a refusal writes
nothing (see :mod:`test_malformed_inputs` for the table of plain malformed inputs)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from malformed_fixtures import (
    SIZES,
    build_results,
    collection_table,
    embeddings,
    predictions,
    tree_digest,
)
from test_malformed_inputs import _no_work, run_tool

from medeval.flows.rerun import MissingReferenceWarning


# --- evaluate --run: a split's predictions against the run's splits.csv ---------------------
def make_run(root: Path, n_splits: int = 2, *, reference: bool = False) -> Path:
    """A run folder as ``train`` leaves it, without the training: ``splits.csv`` (the test
    rows of every split) and per split its predictions (with ids) and train sizes;
    ``reference``: also the validation rows, as ``reference.csv``."""
    run = root / "run"
    plan = []
    for seed in range(n_splits):
        folder = run / f"split_{seed}"
        folder.mkdir(parents=True)
        preds = predictions(seed=seed + 1)
        preds.insert(0, "id", [f"img{seed}{i:04d}" for i in range(len(preds))])
        preds.to_csv(folder / "predictions.csv", index=False)
        (folder / "train_sizes.json").write_text(json.dumps(SIZES))
        plan.append(pd.DataFrame({"split_seed": seed, "id": preds["id"], "part": "test"}))
        if reference:
            ref = predictions(n=120, seed=seed + 10)
            ref.insert(0, "id", [f"ref{seed}{i:04d}" for i in range(len(ref))])
            ref.to_csv(folder / "reference.csv", index=False)
            plan.append(pd.DataFrame({"split_seed": seed, "id": ref["id"], "part": "validation"}))
    pd.concat(plan).to_csv(run / "splits.csv", index=False)
    return run


def cut(path: Path, keep: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def drop_last_rows(path: Path, n: int) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-n]))


def test_an_intact_run_is_re_evaluated(tmp_path, capsys):
    run = make_run(tmp_path)
    assert run_tool("evaluate", ["--run", str(run), "--bootstrap", "0", "--quiet"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["splits"] == ["split_0", "split_1"]


@pytest.mark.parametrize(
    ("spoil", "names"),
    [
        (lambda p: cut(p, 0.5), "ends mid-row"),
        (lambda p: drop_last_rows(p, 3), "3 missing"),
        (lambda p: drop_last_rows(p, 89), "holds 1 rows"),
    ],
    ids=["cut-mid-row", "cut-at-a-row-boundary", "header-and-one-row"],
)
@pytest.mark.parametrize("split", ["split_0", "split_1"])
def test_a_cut_split_predictions_file_is_refused_before_anything_is_rewritten(
    tmp_path, capsys, spoil, names, split
):
    run = make_run(tmp_path)
    assert run_tool("evaluate", ["--run", str(run), "--bootstrap", "0", "--quiet"]) == 0
    capsys.readouterr()
    spoil(run / split / "predictions.csv")
    before = tree_digest(run)
    assert run_tool("evaluate", ["--run", str(run), "--bootstrap", "0", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"{run / split / 'predictions.csv'}" in err and names in err, err
    assert "splits.csv lists 90 test rows" in err, err
    assert tree_digest(run) == before  # no split and no summary rewritten


def test_a_cut_reference_file_is_refused_before_anything_is_rewritten(tmp_path, capsys):
    run = make_run(tmp_path, reference=True)
    drop_last_rows(run / "split_1" / "reference.csv", 4)
    before = tree_digest(run)
    assert run_tool("evaluate", ["--run", str(run), "--bootstrap", "0", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(run / "split_1" / "reference.csv") in err, err
    assert "lists 120 validation and calibration rows of split 1; 4 missing" in err, err
    assert tree_digest(run) == before


def test_a_predictions_row_of_another_split_is_refused(tmp_path, capsys):
    run = make_run(tmp_path)
    path = run / "split_1" / "predictions.csv"
    frame = pd.read_csv(path)
    frame.loc[5, "id"] = "img00007"  # a row of split 0
    frame.to_csv(path, index=False)
    assert run_tool("evaluate", ["--run", str(run), "--bootstrap", "0", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "'img10005'" in err and str(path) in err, err
    assert not (run / "summary.json").exists()


def test_a_split_without_its_reference_rows_is_named_in_one_warning(tmp_path, capsys):
    run = make_run(tmp_path, reference=True)
    argv = ["--run", str(run), "--bootstrap", "0", "--quiet"]
    assert run_tool("evaluate", argv) == 0
    assert json.loads((run / "summary.json").read_text())["recommended"]["BA"] == "rBA"
    capsys.readouterr()
    (run / "split_0" / "reference.csv").unlink()
    with pytest.warns(MissingReferenceWarning) as caught:  # the tool shows it as one line
        assert run_tool("evaluate", argv) == 0
    (message,) = [str(w.message) for w in caught]
    assert f"{run / 'split_0' / 'reference.csv'} is missing" in message and "cBA" in message
    assert json.loads((run / "summary.json").read_text())["recommended"]["BA"] == "cBA"


# --- evaluate: options that did nothing -----------------------------------------------------
def write_inputs(root: Path, frame: pd.DataFrame | None = None) -> tuple[Path, Path]:
    """A predictions file (``frame``, default the fixture's) and its train sizes."""
    root.mkdir(parents=True, exist_ok=True)
    (predictions() if frame is None else frame).to_csv(root / "preds.csv", index=False)
    (root / "sizes.json").write_text(json.dumps(SIZES))
    return root / "preds.csv", root / "sizes.json"


def test_predictions_given_twice_is_refused(tmp_path, capsys):
    preds, sizes = write_inputs(tmp_path / "in")
    other = tmp_path / "in" / "other.csv"
    other.write_text("y_true,y_score\n1,0.9\n0,0.1\n")
    argv = ["--predictions", str(other), "--predictions", str(preds), "--train-sizes", str(sizes)]
    out = tmp_path / "out"
    code = run_tool("evaluate", [*argv, "--bootstrap", "0", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "argument --predictions: given twice" in err and str(other) in err, err
    assert not out.exists()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--train-sizes", "sizes.json"),
        ("--reference", "preds.csv"),
        ("--threshold", "0.3"),
        ("--confidence", "0.9"),
        ("--stratify", "subconcept"),
    ],
)
def test_an_option_run_does_not_use_is_refused(tmp_path, capsys, option, value):
    run = make_run(tmp_path)
    write_inputs(tmp_path)
    value = str(tmp_path / value) if value.endswith((".json", ".csv")) else value
    before = tree_digest(run)
    assert run_tool("evaluate", ["--run", str(run), option, value, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{option} is not used with --run" in err, err
    assert tree_digest(run) == before


def test_a_threshold_the_y_pred_column_overrides_is_named_in_a_warning(tmp_path, capsys):
    frame = predictions()
    frame["y_pred"] = (frame["y_score"] >= 0.5).astype(int)
    preds, sizes = write_inputs(tmp_path / "in", frame)
    argv = ["--predictions", str(preds), "--train-sizes", str(sizes), "--bootstrap", "0"]
    argv += ["--quiet", "--out", str(tmp_path / "out")]
    assert run_tool("evaluate", [*argv, "--threshold", "0.3"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("warning: --threshold 0.3 is not used"), err
    assert f"{preds} has a y_pred column" in err, err
    assert run_tool("evaluate", [*argv, "--force"]) == 0  # the default threshold: nothing to say
    assert capsys.readouterr().err == ""


# --- discover and subconcepts ---------------------------------------------------------------
def test_discover_names_the_threshold_option(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    embeddings(60, 0).to_parquet(folder / "train.parquet", index=False)
    test = embeddings(30, 1)
    test.to_parquet(folder / "test.parquet", index=False)
    scores = np.random.default_rng(2).uniform(size=len(test)).round(3)
    pd.DataFrame({"y_true": test["y"], "y_score": scores}).to_csv(folder / "p.csv", index=False)
    argv = ["--train", str(folder / "train.parquet"), "--test", str(folder / "test.parquet")]
    argv += ["--predictions", str(folder / "p.csv"), "--bootstrap", "0", "--quiet"]
    code = run_tool("discover", [*argv, "--threshold", "1.5", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "--threshold" in err and "1.5" in err and str(folder / "p.csv") in err, err
    assert not (tmp_path / "out").exists()


def own_model_table(n: int, seed: int) -> pd.DataFrame:
    """Rows of an own classifier: two features, the class, its score and the subconcept."""
    rng = np.random.default_rng(seed)
    sc = rng.choice(3, n, p=[0.6, 0.3, 0.1])
    y = (sc > 0).astype(int)
    frame = pd.DataFrame({"f0": rng.normal(size=n) + sc, "f1": rng.normal(size=n) - sc})
    frame["y_true"] = y
    frame["y_score"] = np.clip(0.5 * y + rng.normal(0.25, 0.2, n), 0, 1).round(3)
    frame["subconcept"] = np.array(["normal", "A", "B"])[sc]
    return frame


def test_subconcepts_without_bootstrap_prints_no_interval(tmp_path, capsys):
    own_model_table(300, 0).to_csv(tmp_path / "train.csv", index=False)
    own_model_table(150, 1).to_csv(tmp_path / "ref.csv", index=False)
    own_model_table(150, 2).drop(columns="subconcept").to_csv(tmp_path / "test.csv", index=False)
    argv = [f"--{k}={tmp_path / f}" for k, f in
            (("train", "train.csv"), ("test", "test.csv"), ("reference", "ref.csv"))]  # fmt: skip
    assert run_tool("subconcepts", [*argv, "--bootstrap", "0", "--out", str(tmp_path / "o")]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("recommended for")]
    assert len(lines) == 3, lines
    for line in lines:
        assert "nan" not in line and "[" not in line, line
    assert lines[0].startswith("recommended for BA: rBA = 0."), lines


# --- numbers coded as categories: one rule for every tabular loader --------------------------
COMMA_TABLES = [
    ("decimal-comma", "x1", lambda f: f["x1"].map(lambda v: f"{v:.3f}".replace(".", ","))),
    ("thousands", "x2", lambda f: (f["x2"] * 1000).round().astype(int).map(lambda v: f"{v:,}")),
    ("thousands-and-point", "x0", lambda f: (f["x0"] * 1e4).map(lambda v: f"{v:,.1f}")),
]


@pytest.mark.parametrize(("column", "make"), [c[1:] for c in COMMA_TABLES],
                         ids=[c[0] for c in COMMA_TABLES])  # fmt: skip
def test_numbers_with_a_decimal_comma_or_separators_are_refused(tmp_path, capsys, column, make):
    frame = collection_table()
    frame[column] = make(frame).astype(str)
    frame.loc[0, column] = "12,5"  # a cell with a comma even where the rest are thousands
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    assert '"12,5"' in path.read_text()  # quoted, as a spreadsheet writes it
    assert run_tool("tasks", ["describe", "--source", "csv", "--path", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert (
        f"{path}, column '{column}', row 1: '12,5' is a number written with a decimal comma" in err
    )


def test_a_benchmark_collection_with_decimal_commas_is_refused(tmp_path, capsys):
    (tmp_path / "coll").mkdir()
    frame = collection_table()
    frame["x1"] = frame["x1"].map(lambda v: f"{v:.3f}".replace(".", ","))
    frame.to_csv(tmp_path / "coll" / "t.csv", index=False)
    argv = ["--collection", str(tmp_path / "coll"), "--max-splits", "1", "--n-estimators", "5"]
    argv += ["--methods", "none", "--quiet", "--no-analyze", "--out", str(tmp_path / "out")]
    assert run_tool("benchmark", argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "column 'x1', row 1" in err and "decimal comma" in err, err
    assert not (tmp_path / "out").exists()


KEEL = """@relation toy
@attribute a real [0, 200]
@attribute b real [0, 9]
@attribute Class {p, q, r}
@inputs a, b
@outputs Class
@data
"""


def test_a_stray_text_cell_in_a_keel_column_of_numbers_is_refused(tmp_path, capsys):
    rows = [f"{90 + i % 7}, {i % 5}, {'pqr'[i % 3]}" for i in range(60)]
    rows[6] = "95x, 3, q"
    path = tmp_path / "toy.dat"
    path.write_text(KEEL + "\n".join(rows) + "\n")
    assert run_tool("tasks", ["describe", "--source", "keel", "--path", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"{path}, column 'a', row 7: '95x' is not a number" in err, err


def test_a_keel_column_of_text_only_is_still_categories(tmp_path):
    from medeval.datasets import load

    rows = [f"{'uvw'[i % 3]}, {i % 5}, {'pqr'[i % 3]}" for i in range(60)]
    path = tmp_path / "toy.dat"
    path.write_text(KEEL + "\n".join(rows) + "\n")
    data = load("keel", path)
    assert sorted(set(data.X[:, 0])) == [0.0, 1.0, 2.0]


def test_a_stray_text_cell_in_a_pmlb_column_of_numbers_is_refused(tmp_path):
    from medeval.datasets import load
    from medeval.datasets.base import DataError

    frame = collection_table().rename(columns={"label": "target"})
    frame["x0"] = frame["x0"].astype(object)
    frame.loc[11, "x0"] = "95x"
    (tmp_path / "allbp").mkdir()
    frame.to_csv(tmp_path / "allbp" / "allbp.tsv.gz", sep="\t", index=False)
    with pytest.raises(DataError, match=r"allbp\.tsv\.gz, column 'x0', row 12: '95x' is not"):
        load("pmlb", tmp_path, name="allbp")


# --- tasks split: its own manifest, named from another folder ------------------------------
def test_tasks_split_replaces_its_own_manifest_named_from_another_folder(
    tmp_path, monkeypatch, capsys
):
    collection_table().to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    argv = ["split", "--source", "csv", "--quiet"]
    assert run_tool("tasks", [*argv, "--path", "t.csv", "--out", "m.csv"]) == 0
    (tmp_path / "m.csv").write_text("stale\n")  # so that a replacement shows
    monkeypatch.chdir(tmp_path / "sub")
    argv += ["--force"]  # an existing manifest: replaced when asked
    code = run_tool("tasks", [*argv, "--path", "../t.csv", "--out", "../m.csv", "--seed", "1"])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "m.csv").read_text().startswith("dataset,")
    record = json.loads((tmp_path / "m.csv.json").read_text())
    assert record["manifest"] == "../m.csv"
    (tmp_path / "other.csv").write_text("x\n")  # a file of the user's is still refused
    assert run_tool("tasks", [*argv, "--path", "../t.csv", "--out", "../other.csv"]) == 2
    assert (tmp_path / "other.csv").read_text() == "x\n"


# --- train: a key written twice in the config -----------------------------------------------
def test_a_config_key_given_twice_is_refused_naming_key_and_line(tmp_path, capsys, monkeypatch):
    import medeval.flows.train

    monkeypatch.setattr(medeval.flows.train, "run_training", _no_work)
    config = tmp_path / "cfg.yaml"
    config.write_text("train:\n  lr: 0.001\n  epochs: 1\n  lr: 0.1\nmodel:\n  dropout: 0.2\n")
    out = tmp_path / "runs" / "r"
    assert run_tool("train", ["--config", str(config), "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"{config}: line 4: key 'lr' is given twice" in err and "line 2" in err, err
    assert not out.exists()


def test_a_yaml_merge_key_may_still_be_overridden():
    from medeval.training.config import load_yaml

    text = "base: &b {lr: 1, epochs: 2}\ntrain:\n  <<: *b\n  lr: 3\n"
    assert load_yaml(text)["train"] == {"lr": 3, "epochs": 2}


# --- analyze: an RQ3 method the results do not hold -----------------------------------------
@pytest.fixture(scope="module")
def bench_results(tmp_path_factory) -> Path:
    """A finished tiny benchmark results folder (method ``none`` only)."""
    base = tmp_path_factory.mktemp("bench")
    (base / "coll").mkdir()
    collection_table().to_csv(base / "coll" / "t.csv", index=False)
    build_results(base / "res", base / "coll")
    return base / "res"


def test_analyze_refuses_an_rq3_method_the_results_lack(bench_results, tmp_path, capsys):
    results = tmp_path / "res"
    shutil.copytree(bench_results, results)
    before = tree_digest(results)
    argv = ["--results", str(results), "--quiet", "--out", str(tmp_path / "a")]
    assert run_tool("analyze", [*argv, "--rq3-method", "ros"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--rq3-method ros" in err, err
    assert "methods present: none" in err, err
    assert tree_digest(results) == before and not (tmp_path / "a").exists()
    assert run_tool("analyze", [*argv, "--rq3-method", "none"]) == 0
    assert (tmp_path / "a" / "report.html").is_file()


# --- benchmark: a record path that became a folder ------------------------------------------
def test_a_record_path_that_is_a_folder_is_named_before_the_work(bench_results, tmp_path, capsys):
    results = tmp_path / "res"
    shutil.copytree(bench_results, results)
    record = results / "records" / "t" / "none-0.json"
    record.unlink()
    record.mkdir()
    coll = bench_results.parent / "coll"
    argv = ["--collection", str(coll), "--out", str(results), "--max-splits", "1", "--resume"]
    argv += ["--n-estimators", "5", "--methods", "none", "--quiet", "--no-analyze"]
    before = tree_digest(results)
    assert run_tool("benchmark", argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Errno" not in err and ".tmp" not in err, err
    assert f"{record}: the record path is a folder" in err, err
    assert tree_digest(results) == before
    assert run_tool("analyze", ["--results", str(results), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{record}: unreadable results record: a folder" in err and "Errno" not in err, err


# --- names that print alike -----------------------------------------------------------------
NFC, NFD = "\u00d6dem", "O\u0308dem"  # both print as Ödem
ZWSP = "A\u200b"  # prints as A


def _lookalike_case(tmp_path: Path, sizes_name: str, table_name: str, *, rename_q: bool):
    frame = predictions()
    frame["subconcept"] = frame["subconcept"].replace({"A": table_name})
    if rename_q:
        frame = frame.rename(columns={"q_A": f"q_{table_name}"})
    sizes = {(sizes_name if k == "A" else k): v for k, v in SIZES.items()}
    folder = tmp_path / "in"
    folder.mkdir()
    frame.to_csv(folder / "p.csv", index=False)
    (folder / "s.json").write_text(json.dumps(sizes, ensure_ascii=False), encoding="utf-8")
    return folder / "p.csv", folder / "s.json"


@pytest.mark.parametrize(
    ("sizes_name", "table_name", "rename_q", "how", "names"),
    [
        (NFC, NFD, True, "Unicode normalisation (NFC vs NFD)", "'O\\u0308dem'"),
        (NFC, NFD, False, "Unicode normalisation (NFC vs NFD)", "'O\\u0308dem'"),
        ("A", ZWSP, False, "invisible characters", "'A\\u200b'"),
    ],
    ids=["nfd-subconcept-and-posterior", "nfd-subconcept", "zero-width-space"],
)
def test_names_that_print_alike_are_told_apart(
    tmp_path, capsys, sizes_name, table_name, rename_q, how, names
):
    preds, sizes = _lookalike_case(tmp_path, sizes_name, table_name, rename_q=rename_q)
    argv = ["--predictions", str(preds), "--train-sizes", str(sizes), "--bootstrap", "0"]
    assert run_tool("evaluate", [*argv, "--quiet", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"differs from it by {how}" in err and names in err and "U+" in err, err
    assert not (tmp_path / "o").exists()


def test_train_sizes_with_two_names_that_print_alike_are_refused(tmp_path, capsys):
    preds, sizes = _lookalike_case(tmp_path, NFC, NFC, rename_q=True)
    both = json.loads(sizes.read_text(encoding="utf-8")) | {NFD: {"class": 1, "n": 4}}
    sizes.write_text(json.dumps(both, ensure_ascii=False), encoding="utf-8")
    argv = ["--predictions", str(preds), "--train-sizes", str(sizes), "--bootstrap", "0"]
    assert run_tool("evaluate", [*argv, "--quiet", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert f"{sizes}: subconcept 'O\\u0308dem' is given twice" in err, err
    assert "Unicode normalisation" in err, err
