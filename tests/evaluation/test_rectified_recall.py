"""The rectified recall of the test rows (medeval.evaluation.rectified_recall): the estimating
equation by hand, its limits, the small-count interval, verdicts, the could-be-worst set and the
further reference rows, each against a simulation with known truth."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from medeval.evaluation.rectified_recall import (
    ReferenceEvidence,
    could_be_worst,
    jeffreys_bounds,
    more_rows,
    rectified_recall,
    verdicts,
    worst_bounds,
)
from medeval.metrics.proportion import binomial_interval

RECALLS = np.array([0.5, 0.85, 0.7])  # s (varied), a, b
SIZES = (1, 2, 2)


def _rows(rng, n_s, rho, kappa):
    sub = np.repeat(np.arange(3), [n_s * k for k in SIZES])
    recall = RECALLS.copy()
    recall[0] = rho
    hit = (rng.random(len(sub)) < recall[sub]).astype(float)
    z = rng.normal(kappa * np.eye(3)[sub], 1.0)
    q = special.softmax(np.log(np.array(SIZES) / sum(SIZES)) + kappa * z, axis=1)
    return sub, hit, q


def _one(rng, n_test, n_ref, rho, kappa, draws=0):
    st, ht, qt = _rows(rng, n_test, rho, kappa)
    sr, hr, qr = _rows(rng, n_ref, rho, kappa)
    ref = ReferenceEvidence(qr, hr, np.ones(len(sr), dtype=int), sr)
    res = rectified_recall(
        qt,
        ht,
        np.ones(len(st), dtype=int),
        np.ones(3, dtype=int),
        ref,
        confidence=0.95,
        n_draws=draws,
        seed=int(rng.integers(2**31)),
    )
    truth = np.array([ht[st == j].mean() for j in range(3)])
    return res, truth, (st, ht, qt), (sr, hr, qr)


def test_the_estimate_solves_the_difference_equation_with_its_slopes():
    """θ solves λ̄·mean_T q(h − θ) + mean_R (m − λ_j q)(h − θ) = 0, λ_j the slope without row j
    shrunk toward 1 by the slopes' jackknife noise."""
    res, _, (_st, ht, qt), (sr, hr, qr) = _one(np.random.default_rng(0), 40, 20, 0.4, 1.5)
    for s in range(3):
        th = res.recall[s]
        m = (sr == s).astype(float)
        psi, ph, pt = m * (hr - th), qr[:, s] * (hr - th), qt[:, s] * (ht - th)
        lam = []
        for j in range(len(sr)):
            keep = np.arange(len(sr)) != j
            cov = np.cov(psi[keep], ph[keep])[0, 1]
            lam.append(np.clip(cov / np.var(np.r_[pt, ph[keep]], ddof=1), 0, 1))
        lam = np.array(lam)
        se2 = (len(lam) - 1) / len(lam) * ((lam - lam.mean()) ** 2).sum()
        if lam.mean() != 1:  # toward 1
            lam = 1 + (lam - 1) * np.clip(1 - se2 / (lam.mean() - 1) ** 2, 0, 1)
        assert res.lam[s] == pytest.approx(lam.mean(), abs=1e-4)
        value = lam.mean() * pt.mean() + (psi - lam * ph).mean()
        assert abs(value) < 1e-4
        assert res.n_reference[s] == m.sum()


def test_a_subconcept_model_that_says_nothing_costs_nothing():
    """Posteriors equal to the prior, 200 seeds: the proxy is the class's hits alone, and the
    interval is about as wide as the reference rows' own small-count interval for the test rows
    (Jeffreys on (1/n + 1/N)⁻¹ rows, λ = 0) and holds the truth as often."""
    rng = np.random.default_rng(1)
    prior = np.array(SIZES) / sum(SIZES)
    ratio, covers = [], []
    for _ in range(200):
        st, ht, _ = _rows(rng, 30, 0.4, 0.0)
        sr, hr, _ = _rows(rng, 20, 0.4, 0.0)
        qt, qr = np.tile(prior, (len(st), 1)), np.tile(prior, (len(sr), 1))
        ref = ReferenceEvidence(qr, hr, np.ones(len(sr), dtype=int), sr)
        res = rectified_recall(
            qt, ht, np.ones(len(st), dtype=int), np.ones(3, dtype=int), ref, confidence=0.95
        )
        plain = hr[sr == 0].mean()
        lo, hi = jeffreys_bounds(
            np.array([plain]), np.array([1 / (1 / 20 + 1 / 30)]), np.array([30.0]), 0.95
        )
        ratio.append((res.high[0] - res.low[0]) / (hi[0] - lo[0]))
        covers.append(res.low[0] <= ht[st == 0].mean() <= res.high[0])
    assert np.mean(ratio) < 1.1 and np.mean(covers) >= 0.93


