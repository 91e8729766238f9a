"""`python -m medeval.evaluate --reference FILE`: the rectified scores end to end on the packaged
example, bad reference files → exit 2 naming the file and the column or subconcept, and the
paragraph printed when neither test subconcepts nor reference rows are given."""

import json

import numpy as np
import pandas as pd
import pytest

from medeval.cli.evaluate import main
from medeval.evaluation import NO_REFERENCE_NOTE, evaluate_predictions
from medeval.io.predictions import example_paths
from medeval.io.reference import ReferenceRows
from medeval.weights import utilities_from_train_sizes


@pytest.fixture
def example(tmp_path):
    """The packaged example (held-out predictions of a binary and a subconcept random forest on
    one KEEL fold) split at random into reference rows (with subconcepts) and test rows (the
    subconcept column dropped): both are held out from the forests' training fold and come
    from the same population."""
    pred, sizes = example_paths()
    df = pd.read_csv(pred)
    ref = np.random.default_rng(0).random(len(df)) < 0.5
    files = {
        "reference": tmp_path / "reference.csv",
        "test": tmp_path / "test.csv",
        "sizes": sizes,
        "out": tmp_path / "out",
    }
    df[ref].to_csv(files["reference"], index=False)
    df[~ref].drop(columns="subconcept").to_csv(files["test"], index=False)
    return df, ref, files


def _args(f, reference=None, bootstrap="100"):
    args = ["--predictions", str(f["test"]), "--train-sizes", str(f["sizes"])]
    if reference is not None:
        args += ["--reference", str(reference)]
    return [*args, "--out", str(f["out"]), "--bootstrap", bootstrap, "--seed", "1"]


def test_reference_rows_rectify_and_are_recommended(example, capsys):
    df, ref, f = example
    assert main(_args(f, f["reference"])) == 0
    out = capsys.readouterr().out
    m = json.loads((f["out"] / "metrics.json").read_text())
    assert m["recommended"] == {
        "BA": "rBA",
        "F1": "rF1",
        "AUC": "rAUC",
        "per_subconcept": "r_recall",
    }
    assert m["reference"]["source"] == str(f["reference"])
    assert m["reference"]["n"] == int(ref.sum())
    counts = df[ref].subconcept.value_counts().to_dict()
    assert m["reference"]["per_subconcept"] == counts
    for k in ("rBA", "rF1", "rAUC"):
        iv = m["intervals"][k]
        assert np.isfinite(m["scores"][k]) and iv["low"] <= m["scores"][k] <= iv["high"]
    per_sc = pd.read_csv(f["out"] / "per_subconcept.csv")
    assert dict(zip(per_sc.subconcept, per_sc.n_reference, strict=True)) == counts
    # the same numbers as the library, with the reference rows given directly
    u = utilities_from_train_sizes(json.loads(f["sizes"].read_text()))
    r, t = df[ref], df[~ref]
    q = [f"q_{n}" for n in u.names]
    rows = ReferenceRows.from_arrays(
        u, y_true=r.y_true, subconcept=r.subconcept, posteriors=r[q].to_numpy(), y_score=r.y_score
    )
    ev = evaluate_predictions(
        t.y_true, y_score=t.y_score, posteriors=t[q].to_numpy(), posterior_columns=u.names,
        train_sizes=u, reference=rows, n_bootstrap=100, seed=1,
    )  # fmt: skip
    # rBA = cBA(test) − (cBA(R) − wBA(R)) and the interval of the joint bootstrap
    assert m["scores"]["rBA"] == pytest.approx(ev.scores["rBA"], abs=1e-12)
    assert m["intervals"]["rBA"]["low"] == pytest.approx(ev.intervals["rBA"][0], abs=1e-12)
    fam = m["rectification"]["families"]["BA"]
    assert m["scores"]["rBA"] == pytest.approx(
        m["scores"]["cBA"] - (fam["class_conditional_reference"] - fam["true_weight_reference"])
    )
    # the printed table marks them, says what they are, and the report explains them
    assert "rBA" in out and "recommended, label-free, rectified" in out
    assert "rM = cM(test) − (cM(R) − wM(R))" in out and "same classifier" in out
    page = (f["out"] / "report.html").read_text()
    assert "rM = cM(test) − (cM(R) − wM(R))" in page and "used to fit neither" in page
    assert NO_REFERENCE_NOTE not in m["notes"]


