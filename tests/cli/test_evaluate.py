"""`python -m medeval.evaluate` end to end: outputs, readable table, bad files → exit 2."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from medeval.evaluate import main
from medeval.evaluation import ALL_SCORES, LABEL_FREE_RECTIFIED, PAPER_SCORES
from medeval.scores import INSTANCE_SCORES

NAMES = ["normal", "benign", "A", "B", "C"]
SIDES = [0, 0, 1, 1, 1]


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    sc = rng.choice(5, n, p=[0.5, 0.3, 0.12, 0.06, 0.02])
    y = np.array(SIDES)[sc]
    q = rng.dirichlet(np.ones(5), n)
    df = pd.DataFrame(
        {
            "y_true": y,
            "y_score": np.clip(0.5 * y + rng.normal(0.25, 0.2, n), 0, 1).round(3),
            "subconcept": np.array(NAMES)[sc],
        }
    )
    for i, name in enumerate(NAMES):
        df[f"q_{name}"] = q[:, i]
    sizes = {
        nm: {"class": c, "n": k}
        for nm, c, k in zip(NAMES, SIDES, [500, 300, 120, 60, 20], strict=True)
    }
    pred, size_file = tmp_path / "preds.csv", tmp_path / "sizes.json"
    df.to_csv(pred, index=False)
    size_file.write_text(json.dumps(sizes))
    return df, pred, size_file, tmp_path / "out"


def test_writes_metrics_table_and_figure(files, capsys):
    _df, pred, sizes, out = files
    rc = main(
        [
            "--predictions",
            str(pred),
            "--train-sizes",
            str(sizes),
            "--out",
            str(out),
            "--bootstrap",
            "200",
            "--seed",
            "3",
            "--quiet",
        ]
    )
    assert rc == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert list(metrics["scores"]) == list(ALL_SCORES)
    assert metrics["recommended"] == {
        "BA": "cBA",
        "F1": "cF1",
        "AUC": "cAUC",
        "per_subconcept": "recall",
    }
    assert [w["class"] for w in metrics["worst_subconcepts"]] == [0, 1]
    assert all(isinstance(metrics["scores"][k], float) for k in INSTANCE_SCORES)
    for k in LABEL_FREE_RECTIFIED:  # no reference rows: null, with the reason
        assert metrics["scores"][k] is None and "reference" in metrics["unavailable"][k]
    assert metrics["reference"] is None and metrics["rectification"] is None
    for k in INSTANCE_SCORES:  # the rectified ones need reference rows
        iv = metrics["intervals"][k]
        assert iv["low"] <= metrics["scores"][k] <= iv["high"]
    subsets = {r["subset"] for r in metrics["subsets"]}
    assert subsets == {"full", "sub_1", "sub_2", "sub_3", "largest", "smallest"}
    assert [r["subconcept"] for r in metrics["per_subconcept"]] == NAMES
    table = pd.read_csv(out / "metrics.csv")
    assert set(table.score) == set(INSTANCE_SCORES) and len(table) == 6 * len(INSTANCE_SCORES)
    assert (out / "subconcepts.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pd.read_csv(out / "per_subconcept.csv").subconcept.tolist() == NAMES


def test_prints_table_and_says_why_a_variant_is_missing(files, capsys):
    df, _pred, sizes, out = files
    df.drop(columns=[c for c in df if c.startswith("q_")]).to_parquet(out.parent / "p.parquet")
    rc = main(
        [
            "--predictions",
            str(out.parent / "p.parquet"),
            "--train-sizes",
            str(sizes),
            "--out",
            str(out),
            "--bootstrap",
            "50",
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0
    assert "pBA" in text and "not computed: no subconcept posteriors" in text
    assert "wBA" in text and str(out) in text
    assert json.loads((out / "metrics.json").read_text())["scores"]["pBA"] is None


def _bad_run(capsys, pred, sizes, out, **extra):
    args = ["--predictions", str(pred), "--out", str(out), "--bootstrap", "10"]
    if sizes:
        args += ["--train-sizes", str(sizes)]
    rc = main(args)
    err = capsys.readouterr().err
    assert rc == 2
    assert not out.exists(), "nothing may be written for a bad input"
    return err


def test_missing_column(files, capsys):
    df, pred, sizes, out = files
    df.drop(columns="y_true").to_csv(pred, index=False)
    err = _bad_run(capsys, pred, sizes, out)
    assert str(pred) in err and "'y_true'" in err and "missing column" in err


def test_non_numeric_value_names_file_column_row(files, capsys):
    df, pred, sizes, out = files
    df["y_score"] = df["y_score"].astype(str)
    df.loc[6, "y_score"] = "high"
    df.to_csv(pred, index=False)
    err = _bad_run(capsys, pred, sizes, out)
    assert f"{pred}, column 'y_score', row 7: 'high' is not a number" in err


def test_unknown_subconcept_names_row(files, capsys):
    df, pred, sizes, out = files
    df.loc[4, "subconcept"] = "Z"
    df.to_csv(pred, index=False)
    err = _bad_run(capsys, pred, sizes, out)
    assert "column 'subconcept', row 5: unknown subconcept 'Z'" in err


def test_label_outside_binary(files, capsys):
    df, pred, _sizes, out = files
    df.loc[2, "y_true"] = 2
    df.to_csv(pred, index=False)
    err = _bad_run(capsys, pred, None, out)
    assert "column 'y_true', row 3: '2' is not 0 or 1" in err


def test_posteriors_not_a_distribution(files, capsys):
    df, pred, sizes, out = files
    df.loc[9, "q_A"] += 0.5
    df.to_csv(pred, index=False)
    err = _bad_run(capsys, pred, sizes, out)
    assert "row 10" in err and "not 1" in err


def test_bad_train_sizes(files, capsys, tmp_path):
    _df, pred, sizes, out = files
    sizes.write_text('{"normal": {"class": 0, "n": 5}, "A": {"class": 3, "n": 2}}')
    err = _bad_run(capsys, pred, sizes, out)
    assert str(sizes) in err and "class must be 0 or 1" in err
    sizes.write_text('{"normal": {"class": 0, "n": 5}, "A": {"class": 1, "n": 0}}')
    err = _bad_run(capsys, pred, sizes, out)
    assert "'A'" in err and "no training instances" in err


def test_previous_results_survive_a_bad_run(files, capsys):
    df, pred, _sizes, out = files
    assert main(["--predictions", str(pred), "--out", str(out), "--bootstrap", "0", "--quiet"]) == 0
    before = (out / "metrics.json").read_bytes()
    df["y_true"] = df["y_true"].astype(str)
    df.loc[0, "y_true"] = "x"
    df.to_csv(pred, index=False)
    assert main(["--predictions", str(pred), "--out", str(out), "--force"]) == 2
    assert "y_true" in capsys.readouterr().err  # the input refused, not the folder
    assert (out / "metrics.json").read_bytes() == before


def test_module_entry_point_on_bundled_example(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "medeval.evaluate",
            "--example",
            "--bootstrap",
            "100",
            "--out",
            str(tmp_path / "ex"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "pBA" in proc.stdout and "wBA" in proc.stdout
    scores = json.loads((tmp_path / "ex" / "metrics.json").read_text())["scores"]
    assert all(scores[k] is not None for k in PAPER_SCORES)


def test_html_report_is_self_contained(files, capsys):
    _df, pred, sizes, out = files
    assert (
        main(
            [
                "--predictions",
                str(pred),
                "--train-sizes",
                str(sizes),
                "--out",
                str(out),
                "--bootstrap",
                "50",
            ]
        )
        == 0
    )
    assert f"report: {out / 'report.html'}" in capsys.readouterr().out
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "data:image/png;base64," in page
    assert "pBA" in page and "predicted utility weights" in page and "sub_3" in page
    assert 'src="http' not in page and 'href="http' not in page  # no external assets


def test_reference_data_check_the_subconcept_model_without_test_labels(files, capsys):
    """Label-free flow: no test subconcepts; the reference file measures the subconcept model
    within each class, and a weak one is flagged in metrics.json and the report."""
    df, pred, sizes, out = files
    ref = out.parent / "reference.csv"
    q = np.random.default_rng(1).dirichlet(np.ones(5), len(df))  # other rows than the test's
    ref_rows = df.assign(**{f"q_{nm}": q[:, i] for i, nm in enumerate(NAMES)})
    ref_rows.to_csv(ref, index=False)  # uninformative posteriors: a weak subconcept model
    df.drop(columns="subconcept").to_csv(pred, index=False)
    args = ["--predictions", str(pred), "--train-sizes", str(sizes), "--reference", str(ref)]
    rc = main([*args, "--out", str(out), "--bootstrap", "50", "--quiet"])
    assert rc == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["scores"]["wBA"] is None and metrics["scores"]["cBA"] is not None
    assert metrics["subconcept_model_source"] == "reference data (reference.csv)"
    assert set(metrics["subconcept_model"]) == {"class 0", "class 1"}
    assert all(v < 0.7 for v in metrics["subconcept_model"].values())
    per_sc = pd.read_csv(out / "per_subconcept.csv")
    assert per_sc.recall.isna().all() and per_sc.est_recall.notna().all()
    assert "The subconcept model is weak within class 1" in (out / "report.html").read_text()


@pytest.mark.parametrize(("drop", "column"), [(["subconcept"], "subconcept"), (["q_A"], "q_A")])
def test_bad_reference_file_exits_2_naming_the_column(files, capsys, drop, column):
    df, pred, sizes, out = files
    ref = out.parent / "reference.csv"
    df.drop(columns=drop).to_csv(ref, index=False)
    args = ["--predictions", str(pred), "--train-sizes", str(sizes), "--reference", str(ref)]
    rc = main([*args, "--out", str(out), "--quiet"])
    assert rc == 2 and not out.exists()
    err = capsys.readouterr().err
    assert "reference.csv" in err and f"'{column}'" in err and len(err.strip().splitlines()) == 1
