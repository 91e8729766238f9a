"""Utility weights (docs/method.md, "Utility weights")."""

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


# -- class-conditional weights (docs/method.md, "Label-free scores")
# ------------------------------------------------------


def test_class_conditional_weights_renormalise_within_the_class():
    from medeval.weights import class_conditional_weights, class_posteriors

    u = utilities_from_train_sizes(SIZES)  # utilities: healthy 1, benign 1, A 4, B 8, C 32
    q = pd.DataFrame(
        [
            [0.5, 0.1, 0.2, 0.2, 0.0],  # class 1: (0.2·4 + 0.2·8) / 0.4 = 6
            [0.5, 0.1, 0.2, 0.2, 0.0],  # class 0: majority weights are exactly 1
            [0.0, 0.0, 0.0, 0.0, 1.0],  # class 0 with no mass on class 0: mean utility = 1
            [1.0, 0.0, 0.0, 0.0, 0.0],  # class 1 with no mass on class 1: (4 + 8 + 32) / 3
        ],
        columns=["healthy", "benign", "A", "B", "C"],
    )
    y = np.array([1, 0, 0, 1])
    a = class_conditional_weights(q, u, y)
    assert torch.allclose(a, torch.tensor([6.0, 1.0, 1.0, 44 / 3], dtype=torch.float64))
    cp = class_posteriors(q, u, y)
    assert cp.fallback.tolist() == [False, False, True, True]
    assert torch.allclose(cp.q.sum(-1), torch.ones(4, dtype=torch.float64))
    # zero outside the instance's own class
    sides = torch.tensor(u.sides)
    assert bool((cp.q[torch.tensor(y)[:, None] != sides[None, :]] == 0).all())


def test_class_conditional_weights_batched_equal_one_at_a_time():
    from medeval.weights import class_conditional_weights

    u = utilities_from_train_sizes(SIZES)
    rng = np.random.default_rng(3)
    q = rng.dirichlet(np.ones(5), size=(3, 40))
    y = rng.integers(0, 2, size=(3, 40))
    batched = class_conditional_weights(q, u, y)
    rows = torch.stack([class_conditional_weights(q[b], u, y[b]) for b in range(3)])
    assert batched.shape == (3, 40) and torch.equal(batched, rows)


def test_class_conditional_weights_reject_bad_labels():
    from medeval.weights import class_conditional_weights

    u = utilities_from_train_sizes(SIZES)
    q = np.full((2, 5), 0.2)
    with pytest.raises(ValueError, match="only 0 and 1"):
        class_conditional_weights(q, u, [0, 2])
    with pytest.raises(ValueError, match="y_true has shape"):
        class_conditional_weights(q, u, [0, 1, 1])


def _simulate(seed: int, n: int = 2000):
    """Exact posteriors: 1-D Gaussians per subconcept; the classifier misses minority instances
    that look like a majority subconcept (the hard, rare subconcept d sits next to b)."""
    prior = np.array([0.6, 0.25, 0.1, 0.05])
    mu = np.array([0.0, 1.0, 2.5, 1.5])
    sides = np.array([0, 0, 1, 1])
    rng = np.random.default_rng(seed)
    s = rng.choice(4, n, p=prior)
    x = rng.normal(mu[s], 1.0)
    lik = prior * np.exp(-0.5 * (x[:, None] - mu) ** 2)
    return s, sides[s], (x > 1.6).astype(np.int64), lik / lik.sum(1, keepdims=True)


def test_class_conditional_score_is_unbiased_where_the_papers_pba_is_not():
    from medeval.metrics import balanced_accuracy
    from medeval.weights import class_conditional_weights

    u = utilities([600, 250, 100, 50], [0, 0, 1, 1], ["a", "b", "c", "d"])
    diffs = []
    for seed in range(200):
        s, y, yp, q = _simulate(seed)

        def ba(w, y=y, yp=yp):
            return float(balanced_accuracy(y, yp, sample_weight=w))

        wba = ba(u.values[s])
        diffs.append(
            (
                ba(predicted_weights(q, u).numpy()) - wba,
                ba(class_conditional_weights(q, u, y).numpy()) - wba,
            )
        )
    d = np.array(diffs)
    p_bias, c_bias = d.mean(0)
    c_se = d[:, 1].std(ddof=1) / np.sqrt(len(d))
    assert p_bias > 0.02  # the paper's pBA is pulled up toward the majority utility
    assert abs(c_bias) < 4 * c_se + 1e-3 and abs(c_bias) < p_bias / 20
    assert np.abs(d[:, 1]).mean() < np.abs(d[:, 0]).mean() / 4


def test_majority_weights_are_exactly_one():
    from medeval.weights import class_conditional_weights

    u = utilities_from_train_sizes(SIZES)
    rng = np.random.default_rng(5)
    q = rng.dirichlet(np.ones(5), 500)
    y = rng.integers(0, 2, 500)
    a = class_conditional_weights(q, u, y)
    assert bool((a[torch.tensor(y) == 0] == 1.0).all())  # not 1 up to rounding
    assert bool((a[torch.tensor(y) == 1] > 1.0).all())