def test_without_subconcepts_or_reference_says_why_the_interval_is_blind(example, capsys):
    _df, _ref, f = example
    assert main(_args(f, bootstrap="20")) == 0
    out = capsys.readouterr().out
    m = json.loads((f["out"] / "metrics.json").read_text())
    assert m["recommended"] == {
        "BA": "cBA",
        "F1": "cF1",
        "AUC": "cAUC",
        "per_subconcept": "est_recall",
    }
    assert m["scores"]["rBA"] is None and m["reference"] is None
    assert NO_REFERENCE_NOTE in m["notes"]
    assert "cannot see that model's error" in NO_REFERENCE_NOTE
    assert "--reference FILE" in NO_REFERENCE_NOTE
    last = [line for line in out.splitlines() if line.startswith("note: ")][-1]
    assert last == f"note: {NO_REFERENCE_NOTE}"  # after the tables it explains
    assert "cannot see that model" in (f["out"] / "report.html").read_text()


def test_test_subconcepts_need_no_reference_paragraph(example, capsys):
    df, ref, f = example
    df[~ref].to_csv(f["test"], index=False)  # with the true test subconcepts
    assert main(_args(f, bootstrap="0")) == 0
    m = json.loads((f["out"] / "metrics.json").read_text())
    assert NO_REFERENCE_NOTE not in m["notes"] and m["scores"]["wBA"] is not None


def _bad(df, ref, kind):
    r = df[ref].copy()
    if kind == "no subconcept column":
        return r.drop(columns="subconcept"), "'subconcept'"
    if kind == "unknown subconcept":
        r.loc[r.index[3], "subconcept"] = "Z"
        return r, "'Z'"
    if kind == "class mismatch":
        i = r.index[r.subconcept == "Y"][0]
        r.loc[i, "y_true"] = 0
        return r, "'Y'"
    if kind == "no q_ column":
        return r.drop(columns="q_A"), "'q_A'"
    raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind",
    [
        "no subconcept column",
        "unknown subconcept",
        "class mismatch",
        "no q_ column",
    ],
)
def test_bad_reference_file_exits_2_naming_it(example, capsys, kind):
    df, ref, f = example
    bad, named = _bad(df, ref, kind)
    bad.to_csv(f["reference"], index=False)
    assert main(_args(f, f["reference"])) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(f["reference"]) in err and named in err
    assert not f["out"].exists()


def test_a_reference_file_without_a_minority_subconcept_is_accepted_and_says_what_it_leaves(
    example, capsys
):
    """No reference row of X: accepted; the rectified scores are not computed (X's part of the
    correction cannot be measured, docs/method.md "Rectified scores"), the other subconcepts'
    rect. recalls still read the reference rows, and X's is not known, each said."""
    df, ref, f = example
    df[ref & (df.subconcept != "X")].to_csv(f["reference"], index=False)
    assert main(_args(f, f["reference"])) == 0
    m = json.loads((f["out"] / "metrics.json").read_text())
    assert m["scores"]["rBA"] is None and m["recommended"]["BA"] == "cBA"
    assert "'X' has no reference row" in m["unavailable"]["rBA"]
    assert any("hold no row of 'X'" in n for n in m["notes"])
    per = {p["subconcept"]: p for p in m["per_subconcept"]}
    assert per["X"]["r_recall"] is None and per["X"]["r_verdict"] == "not known"
    others = [p for nm, p in per.items() if nm != "X" and p["class"] == 1]
    assert others and all(p["r_recall"] is not None for p in others)