def test_a_class_of_one_subconcept_has_its_class_recall_exactly():
    rng = np.random.default_rng(2)
    ht, hr = (rng.random(50) < 0.7).astype(float), (rng.random(20) < 0.7).astype(float)
    y_t, y_r = np.r_[np.zeros(30), np.ones(20)].astype(int), np.r_[np.zeros(10), np.ones(10)]
    q_t = np.c_[y_t == 0, y_t == 1].astype(float)
    ref = ReferenceEvidence(
        np.c_[y_r == 0, y_r == 1].astype(float), hr, y_r.astype(int), y_r.astype(int)
    )
    res = rectified_recall(q_t, ht, y_t, np.array([0, 1]), ref, confidence=0.95, n_draws=10)
    for c in (0, 1):
        want = ht[y_t == c].mean()
        assert res.recall[c] == res.low[c] == res.high[c] == pytest.approx(want)
        assert (res.draws[:, c] == want).all()


def test_few_reference_rows_give_no_interval_and_none_give_nan():
    rng = np.random.default_rng(3)
    st, ht, qt = _rows(rng, 30, 0.4, 1.5)
    sr, hr, qr = _rows(rng, 10, 0.4, 1.5)
    keep = (sr != 0) | (np.arange(len(sr)) == 0)  # one row of s
    sr, hr, qr = sr[keep], hr[keep], qr[keep]
    ref = ReferenceEvidence(qr, hr, np.ones(len(sr), dtype=int), sr)
    res = rectified_recall(
        qt, ht, np.ones(len(st), dtype=int), np.ones(3, dtype=int), ref, confidence=0.95
    )
    assert res.n_reference[0] == 1 and np.isfinite(res.recall[0])
    assert math.isnan(res.low[0]) and math.isnan(res.high[0]) and math.isnan(res.ess[0])
    ref = ReferenceEvidence(qr[sr != 0], hr[sr != 0], np.ones((sr != 0).sum(), int), sr[sr != 0])
    res = rectified_recall(
        qt, ht, np.ones(len(st), dtype=int), np.ones(3, dtype=int), ref, confidence=0.95
    )
    assert math.isnan(res.recall[0]) and np.isfinite(res.recall[1:]).all()


def test_bounds_near_an_end_of_the_test_rows_grid_reach_it():
    """10 test rows: a recall of 0.93 has an upper bound past 0.95, and the recall of 10 rows
    is then 1; with 1,000 test rows the same bound stays below 1."""
    theta, n_eff = np.array([1.0, 0.93, 0.0, 0.93]), np.array([40.0, 40, 40, 40])
    lo, hi = jeffreys_bounds(theta, n_eff, np.array([10.0, 10, 10, 1000]), 0.95)
    assert hi[0] == 1.0 and hi[1] == 1.0 and lo[2] == 0.0
    assert 0.95 < hi[3] < 1.0 and lo[1] == lo[3] < 0.93


@pytest.mark.parametrize(("kappa", "rho"), [(3.0, 0.6), (1.5, 0.3), (0.75, 0.95)])
def test_the_interval_holds_the_test_rows_recall_and_is_narrower_with_a_sharp_model(kappa, rho):
    """Known truth, 250 seeds: 30 test and 15 reference rows of the smallest subconcept."""
    rng = np.random.default_rng([4, int(kappa * 100), int(rho * 100)])
    covers, width, yard = [], [], []
    for _ in range(250):
        res, truth, _, (sr, hr, _) = _one(rng, 30, 15, rho, kappa)
        covers.append(res.low[0] <= truth[0] <= res.high[0])
        width.append(res.high[0] - res.low[0])
        ci = binomial_interval(np.array([hr[sr == 0].sum()]), np.array([15.0]))
        yard.append(ci.high[0] - ci.low[0])
    assert 0.92 <= np.mean(covers) <= 0.995
    if kappa == 3.0:  # the label-free part buys width: narrower than the reference rows alone
        assert np.mean(width) < 0.85 * np.mean(yard)


