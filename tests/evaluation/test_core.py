"""evaluate_predictions: the nine scores on every subset equal scikit-learn with the same
weights; per-subconcept results; what is unavailable and why; undefined → NaN + warning."""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

from medeval import evaluate_predictions
from medeval.evaluation import ALL_SCORES, PAPER_SCORES, RECOMMENDED
from medeval.metrics import UndefinedMetricWarning
from medeval.scores import INSTANCE_SCORES
from medeval.weights import utilities_from_train_sizes

NAMES = ["normal", "benign", "A", "B", "C"]
SIDES = [0, 0, 1, 1, 1]
SIZES = {
    n: {"class": c, "n": k} for n, c, k in zip(NAMES, SIDES, [500, 300, 120, 60, 20], strict=True)
}


def _data(seed=0, n=600):
    rng = np.random.default_rng(seed)
    sc = rng.choice(5, n, p=[0.5, 0.3, 0.12, 0.06, 0.02])
    y = np.array(SIDES)[sc]
    s = np.clip(0.5 * y + rng.normal(0.25, 0.2, n) - 0.3 * (sc == 4), 0, 1).round(2)  # ties
    q = rng.dirichlet(np.ones(5), n)
    q[np.arange(n), sc] += 2
    q /= q.sum(1, keepdims=True)
    return y, s, np.array(NAMES)[sc], pd.DataFrame(q, columns=NAMES)


def test_scores_equal_sklearn_on_every_subset():
    y, s, sc, q = _data()
    ev = evaluate_predictions(
        y, y_score=s, subconcept=sc, posteriors=q, train_sizes=SIZES, n_bootstrap=0
    )
    u = utilities_from_train_sizes(SIZES)
    w_true = u.values[[u.index(x) for x in sc]]
    q_arr = q[list(u.names)].to_numpy()
    w_pred = q_arr @ u.values
    in_class = np.array(SIDES)[None, :] == y[:, None]
    w_cc = (q_arr * in_class) @ u.values / (q_arr * in_class).sum(1)
    yp = (s >= 0.5).astype(int)
    subsets = {"full": np.ones(len(y), bool)}
    for i, name in enumerate(["A", "B", "C"], start=1):
        subsets[f"sub_{i}"] = (y == 0) | (sc == name)
    subsets["largest"], subsets["smallest"] = subsets["sub_1"], subsets["sub_3"]
    assert set(ev.subsets.subset) == set(subsets)
    for key, w in (("", np.ones(len(y))), ("w", w_true), ("p", w_pred), ("c", w_cc)):
        for sub, m in subsets.items():
            got = ev.subsets[ev.subsets.subset == sub].set_index("score").value
            sw = w * m
            assert got[f"{key}BA"] == pytest.approx(
                balanced_accuracy_score(y, yp, sample_weight=sw), abs=1e-9
            )
            assert got[f"{key}F1"] == pytest.approx(f1_score(y, yp, sample_weight=sw), abs=1e-9)
            assert got[f"{key}AUC"] == pytest.approx(
                roc_auc_score(y, s, sample_weight=sw), abs=1e-9
            )
    assert list(ev.scores) == list(ALL_SCORES) and list(ALL_SCORES[:9]) == list(PAPER_SCORES)
    assert set(RECOMMENDED.values()) <= set(ALL_SCORES) and ev.recommended == RECOMMENDED
    assert not any(name.startswith("w") for name in RECOMMENDED.values())
    assert ev.scores["wBA"] == ev.subsets.query("subset == 'full' and score == 'wBA'").value.item()


def test_per_subconcept_results():
    y, s, sc, q = _data(1)
    ev = evaluate_predictions(
        y, y_score=s, subconcept=sc, posteriors=q, train_sizes=SIZES, n_bootstrap=200, seed=1
    )
    ps = ev.per_subconcept.set_index("subconcept")
    assert list(ps.index) == NAMES  # majority by size, then minority by size
    yp = (s >= 0.5).astype(int)
    for name in NAMES:
        m = sc == name
        assert ps.loc[name, "recall"] == pytest.approx((yp[m] == y[m]).mean())
        assert ps.loc[name, "n_test"] == m.sum()
        assert ps.loc[name, "low"] <= ps.loc[name, "recall"] <= ps.loc[name, "high"]
    assert ps.loc["C", "utility"] == 25.0
    assert ps.loc["A", "prevalence"] == pytest.approx((sc == "A").sum() / (y == 1).sum())
    u = utilities_from_train_sizes(SIZES)
    a = q[list(u.names)].to_numpy() @ u.values
    assert ps.loc["B", "predicted_weight_sum"] == pytest.approx(a[sc == "B"].sum())
    assert ps.loc["B", "true_weight_sum"] == pytest.approx(500 / 60 * (sc == "B").sum())


