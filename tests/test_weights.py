"""Utility weights (SPEC §3)."""

import numpy as np
import pandas as pd
import pytest
import torch

from medeval.weights import (
    predicted_weights,
    true_weights,
    utilities,
    utilities_from_train_sizes,
)

SIZES = {
    "healthy": {"class": 0, "n": 800},
    "benign": {"class": 0, "n": 400},
    "A": {"class": 1, "n": 200},
    "B": {"class": 1, "n": 100},
    "C": {"class": 1, "n": 25},
}


def test_utilities_formula():
    u = utilities_from_train_sizes(SIZES)
    # u_s = max majority size / |s| for minority; 1 for majority
    assert dict(zip(u.names, u.values, strict=True)) == {
        "healthy": 1.0,
        "benign": 1.0,
        "A": 4.0,
        "B": 8.0,
        "C": 32.0,
    }
    assert u.minority == ("A", "B", "C") and u.majority == ("healthy", "benign")


def test_true_weights_look_up_each_instance():
    u = utilities_from_train_sizes(SIZES)
    w = true_weights(["C", "healthy", "A"], u)
    assert w.tolist() == [32.0, 1.0, 4.0] and w.dtype == torch.float64
    with pytest.raises(ValueError, match="row 1: unknown subconcept 'D'"):
        true_weights(["A", "D"], u)


def test_predicted_weights_are_expected_utility_and_soft():
    u = utilities_from_train_sizes(SIZES)
    q = pd.DataFrame(
        [[1, 0, 0, 0, 0], [0, 0, 0.5, 0, 0.5], [0, 0, 0, 1, 0]],
        columns=["healthy", "benign", "A", "B", "C"],
    )
    a = predicted_weights(q[["C", "A", "B", "benign", "healthy"]], u)  # order-free by name
    assert a.tolist() == [1.0, 18.0, 8.0]


def test_posterior_validation():
    u = utilities_from_train_sizes(SIZES)
    good = np.full((2, 5), 0.2)
    with pytest.raises(ValueError, match="row 1 sums to 0.9"):
        predicted_weights(np.array([[0.2] * 5, [0.2, 0.2, 0.2, 0.2, 0.1]]), u)
    bad = good.copy()
    bad[0, 2] = -0.1
    bad[0, 3] = 0.5
    with pytest.raises(ValueError, match="subconcept 'A'"):
        predicted_weights(bad, u)
    with pytest.raises(ValueError, match=r"missing \['C'\], unknown \['Z'\]"):
        predicted_weights(good, u, columns=["healthy", "benign", "A", "B", "Z"])
    with pytest.raises(ValueError, match="5 subconcepts"):
        predicted_weights(np.full((2, 4), 0.25), u)


def test_subconcept_without_training_instances_is_a_clear_error():
    with pytest.raises(ValueError, match="'B'.*no training instances"):
        utilities([10, 5, 0], [0, 1, 1], ["h", "A", "B"])
    with pytest.raises(ValueError, match="no majority subconcept"):
        utilities([10, 5], [1, 1])
    with pytest.raises(ValueError, match="sides must be 0"):
        utilities([10, 5], [0, 2])
