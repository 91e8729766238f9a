"""medeval.evaluation.rectification, through evaluate_predictions with reference rows: rBA / rF1
/ rAUC as the estimator gives them, paired with cBA / cF1 / cAUC, closer to the truth than they
under a miscalibrated subconcept model, on every subset, in to_dict; why they are unavailable;
the subconcept model's quality on the reference rows; nothing else changes; binomial
per-subconcept intervals and each subconcept's reference rows."""

import json
import math

import numpy as np
import pandas as pd
import pytest
import rectified_simulation as sim
import torch
from scipy import stats

from medeval.evaluation import (
    ALL_SCORES,
    LABEL_FREE_RECTIFIED,
    RECOMMENDED,
    RECOMMENDED_RECTIFIED,
    evaluate_predictions,
)
from medeval.evaluation.quality import within_class_ba_from_q
from medeval.evaluation.rectified import FewReferenceRowsWarning
from medeval.io.reference import ReferenceRows
from medeval.metrics._checks import UndefinedMetricWarning
from medeval.metrics.bootstrap import percentile_interval
from medeval.metrics.proportion import DEFAULT_METHOD, soft_recall_interval
from medeval.scores import INSTANCE_SCORES
from medeval.weights import class_posteriors, utilities_from_train_sizes

U = utilities_from_train_sizes(sim.TRAIN_SIZES)
COUNTS = {"a": 230, "b": 170, "c": 60, "d": 25, "e": 9}  # about the population's mix


def data(seed=0, temperature=2.0, n_test=400):
    """Test and reference rows with a miscalibrated subconcept model."""
    rng = np.random.default_rng(seed)
    return sim.draw_test(rng, n_test, temperature), sim.draw_reference(rng, COUNTS, temperature)


def evaluate(t, ref=None, **kw):
    kw.setdefault("n_bootstrap", 200)
    return evaluate_predictions(
        t["y_true"],
        y_score=t["y_score"],
        y_pred=t["y_pred"],
        posteriors=pd.DataFrame(t["posteriors"], columns=list(sim.NAMES)),
        train_sizes=sim.TRAIN_SIZES,
        reference=ref,
        **kw,
    )


@pytest.mark.parametrize("temperature", [0.5, 2.0])
def test_rectified_scores_are_those_of_the_estimator_and_paired_with_cm(temperature):
    t, r = data(1, temperature)
    ref = ReferenceRows.from_arrays(U, **r)
    ev = evaluate(t, ref, n_bootstrap=300, seed=7)
    direct = sim.rectify(t, ref, U, n_bootstrap=300, seed=7)
    for m, name in RECOMMENDED_RECTIFIED.items():
        assert ev.scores[name] == pytest.approx(direct.scores[name], rel=1e-12)
        np.testing.assert_allclose(ev.intervals[name], direct.intervals[name], rtol=1e-12)
        # paired: the test side's replicates are exactly the evaluation's cM replicates
        lo, hi, _ = percentile_interval(ev.rectified.components[m]["test_c"])
        assert (float(lo), float(hi)) == ev.intervals[RECOMMENDED[m]]
        torch.testing.assert_close(
            ev.rectified.components[m]["test_c"], direct.components[m]["test_c"], rtol=1e-12, atol=0
        )
        # rM = cM(test) − (cM(R) − wM(R)), with the evaluation's own cM
        assert ev.scores[name] == pytest.approx(
            ev.scores[RECOMMENDED[m]] - ev.rectified.correction[m], abs=1e-12
        )
    # the miscalibrated model biases cM; the correction is not negligible on these data
    assert abs(ev.rectified.correction["BA"]) > 0.005


def test_recommended_switches_to_the_rectified_scores_with_reference_rows():
    t, r = data(2)
    assert evaluate(t, n_bootstrap=0).recommended == RECOMMENDED
    assert evaluate(t, ReferenceRows.from_arrays(U, **r), n_bootstrap=0).recommended == {
        "BA": "rBA",
        "F1": "rF1",
        "AUC": "rAUC",
    }
    # reference rows without scores: no rAUC, so the AUC family falls back to cAUC
    no_scores = ReferenceRows.from_arrays(U, **{**r, "y_score": None})
    ev = evaluate(t, no_scores, n_bootstrap=0)
    assert ev.recommended == {"BA": "rBA", "F1": "rF1", "AUC": "cAUC"}
    assert math.isnan(ev.scores["rAUC"]) and "y_score" in ev.unavailable["rAUC"]


