"""python -m medeval.subconcepts: a classifier that is not medeval's, end to end, and every bad
input ending with exit code 2 and one line naming the file, column or row."""

import json

import numpy as np
import own_model_data
import pandas as pd
import pytest

from medeval.evaluation import evaluate_predictions
from medeval.subconcepts import main


@pytest.fixture(scope="module")
def vehicle(shared_data):
    return own_model_data.vehicle(shared_data)


def _true_wba(test: pd.DataFrame, subconcept, sizes: dict) -> float:
    ev = evaluate_predictions(
        test["y_true"],
        y_score=test["y_score"],
        subconcept=subconcept,
        train_sizes=sizes,
        n_bootstrap=0,
    )
    return ev.scores["wBA"]


def test_three_files_one_command(vehicle, tmp_path, capsys):
    train, ref, test = vehicle.write(tmp_path)
    out = tmp_path / "out"
    args = ["--train", str(train), "--test", str(test), "--reference", str(ref)]
    assert main([*args, "--out", str(out), "--bootstrap", "200", "--quiet"]) == 0
    assert f"report: {out / 'report.html'}" in capsys.readouterr().out
    names = {p.name for p in out.iterdir()}
    assert {
        "metrics.json",
        "metrics.csv",
        "report.html",
        "predictions.csv",
        "reference.csv",
        "train_sizes.json",
        "subconcept_model.json",
    } <= names
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["recommended"]["BA"] == "rBA"
    sizes = json.loads((out / "train_sizes.json").read_text())
    counts = vehicle.train.groupby("subconcept").size().to_dict()
    assert {k: v["n"] for k, v in sizes.items()} == counts
    assert {k: v["class"] for k, v in sizes.items()} == {"bus": 0, "saab": 0, "opel": 1, "van": 1}
    wba = _true_wba(vehicle.test, vehicle.test_subconcept, sizes)
    rba = metrics["intervals"]["rBA"]
    assert rba["low"] <= wba <= rba["high"]
    ba = metrics["rectification"]["families"]["BA"]  # rBA = cBA(test) - (cBA(R) - wBA(R))
    correction = ba["class_conditional_reference"] - ba["true_weight_reference"]
    assert metrics["scores"]["rBA"] == pytest.approx(metrics["scores"]["cBA"] - correction)
    pred = pd.read_csv(out / "predictions.csv")
    assert [c for c in pred.columns if c.startswith("q_")] == ["q_bus", "q_saab", "q_opel", "q_van"]


