"""Which test rows to label next (medeval.evaluation.label_design): the inclusion probabilities,
the draw that has exactly them, the subconcepts aimed at, and the design against uniform labels
on a simulation with known truth."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from medeval.evaluation.label_design import (
    UNIFORM_SHARE,
    choose_rows,
    decision_priority,
    inclusion_probabilities,
    open_subconcepts,
    plan_batch,
    row_scores,
    systematic_sample,
)
from medeval.evaluation.rectified_recall import LabelledRows, rectified_recall

SIDES = np.array([0, 0, 1, 1, 1])
NAMES = ("c0", "c1", "s", "a", "b")


def _draw(rng, n, rare=0.03, kappa=3.0):
    shares = np.array([0.42, 0.28, 0.3 * rare, 0.3 * (1 - rare) * 0.6, 0.3 * (1 - rare) * 0.4])
    sub = rng.choice(5, n, p=shares)
    hit = (rng.random(n) < np.array([0.95, 0.9, 0.5, 0.85, 0.75])[sub]).astype(float)
    z = rng.normal(kappa * np.eye(5)[sub], 1.0)
    own = SIDES[None, :] == SIDES[sub][:, None]
    q = special.softmax(np.where(own, np.log(shares) + kappa * z, -np.inf), axis=1)
    return sub, hit, q


def test_inclusion_probabilities_sum_to_the_budget_are_capped_and_keep_a_uniform_share():
    rng = np.random.default_rng(0)
    score = rng.exponential(size=500) ** 3  # a few rows far above the rest
    free = np.ones(500, dtype=bool)
    free[:50] = False
    pi = inclusion_probabilities(score, free, 60)
    assert pi[:50].sum() == 0 and pi.sum() == pytest.approx(60)
    assert pi.max() <= 1 and (pi[free] >= UNIFORM_SHARE * 60 / 450 - 1e-12).all()
    assert inclusion_probabilities(score, free, 1000)[free].tolist() == [1.0] * 450


def test_the_systematic_draw_has_the_size_asked_and_its_inclusion_probabilities():
    rng = np.random.default_rng(1)
    pi = inclusion_probabilities(rng.exponential(size=40), np.ones(40, dtype=bool), 8)
    counts = np.zeros(40)
    for seed in range(4000):
        rows = systematic_sample(pi, seed)
        assert len(rows) == 8 and len(set(rows.tolist())) == 8
        counts[rows] += 1
    assert np.abs(counts / 4000 - pi).max() < 0.03
    assert (systematic_sample(pi, 7) == systematic_sample(pi, 7)).all()


def test_open_subconcepts_are_the_unknown_verdicts_and_a_contested_worst():
    v = np.array(["not below", "not below", "below", "not known", "not below"])
    alone = np.array([False, False, True, False, False])
    assert open_subconcepts(NAMES, SIDES, v, alone).tolist() == [0, 0, 0, 1, 0]
    two = np.array([True, True, True, False, True])
    assert open_subconcepts(NAMES, SIDES, v, two).tolist() == [1, 1, 1, 1, 1]
    assert open_subconcepts(NAMES, SIDES, None, None).all()
    one_class = np.array([0, 1, 1, 1, 1])  # a class of one subconcept is never open
    assert not open_subconcepts(NAMES, one_class, None, None)[0]


def test_row_scores_go_to_the_rows_most_probably_of_the_open_subconcepts():
    q = np.array([[0, 0, 0.5, 0.5, 0.0], [0, 0, 0.99, 0.01, 0], [0.5, 0.5, 0, 0, 0]])
    y = np.array([1, 1, 0])
    score = row_scores(q, y, SIDES, np.array([0, 0, 1, 0, 0]))
    # q_s of subconcept s, normalised to its share (1): most where the row is most probably of
    # s, nothing for another class's row
    np.testing.assert_allclose(score, [0.5 / 1.49, 0.99 / 1.49, 0.0])
    # two subconcepts aimed at with shares 0.75 / 0.25: each one's rows sum to its share
    q2 = np.array([[0, 0, 0.5, 0.5, 0], [0, 0, 0.2, 0.8, 0], [0, 0, 0.9, 0.1, 0]])
    both = row_scores(q2, np.ones(3, int), SIDES, np.array([0, 0, 0.75, 0.25, 0]))
    assert both.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(both, 0.75 * q2[:, 2] / 1.6 + 0.25 * q2[:, 3] / 1.4)


def test_the_priority_goes_to_the_verdict_nearest_to_being_decided():
    """Gap far from 0 against its interval (a failing subconcept) > a gap of about 0 (a large
    subconcept that is its class's recall); utility multiplies; shares sum to 1 over the aim."""
    gap = np.array([0.0, 0.0, 0.4, 0.01, 0.05])
    low, high = gap - 0.3, gap + 0.3
    aim = np.array([False, False, True, True, True])
    share = decision_priority(gap, low, high, np.ones(5), aim)
    assert share.sum() == pytest.approx(1.0) and share[:2].tolist() == [0, 0]
    assert share[2] > 0.8 and share[3] > 0 and share[4] > share[3]
    heavier = decision_priority(gap, low, high, np.array([1, 1, 1, 20, 1.0]), aim)
    assert heavier[3] > share[3]  # utility weighs in
    unknown = decision_priority(gap, np.full(5, np.nan), np.full(5, np.nan), np.ones(5), aim)
    assert unknown[2] > unknown[4] > unknown[3] > 0  # no interval yet: half-width 1


def test_focus_aims_the_whole_batch_at_one_subconcept():
    rng = np.random.default_rng(4)
    sub, hit, q = _draw(rng, 1000)
    y = SIDES[sub]
    d, _ = plan_batch(q, hit, y, SIDES, NAMES, reference=None, labelled=None, budget=40, seed=1,
                      focus="a")  # fmt: skip
    assert d.open == ("a",) and d.share == (1.0,)
    assert (d.pi > 0)[y == 0].all()  # the uniform share keeps every row's π > 0


def test_the_same_inputs_and_seed_propose_the_same_rows():
    rng = np.random.default_rng(2)
    sub, hit, q = _draw(rng, 800)
    y = SIDES[sub]
    a, _ = plan_batch(q, hit, y, SIDES, NAMES, reference=None, labelled=None, budget=30, seed=5)
    b, _ = plan_batch(q, hit, y, SIDES, NAMES, reference=None, labelled=None, budget=30, seed=5)
    c, _ = plan_batch(q, hit, y, SIDES, NAMES, reference=None, labelled=None, budget=30, seed=6)
    assert (a.rows == b.rows).all() and not set(a.rows) == set(c.rows)
    lab = LabelledRows(a.rows, sub[a.rows], a.inclusion, np.ones(30, dtype=int))
    d, known = plan_batch(q, hit, y, SIDES, NAMES, reference=None, labelled=lab, budget=30, seed=5)
    assert not set(d.rows) & set(a.rows) and known is not None
    assert (
        choose_rows(np.ones(5), np.array([1, 1, 1, 0, 0], bool), 9, seed=0, aim=()).rows.size == 2
    )


def test_active_labels_find_the_rare_subconcept_and_keep_coverage():
    """Known truth, 60 seeds: 1,500 test rows, a 3 % subconcept of class 1, 100 labels in 2
    batches against a simple random sample of 100: the rare subconcept gets more labelled
    rows, a narrower interval, and its interval holds its test recall."""
    rng = np.random.default_rng(3)
    got, widths, covers = {"active": [], "uniform": []}, {"active": [], "uniform": []}, []
    for seed in range(60):
        sub, hit, q = _draw(rng, 1500)
        y = SIDES[sub]
        truth = hit[sub == 2].mean()
        rows, pi, batch = np.zeros(0, int), np.zeros(0), np.zeros(0, int)
        for k in (1, 2):
            lab = None if not len(rows) else LabelledRows(rows, sub[rows], pi, batch)
            d, _ = plan_batch(
                q, hit, y, SIDES, NAMES, reference=None, labelled=lab, budget=50, seed=seed * 10 + k
            )
            rows, pi = np.r_[rows, d.rows], np.r_[pi, d.inclusion]
            batch = np.r_[batch, np.full(len(d.rows), k)]
        srs = rng.choice(1500, 100, replace=False)
        for name, (r, p, b) in {
            "active": (rows, pi, batch),
            "uniform": (srs, np.full(100, 100 / 1500), np.ones(100, int)),
        }.items():
            res = rectified_recall(
                q, hit, y, SIDES, None, labelled=LabelledRows(r, sub[r], p, b), confidence=0.95
            )
            got[name].append((sub[r] == 2).sum())
            ok = np.isfinite(res.low[2])
            widths[name].append(res.high[2] - res.low[2] if ok else 1.0)
            if name == "active" and ok:
                covers.append(res.low[2] <= truth <= res.high[2])
    assert np.mean(got["active"]) > 2 * np.mean(got["uniform"])
    assert np.mean(widths["active"]) < 0.8 * np.mean(widths["uniform"])
    assert np.mean(covers) >= 0.9


def test_no_row_left_to_draw_gives_no_probability():
    from medeval.evaluation.label_design import inclusion_probabilities, systematic_sample

    pi = inclusion_probabilities(np.ones(5), np.zeros(5, dtype=bool), budget=3)
    assert (pi == 0).all() and len(systematic_sample(pi, seed=1)) == 0


def test_labels_aimed_at_the_rows_most_probably_of_s_keep_an_honest_interval():
    """Calibrated posteriors, one batch of 100 labels drawn with π ∝ q_s (the design's rows
    for a rare subconcept: the few rows of s with a small q_s carry the error): the interval's
    half-width matches the error's spread and covers. The class's average design effect on
    every labelled row gave intervals about 0.6× the error's spread here; the recalibration's
    point map, without its own spread, covered 90.7 % (posterior_calibration.sigma_points)."""
    rng = np.random.default_rng(11)
    err, half, covers = [], [], []
    for seed in range(300):
        sub, hit, q = _draw(rng, 1500)
        y = SIDES[sub]
        free = np.ones(1500, dtype=bool)
        pi = inclusion_probabilities(np.where(y == 1, q[:, 2], 0.0), free, 100)
        rows = systematic_sample(pi, seed)
        lab = LabelledRows(rows, sub[rows], pi[rows], np.ones(len(rows), dtype=int))
        res = rectified_recall(q, hit, y, SIDES, None, labelled=lab, confidence=0.95)
        truth = hit[sub == 2].mean()
        if np.isfinite(res.low[2]):
            err.append(res.recall[2] - truth)
            half.append((res.high[2] - res.low[2]) / 2 / 1.96)
            covers.append(res.low[2] <= truth <= res.high[2])
    assert len(covers) > 280
    assert np.mean(half) >= 0.85 * np.std(err)
    assert np.mean(covers) >= 0.92
