"""The subconcept model's within-class quality."""

import numpy as np
import pytest
from reference_rows import NAMES, SIDES, SIZES
from reference_rows import rows as _data
from sklearn.metrics import balanced_accuracy_score

from medeval.evaluation.quality import weak_model_warning, within_class_balanced_accuracy
from medeval.weights import utilities_from_train_sizes


@pytest.mark.parametrize("seed", range(5))
def test_within_class_balanced_accuracy_equals_sklearn_on_each_class(seed):
    y, sc, q = _data(seed)
    u = utilities_from_train_sizes(SIZES)
    got = within_class_balanced_accuracy(y, sc, q, u)
    for c in (0, 1):
        rows = y == c
        cols = [n for n, s in zip(NAMES, SIDES, strict=True) if s == c]
        pred = np.array(cols)[q.loc[rows, cols].to_numpy().argmax(1)]
        assert got[f"class {c}"] == pytest.approx(balanced_accuracy_score(sc[rows], pred))


def test_weak_model_warning_names_the_class_and_its_accuracy():
    text = weak_model_warning("class 1", 0.512)
    assert "weak within class 1" in text and "0.51" in text and "understate" in text
