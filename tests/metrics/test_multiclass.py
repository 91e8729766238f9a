"""The subconcept model's quality from one confusion matrix (medeval.metrics.multiclass): the
benchmark's record and the evaluation's within-class BA share it; undefined is NaN + warning."""

import math

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, f1_score

from medeval.metrics import UndefinedMetricWarning
from medeval.metrics.multiclass import confusion, macro_balanced_accuracy, macro_f1, within_class_ba
from medeval.protocol.forest import subconcept_model_scores


def test_macro_f1_scores_the_subconcepts_seen_as_sklearn_does():
    rng = np.random.default_rng(0)
    codes = rng.choice([0, 1, 3], 200)  # code 2 neither true nor predicted
    proba = rng.dirichlet(np.ones(4), 200)
    proba[:, 2] = 0
    proba /= proba.sum(1, keepdims=True)
    got = subconcept_model_scores(codes, proba)
    pred = proba.argmax(1)
    assert got["f1_macro"] == pytest.approx(f1_score(codes, pred, average="macro"))
    assert got["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(codes, pred))


def test_no_rows_is_nan_with_a_warning_not_zero():
    cm = confusion(np.array([], int), np.array([], int), 3)
    with pytest.warns(UndefinedMetricWarning, match="undefined"):
        assert math.isnan(macro_f1(cm))
    with pytest.warns(UndefinedMetricWarning, match="undefined"):
        assert math.isnan(macro_balanced_accuracy(cm))


def test_within_class_ba_is_the_balanced_accuracy_within_each_class():
    y = np.array([0, 0, 0, 1, 1, 1, 1])
    codes = np.array([0, 1, 1, 2, 2, 3, 3])
    q = np.eye(4)[[0, 0, 1, 2, 3, 3, 3]]
    got = within_class_ba(y, codes, q)
    assert got == {"class 0": pytest.approx(0.75), "class 1": pytest.approx(0.75)}
