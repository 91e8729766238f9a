"""The error spent over the looks (medeval.evaluation.looks): the looks' shares sum to the error,
and reading every look at its share keeps the chance that some look's interval misses at the
error, where reading each at the nominal level does not."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import norm

from medeval.evaluation.looks import look_confidence, looks_note, spent


@pytest.mark.parametrize("planned", [1, 2, 3, 5, 10])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_the_looks_shares_sum_to_the_error_and_grow(planned, confidence):
    shares = [1 - look_confidence(confidence, k, planned) for k in range(1, planned + 1)]
    assert sum(shares) == pytest.approx(1 - confidence, rel=1e-9)
    assert all(a <= b + 1e-15 for a, b in itertools.pairwise(shares))
    # a single look, or none planned: the nominal level itself
    assert look_confidence(confidence, 1, 1) == confidence
    assert look_confidence(confidence, 4, None) == confidence


def test_spending_is_the_obrien_fleming_type_function():
    assert spent(0.0, 0.05) == 0.0 and spent(1.0, 0.05) == pytest.approx(0.05)
    assert spent(2.0, 0.05) == pytest.approx(0.05)  # from 1 on, all of it
    assert spent(0.25, 0.05) == pytest.approx(2 * norm.sf(1.959964 / 0.5), rel=1e-5)


def test_past_the_plan_a_look_keeps_the_last_level_and_says_so():
    last = look_confidence(0.95, 3, 3)
    assert look_confidence(0.95, 5, 3) == last
    assert "no longer kept at 5%" in looks_note(0.95, 5, 3)
    assert "look 2 of 3 planned" in looks_note(0.95, 2, 3)
    assert "no plan of looks" in looks_note(0.95, 2, None)


@pytest.mark.parametrize("planned", [3, 10])
def test_every_looks_interval_holds_together_at_the_error(planned):
    # a mean read after each of `planned` equal batches of normal rows (known variance): the
    # interval at each look's level holds the mean at every look in >= 95 % of 20,000 runs;
    # read at 95 % each time, it does not (the error the looks add)
    rng = np.random.default_rng(11)
    runs, per = 20_000, 20
    x = rng.standard_normal((runs, planned * per))
    n = per * np.arange(1, planned + 1)
    means = np.cumsum(x, axis=1)[:, n - 1] / n
    z_each = norm.isf(
        (1 - np.array([look_confidence(0.95, k, planned) for k in range(1, planned + 1)])) / 2
    )
    miss_spent = (np.abs(means) > z_each / np.sqrt(n)).any(1).mean()
    miss_nominal = (np.abs(means) > 1.959964 / np.sqrt(n)).any(1).mean()
    se = np.sqrt(0.05 * 0.95 / runs)
    assert miss_spent <= 0.05 + 3 * se
    assert miss_nominal > 0.05 + 10 * se


def test_rectified_recall_reads_labelled_rows_at_their_looks_level():
    from medeval.evaluation.rectified_recall import LabelledRows, rectified_recall

    rng = np.random.default_rng(3)
    n = 600
    sides = np.array([0, 1, 1])
    sub = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    y = sides[sub]
    hit = (rng.random(n) < np.array([0.9, 0.9, 0.6])[sub]).astype(float)
    q = np.zeros((n, 3))
    q[y == 0, 0] = 1
    own = rng.dirichlet([1, 1], (y == 1).sum())
    q[y == 1, 1:] = 0.5 * own + 0.5 * np.eye(2)[sub[y == 1] - 1]
    rows = rng.choice(n, 80, replace=False)
    bt = np.r_[np.ones(40, int), np.full(40, 2)]
    pi = np.full(80, 40 / n)
    alone = rectified_recall(q, hit, y, sides, None, labelled=LabelledRows(rows, sub[rows], pi, bt),
                             confidence=0.95)  # fmt: skip
    planned = rectified_recall(
        q, hit, y, sides, None, labelled=LabelledRows(rows, sub[rows], pi, bt, looks=3),
        confidence=0.95,
    )  # fmt: skip
    assert alone.level == 0.95 and planned.level == pytest.approx(look_confidence(0.95, 2, 3))
    np.testing.assert_allclose(planned.recall, alone.recall)
    width = lambda r: (r.high - r.low)[1:]  # noqa: E731
    assert (width(planned) > width(alone)).all()
