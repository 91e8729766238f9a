"""medeval.evaluation.label_forecast: the labels each open verdict still needs, by simulating the
loop under today's estimates — its worlds, and its forecast against the loop it forecasts."""

from __future__ import annotations

import numpy as np

from medeval.evaluation.label_design import plan_batch
from medeval.evaluation.label_forecast import _draw_world, _given_hits, labels_to_decide
from medeval.evaluation.rectified_recall import LabelledRows, rectified_recall, verdicts

SIDES = np.array([0, 0, 1, 1, 1])
NAMES = ("A", "B", "big", "mid", "rare")


def _case(rng, n=1000, rare=0.05, w=8.0):
    """Class 0: A, B; class 1: big, mid and a failing rare subconcept; Dirichlet posteriors."""
    k1 = n // 2
    sizes = [int(0.6 * (n - k1)), n - k1 - int(0.6 * (n - k1)), 0, 0, int(rare * n)]
    sizes[2] = int(0.63 * (k1 - sizes[4]))
    sizes[3] = k1 - sizes[4] - sizes[2]
    sub = np.repeat(np.arange(5), sizes)
    recall = np.array([0.9, 0.85, 0.9, 0.85, 0.45])
    hit = (rng.random(n) < recall[sub]).astype(float)
    q = np.zeros((n, 5))
    for c in (0, 1):
        cols, rows = np.flatnonzero(SIDES == c), np.flatnonzero(SIDES[sub] == c)
        alpha = np.ones((len(rows), len(cols)))
        alpha[np.arange(len(rows)), np.searchsorted(cols, sub[rows])] = w
        q[np.ix_(rows, cols)] = rng.gamma(alpha)
        q[rows] /= q[rows].sum(1, keepdims=True)
    return sub, hit, q, SIDES[sub]


def test_a_world_draws_each_rows_subconcept_with_its_posterior():
    rng = np.random.default_rng(0)
    q = np.tile([0.7, 0.2, 0.1, 0.0, 0.0], (20000, 1))
    share = np.bincount(_draw_world(rng, q), minlength=5) / len(q)
    assert np.allclose(share, q[0], atol=0.015)


def test_the_worlds_posterior_weighs_each_rows_hit_by_todays_recalls():
    """q_s·θ_s^hit(1 − θ_s)^(1 − hit), renormalised: a missed row leans to the subconcept
    whose recall is low."""
    rng = np.random.default_rng(1)
    _, hit, q, y = _case(rng)
    out = _given_hits(q, hit, y, SIDES, None, None, 0.95)
    assert np.allclose(out.sum(1), 1.0)
    theta = (q * hit[:, None]).sum(0) / q.sum(0)
    i = int(np.flatnonzero((y == 1) & (hit == 0))[0])
    want = q[i] * (1 - theta)
    assert np.allclose(out[i], want / want.sum())
    miss, found = (y == 1) & (hit == 0), (y == 1) & (hit == 1)
    assert out[miss, 4].mean() > q[miss, 4].mean() and out[found, 4].mean() < q[found, 4].mean()


def test_only_the_subconcepts_asked_about_are_forecast_and_a_seed_repeats_it():
    rng = np.random.default_rng(2)
    _, hit, q, y = _case(rng)
    target = np.asarray(NAMES) == "rare"
    a = labels_to_decide(q, hit, y, SIDES, NAMES, targets=target, worlds=3, seed=5, max_labels=60)
    b = labels_to_decide(q, hit, y, SIDES, NAMES, targets=target, worlds=3, seed=5, max_labels=60)
    assert np.isnan(a.median[~target]).all() and np.isfinite(a.decided[4])
    assert np.array_equal(a.median, b.median, equal_nan=True)
    none = labels_to_decide(q, hit, y, SIDES, NAMES, targets=~np.ones(5, bool), worlds=3)
    assert np.isnan(none.median).all()


def _loop_took(sub, hit, q, y, batch, cap, seed, start=None):
    """Labels the design took, in the true world, to decide rare's verdict (inf: not within),
    on from the labelled rows ``start`` (none: from no labels), those not counted."""
    rows, pi, bt = (np.zeros(0, int), np.zeros(0), np.zeros(0, int)) if start is None else (
        start.index, start.pi, start.batch)  # fmt: skip
    first = int(bt.max()) + 1 if len(bt) else 1
    for k in range(first, first + cap // batch):
        lab = LabelledRows(rows, sub[rows], pi, bt) if len(rows) else None
        d, _ = plan_batch(q, hit, y, SIDES, NAMES, reference=None, labelled=lab, budget=batch,
                          seed=seed + k)  # fmt: skip
        rows, pi = np.r_[rows, d.rows], np.r_[pi, d.inclusion]
        bt = np.r_[bt, np.full(len(d.rows), k)]
        if _rare_decided(q, hit, y, LabelledRows(rows, sub[rows], pi, bt)):
            return float((k - first + 1) * batch)
    return np.inf


def _rare_decided(q, hit, y, lab) -> bool:
    """Whether rare's verdict (against its class's recall) is decided with the rows ``lab``."""
    res = rectified_recall(q, hit, y, SIDES, None, labelled=lab, confidence=0.95)
    cr = hit[y == 1].mean()
    return verdicts(np.array([cr - res.high[4]]), np.array([cr - res.low[4]]))[0] != "not known"


def _first_batch(sub, hit, q, y, seed):
    d, _ = plan_batch(q, hit, y, SIDES, NAMES, reference=None, labelled=None, budget=20, seed=seed)
    return LabelledRows(d.rows, sub[d.rows], d.inclusion, np.ones(len(d.rows), int))


def test_the_forecast_is_near_what_the_loop_then_takes():
    """Medium posteriors, a rare failing subconcept: from the first batch of 20 labels (the
    labels that show how far the posteriors are from calibrated; with none, the worlds take
    the posteriors as they are and over-state), the median forecast over the seeds still open
    lies within a batch of the median the loop then took in the true world."""
    forecasts, took = [], []
    for seed in range(12):
        rng = np.random.default_rng([seed, 45])
        sub, hit, q, y = _case(rng, rare=0.05, w=4.0)
        lab = _first_batch(sub, hit, q, y, seed * 7)
        if _rare_decided(q, hit, y, lab):
            continue  # decided by the first batch: nothing to forecast
        target = np.asarray(NAMES) == "rare"
        f = labels_to_decide(q, hit, y, SIDES, NAMES, targets=target, labelled=lab, batch=20,
                             max_labels=120, worlds=4, seed=seed)  # fmt: skip
        forecasts.append(f.median[4])
        took.append(_loop_took(sub, hit, q, y, 20, 120, seed * 7, start=lab))
    assert len(took) >= 6
    assert abs(np.median(forecasts) - np.median(took)) <= 20, (forecasts, took)