def test_reference_rows_that_all_hit_still_let_a_sharp_model_narrow_the_interval():
    """Known truth: 200 test and 5 reference rows of s, recall 0.95, a sharp model. Where the 5
    all hit, the slope is not identified; the interval must neither collapse to the reference
    rows' own 5 of 5 (about 0.39 wide, θ = 1) nor lose the test rows' recall."""
    rng = np.random.default_rng([9, 2026])
    covers, width, estimate = [], [], []
    for _ in range(120):
        res, truth, _, (sr, hr, _) = _one(rng, 200, 5, 0.95, 3.0)
        if hr[sr == 0].all():
            covers.append(res.low[0] <= truth[0] <= res.high[0])
            width.append(res.high[0] - res.low[0])
            estimate.append(res.recall[0])
    assert len(covers) >= 60  # 0.95⁵ of the seeds
    assert np.mean(covers) >= 0.93
    assert np.mean(width) < 0.6 * 0.386  # the Jeffreys interval of 5 of 5 is [0.614, 1]
    assert np.mean(np.array(estimate) == 1.0) < 0.2  # θ = 1 is not where the estimate sits


def test_posteriors_that_name_s_on_its_siblings_still_give_all_hit_rows_an_estimate():
    """Reference rows of s that all hit, posteriors that put s on its siblings' rows (0.9) and
    not on its own (0.1): the calibrated slope would count s's test rows below 0, so the
    estimate keeps the measured slope and is the reference rows' 5 of 5 (not NaN)."""
    rng = np.random.default_rng(5)
    sr = np.r_[np.zeros(5, int), np.ones(20, int)]
    qr = np.where(sr[:, None] == 0, [0.1, 0.9], [0.9, 0.1])
    hr = np.r_[np.ones(5), (rng.random(20) < 0.7).astype(float)]
    qt = np.tile([0.2, 0.8], (100, 1))
    ht = (rng.random(100) < 0.7).astype(float)
    ref = ReferenceEvidence(qr, hr, np.ones(25, dtype=int), sr)
    res = rectified_recall(
        qt, ht, np.ones(100, dtype=int), np.ones(2, dtype=int), ref, confidence=0.95
    )
    assert np.isfinite(res.recall[0]) and np.isfinite(res.low[0])
    assert res.low[0] <= res.recall[0] <= res.high[0] == 1.0


def test_verdicts_follow_the_gap_interval():
    v = verdicts(np.array([0.1, -0.3, -0.1, np.nan]), np.array([0.4, 0.0, 0.2, np.nan]))
    assert list(v) == ["below", "not below", "not known", "not known"]


def test_the_could_be_worst_set_holds_the_worst_and_singles_out_a_clear_one():
    """Known truth, 150 seeds: s (recall 0.3) is far below b (0.7) with a sharp model."""
    rng = np.random.default_rng(5)
    holds, single, shares = [], [], []
    for _ in range(150):
        res, truth, _, _ = _one(rng, 60, 30, 0.3, 3.0, draws=400)
        inside, share = could_be_worst(res.recall, res.draws, 0.95)
        holds.append(inside[np.argmin(truth)])
        single.append(inside.sum() == 1)
        shares.append(share)
        assert share.sum() == pytest.approx(1.0)
    assert np.mean(holds) >= 0.95 and np.mean(single) >= 0.7
    assert np.mean(shares, 0)[0] > 0.9


def test_the_chosen_worst_interval_widens_over_the_set_that_could_be_worst():
    rng = np.random.default_rng(6)
    res, _, _, _ = _one(rng, 30, 10, 0.7, 0.75, draws=2000)
    lo, hi = worst_bounds(res, np.array([0, 2]), 0, 0.95)
    assert lo <= res.low[0] and hi >= res.high[0] and hi - lo > res.high[0] - res.low[0]
    assert worst_bounds(res, np.array([0]), 0, 0.95) == (res.low[0], res.high[0])


def test_further_rows_are_the_fewest_whose_interval_decides():
    """The predicted total rows give an interval that clears the class's recall (or is under
    0.2 wide); about 5 % fewer do not. No number of reference rows decides a gap smaller than
    the test rows' own noise."""
    recall, cr, deff = np.array([0.5, 0.5]), np.array([0.7, 0.52]), np.array([0.5, 0.5])
    n, n_test = np.array([10.0, 10.0]), np.array([1000.0, 30.0])
    more = more_rows(recall, cr, deff, n, n_test, 0.95)
    total = n[0] + more[0]

    def decided(rows):
        n_eff = 1 / (1 / rows + 1 / n_test[:1]) / deff[:1]
        lo, hi = jeffreys_bounds(recall[:1], n_eff, n_test[:1], 0.95)
        return bool(lo[0] > cr[0] or hi[0] < cr[0] or hi[0] - lo[0] < 0.2)

    assert decided(total) and not decided(0.95 * total - 1)
    assert math.isnan(more[1])


