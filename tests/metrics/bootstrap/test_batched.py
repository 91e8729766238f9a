"""The batched bootstrap equals a scikit-learn loop over the very same replicates."""

import numpy as np
import pytest
import torch
from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

from medeval.metrics.bootstrap import BatchedBootstrap

from ..conftest import ALLOW_UNDEFINED
from .problems import problem, same_replicates, soft

ORACLES = {
    "BA": (balanced_accuracy_score, "pred"),
    "F1": (f1_score, "pred"),
    "AUC": (roc_auc_score, "score"),
}


@pytest.mark.filterwarnings(ALLOW_UNDEFINED)
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("stratify", ["class", "subconcept", "clusters"])
@pytest.mark.parametrize("generator", ["numpy", "torch"])  # torch = the path used on GPUs
@pytest.mark.parametrize("by_cell", ["dense", "cells", "all_cells"])  # dense: as on GPUs
def test_replicates_equal_sklearn_on_same_counts(seed, stratify, generator, by_cell, monkeypatch):
    # "" and "w" (utilities of the subconcept) are constant on cells: per-cell counts on the
    # CPU; "p" varies within cells: the dense product, or per-cell sums of c·p where its
    # columns are large ("all_cells"). All must give the scikit-learn numbers.
    from medeval.metrics.bootstrap import budget, planning

    monkeypatch.setattr(planning, "_counts_by_cell", lambda device: by_cell != "dense")
    if by_cell == "all_cells":  # and scratch for 2 rows at a time: several row groups
        monkeypatch.setattr(planning, "_CELL_MIN_BYTES", 0)
        monkeypatch.setattr(budget, "_AUC_BYTES", 2 * 8 * 241)
    y, yp, s, sc, weights, subsets = problem(seed)
    kw = {}
    if stratify == "subconcept":
        kw["strata"] = sc
    elif stratify == "clusters":  # patients holding 1-3 images each, one class per patient
        kw["clusters"] = np.where(y == 1, 1000, 0) + np.arange(len(y)) // 3
    boot = BatchedBootstrap(
        y,
        y_pred=yp,
        y_score=s,
        weights=weights,
        subsets=subsets,
        subconcept=sc,
        generator=generator,
        **kw,
    )
    reps = boot.run(9, seed=seed, chunk_size=4)
    counts = torch.cat(list(boot.iter_counts(9, seed=seed, chunk_size=4))).numpy()
    assert counts.shape == (9, len(y))
    for r in range(9):
        for key, w in weights.items():
            for j, m in enumerate(subsets.values()):
                sw = counts[r] * w * m
                for metric, (oracle, kind) in ORACLES.items():
                    got = reps.scores[(key, metric)][r, j].item()
                    if sw[y == 1].sum() == 0 or (metric != "F1" and sw[y == 0].sum() == 0):
                        assert np.isnan(got)
                        continue
                    ref = oracle(y, yp if kind == "pred" else s, sample_weight=sw)
                    assert got == pytest.approx(ref, abs=1e-9)
        for k in range(5):
            m = sc == k
            got = reps.subconcept_recall[r, k].item()
            if counts[r][m].sum() == 0:
                assert np.isnan(got)
                continue
            exp = (counts[r][m] * (yp[m] == y[m])).sum() / counts[r][m].sum()
            assert got == pytest.approx(exp, abs=1e-12)


def test_cluster_spanning_strata_is_rejected():
    y, yp, s, _sc, weights, subsets = problem(3)
    with pytest.raises(ValueError, match="cluster spans several strata"):
        BatchedBootstrap(
            y,
            y_pred=yp,
            y_score=s,
            weights=weights,
            subsets=subsets,
            clusters=np.arange(len(y)) // 5,
        )


def test_same_seed_same_numbers_independent_of_chunk_size():
    y, yp, s, _sc, weights, subsets = problem(5)
    boot = BatchedBootstrap(y, y_pred=yp, y_score=s, weights=weights, subsets=subsets)
    a = boot.run(30, seed=7, chunk_size=4).scores[("p", "AUC")]
    b = boot.run(30, seed=7, chunk_size=30).scores[("p", "AUC")]
    c = boot.run(30, seed=8).scores[("p", "AUC")]
    torch.testing.assert_close(a, b)
    assert not torch.allclose(a, c)


def test_unknown_generator_is_rejected():
    y, yp, s, _sc, weights, subsets = problem(0)
    with pytest.raises(ValueError, match="generator must be"):
        BatchedBootstrap(
            y, y_pred=yp, y_score=s, weights=weights, subsets=subsets, generator="mt19937"
        )