def test_to_dict_holds_the_rectified_scores_reference_rows_and_correction():
    t, r = data(3)
    ref = ReferenceRows.from_arrays(U, **r, source="validation part")
    ev = evaluate(t, ref, n_bootstrap=100, seed=2)
    d = json.loads(json.dumps(ev.to_dict(), allow_nan=False))  # strict JSON: no NaN
    assert list(d["scores"]) == list(ALL_SCORES)
    assert d["recommended"] == {**RECOMMENDED_RECTIFIED, "per_subconcept": "r_recall"}
    for name in LABEL_FREE_RECTIFIED:
        assert d["scores"][name] == pytest.approx(ev.scores[name])
        iv = d["intervals"][name]
        assert iv["low"] <= d["scores"][name] <= iv["high"] and iv["n_undefined"] == 0
        assert name in d["descriptions"]
    assert d["reference"] == {
        "source": "validation part",
        "n": len(r["y_true"]),
        "per_subconcept": COUNTS,
        "few_rows": [],
    }
    rect = d["rectification"]
    assert rect["bootstrap"]["n"] == 100
    assert rect["bootstrap"]["stratify"] == "class"
    for m in ("BA", "F1", "AUC"):
        fam = rect["families"][m]
        assert fam["correction"] == pytest.approx(
            fam["class_conditional_reference"] - fam["true_weight_reference"]
        )
        assert fam["class_conditional_test"] == pytest.approx(ev.scores["c" + m], abs=1e-12)
        assert set(fam) == {
            "class_conditional_test",
            "class_conditional_reference",
            "true_weight_reference",
            "correction",
        }


def test_without_reference_rows_the_rectified_scores_are_null_with_the_reason():
    t, _r = data(4)
    ev = evaluate(t, n_bootstrap=50)
    d = ev.to_dict()
    for name in LABEL_FREE_RECTIFIED:
        assert math.isnan(ev.scores[name]) and name not in ev.intervals
        assert "no reference rows" in ev.unavailable[name]
        assert d["scores"][name] is None and name not in d["intervals"]
    assert d["reference"] is None and d["rectification"] is None and ev.rectified is None
    assert ev.per_subconcept.n_reference.isna().all()
    assert set(ev.subsets.score) <= set(ALL_SCORES)  # metrics.csv: no rectified rows
    assert list(ev.table().score) == list(ALL_SCORES)


def test_reference_rows_change_no_other_number():
    t, r = data(5)
    kw = dict(n_bootstrap=150, seed=4, subconcept=t["subconcept"])
    plain = evaluate(t, **kw)
    with_ref = evaluate(t, ReferenceRows.from_arrays(U, **r), **kw)
    for k in INSTANCE_SCORES:
        assert plain.scores[k] == with_ref.scores[k] or math.isnan(plain.scores[k])
        assert plain.intervals.get(k) == with_ref.intervals.get(k)
        assert plain.unavailable.get(k) == with_ref.unavailable.get(k)
    # the rectified scores add their own subset rows after the others, which stay as they were
    old_rows = with_ref.subsets[~with_ref.subsets.score.isin(LABEL_FREE_RECTIFIED)]
    pd.testing.assert_frame_equal(plain.subsets, old_rows, rtol=0, atol=0)
    assert list(with_ref.subsets.score.unique()[-3:]) == list(LABEL_FREE_RECTIFIED)
    # the reference rows' own columns and the rectified recall are added; nothing else changes
    added = ["n_reference", "ref_recall", "ref_low", "ref_high", "r_recall", "r_low", "r_high"]
    added += ["r_ess", "r_gap", "r_gap_low", "r_gap_high", "r_verdict", "r_could_be_worst"]
    added += ["r_p_worst", "r_interval_method", "n_labelled"]
    assert plain.per_subconcept[[*added, "r_more_rows"]].isna().all().all()
    assert with_ref.per_subconcept[added].notna().all().all()
    assert (with_ref.per_subconcept["n_labelled"] == 0).all()
    added += ["r_more_rows"]  # only where the verdict is open
    pd.testing.assert_frame_equal(
        plain.per_subconcept.drop(columns=added),
        with_ref.per_subconcept.drop(columns=added),
        rtol=0,
        atol=0,
    )
    assert with_ref.per_subconcept.set_index("subconcept").n_reference.to_dict() == COUNTS
    assert plain.worst_subconcepts == with_ref.worst_subconcepts  # true recalls: unchanged
    recall_notes = [n for n in with_ref.notes if "rectified recall" in n]
    quality = [n for n in with_ref.notes if n.startswith("subconcept model on the reference")]
    assert [n for n in with_ref.notes if n not in recall_notes + quality] == plain.notes
    assert recall_notes == []  # e's 9 reference rows are above the warning count


