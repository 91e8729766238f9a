"""python -m medeval.label and evaluate --labels: the loop a team runs, end to end."""

from __future__ import annotations

import json

import label_data
import pandas as pd
import pytest

from medeval.cli.evaluate import main as evaluate_main
from medeval.cli.label import main as label_main


@pytest.fixture
def files(tmp_path):
    return label_data.write(tmp_path, n=600, seed=1)


def _label(files, out, *extra):
    return label_main(
        [
            "--predictions",
            str(files["predictions"]),
            "--train-sizes",
            str(files["train_sizes"]),
            "--out",
            str(out),
            "--quiet",
            *extra,
        ]
    )


def test_label_evaluate_label_again(files, tmp_path, capsys):
    assert _label(files, tmp_path / "l1", "--budget", "25", "--seed", "3") == 0
    sheet = pd.read_csv(tmp_path / "l1" / "to_label.csv", dtype={"id": str}, keep_default_na=False)
    assert list(sheet.columns) == [
        "id",
        "inclusion_probability",
        "batch",
        "looks",
        "class",
        "candidates",
        "subconcept",
    ]
    assert len(sheet) == 25 and sheet["id"].is_unique and (sheet["batch"] == 1).all()
    assert (sheet["looks"] == 3).all()  # no --looks, no --max-labels: 3 looks planned
    assert ((sheet.inclusion_probability > 0) & (sheet.inclusion_probability <= 1)).all()
    assert (sheet["subconcept"] == "").all()
    # the same inputs and seed propose the same rows
    assert _label(files, tmp_path / "l1b", "--budget", "25", "--seed", "3") == 0
    again = pd.read_csv(tmp_path / "l1b" / "to_label.csv", dtype={"id": str})
    assert again["id"].tolist() == sheet["id"].tolist()
    labels = label_data.fill(tmp_path / "l1" / "to_label.csv", files["truth"], tmp_path / "l.csv")
    code = evaluate_main(
        [
            "--predictions",
            str(files["predictions"]),
            "--train-sizes",
            str(files["train_sizes"]),
            "--labels",
            str(labels),
            "--bootstrap",
            "50",
            "--out",
            str(tmp_path / "e1"),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "labels: 25 of 600 test rows labelled (l.csv, 1 batch(es))" in out and "class 1: " in out
    m = json.loads((tmp_path / "e1" / "metrics.json").read_text())
    rows = {r["subconcept"]: r for r in m["per_subconcept"]}
    assert sum(r["n_labelled"] for r in rows.values()) == 25
    assert all(r["r_verdict"] in ("below", "not below", "not known") for r in rows.values())
    assert m["recommended"]["BA"] == "rBA" and m["scores"]["rBA"] is not None
    # no plan of looks written by hand: the first batch's sheet planned 3, read at look 1's share
    assert "look 1 of 3 planned: intervals at 99.93%" in out
    # the next batch: none of the labelled rows again, batch 2
    assert _label(files, tmp_path / "l2", "--budget", "25", "--labels", str(labels)) == 0
    second = pd.read_csv(tmp_path / "l2" / "to_label.csv", dtype={"id": str})
    assert not set(second["id"]) & set(sheet["id"]) and (second["batch"] == 2).all()


def test_a_budget_over_the_rows_left_proposes_them_all(files, tmp_path, capsys):
    assert (
        label_main(
            [
                "--predictions",
                str(files["predictions"]),
                "--train-sizes",
                str(files["train_sizes"]),
                "--budget",
                "5000",
                "--out",
                str(tmp_path / "all"),
            ]
        )
        == 0
    )
    assert "--budget 5000 is more than the 600 rows not yet labelled" in capsys.readouterr().out
    assert len(pd.read_csv(tmp_path / "all" / "to_label.csv")) == 600


def test_bad_labels_exit_2_with_one_line_and_write_nothing(files, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"id": ["img0001", "nope"], "subconcept": ["c0", "s"]}).to_csv(bad, index=False)
    out = tmp_path / "never"
    assert _label(files, out, "--labels", str(bad)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.csv" in err[0] and "'nope'" in err[0] and "row 3" in err[0]
    assert not out.exists()
    with pytest.raises(SystemExit) as stop:  # a bad option value is refused while parsing
        _label(files, out, "--budget", "0")
    assert stop.value.code == 2
    assert "argument --budget: must be an int >= 1; got 0" in capsys.readouterr().err


def test_rows_marked_unsure_are_unlabelled_and_the_next_batch_follows(files, tmp_path, capsys):
    assert _label(files, tmp_path / "l1", "--budget", "10") == 0
    labels = label_data.fill(tmp_path / "l1" / "to_label.csv", files["truth"], tmp_path / "l.csv")
    filled = pd.read_csv(labels, dtype={"id": str})
    filled.loc[:2, "subconcept"] = "unsure"  # three rows the expert could not tell
    filled.to_csv(labels, index=False)
    argv = ["--predictions", str(files["predictions"]), "--train-sizes",
            str(files["train_sizes"]), "--labels", str(labels), "--bootstrap", "20"]  # fmt: skip
    assert evaluate_main([*argv, "--out", str(tmp_path / "e")]) == 0
    out = capsys.readouterr().out
    assert "l.csv: 3 row(s) marked 'unsure', counted as unlabelled" in out
    assert "labels: 7 of 600 test rows labelled (l.csv, 1 batch(es))" in out
    m = json.loads((tmp_path / "e" / "metrics.json").read_text())
    assert sum(r["n_labelled"] for r in m["per_subconcept"]) == 7
    # the next batch is batch 2, and may propose the unsure rows again
    assert _label(files, tmp_path / "l2", "--budget", "10", "--labels", str(labels)) == 0
    second = pd.read_csv(tmp_path / "l2" / "to_label.csv", dtype={"id": str})
    assert (second["batch"] == 2).all()
    assert not set(second["id"]) & set(filled["id"][3:])
    # a batch all unsure still counts as given: the next one is batch 2 again, not 1
    filled["subconcept"] = "unsure"
    filled.to_csv(labels, index=False)
    assert _label(files, tmp_path / "l3", "--budget", "10", "--labels", str(labels)) == 0
    assert (pd.read_csv(tmp_path / "l3" / "to_label.csv")["batch"] == 2).all()
    assert evaluate_main([*argv, "--out", str(tmp_path / "e2")]) == 2
    assert "no labelled rows: every row is marked 'unsure'" in capsys.readouterr().err


def test_focus_aims_the_batch_at_one_subconcept_and_says_so(files, tmp_path, capsys):
    """--focus s: the aimed part of the batch serves s alone; its rows are those most probably
    of s (against the default, which shares the batch among every open verdict)."""
    assert _label(files, tmp_path / "f", "--budget", "20", "--focus", "s") == 0
    assert label_main(
        ["--predictions", str(files["predictions"]), "--train-sizes", str(files["train_sizes"]),
         "--out", str(tmp_path / "f2"), "--budget", "20", "--focus", "s"]
    ) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "aimed at s (~" in out and "100% of the aimed labels" in out
    assert _label(files, tmp_path / "d", "--budget", "20") == 0
    truth = pd.read_csv(files["truth"]).set_index("id")["subconcept"]
    focus = pd.read_csv(tmp_path / "f" / "to_label.csv")["id"].map(truth)
    default = pd.read_csv(tmp_path / "d" / "to_label.csv")["id"].map(truth)
    assert (focus == "s").sum() >= (default == "s").sum()


@pytest.mark.parametrize(
    ("focus", "says"),
    [("nope", "--focus 'nope': no such subconcept"), ("S", "--focus 'S': no such subconcept")],
)
def test_a_focus_that_is_no_subconcept_exits_2_naming_it(files, tmp_path, capsys, focus, says):
    out = tmp_path / "never"
    assert _label(files, out, "--focus", focus) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and "'c0', 'c1', 's', 'a', 'b'" in err[0]
    assert not out.exists()


def test_a_focus_on_a_class_of_one_subconcept_exits_2(files, tmp_path, capsys):
    sizes = json.loads(files["train_sizes"].read_text())
    one = {"c0": {"class": 0, "n": 700}, **{k: v for k, v in sizes.items() if v["class"] == 1}}
    (tmp_path / "one.json").write_text(json.dumps(one))
    pred = pd.read_csv(files["predictions"])
    pred["q_c0"] = pred["q_c0"] + pred.pop("q_c1")
    pred.to_csv(tmp_path / "p.csv", index=False)
    code = label_main(
        ["--predictions", str(tmp_path / "p.csv"), "--train-sizes", str(tmp_path / "one.json"),
         "--out", str(tmp_path / "x"), "--focus", "c0"]
    )  # fmt: skip
    assert code == 2
    assert "the only subconcept of class 0" in capsys.readouterr().err


def test_a_labelled_row_with_an_inclusion_probability_of_0_exits_2(files, tmp_path, capsys):
    assert _label(files, tmp_path / "l1", "--budget", "10") == 0
    labels = label_data.fill(tmp_path / "l1" / "to_label.csv", files["truth"], tmp_path / "l.csv")
    frame = pd.read_csv(labels, dtype={"id": str})
    frame.loc[3, "inclusion_probability"] = 0.0
    frame.to_csv(labels, index=False)
    assert _label(files, tmp_path / "l2", "--labels", str(labels)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "l.csv" in err[0] and "inclusion_probability" in err[0]
    assert "(0, 1]" in err[0]


def test_several_filled_sheets_go_to_labels_and_a_row_labelled_two_ways_is_exit_2(
    files, tmp_path, capsys
):
    """--labels a.csv b.csv: each batch's to_label.csv, filled, as they are; one id labelled
    with two subconcepts in two files is one line naming both files and the id."""
    assert _label(files, tmp_path / "l1", "--budget", "20") == 0
    one = label_data.fill(tmp_path / "l1" / "to_label.csv", files["truth"], tmp_path / "a.csv")
    assert _label(files, tmp_path / "l2", "--budget", "20", "--labels", str(one)) == 0
    two = label_data.fill(tmp_path / "l2" / "to_label.csv", files["truth"], tmp_path / "b.csv")
    capsys.readouterr()
    args = ["--predictions", str(files["predictions"]), "--train-sizes", str(files["train_sizes"])]
    code = evaluate_main([*args, "--labels", str(one), str(two), "--bootstrap", "0",
                          "--out", str(tmp_path / "e")])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert f"labels: 40 of 600 test rows labelled ({one}, {two}, 2 batch(es))" in out
    per = pd.read_csv(tmp_path / "e" / "per_subconcept.csv")
    assert per["n_labelled"].sum() == 40
    # the same row given another subconcept in the second file
    sheet = pd.read_csv(two, dtype={"id": str})
    first = pd.read_csv(one, dtype={"id": str}).iloc[0]
    other = next(n for n in label_data.NAMES if n != first["subconcept"] and
                 label_data.SIDES[label_data.NAMES.index(n)] == first["class"])  # fmt: skip
    bad = pd.concat([sheet, first.to_frame().T.assign(subconcept=other, batch=2)])
    bad.to_csv(tmp_path / "bad.csv", index=False)
    code = evaluate_main([*args, "--labels", str(one), str(tmp_path / "bad.csv"),
                          "--bootstrap", "0", "--out", str(tmp_path / "never")])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert str(one) in err[0] and str(tmp_path / "bad.csv") in err[0]
    assert f"id '{first['id']}' is labelled" in err[0] and not (tmp_path / "never").exists()


def _loud(files, out, *extra):
    return label_main(
        ["--predictions", str(files["predictions"]), "--train-sizes", str(files["train_sizes"]),
         "--out", str(out), "--forecast", "0", *extra]
    )  # fmt: skip


def test_the_plan_of_looks_is_fixed_by_the_first_batch(files, tmp_path, capsys):
    assert _label(files, tmp_path / "l1", "--budget", "10", "--looks", "2") == 0
    sheet = pd.read_csv(tmp_path / "l1" / "to_label.csv")
    assert (sheet["looks"] == 2).all()
    fill = label_data.fill
    one = fill(tmp_path / "l1" / "to_label.csv", files["truth"], tmp_path / "1.csv")
    capsys.readouterr()
    assert (
        _loud(files, tmp_path / "l2", "--budget", "10", "--labels", str(one), "--looks", "5") == 0
    )
    out = capsys.readouterr().out
    assert "--looks 5: the labels files planned 2 looks at their first batch" in out
    assert "look 1 of 2 planned: intervals at 99.44%" in out
    assert (pd.read_csv(tmp_path / "l2" / "to_label.csv")["looks"] == 2).all()
    # the second look of two, then a third: read at the last planned level, and said to be past
    two = fill(tmp_path / "l2" / "to_label.csv", files["truth"], tmp_path / "2.csv")
    assert _loud(files, tmp_path / "l3", "--budget", "10", "--labels", str(one), str(two)) == 0
    assert "look 2 of 2 planned" in capsys.readouterr().out
    three = fill(tmp_path / "l3" / "to_label.csv", files["truth"], tmp_path / "3.csv")
    assert _loud(files, tmp_path / "l4", "--labels", str(one), str(two), str(three)) == 0
    assert "no longer kept at 5%" in capsys.readouterr().out


def test_labels_without_a_plan_are_read_as_evaluate_reads_them(files, tmp_path, capsys):
    assert _label(files, tmp_path / "l1", "--budget", "10") == 0
    filled = label_data.fill(tmp_path / "l1" / "to_label.csv", files["truth"], tmp_path / "f.csv")
    bare = tmp_path / "bare.csv"
    pd.read_csv(filled)[["id", "subconcept"]].to_csv(bare, index=False)  # written by hand
    capsys.readouterr()
    assert _loud(files, tmp_path / "l2", "--budget", "10", "--labels", str(bare)) == 0
    out = capsys.readouterr().out
    assert "no plan of looks in the labels files, so each look's intervals are read at 95%" in out
    assert "looks: the new sheet plans 3 looks, the batches given among them" in out
    assert (pd.read_csv(tmp_path / "l2" / "to_label.csv")["looks"] == 3).all()
