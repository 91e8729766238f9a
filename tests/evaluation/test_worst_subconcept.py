"""The worst subconcept of each class and its gap below the class's recall."""

import pytest
from subconcept_recall_rows import _data, _evaluate

from medeval.evaluation.worst_subconcept import SubconceptRecall, describe_worst


def test_worst_subconcept_and_gap_come_from_the_same_replicates():
    t, r = _data(3, n_test=2000)  # about 35 test rows of e
    for labels, source, col in ((True, "true", "recall"), (False, "rectified", "r_recall")):
        ev = _evaluate(t, r, labels=labels, n_bootstrap=300)
        ps = ev.per_subconcept
        assert [w["class"] for w in ev.worst_subconcepts] == [0, 1]
        for w in ev.worst_subconcepts:
            rows = ps[ps["class"] == w["class"]]
            lowest = rows.loc[rows[col].idxmin()]
            assert w["subconcept"] == lowest.subconcept and w["source"] == source
            hit = t["y_pred"] == t["y_true"]
            class_recall = hit[t["y_true"] == w["class"]].mean()
            assert w["gap"] == pytest.approx(class_recall - lowest[col], abs=1e-12)
            assert w["gap_low"] <= w["gap"] <= w["gap_high"]
            assert w["gap_low"] < w["gap_high"]
            if source == "rectified":  # the interval after the choice: at least the marginal
                assert w["low"] <= lowest.r_low and w["high"] >= lowest.r_high
                assert w["subconcept"] in w["could_be_worst"]
                assert w["verdict"] == lowest.r_verdict
        # e is found 42 % of the time against 80 % for its class: the true gap's interval says so
        worst1 = ev.worst_subconcepts[1]
        assert worst1["subconcept"] == "e" and (worst1["gap_low"] > 0 or not labels)
        frame = ev.by_subconcept()
        assert isinstance(frame, SubconceptRecall)
        assert frame.group_min().to_dict() == {
            w["class"]: w["recall"] for w in ev.worst_subconcepts
        }
        assert frame.difference()[1] == pytest.approx(worst1["gap"])
        assert frame.by_group.loc["e", "source"] == source
        words = "below class 1 as a whole" if labels else "e is below its class"
        assert words in describe_worst(worst1)


def _table(recalls, verdicts, names=("a", "b", "c")):
    import numpy as np
    import pandas as pd

    n = len(recalls)
    return pd.DataFrame(
        {"subconcept": list(names[:n]), "class": [1] * n, "recall": recalls,
         "low": np.array(recalls) - 0.1, "high": np.array(recalls) + 0.1,
         "r_verdict": verdicts}
    )  # fmt: skip


@pytest.mark.parametrize(
    ("recalls", "verdicts", "named"),
    [
        # tied at the lowest recall: the one below its class is named, whatever its name
        ([2 / 3, 4 / 6, 0.9], ["not known", "below", "not below"], "b"),
        ([2 / 3, 4 / 6, 0.9], ["not below", "not known", "below"], "b"),
        # no tie: the lowest recall, whatever its verdict
        ([0.5, 0.6, 0.9], ["not known", "below", "below"], "a"),
        # tied, verdicts equal or none: the first by name
        ([0.5, 0.5, 0.9], ["below", "below", "below"], "a"),
    ],
)
def test_of_subconcepts_tied_at_the_lowest_recall_a_below_one_is_named(recalls, verdicts, named):
    from medeval.evaluation.worst_subconcept import worst_subconcepts

    (w,) = worst_subconcepts(_table(recalls, verdicts), {1: 0.8}, {}, None, confidence=0.95)
    assert w["subconcept"] == named and w["recall"] == pytest.approx(min(recalls))
    assert w["gap"] == pytest.approx(0.8 - min(recalls))


def test_the_worst_sentence_has_no_dangling_source_and_no_signed_zero():
    entry = {"class": 1, "subconcept": "MEL", "recall": 0.6667, "low": 0.53, "high": 0.78,
             "gap": 0.11, "gap_low": 0.02, "gap_high": 0.2, "source": "true"}  # fmt: skip
    said = describe_worst(entry)
    assert said == (
        "MEL: true recall 0.67 [0.53, 0.78], 0.11 below class 1 as a whole (gap [0.02, 0.20])"
    )
    level = describe_worst(entry | {"gap": -0.003, "gap_low": -0.004, "gap_high": 0.1})
    assert level.endswith("less than 0.01 above class 1 as a whole (gap [0.00, 0.10])"), level
    assert "level with class 1" in describe_worst(entry | {"gap": 0.0})
    assert "-0.00" not in level and "−0.00" not in level
    free = describe_worst(entry | {"source": "label-free"})
    assert free.startswith("MEL: label-free recall 0.67") and not free.endswith("label-free")
    below = {"subconcept": "AK", "recall": 0.5, "low": 0.4, "high": 0.6, "gap": 0.001}
    from medeval.evaluation.worst_subconcept import verdict_sentence

    text = verdict_sentence({"class": 1, "below": [below], "could_be_worst": ["AK"]})
    assert (
        text == "AK is below its class (recall 0.50 [0.40, 0.60], less than 0.01 below); "
        "could be worst: AK"
    )