def test_per_subconcept_intervals_are_clopper_pearson_and_never_one_one():
    t, _r = data(6)
    y, sc = t["y_true"], t["subconcept"]
    y_pred = t["y_pred"].copy()
    y_pred[sc == "e"] = 1  # every row of e found
    ev = evaluate({**t, "y_pred": y_pred}, subconcept=sc, n_bootstrap=0)  # no bootstrap needed
    ps = ev.per_subconcept.set_index("subconcept")
    assert (ps.interval_method == DEFAULT_METHOD).all()
    hit = (y_pred == y).astype(float)
    for nm in sim.NAMES:
        m = sc == nm
        k, n = int(hit[m].sum()), int(m.sum())
        ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
        np.testing.assert_allclose([ps.loc[nm, "low"], ps.loc[nm, "high"]], [ci.low, ci.high])
    assert ps.loc["e", "recall"] == 1 and ps.loc["e", "high"] == 1 and ps.loc["e", "low"] < 0.9
    q = class_posteriors(torch.as_tensor(t["posteriors"]), U, y).q.numpy()
    soft = soft_recall_interval(q, hit)
    np.testing.assert_allclose(ps.loc[list(sim.NAMES), "est_low"], soft.low, rtol=1e-12)
    np.testing.assert_allclose(ps.loc[list(sim.NAMES), "est_high"], soft.high, rtol=1e-12)


def test_clustered_rows_count_once_per_cluster_in_the_recall_intervals():
    t, _r = data(7, n_test=300)
    sc = t["subconcept"]
    single = evaluate(t, subconcept=sc, n_bootstrap=0)
    alone = evaluate(t, subconcept=sc, n_bootstrap=0, groups=np.arange(300))
    cols = ["low", "high", "est_low", "est_high"]
    pd.testing.assert_frame_equal(single.per_subconcept[cols], alone.per_subconcept[cols])
    assert alone.per_subconcept.interval_method.str.contains("over groups").all()
    # every row twice, the copies in one cluster: the same information, the same intervals
    twice = {k: np.concatenate([v, v]) for k, v in t.items()}
    doubled = evaluate(
        twice, subconcept=twice["subconcept"], n_bootstrap=0, groups=np.tile(np.arange(300), 2)
    )
    pd.testing.assert_frame_equal(
        single.per_subconcept[cols], doubled.per_subconcept[cols], rtol=1e-9
    )
    naive = evaluate(twice, subconcept=twice["subconcept"], n_bootstrap=0)
    assert (
        (naive.per_subconcept.high - naive.per_subconcept.low)
        .lt(single.per_subconcept.high - single.per_subconcept.low)
        .all()
    )


def test_reference_rows_without_test_posteriors_say_why_and_bad_options_raise():
    t, r = data(8)
    ref = ReferenceRows.from_arrays(U, **r)
    ev = evaluate_predictions(
        t["y_true"],
        y_score=t["y_score"],
        y_pred=t["y_pred"],
        subconcept=t["subconcept"],
        train_sizes=sim.TRAIN_SIZES,
        reference=ref,
        n_bootstrap=0,
    )
    assert all("no test posteriors" in ev.unavailable[k] for k in LABEL_FREE_RECTIFIED)
    assert ev.recommended == RECOMMENDED and ev.to_dict()["rectification"] is None
    assert ev.to_dict()["reference"]["per_subconcept"] == COUNTS
    assert ev.per_subconcept.set_index("subconcept").n_reference.to_dict() == COUNTS
    with pytest.raises(ValueError, match="reference must be ReferenceRows"):
        evaluate(t, r)


