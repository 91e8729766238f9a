"""medeval/subconcept_model.py: subconcept posteriors from any scikit-learn classifier, and the
training sizes of a fit."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from medeval.errors import UserError
from medeval.subconcept_model import (
    SubconceptModel,
    checked_features,
    subconcept_classes,
    train_sizes,
)

# three subconcepts on one feature: "n" (class 0) near 0, "a" (class 1) near 5, "b" near 10
X = np.array([[0.0], [0.5], [1.0], [5.0], [5.5], [10.0], [10.5], [0.2]])
SC = ["n", "n", "n", "a", "a", "b", "b", "n"]
Y = [0, 0, 0, 1, 1, 1, 1, 0]


def test_columns_are_class_0_then_class_1_each_by_name_and_rows_sum_to_one():
    model = SubconceptModel(n_estimators=10, random_state=0).fit(X, SC, Y)
    assert model.classes_.tolist() == ["n", "a", "b"]
    assert model.class_of_.tolist() == [0, 1, 1] and model.counts_.tolist() == [4, 2, 2]
    q = model.predict_proba(np.array([[0.1], [10.2]]))
    np.testing.assert_allclose(q.sum(1), 1.0)
    assert q[0].argmax() == 0 and q[1].argmax() == 2
    assert list(model.posteriors(X[:1]).columns) == ["n", "a", "b"]


def test_train_sizes_of_a_fit_equal_the_function():
    model = SubconceptModel(LogisticRegression()).fit(X, SC, Y)
    expected = {"n": {"class": 0, "n": 4}, "a": {"class": 1, "n": 2}, "b": {"class": 1, "n": 2}}
    assert model.train_sizes_ == train_sizes(SC, Y) == expected
    assert list(model.train_sizes_) == ["n", "a", "b"]
    assert model.utilities_.names == ("n", "a", "b")


def test_a_subconcept_in_both_classes_is_named_with_a_row_of_each():
    with pytest.raises(
        UserError,
        match=r"subconcept 'a' has rows of both classes \(row 1: class 1, row 2: class 0\)",
    ):
        subconcept_classes(np.array(["n", "a", "a"]), np.array([0, 1, 0]))


def test_bad_inputs_are_refused_naming_what_is_wrong():
    with pytest.raises(UserError, match=r"^row 1: class 2 is not 0 or 1$") as info:
        SubconceptModel().fit(X[:2], SC[:2], np.array([0, 2]))
    assert "np." not in str(info.value)
    with pytest.raises(UserError, match="one of each per row"):
        SubconceptModel().fit(X, SC[:3], Y)
    with pytest.raises(
        UserError, match=r"X\[1, 0\] \(row 1\) is nan; features must be finite"
    ) as info:
        checked_features([[1.0], [np.nan]])
    assert "np." not in str(info.value)
    with pytest.raises(UserError, match=r"X must be \(N, F\)"):
        checked_features([1.0, 2.0])
    model = SubconceptModel(n_estimators=5).fit(X, SC, Y)
    with pytest.raises(UserError, match="X has 2 features but the model was fitted on 1"):
        model.predict_proba(np.zeros((1, 2)))
