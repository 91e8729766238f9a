"""Within-class recalibration of the subconcept posteriors on rows of known subconcept
(medeval.evaluation.posterior_calibration), and what it buys the label loop: a rare failing
subconcept decided with few labels, its interval still holding the truth (known-truth
simulation, as benchmarks/label_decide.py measures it at scale)."""

import numpy as np
import pytest
from scipy import special

from medeval.evaluation.label_design import plan_batch
from medeval.evaluation.posterior_calibration import (
    calibration_map,
    recalibrate,
    recalibrated_for_labels,
)
from medeval.evaluation.rectified_recall import (
    LabelledRows,
    ReferenceEvidence,
    rectified_recall,
    verdicts,
)

SIDES = np.array([0, 0, 1, 1, 1])
NAMES = ("A", "B", "big", "mid", "rare")


def test_the_map_recovers_a_known_power_and_offsets():
    rng = np.random.default_rng(0)
    true = special.softmax(rng.normal(0, 2, (4000, 3)), axis=1)
    sub = np.array([rng.choice(3, p=p) for p in true])
    # the model's posteriors: the truth flattened (power 1/3) and shifted
    model = special.softmax(np.log(true) / 3 + np.array([0.5, 0.0, -0.5]), axis=1)
    a, b = calibration_map(model, sub)
    assert a == pytest.approx(3.0, rel=0.15)
    fixed = special.softmax(a * np.log(model) + b, axis=1)
    nll = lambda p: -np.log(p[np.arange(len(sub)), sub]).mean()  # noqa: E731
    assert nll(fixed) < nll(model) - 0.05 and nll(fixed) == pytest.approx(nll(true), abs=0.02)
    # calibrated already: about no change
    a1, b1 = calibration_map(true, sub)
    assert a1 == pytest.approx(1.0, abs=0.1) and np.abs(b1 - b1.mean()).max() < 0.15


def test_a_class_without_known_rows_or_of_one_subconcept_is_kept():
    rng = np.random.default_rng(1)
    q = np.zeros((50, 5))
    q[:25, :2] = special.softmax(rng.normal(size=(25, 2)), axis=1)
    q[25:, 2:] = special.softmax(rng.normal(size=(25, 3)), axis=1)
    y = np.r_[np.zeros(25, int), np.ones(25, int)]
    q = np.vstack([q, q[25:], q[25:]])  # 75 rows of class 1
    y = np.r_[y, np.ones(50, int)]
    known = np.arange(25, 65)  # 40 rows of class 1 only, their subconcepts the posteriors' argmax
    out = recalibrate(q, y, SIDES, known, q[known].argmax(1))
    np.testing.assert_array_equal(out[:25], q[:25])
    np.testing.assert_allclose(out[25:, 2:].sum(1), 1.0)
    assert (out[25:, :2] == 0).all() and not np.allclose(out[25:], q[25:])
    # one known row in a class still gives it a map, held near no change by the ridge
    few = recalibrate(q, y, SIDES, known[:1], q[known].argmax(1)[:1])
    np.testing.assert_array_equal(few[:25], q[:25])
    np.testing.assert_allclose(few[25:, 2:].sum(1), 1.0)
    moved = np.abs(few[25:] - q[25:]).max()
    assert 0 < moved < np.abs(out[25:] - q[25:]).max()
    one = np.array([0, 1, 1, 1, 1])  # class 0 of one subconcept
    q1 = np.zeros((50, 5))
    q1[:25, 0], q1[25:, 1:] = 1.0, special.softmax(rng.normal(size=(25, 4)), axis=1)
    np.testing.assert_array_equal(recalibrate(q1, y, one, np.arange(5), np.zeros(5, int))[:25],
                                  q1[:25])  # fmt: skip


def test_without_labelled_rows_nothing_changes():
    q = np.full((4, 5), 0.2)
    ref = ReferenceEvidence(q[:2], np.ones(2), np.ones(2, int), np.array([2, 3]))
    out_q, out_ref = recalibrated_for_labels(q, np.ones(4, int), SIDES, None, ref)
    assert out_q is q and out_ref is ref


def _draw(rng, n=2000, rare=0.025, w=4.0):
    """The issue's case: class 1 = big (0.90), mid (0.85), rare (0.45, 2.5 % of rows);
    Dirichlet posteriors, weight w on the true subconcept and 1 on each sibling."""
    shares = np.array([0.3, 0.2, (0.5 - rare) * 60 / 95, (0.5 - rare) * 35 / 95, rare])
    counts = np.rint(shares * n).astype(int)
    counts[0] += n - counts.sum()
    sub = rng.permutation(np.repeat(np.arange(5), counts))
    hit = np.zeros(n)
    for j, r in enumerate([0.9, 0.85, 0.9, 0.85, 0.45]):
        idx = np.flatnonzero(sub == j)
        hit[rng.choice(idx, round(r * len(idx)), replace=False)] = 1.0
    q = np.zeros((n, 5))
    for c in (0, 1):
        cols, rows = np.flatnonzero(SIDES == c), np.flatnonzero(SIDES[sub] == c)
        alpha = np.ones((len(rows), len(cols)))
        alpha[np.arange(len(rows)), np.searchsorted(cols, sub[rows])] = w
        g = rng.gamma(alpha)
        q[np.ix_(rows, cols)] = g / g.sum(1, keepdims=True)
    return sub, hit, q


