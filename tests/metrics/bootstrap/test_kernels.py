"""medeval/metrics/bootstrap/kernels.py: the replicates' counts drawn within strata and
clusters, and the scores made from their sums."""

import numpy as np
import torch

from medeval.metrics.bootstrap import BatchedBootstrap

from .problems import problem


def test_counts_are_multinomial_within_strata():
    y, yp, s, sc, weights, subsets = problem(1)
    boot = BatchedBootstrap(y, y_pred=yp, y_score=s, weights=weights, subsets=subsets, strata=sc)
    counts = torch.cat(list(boot.iter_counts(50, seed=0))).numpy()
    assert np.all(counts == np.round(counts)) and counts.min() >= 0
    for k in range(5):  # every replicate keeps each stratum's size
        assert np.all(counts[:, sc == k].sum(1) == (sc == k).sum())
    # each instance is drawn on average once
    assert abs(counts.mean() - 1) < 0.02


def test_cluster_counts_are_shared_by_a_clusters_instances():
    y, yp, s, _sc, weights, subsets = problem(2)
    clusters = np.where(y == 1, 1000, 0) + np.arange(len(y)) // 4
    boot = BatchedBootstrap(
        y, y_pred=yp, y_score=s, weights=weights, subsets=subsets, clusters=clusters
    )
    counts = torch.cat(list(boot.iter_counts(20, seed=0))).numpy()
    for c in np.unique(clusters):
        block = counts[:, clusters == c]
        assert np.all(block == block[:, :1])


def test_rare_subconcept_missing_from_a_replicate_gives_nan_not_zero():
    y = np.r_[np.zeros(30), np.ones(10), 1].astype(int)  # one instance of a rare subconcept
    sc = np.r_[np.zeros(30), np.ones(10), 2].astype(int)
    s = np.linspace(0, 1, len(y))
    subsets = {"full": np.ones(len(y), bool), "sub_2": (y == 0) | (sc == 2)}
    boot = BatchedBootstrap(
        y,
        y_pred=(s > 0.5).astype(int),
        y_score=s,
        weights={"": np.ones(len(y))},
        subsets=subsets,
        subconcept=sc,
    )
    with np.errstate(all="ignore"):
        rep = boot.run(200, seed=0)
    sub = rep.scores[("", "BA")][:, 1]
    # P(rare instance not drawn) = (1 - 1/11)^11 ≈ 0.35
    n_nan = int(torch.isnan(sub).sum())
    assert 40 < n_nan < 100
    assert not torch.isnan(rep.scores[("", "BA")][:, 0]).any()


def test_torch_generator_draws_multinomial_counts_too():
    y, yp, s, sc, weights, subsets = problem(4)
    boot = BatchedBootstrap(
        y, y_pred=yp, y_score=s, weights=weights, subsets=subsets, strata=sc, generator="torch"
    )
    counts = torch.cat(list(boot.iter_counts(40, seed=0))).numpy()
    for k in range(5):
        assert np.all(counts[:, sc == k].sum(1) == (sc == k).sum())
    again = torch.cat(list(boot.iter_counts(40, seed=0))).numpy()
    assert np.array_equal(counts, again)


def test_replicate_r_is_row_r_of_its_blocks_draw():
    """The stream is defined by whole draws: replicate ``r`` is row ``r % block`` of
    ``Generator(PCG64(SeedSequence(seed, spawn_key=(r // block,)))).integers(0, k, (block, k))``
    for each stratum of ``k`` columns in turn, whatever the chunks (the kernel draws it row by
    row)."""
    y, yp, s, _sc, weights, subsets = problem(3)
    boot = BatchedBootstrap(y, y_pred=yp, y_score=s, weights=weights, subsets=subsets)
    assert boot.identity  # within-class strata: unit a + i is column a + i of the plan
    block, n, seed = boot._draw_block(), 2 * boot._draw_block() + 3, 7
    got = torch.cat(list(boot.iter_counts(n, seed=seed, chunk_size=5))).numpy()
    expected = np.zeros((n, len(y)))
    for r in range(n):
        rng = np.random.Generator(
            np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(r // block,)))
        )
        for a, e in boot.blocks:
            rows = rng.integers(0, e - a, (block, e - a))
            np.add.at(expected[r], boot.perm[a + rows[r % block]], 1)
    np.testing.assert_array_equal(got, expected)