def test_intervals_bracket_points_and_are_reproducible():
    y, s, sc, q = _data(2)
    kw = dict(y_score=s, subconcept=sc, posteriors=q, train_sizes=SIZES, n_bootstrap=300)
    a = evaluate_predictions(y, seed=5, **kw)
    b = evaluate_predictions(y, seed=5, **kw)
    c = evaluate_predictions(y, seed=6, **kw)
    assert a.intervals == b.intervals and a.intervals != c.intervals
    for k in INSTANCE_SCORES:  # the rectified ones need reference rows
        lo, hi = a.intervals[k]
        assert lo <= a.scores[k] <= hi and hi - lo < 0.5
    d = a.to_dict()
    assert list(d["scores"]) == list(ALL_SCORES)
    assert d["recommended"] == {**RECOMMENDED, "per_subconcept": "recall"}
    assert d["intervals"]["BA"]["n_undefined"] == 0


def test_what_is_unavailable_and_why():
    y, s, _sc, q = _data(3)
    ev = evaluate_predictions(y, y_pred=(s > 0.4).astype(int), n_bootstrap=0)
    assert not math.isnan(ev.scores["BA"]) and not math.isnan(ev.scores["F1"])
    for k in ("wBA", "pBA", "AUC", "wAUC", "pAUC"):
        assert math.isnan(ev.scores[k]) and ev.unavailable[k]
    assert "y_score" in ev.unavailable["AUC"]
    assert "train sizes" in ev.unavailable["pBA"]
    ev = evaluate_predictions(y, y_score=s, train_sizes=SIZES, posteriors=q, n_bootstrap=0)
    assert "subconcept" in ev.unavailable["wBA"] and "pBA" not in ev.unavailable
    assert ev.to_dict()["scores"]["wBA"] is None
    assert set(ev.subsets.subset) == {"full"}
    # no true subconcepts: only the label-free per-subconcept columns are filled
    ps = ev.per_subconcept
    assert list(ps.subconcept) == NAMES and ps.recall.isna().all() and ps.n_test.isna().all()
    assert ps.est_recall.notna().all() and ev.subconcept_model == {}


def test_absent_test_subconcept_is_nan_with_a_warning_naming_it():
    y, s, sc, _q = _data(4)
    keep = sc != "C"
    with pytest.warns(UndefinedMetricWarning) as record:
        ev = evaluate_predictions(
            y[keep], y_score=s[keep], subconcept=sc[keep], train_sizes=SIZES, n_bootstrap=20
        )
    messages = [str(r.message) for r in record]
    assert any("BA on subset sub_3 (subconcept 'C')" in m for m in messages)
    assert any("recall of subconcept 'C' is undefined" in m for m in messages)
    small = ev.subsets.query("subset == 'smallest' and score == 'BA'")
    assert math.isnan(small.value.item()) and small.n_undefined.item() == 20
    assert math.isnan(ev.per_subconcept.set_index("subconcept").loc["C", "recall"])
    assert any("'C'" in note for note in ev.notes)
    assert not math.isnan(ev.scores["wBA"])


def test_inconsistent_inputs_raise_naming_the_problem():
    y, s, sc, _q = _data(5)
    with pytest.raises(ValueError, match="no training size"):
        evaluate_predictions(
            y, y_score=s, subconcept=np.where(sc == "A", "Z", sc), train_sizes=SIZES
        )
    flipped = y.copy()
    i = int(np.flatnonzero(sc == "B")[0])
    flipped[i] = 0
    with pytest.raises(ValueError, match=f"index {i}: subconcept 'B' belongs to class 1"):
        evaluate_predictions(flipped, y_score=s, subconcept=sc, train_sizes=SIZES)
    with pytest.raises(ValueError, match="need y_score or y_pred"):
        evaluate_predictions(y)
    with pytest.raises(ValueError, match="stratify='subconcept' needs"):
        evaluate_predictions(y, y_score=s, stratify="subconcept")


def test_cluster_bootstrap_runs_on_patient_groups():
    y, s, _sc, _q = _data(6)
    groups = np.where(y == 1, 10_000, 0) + np.arange(len(y)) // 3
    ev = evaluate_predictions(y, y_score=s, groups=groups, n_bootstrap=100)
    lo, hi = ev.intervals["AUC"]
    assert lo < ev.scores["AUC"] < hi


def test_pandas_inputs_are_accepted_without_warnings():
    y, s, sc, q = _data(7)
    frame = pd.DataFrame({"y": y, "s": s, "sc": sc})
    ev = evaluate_predictions(
        frame.y,
        y_score=frame.s,
        subconcept=frame.sc,
        posteriors=q,
        train_sizes=SIZES,
        n_bootstrap=10,
    )
    ref = evaluate_predictions(
        y,
        y_score=s,
        subconcept=sc,
        posteriors=q.to_numpy(),
        posterior_columns=NAMES,
        train_sizes=SIZES,
        n_bootstrap=10,
    )
    assert ev.scores == ref.scores and ev.intervals == ref.intervals