def test_sixty_labels_decide_the_rare_failure_and_its_interval_holds():
    """24 seeds of the issue's case, 60 labels in 3 batches aimed at `rare` (focus): with the
    recalibration it is called below in most seeds (without: 0-3 % in benchmarks/label_decide.py
    before this change) and its interval holds its test recall."""
    rng = np.random.default_rng(45)
    below, covers, on_rare = [], [], []
    for seed in range(24):
        sub, hit, q = _draw(rng)
        y = SIDES[sub]
        rows, pi, bt = np.zeros(0, int), np.zeros(0), np.zeros(0, int)
        for k in (1, 2, 3):
            lab = None if not len(rows) else LabelledRows(rows, sub[rows], pi, bt)
            d, _ = plan_batch(q, hit, y, SIDES, NAMES, reference=None, labelled=lab, budget=20,
                              seed=seed * 10 + k, focus="rare")  # fmt: skip
            rows, pi = np.r_[rows, d.rows], np.r_[pi, d.inclusion]
            bt = np.r_[bt, np.full(len(d.rows), k)]
        lab = LabelledRows(rows, sub[rows], pi, bt)
        res = rectified_recall(q, hit, y, SIDES, None, labelled=lab, confidence=0.95)
        cr = hit[y == 1].mean()
        below.append(verdicts(cr - res.high, cr - res.low)[4] == "below")
        truth = hit[sub == 4].mean()
        covers.append(res.low[4] <= truth <= res.high[4])
        on_rare.append((sub[rows] == 4).sum())
    assert np.mean(below) >= 0.6
    assert np.mean(covers) >= 0.875
    assert np.mean(on_rare) > 6  # uniform: 1.5 expected


def test_a_few_known_rows_give_a_map_as_sure_as_they_are():
    from medeval.evaluation.posterior_calibration import fit_maps

    rng = np.random.default_rng(4)
    true = special.softmax(rng.normal(0, 2, (12, 3)), axis=1)
    sub = np.array([rng.choice(3, p=p) for p in true])
    q = special.softmax(0.5 * np.log(true), axis=1)  # too flat: a power of 2 recovers them
    y = np.ones(12, dtype=int)
    sides = np.array([1, 1, 1])
    maps = fit_maps(q, y, sub, sides)
    assert set(maps) == {1} and maps[1][0] > 1.0  # sharpened, as the rows say
    # ten times the rows from the same truth: the power about as large, far surer
    true10 = special.softmax(rng.normal(0, 2, (120, 3)), axis=1)
    sub10 = np.array([rng.choice(3, p=p) for p in true10])
    q10 = special.softmax(0.5 * np.log(true10), axis=1)
    many = fit_maps(q10, np.ones(120, dtype=int), sub10, sides)
    assert many[1][0] > 1.0 and many[1][2][0, 0] < maps[1][2][0, 0] / 3


def test_the_maps_covariance_is_its_spread_over_repeated_samples():
    """The sandwich covariance of the map, averaged over 300 samples of 150 weighted rows from
    a known truth, against the maps' spread over those samples: each parameter's standard
    deviation within 15 %, and the correlations alike."""
    from medeval.evaluation.posterior_calibration import map_covariance

    rng = np.random.default_rng(3)
    fits, covs = [], []
    for _ in range(300):
        true = special.softmax(rng.normal(0, 1.5, (150, 3)) + np.array([1.0, 0, -1.0]), axis=1)
        sub = (rng.random((150, 1)) > np.cumsum(true, 1)).sum(1)
        model = special.softmax(np.log(true) / 2, axis=1)  # too flat: power 2 recovers it
        w = rng.uniform(0.5, 2.0, 150)
        a, b = calibration_map(model, sub, w)
        fits.append(np.r_[np.log(a), b])
        covs.append(map_covariance(model, sub, w, a, b))
    emp, model_cov = np.cov(np.array(fits).T), np.mean(covs, axis=0)
    sd_emp, sd_model = np.sqrt(np.diag(emp)), np.sqrt(np.diag(model_cov))
    np.testing.assert_allclose(sd_model / sd_emp, 1.0, atol=0.15)
    corr = lambda c, sd: c / np.outer(sd, sd)  # noqa: E731
    assert np.abs(corr(emp, sd_emp) - corr(model_cov, sd_model)).max() < 0.15


def test_sigma_points_carry_the_mean_and_covariance():
    from medeval.evaluation.posterior_calibration import sigma_points

    rng = np.random.default_rng(5)
    for d in (2, 4, 6):
        root = rng.normal(size=(d, d))
        cov, theta = root @ root.T, rng.normal(size=d)
        pts = sigma_points(theta, cov)
        assert pts.shape == (2 * d, d)
        np.testing.assert_allclose(pts.mean(0), theta, atol=1e-12)
        np.testing.assert_allclose(np.cov(pts.T, bias=True), cov, atol=1e-10)
        np.testing.assert_array_equal(
            sigma_points(theta, np.zeros((d, d))), np.tile(theta, (2 * d, 1))
        )
