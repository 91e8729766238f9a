"""medeval/evaluation/per_subconcept.py: the per-subconcept table and each class's worst
subconcept, on eight rows counted by hand."""

import numpy as np
import pytest

from medeval.evaluation.per_subconcept import class_indicators, per_subconcept
from medeval.evaluation.plan import _plan

Y = np.array([0, 0, 0, 1, 1, 1, 1, 1])
PRED = np.array([0, 0, 1, 1, 1, 0, 1, 0])
SC = ["n", "n", "n", "a", "a", "a", "b", "b"]


def test_class_indicators_are_one_column_per_class():
    np.testing.assert_array_equal(class_indicators(np.array([0, 1, 1])), [[1, 0], [0, 1], [0, 1]])


def test_the_table_orders_by_class_then_size_and_the_worst_is_named():
    notes = []
    result = per_subconcept(Y, PRED, _plan(Y, SC, None, None), None, 0.95, notes)
    table = result.table
    assert table["subconcept"].tolist() == ["n", "a", "b"]  # class 0, then class 1 by test size
    assert table["n_test"].tolist() == [3, 3, 2]
    np.testing.assert_allclose(table["recall"], [2 / 3, 2 / 3, 1 / 2])
    # Clopper–Pearson 95% for 2 of 3
    assert (table["low"][0], table["high"][0]) == pytest.approx((0.094299, 0.991596), abs=1e-6)
    assert result.class_recall == pytest.approx({0: 2 / 3, 1: 3 / 5})
    worst = {w["class"]: w for w in result.worst}
    assert worst[1]["subconcept"] == "b" and worst[1]["gap"] == pytest.approx(0.1)
    assert worst[1]["source"] == "true" and notes == []


def test_without_subconcepts_only_the_class_recalls():
    result = per_subconcept(Y, PRED, _plan(Y, None, None, None), None, 0.95, [])
    assert result.table.empty and "recall" in result.table.columns
    assert result.worst == [] and result.class_recall == pytest.approx({0: 2 / 3, 1: 3 / 5})
