"""Reference rows are not the test rows (#38): reference rows that are the test rows (a copy of
the predictions file, the same rows under new ids) or that repeat an id are refused with one
line; a reference ``y_pred`` made at another threshold than the test rows' labels is named;
reference rows of one class recommend the label-free score; ``subconcepts
--reference-predictions`` takes REF's own ``subconcept`` column; a class-1 subconcept with a
single training row is warned about."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from malformed_fixtures import SIZES, predictions
from test_cross_file_checks import _one_line_naming, _own
from test_malformed_inputs import run_tool

from medeval.flows.evaluate import EvaluateSettings, evaluate_file
from medeval.flows.own_model import fit_and_evaluate
from medeval.options import SubconceptSettings


@pytest.fixture
def files(tmp_path):
    pred, sizes = tmp_path / "pred.csv", tmp_path / "sizes.json"
    predictions().to_csv(pred, index=False)
    sizes.write_text(json.dumps(SIZES))
    return pred, sizes


def _evaluate(pred, sizes, ref, out, *extra: str) -> int:
    argv = ["--predictions", str(pred), "--train-sizes", str(sizes), "--reference", str(ref)]
    return run_tool("evaluate", [*argv, "--out", str(out), "--bootstrap", "0", "--quiet", *extra])


def test_a_copy_of_the_predictions_as_reference_rows_is_refused(files, tmp_path, capsys):
    pred, sizes = files
    copy = tmp_path / "copy.csv"
    pd.read_csv(pred).sample(frac=1, random_state=0).to_csv(copy, index=False)  # reordered
    assert _evaluate(pred, sizes, copy, tmp_path / "out") == 2
    _one_line_naming(capsys, "copy.csv", "are the test rows of", "pred.csv", "rBA = wBA")
    assert not (tmp_path / "out").exists()


def test_the_test_rows_under_new_ids_are_refused_as_reference_rows(tmp_path, capsys):
    train, test, _ref = _own(tmp_path)
    renamed = tmp_path / "renamed.csv"
    t = pd.read_csv(test)
    t.assign(id=[f"new{i}" for i in range(len(t))]).to_csv(renamed, index=False)
    argv = ["--train", str(train), "--test", str(test), "--reference", str(renamed)]
    argv += ["--out", str(tmp_path / "out"), "--bootstrap", "0", "--n-estimators", "5"]
    assert run_tool("subconcepts", argv) == 2
    _one_line_naming(capsys, "renamed.csv", "are the test rows of", "test.csv")
    assert not (tmp_path / "out").exists()


def test_reference_rows_given_twice_are_refused_naming_the_id(files, tmp_path, capsys):
    pred, sizes = files
    ref = predictions(n=60, seed=7)
    ref.insert(0, "id", [f"v{i}" for i in range(len(ref))])
    twice = tmp_path / "ref.csv"
    pd.concat([ref, ref.iloc[:5]]).to_csv(twice, index=False)
    assert _evaluate(pred, sizes, twice, tmp_path / "out") == 2
    _one_line_naming(capsys, "ref.csv", "'id'", "id 'v0' appears twice (rows 1 and 61)")


@pytest.mark.filterwarnings("ignore::medeval.evaluation.rectified.FewReferenceRowsWarning")
def test_a_reference_y_pred_made_at_another_threshold_is_named(files, tmp_path):
    pred, sizes = files
    pd.read_csv(pred).drop(columns=["subconcept"]).to_csv(pred, index=False)  # label-free
    ref = predictions(n=60, seed=7)
    ref["y_pred"] = (ref["y_score"] >= 0.3).astype(int)
    ref.to_csv(tmp_path / "ref.csv", index=False)
    s = EvaluateSettings(n_bootstrap=0)
    with pytest.warns(UserWarning, match=r"ref\.csv: y_pred differs from y_score >= 0\.5 in \d+"):
        evaluate_file(pred, sizes, reference=tmp_path / "ref.csv", settings=s)
    ref.assign(y_pred=(ref["y_score"] >= 0.5).astype(int)).to_csv(tmp_path / "ref.csv")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # made at the test rows' threshold: nothing to say
        evaluate_file(pred, sizes, reference=tmp_path / "ref.csv", settings=s)
    assert not [w for w in caught if "y_pred differs" in str(w.message)]


def test_reference_rows_of_one_class_recommend_the_label_free_score(files, tmp_path):
    pred, sizes = files
    pd.read_csv(pred).drop(columns=["subconcept"]).to_csv(pred, index=False)
    ref = predictions(n=200, seed=7)
    ref[ref["y_true"] == 1].to_csv(tmp_path / "ref.csv", index=False)  # class 1 only
    s = EvaluateSettings(n_bootstrap=0)
    with warnings.catch_warnings(record=True):  # rBA undefined: a note says so
        warnings.simplefilter("always")
        _, ev = evaluate_file(pred, sizes, reference=tmp_path / "ref.csv", settings=s)
    assert np.isnan(ev.scores["rBA"]) and np.isfinite(ev.scores["cBA"])
    assert ev.recommended["BA"] == "cBA" and ev.to_dict()["recommended"]["BA"] == "cBA"
    assert ev.recommended["F1"] == "rF1"  # rF1 needs class 1 only


def test_reference_predictions_take_refs_own_subconcept_column(tmp_path):
    train, test, ref = _own(tmp_path)
    r = pd.read_csv(ref)
    scores = tmp_path / "ref_scores.csv"
    r[["id", "y_true", "y_score"]].iloc[::-1].to_csv(scores, index=False)
    features = tmp_path / "ref_features.csv"
    r.drop(columns=["y_score"]).to_csv(features, index=False)  # features, y_true, subconcept
    s = SubconceptSettings(n_estimators=10, n_bootstrap=0)
    ev = fit_and_evaluate(train, test, features, reference_predictions=scores, settings=s)
    one_file = fit_and_evaluate(train, test, ref, settings=s)
    assert np.isfinite(ev.evaluation.scores["rBA"])
    assert ev.evaluation.scores == one_file.evaluation.scores


@pytest.mark.filterwarnings("ignore::medeval.metrics.UndefinedMetricWarning")
def test_a_subconcept_with_one_training_row_is_warned_about(tmp_path):
    train, test, _ref = _own(tmp_path)
    t = pd.read_csv(train)
    t.loc[t.index[0], ["y_true", "subconcept"]] = [1, "lone"]
    t.to_csv(train, index=False)
    s = SubconceptSettings(n_estimators=5, n_bootstrap=0)
    with pytest.warns(UserWarning, match=r"train\.csv: class-1 subconcept\(s\) 'lone' have a si"):
        own = fit_and_evaluate(train, test, settings=s)
    assert own.model.train_sizes_["lone"] == {"class": 1, "n": 1}