def _class_conditional_by_hand(y, q, names):
    """c_i = Σ_{s of y_i's class} q_is u_s / Σ_{s of y_i's class} q_is (docs/method.md,
    "Label-free scores"), row by row."""
    u = {nm: float(U.values[U.index(nm)]) for nm in names}
    side = {nm: int(sim.TRAIN_SIZES[nm]["class"]) for nm in names}
    out = []
    for yi, qi in zip(y, q, strict=True):
        own = [j for j, nm in enumerate(names) if side[nm] == yi]
        out.append(sum(qi[j] * u[names[j]] for j in own) / sum(qi[j] for j in own))
    return np.asarray(out)


def test_rectified_scores_on_every_subset_by_hand():
    """rM(sub_i) = cM(test ∩ sub_i) − (cM(R ∩ sub_i) − wM(R ∩ sub_i)), R ∩ sub_i = R's majority
    rows and its rows of minority subconcept i; weighted metrics from scikit-learn."""
    from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

    t, r = data(6)
    ref = ReferenceRows.from_arrays(U, **r)
    ev = evaluate(t, ref, n_bootstrap=60, seed=3, subconcept=t["subconcept"])
    names = list(sim.NAMES)
    metric = {
        "BA": lambda y, p, s, w: balanced_accuracy_score(y, p, sample_weight=w),
        "F1": lambda y, p, s, w: f1_score(y, p, sample_weight=w),
        "AUC": lambda y, p, s, w: roc_auc_score(y, s, sample_weight=w),
    }
    sub = ev.subsets.set_index(["subset", "score"])
    c_ref = _class_conditional_by_hand(r["y_true"], r["posteriors"], names)
    w_ref = np.array([U.values[U.index(nm)] for nm in r["subconcept"]])
    y_ref, sc_ref = np.asarray(r["y_true"]), np.asarray(r["subconcept"])
    for m, name in RECOMMENDED_RECTIFIED.items():
        full = sub.loc[("full", name)]
        assert full.value == ev.scores[name]
        assert (full.low, full.high) == ev.intervals[name]
        minority = ev.subsets[(ev.subsets.score == name) & ev.subsets.subset.str.startswith("sub_")]
        assert len(minority) == 3  # c, d, e, largest first
        for row in minority.itertuples():
            keep = (y_ref == 0) | (sc_ref == row.subconcept)
            args = (y_ref[keep], np.asarray(r["y_pred"])[keep], np.asarray(r["y_score"])[keep])
            rc, rw = metric[m](*args, c_ref[keep]), metric[m](*args, w_ref[keep])
            tc = sub.loc[(row.subset, "c" + m)].value
            assert row.value == pytest.approx(tc - (rc - rw), abs=1e-10)
            assert math.isnan(row.low) and math.isnan(row.high) and row.n_undefined == 0
        # largest / smallest repeat sub_1 / sub_3, as for every other score
        assert sub.loc[("largest", name)].value == sub.loc[("sub_1", name)].value
        assert sub.loc[("smallest", name)].value == sub.loc[("sub_3", name)].value
    # the correction differs between subsets: each subset uses its own reference rows
    r_ba = [sub.loc[(f"sub_{i}", "rBA")].value - sub.loc[(f"sub_{i}", "cBA")].value for i in (1, 3)]
    assert abs(r_ba[0] - r_ba[1]) > 1e-3


