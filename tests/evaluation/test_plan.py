"""medeval/evaluation/plan.py: what an evaluation can compute from its inputs (the module
has no public function; its plan is what evaluate_predictions builds first)."""

import numpy as np
import pandas as pd
import pytest

from medeval.errors import UserError
from medeval.evaluation.plan import _aliases, _name_codes, _plan

Y = np.array([0, 0, 1, 1, 1, 1])
SC = ["neg", "neg", "rare", "big", "big", "big"]


def test_without_sizes_or_posteriors_only_the_unweighted_scores_and_the_subsets():
    plan = _plan(Y, SC, None, None)
    assert list(plan.weights) == [""]
    np.testing.assert_array_equal(plan.weights[""], np.ones(6))
    assert set(plan.unavailable) == {"w", "p", "c"}
    assert "no training subconcept sizes" in plan.unavailable["w"]
    assert plan.sc_names == ("big", "neg", "rare")
    assert plan.sc_side == {"big": 1, "neg": 0, "rare": 1}
    np.testing.assert_array_equal(plan.sc_codes, [1, 1, 2, 0, 0, 0])
    # sub_i = the majority class and minority subconcept i, the largest (by test size) first
    assert plan.subset_subconcept == {"full": None, "sub_1": "big", "sub_2": "rare"}
    np.testing.assert_array_equal(plan.subsets["sub_2"], [True, True, True, False, False, False])


def test_without_subconcepts_there_is_only_the_full_set():
    plan = _plan(Y, None, None, None)
    assert list(plan.subsets) == ["full"] and plan.sc_names == () and plan.sc_codes is None


def test_a_subconcept_in_both_classes_is_refused():
    with pytest.raises(UserError, match="subconcept 'neg' holds instances of both classes"):
        _plan(Y, ["neg", "neg", "neg", "big", "big", "big"], None, None)


def test_a_subconcept_list_of_the_wrong_length_is_refused():
    with pytest.raises(UserError, match=r"one entry per instance \(6\)"):
        _plan(Y, SC[:5], None, None)


def test_categorical_names_drop_unused_categories_and_merge_by_text():
    cat = pd.Categorical(["b", "a", "b"], categories=["a", "b", "unused"])
    names, codes = _name_codes(cat, 3)
    assert names.tolist() == ["a", "b"] and codes.tolist() == [1, 0, 1]
    with pytest.raises(UserError, match="subconcept is missing at index 1"):
        _name_codes(pd.Categorical(["a", None, "a"]), 3)


def test_aliases_add_largest_and_smallest_when_there_are_minority_subsets():
    assert _aliases(["full"]) == [("full", 0)]
    assert _aliases(["full", "sub_1", "sub_2"]) == [
        ("full", 0),
        ("sub_1", 1),
        ("sub_2", 2),
        ("largest", 1),
        ("smallest", 2),
    ]
