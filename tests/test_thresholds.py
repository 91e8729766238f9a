"""One thresholding rule (score >= threshold) and validation BA through medeval's own metric."""

import math

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score

from medeval.evaluation import evaluate_predictions
from medeval.metrics import UndefinedMetricWarning
from medeval.metrics.streaming import SubconceptScores
from medeval.scores import labels_from_scores

SIZES = {"neg": {"class": 0, "n": 10}, "pos": {"class": 1, "n": 5}}


def test_a_score_equal_to_the_threshold_is_class_1():
    s = np.array([0.2, 0.5, 0.5000001, 0.4999999, 1.0])
    np.testing.assert_array_equal(labels_from_scores(s, 0.5), [0, 1, 1, 0, 1])
    assert labels_from_scores(s, 0.5).dtype == np.int64


def test_evaluation_and_the_rule_agree_on_ties_at_the_threshold():
    y = np.array([0, 0, 1, 1, 1, 0])
    s = np.array([0.5, 0.1, 0.5, 0.9, 0.2, 0.5])  # forests score exactly 0.5 often
    ev = evaluate_predictions(y, y_score=s, threshold=0.5, n_bootstrap=0)
    ref = balanced_accuracy_score(y, labels_from_scores(s, 0.5))
    assert ev.scores["BA"] == pytest.approx(ref, abs=1e-12)


def _validation_ba(y, logit, t):
    """Validation BA as training computes it: the streaming metric on sigmoid(logit)."""
    import torch

    metric = SubconceptScores(SIZES, scores=["BA"], threshold=t)
    metric.update(torch.sigmoid(torch.as_tensor(logit, dtype=torch.float64)), torch.as_tensor(y))
    return float(metric.compute()["BA"])


@pytest.mark.parametrize("seed", range(20))
def test_validation_ba_equals_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 60))
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    logit = np.round(rng.normal(0, 1.5, n), 1).astype(np.float32)  # ties included
    t = float(rng.choice([0.3, 0.5, 0.7]))
    ref = balanced_accuracy_score(y, (1 / (1 + np.exp(-logit.astype(np.float64))) >= t))
    assert _validation_ba(y, logit, t) == pytest.approx(ref, abs=1e-12)


def test_validation_ba_of_one_class_is_nan():
    with pytest.warns(UndefinedMetricWarning):
        value = _validation_ba(np.ones(5, int), np.zeros(5, np.float32), 0.5)
    assert math.isnan(value)


def test_discovered_path_labels_a_score_at_the_threshold_as_class_1():
    import pandas as pd

    from medeval.protocol.discovered import label_free_scores

    y = np.array([0, 0, 1, 1, 1, 0])
    s = np.array([0.5, 0.1, 0.5, 0.9, 0.2, 0.5])
    q = pd.DataFrame(
        {"n": [1, 1, 0, 0, 0, 1.0], "a": [0, 0, 0.5, 1, 0, 0], "b": [0, 0, 0.5, 0, 1, 0]}
    )
    sizes = {"n": {"class": 0, "n": 10}, "a": {"class": 1, "n": 4}, "b": {"class": 1, "n": 2}}
    scores, _ = label_free_scores(y, s, q, sizes)
    ref = evaluate_predictions(
        y, y_score=s, threshold=0.5, posteriors=q, train_sizes=sizes, n_bootstrap=0
    )
    assert scores["cBA"] == pytest.approx(ref.scores["cBA"], abs=1e-12)