def test_rectified_subset_score_on_a_tiny_example_by_hand():
    """Four test rows, five reference rows, BA worked out on paper."""
    sizes = {
        "maj": {"class": 0, "n": 40},
        "big": {"class": 1, "n": 20},
        "small": {"class": 1, "n": 4},
    }
    u = utilities_from_train_sizes(sizes)  # utilities: maj 1, big 40/20 = 2, small 40/4 = 10
    cols = ["maj", "big", "small"]
    ref = ReferenceRows.from_arrays(
        u,
        y_true=[0, 0, 1, 1, 1],
        subconcept=["maj", "maj", "big", "small", "small"],
        posteriors=pd.DataFrame(
            [[1, 0, 0], [1, 0, 0], [0, 0.5, 0.5], [0, 1, 0], [0, 0, 1]], columns=cols
        ),
        y_pred=[0, 1, 1, 0, 1],
    )
    with pytest.warns(FewReferenceRowsWarning):  # one or two rows per minority subconcept
        ev = evaluate_predictions(
            [0, 0, 1, 1],
            y_pred=[0, 0, 1, 0],
            subconcept=["maj", "maj", "big", "small"],
            posteriors=pd.DataFrame([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], columns=cols),
            train_sizes=sizes,
            reference=ref,
            n_bootstrap=0,
        )
    sub = ev.subsets.set_index(["subset", "score"]).value
    # test ∩ sub_2 (small): rows 0, 1 (recall 1) and row 3 (missed): cBA = (1 + 0) / 2 = 0.5.
    # R ∩ sub_2: majority rows (recall 1/2) and the two "small" rows, c weights 2 (q = [0, 1, 0])
    # and 10, w weights 10 and 10; the second is found: cBA(R) = (1/2 + 10/12) / 2 = 2/3,
    # wBA(R) = (1/2 + 1/2) / 2 = 1/2, so rBA(sub_2) = 0.5 − (2/3 − 1/2) = 1/3.
    assert sub[("sub_2", "cBA")] == pytest.approx(0.5)
    assert sub[("sub_2", "rBA")] == pytest.approx(1 / 3, abs=1e-12)
    # R ∩ sub_1 (big): one row, found, c weight (2 + 10) / 2 = 6, w weight 2: both recalls 1, so
    # the correction is 0 and rBA(sub_1) = cBA(test ∩ sub_1) = (1 + 1) / 2 = 1.
    assert sub[("sub_1", "rBA")] == pytest.approx(1.0, abs=1e-12)


def test_rectified_scores_correct_the_bias_of_a_miscalibrated_subconcept_model():
    """An overconfident subconcept model (T = 0.5) biases cBA; the reference rows' correction
    brings rBA back towards the population's wBA (rectified_simulation.population_wba)."""
    truth = sim.population_wba()
    for seed in range(3):
        rng = np.random.default_rng(seed)
        t = sim.draw_test(rng, 4000, 0.5)
        counts = {"a": 400, "b": 300, "c": 100, "d": 60, "e": 40}
        ev = evaluate(t, ReferenceRows.from_arrays(U, **sim.draw_reference(rng, counts, 0.5)))
        assert ev.scores["cBA"] - truth > 0.04  # the bias to correct
        assert abs(ev.scores["rBA"] - truth) < 0.5 * abs(ev.scores["cBA"] - truth)


def test_a_perfect_subconcept_model_on_the_reference_rows_corrects_nothing():
    """One-hot posteriors of the true subconcepts on the reference rows: cM(R) = wM(R), so rM
    = cM; the model's within-class balanced accuracy there is 1 and, with no subconcept labels
    on the test rows, is the evaluation's measure of the subconcept model."""
    t, r = data(9)
    exact = np.eye(len(sim.NAMES))[[sim.NAMES.index(nm) for nm in r["subconcept"]]]
    ref = ReferenceRows.from_arrays(U, **{**r, "posteriors": exact}, source="/data/ref.csv")
    ev = evaluate(t, ref, n_bootstrap=0)
    assert ev.rectified.correction == {"BA": 0.0, "F1": 0.0, "AUC": 0.0}
    for m, name in RECOMMENDED_RECTIFIED.items():
        assert ev.scores[name] == ev.scores["c" + m]
    assert ev.subconcept_model == {"class 0": 1.0, "class 1": 1.0}
    assert ev.subconcept_model_source == "reference data (ref.csv)"
    note = "subconcept model on the reference data /data/ref.csv: within-class BA"
    assert f"{note} class 0: 1.000, class 1: 1.000" in ev.notes


