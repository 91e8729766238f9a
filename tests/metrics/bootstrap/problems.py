"""Small bootstrap problems shared by the tests of the batched bootstrap and its kernels."""

import numpy as np
import torch


def problem(seed, n=240, levels=7):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    sc = np.where(y == 1, rng.choice([2, 3, 4], n, p=[0.6, 0.3, 0.1]), rng.integers(0, 2, n))
    s = rng.integers(0, levels, n) / levels + 0.4 * y  # ties across and within classes
    yp = (s > 0.5).astype(int)
    u = np.array([1.0, 1.0, 1.0, 2.0, 6.0])[sc]
    a = rng.random(n) * 3 + 0.5
    subsets = {"full": np.ones(n, bool)} | {f"sub_{k}": (y == 0) | (sc == k) for k in (2, 3, 4)}
    return y, yp, s, sc, {"": np.ones(n), "w": u, "p": a}, subsets


def soft(y, seed):
    rng = np.random.default_rng(seed)
    sides = np.array([0, 0, 1, 1, 1])
    q = rng.dirichlet(np.ones(5), len(y)) * (sides[None, :] == y[:, None])
    return q / q.sum(1, keepdims=True)


def same_replicates(a, b) -> None:
    assert a.scores.keys() == b.scores.keys()
    for key in a.scores:  # bit for bit, NaN where either is NaN
        assert torch.equal(a.scores[key].nan_to_num(-1.0), b.scores[key].nan_to_num(-1.0)), key
    assert torch.equal(a.subconcept_recall.nan_to_num(-1.0), b.subconcept_recall.nan_to_num(-1.0))
    assert torch.equal(a.estimated_recall, b.estimated_recall)
