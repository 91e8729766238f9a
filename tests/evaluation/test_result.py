"""medeval/evaluation/result.py: an evaluation's result, its summary table, JSON form and the
scores it recommends."""

import dataclasses
import json
import math

import numpy as np
import pytest

from medeval.evaluation import evaluate_predictions
from medeval.scores import ALL_SCORES, RECOMMENDED

TRAIN = {"M": {"class": 0, "n": 300}, "A": {"class": 1, "n": 60}, "B": {"class": 1, "n": 12}}


@pytest.fixture(scope="module")
def ev():
    rng = np.random.default_rng(0)
    sc = rng.choice(["M", "A", "B"], size=200, p=[0.7, 0.22, 0.08])
    y = (sc != "M").astype(int)
    score = np.clip(0.8 * y + rng.normal(0.1, 0.25, 200), 0, 1)
    return evaluate_predictions(y, y_score=score, subconcept=sc, train_sizes=TRAIN, n_bootstrap=20)


def test_the_table_has_every_score_with_its_interval_and_why_it_is_missing(ev):
    table = ev.table()
    assert table["score"].tolist() == list(ALL_SCORES)
    row = table.set_index("score").loc["BA"]
    assert row["value"] == ev.scores["BA"] and row["low"] <= row["value"] <= row["high"]
    assert table.set_index("score").loc["pBA", "note"] == ev.unavailable["pBA"] != ""


def test_to_dict_is_json_with_none_for_what_is_undefined(ev):
    d = json.loads(json.dumps(ev.to_dict(), allow_nan=False))
    assert list(d["scores"]) == list(ALL_SCORES)
    assert d["scores"]["pBA"] is None and d["scores"]["BA"] == pytest.approx(ev.scores["BA"])
    assert d["n"] == 200 and d["n_positive"] == ev.n_positive
    assert d["recommended"] == {**RECOMMENDED, "per_subconcept": "recall"}
    assert d["rectification"] is None
    assert d["intervals"]["BA"]["n_undefined"] == 0


def test_without_rectified_scores_the_class_conditional_ones_are_recommended(ev):
    assert ev.recommended == dict(RECOMMENDED)
    assert ev.recommended_per_subconcept == "recall"


def test_weak_classes_are_the_weighted_ones_below_the_bar(ev):
    weak = dataclasses.replace(
        ev,
        subconcept_model={"class 0": 0.2, "class 1": 0.5},
        weighted_classes=["class 1"],
    )
    assert weak.weak_classes() == ["class 1"]
    nan = dataclasses.replace(ev, subconcept_model={"class 1": math.nan})
    assert nan.weak_classes() == []


def test_by_subconcept_gives_the_recommended_recall_of_each_subconcept(ev):
    frame = ev.by_subconcept()
    by_group = frame.by_group
    assert list(by_group.index) == ev.per_subconcept["subconcept"].tolist()
    np.testing.assert_allclose(by_group["recall"], ev.per_subconcept["recall"])
    assert set(by_group["source"]) == {"true"}
    assert frame.overall[1] == pytest.approx(ev.class_recall[1])