def test_the_subconcept_models_quality_on_the_reference_rows_is_a_note_beside_the_tests():
    t, r = data(10)
    ref = ReferenceRows.from_arrays(U, **r)
    quality = within_class_ba_from_q(ref.y_true, ref.subconcept, ref.posteriors, U)
    with_test = evaluate(t, ref, n_bootstrap=0, subconcept=t["subconcept"])
    assert with_test.subconcept_model_source == "test set"
    assert with_test.subconcept_model != quality
    text = ", ".join(f"{c}: {v:.3f}" for c, v in quality.items())
    assert f"subconcept model on the reference data reference: within-class BA {text}" in (
        with_test.notes
    )
    alone = evaluate(t, ref, n_bootstrap=0)
    assert alone.subconcept_model == quality


def test_a_rectified_score_undefined_on_a_subsets_test_rows_is_nan_with_a_note_warned_once():
    t, r = data(11)
    t = {k: v[t["subconcept"] != "e"] for k, v in t.items()}  # e is absent from the test rows
    with pytest.warns(UndefinedMetricWarning) as caught:
        ev = evaluate(
            t, ReferenceRows.from_arrays(U, **r), n_bootstrap=0, subconcept=t["subconcept"]
        )
    sub = ev.subsets.set_index(["subset", "score"]).value
    expected = []
    for name in LABEL_FREE_RECTIFIED:
        assert math.isnan(sub[("sub_3", name)]) and math.isnan(sub[("smallest", name)])
        assert not math.isnan(sub[("sub_1", name)]) and not math.isnan(ev.scores[name])
        expected.append(
            f"{name} on subset sub_3 (subconcept 'e') is undefined on its test rows; NaN"
        )
    said = [str(w.message) for w in caught if str(w.message).startswith(LABEL_FREE_RECTIFIED)]
    assert said == expected  # once, not again for the alias "smallest"
    assert all(msg in ev.notes for msg in expected)


def test_without_train_sizes_the_reference_rows_say_why_no_rectified_score():
    t, r = data(12)
    ev = evaluate_predictions(
        t["y_true"],
        y_score=t["y_score"],
        y_pred=t["y_pred"],
        reference=ReferenceRows.from_arrays(U, **r),
        n_bootstrap=0,
    )
    for name in LABEL_FREE_RECTIFIED:
        assert math.isnan(ev.scores[name])
        assert ev.unavailable[name] == (
            "reference rows given, but no training subconcept sizes (train sizes)"
        )
    assert ev.rectified is None and ev.reference["few_rows"] == []


def test_few_reference_rows_of_a_minority_subconcept_are_listed_by_name():
    t, _r = data(13)
    rng = np.random.default_rng(13)
    r = sim.draw_reference(rng, {**COUNTS, "d": 4, "e": 2}, 2.0)
    with pytest.warns(FewReferenceRowsWarning, match=r"'d' \(4\), 'e' \(2\), under 5"):
        ev = evaluate(t, ReferenceRows.from_arrays(U, **r), n_bootstrap=0)
    assert ev.reference["few_rows"] == ["d", "e"]
    assert ev.reference["per_subconcept"] == {**COUNTS, "d": 4, "e": 2}
    assert ev.per_subconcept.set_index("subconcept").n_reference.to_dict() == {
        **COUNTS,
        "d": 4,
        "e": 2,
    }


@pytest.mark.parametrize("stratify", ["class", "none"])
def test_the_joint_bootstrap_resamples_the_test_rows_as_the_evaluation_does(stratify):
    t, r = data(14)
    ev = evaluate(t, ReferenceRows.from_arrays(U, **r), n_bootstrap=30, stratify=stratify)
    boot = ev.to_dict()["rectification"]["bootstrap"]
    assert boot["n"] == 30 and boot["stratify"] == stratify
    assert boot["reference_stratify"] == "class"
    assert boot["method"] == (
        "percentile; joint: test rows as the evaluation's bootstrap "
        f"(within {stratify}), reference rows within class, drawn independently"
    )
