"""The bootstrap's plan: the cells of equal class, hit, memberships and subconcept."""

import numpy as np
import pytest


@pytest.mark.parametrize("n_masks", [3, 70])  # 70 masks: too many bits for one integer key
def test_cells_group_equal_class_hit_memberships_and_subconcept(n_masks):
    from medeval.metrics.bootstrap.planning import _cells

    rng = np.random.default_rng(n_masks)
    n = 500
    y = rng.integers(0, 2, n)
    hit = rng.random(n) < 0.7
    masks = rng.random((n, n_masks)) < 0.97
    sc = rng.integers(3, 7, n)
    cell, first = _cells(y, hit, masks, sc)
    rows = [(y[i], hit[i], masks[i].tobytes(), sc[i]) for i in range(n)]
    assert len(first) == len(set(rows))
    for i in range(n):  # same cell <=> same attributes; first[c] is an instance of cell c
        assert rows[first[cell[i]]] == rows[i]