def test_predicted_further_rows_match_a_simulation_of_them():
    """Predict from 10 reference rows; 40 seeds with the predicted count decide the verdict (or
    reach width 0.2) about half the time."""
    rng = np.random.default_rng(7)
    pred = []
    for _ in range(60):
        res, _, (_, ht, _), _ = _one(rng, 200, 10, 0.6, 1.5)
        cr = ht.mean()
        m = more_rows(
            res.recall, np.full(3, cr), res.deff, res.n_reference.astype(float), res.n_test, 0.95
        )
        if np.isfinite(m[0]):
            pred.append(10 + m[0])
    target = int(np.median(pred))
    decided = []
    for _ in range(60):
        res, _, (_st, ht, _), _ = _one(rng, 200, target, 0.6, 1.5)
        cr = ht.mean()
        v = verdicts(cr - res.high, cr - res.low)[0]
        decided.append(v != "not known" or res.high[0] - res.low[0] < 0.2)
    assert 0.3 <= np.mean(decided) <= 0.9


def _clustered(rng, n_s, kappa, m):
    """Rows in clusters of ``m`` alike rows (a lesion's images: one subconcept, one hit, one
    posterior), ``n_s`` clusters of s."""
    sub, hit, q = _rows(rng, n_s, 0.5, kappa)
    rep = lambda a: np.repeat(a, m, axis=0)  # noqa: E731
    return rep(sub), rep(hit), rep(q), np.repeat(np.arange(len(sub)), m)


def test_clustered_reference_rows_count_as_clusters_and_the_interval_holds_again():
    """Three alike rows per cluster, in the test and the reference rows: read as independent
    rows the interval is too narrow (coverage far under 95 %); with the clusters given it holds
    the test rows' recall at about its level, and is wider."""
    rng = np.random.default_rng(7)
    covers, widths = {True: [], False: []}, {True: [], False: []}
    for _ in range(200):
        st, ht, qt, _ = _clustered(rng, 20, 1.5, 3)
        sr, hr, qr, gr = _clustered(rng, 10, 1.5, 3)
        truth = ht[st == 0].mean()
        for given in (True, False):
            ref = ReferenceEvidence(qr, hr, np.ones(len(sr), int), sr, group=gr if given else None)
            res = rectified_recall(
                qt, ht, np.ones(len(st), int), np.ones(3, int), ref, confidence=0.95
            )
            covers[given].append(res.low[0] <= truth <= res.high[0])
            widths[given].append(res.high[0] - res.low[0])
    assert np.mean(covers[False]) < 0.85
    assert 0.92 <= np.mean(covers[True]) <= 0.99
    assert np.mean(widths[True]) > 1.3 * np.mean(widths[False])


def test_the_cluster_effect_is_one_for_single_rows_and_the_cluster_size_for_copies():
    from medeval.evaluation.rectified_recall import cluster_effect

    e = np.random.default_rng(0).normal(size=(2, 40))
    assert np.allclose(cluster_effect(e, np.arange(40)), 1.0)
    twice = np.repeat(e, 2, axis=1)  # every row twice, each pair one cluster
    assert np.allclose(cluster_effect(twice, np.repeat(np.arange(40), 2)), 2.0)
    # clusters of independent rows: noise around 1, never credited below it
    assert (cluster_effect(e, np.repeat(np.arange(20), 2)) >= 1.0).all()


def test_a_subconcept_whose_test_rows_are_all_labelled_is_known_exactly_without_warnings():
    """Every test row of class 1 labelled with π = 1: each subconcept's recall is known (an
    interval of one point, draws equal to it), a recall of 0 included, and no NaN warning."""
    import warnings

    from medeval.evaluation.rectified_recall import LabelledRows

    rng = np.random.default_rng(3)
    n = 60
    sub = np.repeat(np.arange(3), n // 3)
    hit = np.where(sub == 0, 0.0, (rng.random(n) < 0.8).astype(float))  # subconcept 0 never found
    q = np.full((n, 3), 0.2)
    q[np.arange(n), sub] = 0.6
    rows = np.arange(n)
    lab = LabelledRows(rows, sub, np.ones(n), np.ones(n, dtype=int))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = rectified_recall(q, hit, np.ones(n, int), np.ones(3, int), None, labelled=lab,
                               confidence=0.95, n_draws=50)  # fmt: skip
    truth = np.array([hit[sub == j].mean() for j in range(3)])
    assert np.allclose(res.recall, truth) and res.recall[0] == 0.0
    assert (res.low <= truth).all() and (truth <= res.high).all()
    assert np.isfinite(res.draws).all()
