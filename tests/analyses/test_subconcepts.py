"""medeval/analyses/subconcepts.py: do the label-free per-subconcept recalls hold the true
test recall? On one record counted by hand."""

import math

import pytest

from medeval.analyses.subconcepts import (
    subconcept_agreement,
    subconcept_agreement_markdown,
    subconcept_rows,
)


def _sc(name, cls, n_train, recall, est, low, high):
    return {
        "subconcept": name,
        "class": cls,
        "n_train": n_train,
        "recall": recall,
        "est_recall": est,
        "est_low": low,
        "est_high": high,
    }


RECORD = {
    "collection": "toy",
    "dataset": "d",
    "method": "none",
    "split": 0,
    "per_subconcept": [
        _sc("M", 0, 10, 0.9, 0.85, 0.8, 0.95),
        _sc("A", 1, 6, 0.7, 0.75, 0.6, 0.8),
        _sc("B", 1, 2, 0.4, 0.6, 0.5, 0.7),  # the smallest minority one, missed
        _sc("C", 1, 1, math.nan, 0.5, 0.4, 0.6),  # no true recall: left out
    ],
}


def test_rows_mark_the_smallest_minority_subconcept_and_skip_those_without_truth():
    rows = subconcept_rows([RECORD])
    assert rows["subconcept"].tolist() == ["M", "A", "B"]
    assert rows["smallest"].tolist() == [False, False, True]
    assert rows["dataset"].unique().tolist() == ["d"] and rows["r_recall"].isna().all()


def test_agreement_by_hand():
    table = subconcept_agreement([RECORD]).set_index("group")
    assert table["estimator"].unique().tolist() == ["est_recall"]  # no r_recall in the record
    every = table.loc["all"]
    assert every["n"] == 3 and every["coverage_pct"] == pytest.approx(200 / 3)
    assert every["bias"] == pytest.approx(0.2 / 3) and every["mae"] == pytest.approx(0.1)
    assert every["mean_width"] == pytest.approx(0.55 / 3)
    assert every["worst_named_pct"] == 100.0  # B: lowest by the estimate and by the truth
    minority = table.loc["minority"]
    assert minority["n"] == 2 and minority["coverage_pct"] == 50.0
    assert minority["bias"] == pytest.approx(0.125)
    smallest = table.loc["smallest minority"]
    assert smallest["n"] == 1 and smallest["coverage_pct"] == 0.0
    assert smallest["bias"] == pytest.approx(0.2)


def test_no_records_give_an_empty_table_and_no_section():
    table = subconcept_agreement([], by_dataset=True)
    assert table.empty and list(table.columns)[:3] == ["subconcepts", "collection", "dataset"]
    assert subconcept_agreement_markdown(table) == ""
    section = subconcept_agreement_markdown(subconcept_agreement([RECORD]))
    assert section.startswith("### Per-subconcept recall") and "est_recall" in section