def test_discovered_subconcepts(vehicle, tmp_path):
    train, ref, test = vehicle.write(tmp_path)
    vehicle.train.drop(columns="subconcept").to_csv(train, index=False)
    vehicle.reference.drop(columns="subconcept").to_csv(ref, index=False)
    out = tmp_path / "out"
    args = ["--train", str(train), "--test", str(test), "--reference", str(ref), "--discover"]
    assert main([*args, "--out", str(out), "--bootstrap", "200", "--quiet"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["recommended"]["BA"] == "rBA"
    disc = json.loads((out / "discovery.json").read_text())
    sizes = json.loads((out / "train_sizes.json").read_text())
    found = {name: n for c in disc["classes"] for name, n in c["subconcepts"].items()}
    assert {k: v["n"] for k, v in sizes.items()} == found
    assert sum(found.values()) == len(vehicle.train)
    ref_out = pd.read_csv(out / "reference.csv")
    assert set(ref_out["subconcept"]) <= set(found)  # the clustering names the reference rows
    assert any("clustering's assignments, not true subtypes" in n for n in metrics["notes"])


def _tiny(tmp_path, **changes):
    """Small TRAIN / REF / TEST tables (two subconcepts per class), then ``changes``: a
    function per file name that edits its frame."""
    rng = np.random.default_rng(0)
    sc = np.array(["a", "b", "c", "d"])
    frames = {}
    for name, n in (("train", 80), ("reference", 40), ("test", 40)):
        codes = np.arange(n) % 4
        f = pd.DataFrame(
            rng.normal(size=(n, 3)) + codes[:, None], columns=["f0000", "f0001", "f0002"]
        )
        f.insert(0, "id", [f"{name}{i}" for i in range(n)])
        f["y_true"] = (codes >= 2).astype(int)
        if name != "train":
            f["y_score"] = np.clip(0.3 * codes + rng.uniform(0, 0.1, n), 0, 1)
        if name != "test":
            f["subconcept"] = sc[codes]
        frames[name] = f
    paths = {}
    for name, f in frames.items():
        if name in changes:
            f = changes[name](f)
        paths[name] = tmp_path / f"{name}.csv"
        f.to_csv(paths[name], index=False)
    return paths


def _set(column, row, value):
    def edit(f):
        f = f.copy()
        f[column] = f[column].astype(object)
        f.loc[row, column] = value
        return f

    return edit


BAD = {
    "feature missing": (
        {"test": lambda f: f.drop(columns="f0001")},
        [],
        ["test.csv", "column 'f0001'", "missing feature column"],
    ),
    "named feature missing": (
        {},
        ["--features", "f0000", "x9"],
        ["train.csv", "column 'x9'"],
    ),
    "non-numeric feature": (
        {"train": _set("f0002", 4, "abc")},
        [],
        ["train.csv", "column 'f0002'", "row 5", "'abc'"],
    ),
    "no subconcept in TRAIN": (
        {"train": lambda f: f.drop(columns="subconcept")},
        [],
        ["train.csv", "column 'subconcept'", "--discover"],
    ),
    "subconcept TRAIN lacks, in REF": (
        {"reference": _set("subconcept", 6, "zz")},
        [],
        ["reference.csv", "column 'subconcept'", "row 7", "'zz'"],
    ),
    "subconcept TRAIN lacks, in TEST": (
        {
            "test": lambda f: f.assign(
                subconcept=np.where(
                    np.arange(len(f)) == 3,
                    "zz",
                    np.array(["a", "b", "c", "d"])[np.arange(len(f)) % 4],
                )
            )
        },
        [],
        ["test.csv", "column 'subconcept'", "row 4", "'zz'"],
    ),
    "class mismatch in TRAIN": (
        {"train": _set("y_true", 3, 0)},  # row 4 holds subconcept d, class 1
        [],
        ["train.csv", "column 'subconcept'", "'d'", "row 4"],
    ),
    "class mismatch in REF": (
        {"reference": _set("y_true", 0, 1)},  # row 1 holds subconcept a, class 0
        [],
        ["reference.csv", "column 'subconcept'", "row 1", "belongs to class 0"],
    ),
    "single subconcept in class 1": (
        {"train": lambda f: f.assign(subconcept=f["subconcept"].replace("d", "c"))},
        [],
        ["train.csv", "single subconcept 'c'", "wBA = BA"],
    ),
    "duplicate ids": (
        {"reference": _set("id", 9, "reference2")},
        [],
        ["reference.csv", "column 'id'", "row 10", "'reference2' appears twice"],
    ),
    "TRAIN row reused as REF": (
        {"reference": _set("id", 2, "train5")},
        [],
        ["reference.csv", "column 'id'", "row 3", "held out"],
    ),
    "TEST row reused as REF": (
        {"reference": _set("id", 4, "test7")},
        [],
        ["reference.csv", "column 'id'", "row 5", "'test7' is also a TEST row"],
    ),
    "discovery option without --discover": (
        {},
        ["--k-max", "3"],
        ["--k-max", "needs --discover"],
    ),
    "feature TRAIN lacks, in TEST": (  # the model would leave it out without a word
        {"train": lambda f: f.drop(columns="f0002")},
        [],
        ["test.csv", "column 'f0002'", "that TRAIN", "train.csv lacks", "--features"],
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_exits_2_naming_the_place(case, tmp_path, capsys):
    changes, extra, expected = BAD[case]
    p = _tiny(tmp_path, **changes)
    argv = [
        "--train",
        str(p["train"]),
        "--test",
        str(p["test"]),
        "--reference",
        str(p["reference"]),
        "--out",
        str(tmp_path / "out"),
        "--bootstrap",
        "0",
        *extra,
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for part in expected:
        assert part in err, (part, err)
    assert not (tmp_path / "out" / "metrics.json").exists()


def test_predictions_in_their_own_file_are_joined_by_id(tmp_path, capsys):
    p = _tiny(tmp_path)
    test = pd.read_csv(p["test"])
    test.drop(columns=["y_true", "y_score"]).to_csv(p["test"], index=False)
    preds = test[["id", "y_true", "y_score"]].iloc[::-1]  # another order: joined by id
    preds.to_csv(tmp_path / "preds.csv", index=False)
    out = tmp_path / "out"
    argv = [
        "--train",
        str(p["train"]),
        "--test",
        str(p["test"]),
        "--predictions",
        str(tmp_path / "preds.csv"),
        "--out",
        str(out),
        "--bootstrap",
        "0",
        "--quiet",
    ]
    assert main(argv) == 0
    written = pd.read_csv(out / "predictions.csv")
    assert written["id"].tolist() == test["id"].tolist()
    np.testing.assert_allclose(written["y_score"], test["y_score"])
    # one row short: the counts do not match
    preds.iloc[1:].to_csv(tmp_path / "preds.csv", index=False)
    capsys.readouterr()
    assert main([*argv[:-3], "--out", str(tmp_path / "out2"), "--bootstrap", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert "preds.csv" in err and "has 39 rows" in err and "has 40" in err


def test_a_minority_subconcept_without_reference_rows_is_accepted_naming_the_users_file(
    tmp_path, capsys
):
    p = _tiny(tmp_path, reference=lambda f: f[f["subconcept"] != "d"])
    argv = ["--train", str(p["train"]), "--test", str(p["test"]), "--reference"]
    argv += [str(p["reference"]), "--out", str(tmp_path / "out"), "--bootstrap", "0"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"note: the reference rows ({p['reference']}) hold no row of 'd': accepted" in out


def test_every_input_is_checked_before_the_subconcept_model_is_fitted(
    tmp_path, capsys, monkeypatch
):
    import medeval.flows.own_model as flow

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before the inputs were checked")

    monkeypatch.setattr(flow.SubconceptModel, "fit", no_fit)
    monkeypatch.setattr(flow, "discover_subconcepts", no_fit)
    for changes, extra, expected in (
        ({"reference": _set("subconcept", 6, "zz")}, [], "'zz'"),
        ({"test": _set("y_score", 2, "nan")}, [], "column 'y_score'"),
        ({"reference": lambda f: f.drop(columns="f0001")}, [], "missing feature column"),
        ({"train": lambda f: f.drop(columns="subconcept"),
          "reference": lambda f: _set("id", 4, "test7")(f.drop(columns="subconcept"))},
         ["--discover"], "'test7' is also a TEST row"),
    ):  # fmt: skip
        p = _tiny(tmp_path, **changes)
        argv = ["--train", str(p["train"]), "--test", str(p["test"]), "--reference"]
        argv += [str(p["reference"]), "--out", str(tmp_path / "out"), "--bootstrap", "0"]
        assert main([*argv, *extra]) == 2
        err = capsys.readouterr().err
        assert expected in err and "fitted before" not in err, err


def test_a_column_in_both_test_and_its_predictions_file_must_agree(tmp_path, capsys):
    p = _tiny(tmp_path)
    test = pd.read_csv(p["test"])
    preds = test[["id", "y_true", "y_score"]]
    preds.to_csv(tmp_path / "preds.csv", index=False)
    test.drop(columns="y_score").to_csv(p["test"], index=False)  # y_true in both, the same
    argv = ["--train", str(p["train"]), "--test", str(p["test"]), "--predictions"]
    argv += [str(tmp_path / "preds.csv"), "--bootstrap", "0", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 0
    flipped = test.assign(y_true=1 - test["y_true"])  # y_true in both, every row differs
    flipped.to_csv(p["test"], index=False)
    assert main([*argv, "--out", str(tmp_path / "out2")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for part in ("preds.csv", "column 'y_true'", str(p["test"]), "differ in 40 rows", "row 1"):
        assert part in err, (part, err)
    assert not (tmp_path / "out2").exists()


def test_a_warning_about_the_inputs_is_a_note_not_a_python_warning(tmp_path, capsys):
    # scores in percent with the default threshold 0.5: said once, as evaluate says it
    p = _tiny(tmp_path, test=lambda f: f.assign(y_score=f["y_score"] * 100))
    argv = ["--train", str(p["train"]), "--test", str(p["test"]), "--reference"]
    argv += [str(p["reference"]), "--out", str(tmp_path / "out"), "--bootstrap", "0"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    said = [line for line in captured.out.splitlines() if "y_score lies in" in line]
    assert len(said) == 1 and said[0].startswith("note: "), captured.out
    assert "ScoreRangeWarning" not in captured.err and ".py:" not in captured.err, captured.err


def test_example_leaves_its_inputs_and_the_test_truth(shared_data, tmp_path, capsys):
    out = tmp_path / "ex"
    argv = ["--example", "--data", str(shared_data), "--out", str(out), "--bootstrap", "200"]
    assert main(argv) == 0
    assert "test_truth.csv holds the test rows' true subconcepts" in capsys.readouterr().out
    names = {p.name for p in out.iterdir()}
    assert {"train.csv", "test.csv", "reference.csv", "validation.csv", "test_truth.csv"} <= names
    assert {"predictions.csv", "train_sizes.json", "metrics.json"} <= names
    data = own_model_data.vehicle(shared_data)
    truth = pd.read_csv(out / "test_truth.csv")
    assert truth["id"].tolist() == pd.read_csv(out / "predictions.csv")["id"].tolist()
    np.testing.assert_array_equal(truth["subconcept"], data.test_subconcept)
    # the inputs run as any user's would, to the same scores
    again = tmp_path / "again"
    files = ["--train", str(out / "train.csv"), "--test", str(out / "test.csv")]
    files += ["--reference", str(out / "validation.csv"), "--bootstrap", "200", "--quiet"]
    assert main([*files, "--out", str(again)]) == 0
    first, second = (json.loads((d / "metrics.json").read_text())["scores"] for d in (out, again))
    assert first == second


def test_example_refuses_tables_of_its_own(tmp_path, capsys):
    assert main(["--example", "--train", "t.csv", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--example brings its own tables: drop --train" in err[0]
    assert main(["--out", str(tmp_path / "y")]) == 2
    assert "give --train TRAIN and --test TEST" in capsys.readouterr().err


def test_reference_rows_without_a_subconcept_are_accepted_and_say_so(vehicle, tmp_path, capsys):
    """REF without a row of van: accepted; rBA not computed (van's part of the correction cannot
    be measured), the other subconcepts' rect. recalls from REF, van's verdict not known (notes
    naming it); labelled test rows of van then estimate its recall from the labels alone, and
    with them pooled in, the rectified scores stand."""
    from medeval.cli.evaluate import main as evaluate_main

    train, ref, test = vehicle.write(tmp_path)
    vehicle.reference[vehicle.reference["subconcept"] != "van"].to_csv(ref, index=False)
    out = tmp_path / "out"
    argv = ["--train", str(train), "--test", str(test), "--reference", str(ref)]
    assert main([*argv, "--out", str(out), "--bootstrap", "200", "--quiet"]) == 0
    capsys.readouterr()
    m = json.loads((out / "metrics.json").read_text())
    assert m["recommended"]["BA"] == "cBA" and m["scores"]["rBA"] is None
    assert "'van' has no reference row" in m["unavailable"]["rBA"]
    assert any("hold no row of 'van': accepted" in n for n in m["notes"])
    others = [r for r in m["per_subconcept"] if r["subconcept"] != "van" and r["class"] == 1]
    assert all(r["r_recall"] is not None for r in others)
    van = next(r for r in m["per_subconcept"] if r["subconcept"] == "van")
    assert van["n_reference"] == 0 and van["r_verdict"] == "not known" and van["r_recall"] is None
    # 40 test rows labelled at random, a simple random sample
    rng = np.random.default_rng(0)
    pick = rng.choice(len(vehicle.test), 40, replace=False)
    labels = tmp_path / "labels.csv"
    pd.DataFrame(
        {"id": vehicle.test["id"].to_numpy()[pick], "subconcept": vehicle.test_subconcept[pick]}
    ).to_csv(labels, index=False)
    code = evaluate_main(
        [
            "--predictions", str(out / "predictions.csv"),
            "--train-sizes", str(out / "train_sizes.json"),
            "--reference", str(out / "reference.csv"),
            "--labels", str(labels),
            "--bootstrap", "200", "--out", str(tmp_path / "e"), "--quiet",
        ]
    )  # fmt: skip
    assert code == 0
    per = pd.read_csv(tmp_path / "e" / "per_subconcept.csv").set_index("subconcept")
    n_van = int((vehicle.test_subconcept[pick] == "van").sum())
    assert per.loc["van", "n_reference"] == 0 and per.loc["van", "n_labelled"] == n_van > 1
    assert np.isfinite(per.loc["van", "r_low"])  # from the labels alone
    again = json.loads((tmp_path / "e" / "metrics.json").read_text())
    assert again["scores"]["rBA"] is not None  # REF and the labelled rows hold every subconcept