def test_point_estimates_in_subset_blocks_equal_one_block(monkeypatch):
    """On millions of rows the point estimates are computed a few subsets at a time."""
    import medeval.evaluation.core as evaluation

    y, s, sc, q = _data(5)
    kw = dict(y_score=s, subconcept=sc, posteriors=q, train_sizes=SIZES, n_bootstrap=0)
    whole = evaluate_predictions(y, **kw)
    monkeypatch.setattr(evaluation, "_POINT_BLOCK", 1)  # one subset per block
    blocks = evaluate_predictions(y, **kw)
    pd.testing.assert_frame_equal(blocks.subsets, whole.subsets, rtol=0, atol=1e-15)
    assert len(whole.subsets["subset"].unique()) > 2


def test_label_free_recall_per_subconcept():
    """est_recall = Σ q̃_s·hit / Σ q̃_s with q̃ renormalised within the instance's class."""
    y, s, sc, q = _data(7)
    ev = evaluate_predictions(
        y, y_score=s, subconcept=sc, posteriors=q, train_sizes=SIZES, n_bootstrap=200, seed=2
    )
    hit = ((s >= 0.5).astype(int) == y).astype(float)
    qa = q[NAMES].to_numpy() * (np.array(SIDES)[None, :] == y[:, None])
    qa /= qa.sum(1, keepdims=True)
    ps = ev.per_subconcept.set_index("subconcept")
    for k, name in enumerate(NAMES):
        assert ps.loc[name, "est_recall"] == pytest.approx(qa[:, k] @ hit / qa[:, k].sum())
        assert ps.loc[name, "est_n_test"] == pytest.approx(qa[:, k].sum())
        assert ps.loc[name, "est_low"] <= ps.loc[name, "est_recall"] <= ps.loc[name, "est_high"]
    assert set(ev.subconcept_model) == {"class 0", "class 1"}
    assert all(0 <= v <= 1 for v in ev.subconcept_model.values())


def test_zero_in_class_posterior_mass_uses_the_class_mean_utility_and_says_so():
    y, s, _sc, q = _data(8)
    q = q.copy()
    i = int(np.flatnonzero(y == 1)[0])
    q.iloc[i] = [0.5, 0.5, 0.0, 0.0, 0.0]  # all mass on majority subconcepts
    ev = evaluate_predictions(y, y_score=s, posteriors=q, train_sizes=SIZES, n_bootstrap=0)
    u = utilities_from_train_sizes(SIZES)
    qa = q[NAMES].to_numpy() * (np.array(SIDES)[None, :] == y[:, None])
    w = np.where(qa.sum(1) > 0, qa @ u.values / np.where(qa.sum(1) > 0, qa.sum(1), 1), 0.0)
    w[i] = u.values[np.array(SIDES) == 1].mean()
    yp = (s >= 0.5).astype(int)
    assert ev.scores["cBA"] == pytest.approx(balanced_accuracy_score(y, yp, sample_weight=w))
    assert any("1 instance(s) have zero posterior mass" in n for n in ev.notes)


def test_weak_subconcept_model_is_flagged_only_where_utilities_differ():
    """Majority subconcepts all have utility 1: a weak model there changes no weight."""
    y, s, sc, _q = _data(9)
    rng = np.random.default_rng(9)
    flat = pd.DataFrame(rng.dirichlet(np.ones(5) * 50, len(y)), columns=NAMES)  # uninformative
    ev = evaluate_predictions(
        y, y_score=s, subconcept=sc, posteriors=flat, train_sizes=SIZES, n_bootstrap=0
    )
    assert ev.weighted_classes == ["class 1"]
    assert all(v < 0.7 for v in ev.subconcept_model.values())
    assert ev.weak_classes() == ["class 1"]
    assert ev.to_dict()["weighted_classes"] == ["class 1"]


def test_a_single_class_1_subconcept_is_named_and_nothing_is_weighted():
    rng = np.random.default_rng(0)
    n = 600
    sc = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    y = (sc == "c").astype(int)
    s = np.clip(0.5 * y + rng.normal(0.3, 0.2, n), 0, 1)
    q = pd.DataFrame(rng.dirichlet(np.ones(3), n), columns=["a", "b", "c"])
    sizes = {"a": {"class": 0, "n": 50}, "b": {"class": 0, "n": 30}, "c": {"class": 1, "n": 20}}
    ev = evaluate_predictions(
        y, y_score=s, subconcept=sc, posteriors=q, train_sizes=sizes, n_bootstrap=0
    )
    assert any("single class-1 subconcept ('c')" in note for note in ev.notes)
    for w in ("wBA", "cBA"):  # what the note says
        assert ev.scores[w] == pytest.approx(ev.scores["BA"], abs=1e-12)
    for w in ("wAUC", "cAUC"):
        assert ev.scores[w] == pytest.approx(ev.scores["AUC"], abs=1e-12)
    two = {**sizes, "d": {"class": 1, "n": 10}}  # two class-1 subconcepts: no such note
    sc2 = np.where((sc == "c") & (rng.random(n) < 0.3), "d", sc)
    q2 = pd.DataFrame(rng.dirichlet(np.ones(4), n), columns=["a", "b", "c", "d"])
    ev2 = evaluate_predictions(
        y, y_score=s, subconcept=sc2, posteriors=q2, train_sizes=two, n_bootstrap=0
    )
    assert not any("single class-1 subconcept" in note for note in ev2.notes)
