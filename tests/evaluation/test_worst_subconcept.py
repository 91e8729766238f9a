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