@pytest.mark.parametrize("clusters", [False, True])
def test_memory_budget_bounds_the_chunks_and_never_changes_the_numbers(clusters):
    y, yp, s, sc, weights, subsets = problem(6)
    kw = {"clusters": np.where(y == 1, 1000, 0) + np.arange(len(y)) // 3} if clusters else {}
    common = dict(y_pred=yp, y_score=s, weights=weights, subsets=subsets, subconcept=sc, **kw)
    small = BatchedBootstrap(y, memory_budget=5 * 8 * 4 * (len(y) + 1), **common)
    large = BatchedBootstrap(y, memory_budget=2**30, **common)
    chunks = small._chunks(23, None)
    assert sum(chunks) == 23 and len(chunks) > 1
    assert small._work_bytes(max(chunks)) <= small.memory_budget
    assert large._chunks(23, None) == [23]
    counts_small = torch.cat(list(small.iter_counts(23, seed=1))).numpy()
    assert np.array_equal(counts_small, torch.cat(list(large.iter_counts(23, seed=1))).numpy())
    a, b = small.run(23, seed=1), large.run(23, seed=1)  # the same counts; sums to a few ulp
    for key in a.scores:
        torch.testing.assert_close(a.scores[key], b.scores[key], equal_nan=True)
    torch.testing.assert_close(a.subconcept_recall, b.subconcept_recall)


def test_memory_budget_must_be_positive():
    y, yp, s, _sc, weights, subsets = problem(0)
    with pytest.raises(ValueError, match="memory_budget must be a positive"):
        BatchedBootstrap(y, y_pred=yp, y_score=s, weights=weights, subsets=subsets, memory_budget=0)


@pytest.mark.parametrize("seed", range(3))
def test_label_free_recall_replicates_equal_the_formula_on_same_counts(seed):
    """r̂_s = Σ c·q̃_s·hit / Σ c·q̃_s per replicate (docs/method.md,
    "Label-free scores"), batched = one at a time."""
    y, yp, s, _sc, weights, subsets = problem(seed)
    rng = np.random.default_rng(seed + 100)
    sides = np.array([0, 0, 1, 1, 1])
    q = rng.dirichlet(np.ones(5), len(y)) * (sides[None, :] == y[:, None])
    q /= q.sum(1, keepdims=True)
    q[:5] *= 0  # rows without mass are allowed: they add nothing
    boot = BatchedBootstrap(
        y, y_pred=yp, y_score=s, weights=weights, subsets=subsets, soft_subconcept=q
    )
    reps = boot.run(12, seed=seed, chunk_size=5)
    counts = torch.cat(list(boot.iter_counts(12, seed=seed, chunk_size=5))).numpy()
    hit = (yp == y).astype(float)
    expected = (counts @ (q * hit[:, None])) / (counts @ q)
    assert reps.estimated_recall.shape == (12, 5)
    np.testing.assert_allclose(reps.estimated_recall.numpy(), expected, rtol=0, atol=1e-12)
    whole = boot.run(12, seed=seed)  # another chunking gives the same replicates
    np.testing.assert_allclose(whole.estimated_recall.numpy(), expected, rtol=0, atol=1e-12)


def test_run_leaves_torch_thread_count_as_it_found_it():
    y, yp, s, _sc, weights, subsets = problem(2)
    boot = BatchedBootstrap(y, y_pred=yp, y_score=s, weights=weights, subsets=subsets)
    before = torch.get_num_threads()
    boot.run(12, seed=0, chunk_size=3)  # small chunks: one thread while running
    assert torch.get_num_threads() == before


def test_counts_do_not_depend_on_the_chunks_or_the_threads_and_resample_each_stratum():
    """Chunks run on several threads; neither changes a single count, and every replicate
    draws each stratum's (here each class's) size of units from it, in whole numbers."""
    y, yp, s, sc, weights, subsets = problem(4)
    kw = dict(y_pred=yp, y_score=s, weights=weights, subsets=subsets, subconcept=sc)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        ref = BatchedBootstrap(y, **kw).run(40, seed=3, chunk_size=7)
        torch.set_num_threads(2)
        boot = BatchedBootstrap(y, **kw)
        assert boot._workers() == 2
        got = boot.run(40, seed=3, chunk_size=7)
    finally:
        torch.set_num_threads(before)
    for k, v in ref.scores.items():
        torch.testing.assert_close(got.scores[k], v, rtol=0, atol=1e-13, equal_nan=True)
    counts = torch.cat(list(boot.iter_counts(40, seed=3, chunk_size=11)))
    assert torch.equal(counts, torch.cat(list(boot.iter_counts(40, seed=3, chunk_size=40))))
    assert torch.equal(counts, counts.round()) and bool((counts >= 0).all())
    for c in (0, 1):
        per_class = counts[:, torch.as_tensor(np.asarray(y) == c)].sum(1)
        assert torch.equal(per_class, torch.full_like(per_class, float((np.asarray(y) == c).sum())))


def test_an_error_in_one_chunk_stops_the_others_and_restores_the_threads(monkeypatch):
    y, yp, s, _sc, weights, subsets = problem(5)
    boot = BatchedBootstrap(y, y_pred=yp, y_score=s, weights=weights, subsets=subsets)
    calls = []
    fill = boot._fill_counts

    def failing(buf, start, b, state):
        calls.append(start)
        if start == 0:
            raise RuntimeError("chunk 0 failed")
        return fill(buf, start, b, state)

    monkeypatch.setattr(boot, "_fill_counts", failing)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with pytest.raises(RuntimeError, match="chunk 0 failed"):
            boot.run(400, seed=0, chunk_size=2)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert len(calls) < 200  # the chunks not yet started were dropped


@pytest.mark.filterwarnings(ALLOW_UNDEFINED)
@pytest.mark.parametrize("by_cell", [False, True])
def test_dense_matrix_built_in_row_blocks_equals_built_at_once(by_cell, monkeypatch):
    """The dense statistics (weightings varying within cells, soft memberships) are filled a
    block of rows at a time into their column-major storage: any block gives the same matrix
    and the same replicates as one block."""
    from medeval.metrics.bootstrap import planning

    monkeypatch.setattr(planning, "_counts_by_cell", lambda device: by_cell)
    y, yp, s, sc, weights, subsets = problem(11, n=300)
    kw = dict(y_pred=yp, y_score=s, weights=weights, subsets=subsets, subconcept=sc)
    kw["soft_subconcept"] = soft(y, 12)
    monkeypatch.setattr(BatchedBootstrap, "_build_rows", lambda self, k: 10**9)
    whole = BatchedBootstrap(y, **kw)
    monkeypatch.setattr(BatchedBootstrap, "_build_rows", lambda self, k: 7)  # 43 blocks
    blocks = BatchedBootstrap(y, **kw)
    # dense: p's 10 columns with cells, else all 30 weighted and 10 recall ones; then 10 soft
    assert whole._V.shape == (1 + len(y), 20 if by_cell else 50)
    assert torch.equal(whole._V, blocks._V) and not blocks._V.is_contiguous()  # column-major
    hit = (yp == y).astype(float)[whole.perm]
    q = kw["soft_subconcept"][whole.perm]
    expected = np.zeros((1 + len(y), 10))
    expected[1:, 0::2], expected[1:, 1::2] = q, q * hit[:, None]
    assert np.array_equal(whole._V[:, -10:].numpy(), expected)  # zero row, then q_s, q_s·hit
    same_replicates(whole.run(20, seed=3), blocks.run(20, seed=3))


@pytest.mark.filterwarnings(ALLOW_UNDEFINED)
def test_row_steps_and_shared_scratch_change_no_number(monkeypatch):
    """The cumsums of the AUC and the weighted counts of the per-cell sums are made a few rows
    at a time in one scratch region that they share; one row at a time gives the very same
    replicates as whole row groups."""
    from medeval.metrics.bootstrap import budget, planning

    monkeypatch.setattr(planning, "_CELL_MIN_BYTES", 0)  # "p": per-cell sums of c·p
    y, yp, s, sc, weights, subsets = problem(13, n=400)
    kw = dict(y_pred=yp, y_score=s, weights=weights, subsets=subsets, subconcept=sc)
    kw["soft_subconcept"] = soft(y, 14)
    grouped = BatchedBootstrap(y, **kw)
    assert grouped._per_cell and grouped._auc
    monkeypatch.setattr(budget, "_ROW_STEP_BYTES", 1)  # one row at a time
    single = BatchedBootstrap(y, **kw)
    buf = single._buffers(16)
    assert buf["ext"].shape[0] == buf["g2"].shape[0] == buf["cw"].shape[0] == 1
    assert buf["g1"].shape[0] == 16  # the AUC products keep their row groups
    assert buf["ext"].data_ptr() == buf["cw"].data_ptr()  # one region for both scratches
    regions = single._buffer_shapes(16, work=True)
    sizes = [sum(r * k for r, k in region.values()) for region in regions]
    assert single._buffer_numel(16) == sizes[0] + max(sizes[1:]) < sum(sizes)
    a, b = grouped.run(30, seed=5, chunk_size=16), single.run(30, seed=5, chunk_size=16)
    same_replicates(a, b)
