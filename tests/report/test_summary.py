"""medeval/report/summary.py: the headline table, the per-split lines and the notes of a
run's summary."""

import math

from medeval.report.summary import (
    config_notes,
    interval_lines,
    summary_table,
    weak_model_notes,
)


def _summary(splits):
    per = {s: 0.8 for s in splits}
    return {
        "splits": splits,
        "scores": {
            "BA": {"mean": 0.75, "sd": 0.05, "per_split": per},
            "cBA": {"mean": 0.7, "sd": math.nan, "per_split": per},
            "cF1": {"mean": math.nan, "sd": None, "per_split": {s: math.nan for s in splits}},
            "cAUC": {"mean": 0.9, "sd": 0.01, "per_split": per},
            "rBA": {"mean": 0.65, "sd": 0.02, "per_split": per},
        },
        "intervals": {splits[0]: {"cBA": {"low": 0.6, "high": 0.8}}},
        "reference": {splits[0]: {"n": 40, "source": "validation"}},
    }


def test_config_notes_flag_synthetic_data_and_an_untrained_backbone():
    notes = config_notes({"data": {"source": "synthetic"}, "model": {"backbone": "resnet18"}})
    assert len(notes) == 2
    assert notes[0].startswith("DATA ARE SYNTHETIC")
    assert "resnet18 backbone was RANDOMLY INITIALISED" in notes[1]
    pretrained = {"data": {"source": "keel"}, "model": {"backbone": "x", "pretrained": True}}
    assert config_notes(pretrained) == ["The x backbone: weights ImageNet (timm), trained."]
    lite = {"backbone": "efficientnet_lite0", "pretrained": True, "freeze": True}
    assert config_notes({"model": lite}) == [
        "The efficientnet_lite0 backbone: weights ImageNet (efficientnet-lite0 package), "
        "frozen (only the heads trained)."
    ]
    assert config_notes(None) == []


def test_summary_table_over_several_splits_marks_the_recommended_scores():
    lines = summary_table(_summary(["split_0", "split_1"])).splitlines()
    assert lines[0].endswith("over 2 splits")
    rows = {line.split()[0]: line for line in lines[1:6]}
    assert rows["BA"].split()[:3] == ["BA", "0.750", "0.050"]
    assert rows["cBA"].split()[2] == "—" and "<- recommended, label-free" in rows["cBA"]
    assert rows["cF1"].split()[1] == "NaN"
    assert "recommended" not in rows["BA"] and "rectified" not in rows["cBA"]


def test_summary_table_of_one_split_shows_its_bootstrap_interval():
    lines = summary_table(_summary(["split_0"])).splitlines()
    assert lines[0].endswith("95% interval (bootstrap)")
    cba = next(line for line in lines if line.startswith("cBA"))
    assert "[0.600, 0.800]" in cba


def test_interval_lines_give_each_split_its_scores_interval_and_reference_rows():
    lines = interval_lines(_summary(["split_0", "split_1"]))
    assert lines == [
        "split_0: cBA 0.800 [0.600, 0.800], cF1 NaN, cAUC 0.800, reference rows: 40 (validation)",
        "split_1: cBA 0.800, cF1 NaN, cAUC 0.800",
    ]


def test_weak_model_notes_warn_only_for_a_weighted_class_below_the_bar():
    metrics = {
        "subconcept_model": {"class 0": 0.5, "class 1": 0.55},
        "weighted_classes": ["class 1"],
    }
    notes = weak_model_notes("split_3", metrics)
    assert len(notes) == 1
    assert notes[0].startswith("split_3: the subconcept model is weak within class 1")
    assert "balanced accuracy 0.55" in notes[0]
    assert weak_model_notes("split_3", {"subconcept_model": {"class 1": 0.9}}) == []
