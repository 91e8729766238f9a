"""Rectified label-free scores rBA / rF1 / rAUC and their joint bootstrap (docs/method.md,
"Rectified scores")."""

import warnings

import numpy as np
import pandas as pd
import pytest
import rectified_simulation as sim
import torch
from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

from medeval.evaluation import evaluate_predictions
from medeval.evaluation.rectified import (
    FEW_REFERENCE_ROWS,
    FewReferenceRowsWarning,
    combine,
    point_scores,
    reference_seed,
)
from medeval.io.reference import ReferenceDataError, ReferenceRows, missing_note
from medeval.metrics import UndefinedMetricWarning
from medeval.metrics.bootstrap import percentile_interval
from medeval.weights import class_posteriors, expected_class_utility, utilities_from_train_sizes

U = utilities_from_train_sizes(sim.TRAIN_SIZES)


def proportional(n: int) -> dict[str, int]:
    """Reference counts in the population's mix (a split stratified by subconcept)."""
    return {nm: max(1, round(n * p)) for nm, p in zip(sim.NAMES, sim.SHARES, strict=True)}


def data(seed=0, temperature=2.0, n_test=400, counts=None):
    rng = np.random.default_rng(seed)
    t = sim.draw_test(rng, n_test, temperature)
    r = sim.draw_reference(rng, counts or proportional(600), temperature)
    return t, r


def run(t, ref, **kw):
    return sim.rectify(t, ref, U, **kw)


def reference(r, **kw):
    return ReferenceRows.from_arrays(U, **{**r, **kw})


def true_scores(t):
    w = U.values[[U.index(s) for s in t["subconcept"]]]
    return point_scores(t["y_true"], t["y_pred"], t["y_score"], {"w": w})


def simulate(temperature, seeds, counts=None, reference_stratify="class"):
    """Errors against the realised test-set wM and coverage, per estimator and family."""
    out: dict = {}
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        t = sim.draw_test(rng, 400, temperature)
        if counts is None:  # a random sample of the population with every minority subconcept
            while True:
                r = sim.draw_test(rng, 600, temperature)
                if set(U.minority) <= set(r["subconcept"]):
                    break
        else:
            r = sim.draw_reference(rng, counts, temperature)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FewReferenceRowsWarning)  # 'e': about 10 rows
            res = run(t, reference(r), seed=seed, reference_stratify=reference_stratify)
        truth = true_scores(t)
        for m in ("BA", "F1", "AUC"):
            lo, hi = res.intervals["r" + m]
            tw = truth[("w", m)]
            out.setdefault(("c", m), []).append((res.class_conditional[m] - tw, 0))
            out.setdefault(("r", m), []).append((res.scores["r" + m] - tw, lo <= tw <= hi))
    return {k: np.array(v, dtype=float) for k, v in out.items()}


@pytest.mark.slow
@pytest.mark.parametrize("temperature", [0.5, 2.0])
def test_miscalibrated_posteriors_bias_cm_but_not_rm_and_rm_covers(temperature):
    # Reference rows: a random sample of the population, as out-of-bag rows or a validation
    # part are; coverage against the realised test-set wM (docs/method.md, "Rectified scores").
    res = simulate(temperature, 300)
    for m in ("BA", "F1", "AUC"):
        c_err, r_err, covered = res[("c", m)][:, 0], res[("r", m)][:, 0], res[("r", m)][:, 1]
        se_c, se_r = c_err.std() / np.sqrt(len(c_err)), r_err.std() / np.sqrt(len(r_err))
        assert c_err.mean() > 8 * se_c, (m, c_err.mean(), se_c)  # cM biased upward
        assert abs(r_err.mean()) < 3 * se_r, (m, r_err.mean(), se_r)  # rM unbiased
        assert abs(r_err.mean()) < abs(c_err.mean()) / 10
        assert covered.mean() >= 0.93, (m, covered.mean())


def test_rm_equals_cm_when_the_reference_posteriors_are_exact():
    t, r = data()
    r["posteriors"] = np.eye(len(sim.NAMES))[[U.index(s) for s in r["subconcept"]]]
    res = run(t, reference(r))
    for m, name in (("BA", "rBA"), ("F1", "rF1"), ("AUC", "rAUC")):
        assert res.correction[m] == 0.0
        assert res.scores[name] == res.class_conditional[m]
        torch.testing.assert_close(
            res.replicates[name], res.components[m]["test_c"], rtol=0, atol=0
        )


def test_point_estimates_match_scikit_learn_on_both_sets():
    t, r = data(seed=3)
    ref = reference(r)
    res = run(t, ref, n_bootstrap=0)
    c_test = _class_conditional(t)
    c_ref = _class_conditional(r)
    w_ref = U.values[[U.index(s) for s in r["subconcept"]]]
    for name, y, yp, s, w, got in (
        ("c", t["y_true"], t["y_pred"], t["y_score"], c_test, res.class_conditional),
        ("ref c", r["y_true"], r["y_pred"], r["y_score"], c_ref, {
            m: res.reference_scores[m]["c"] for m in ("BA", "F1", "AUC")}),
        ("ref w", r["y_true"], r["y_pred"], r["y_score"], w_ref, {
            m: res.reference_scores[m]["w"] for m in ("BA", "F1", "AUC")}),
    ):  # fmt: skip
        assert got["BA"] == pytest.approx(balanced_accuracy_score(y, yp, sample_weight=w)), name
        assert got["F1"] == pytest.approx(f1_score(y, yp, sample_weight=w)), name
        assert got["AUC"] == pytest.approx(roc_auc_score(y, s, sample_weight=w)), name
    for m in ("BA", "F1", "AUC"):
        rc, rw = res.reference_scores[m]["c"], res.reference_scores[m]["w"]
        assert res.scores["r" + m] == pytest.approx(res.class_conditional[m] - (rc - rw))
    assert res.intervals == {}


def _class_conditional(d):
    from medeval.weights import class_conditional_weights

    return class_conditional_weights(d["posteriors"], U, d["y_true"]).numpy()


def test_batched_equals_one_at_a_time_and_independent_of_the_chunks():
    t, r = data(seed=1)
    ref = reference(r)
    base = run(t, ref, seed=7)
    for kw in ({"chunk_size": 1}, {"chunk_size": 37}, {"chunk_size": 400}):
        other = run(t, ref, seed=7, **kw)
        for name, reps in base.replicates.items():
            torch.testing.assert_close(other.replicates[name], reps, rtol=1e-12, atol=1e-12)
        for name, bounds in base.intervals.items():
            assert other.intervals[name] == pytest.approx(bounds, rel=1e-12)
    assert run(t, ref, seed=8).replicates["rBA"].ne(base.replicates["rBA"]).any()


def test_test_side_is_paired_with_evaluate_predictions_and_reference_side_independent():
    t, r = data(seed=2)
    res = run(t, reference(r), seed=11, n_bootstrap=400)
    ev = evaluate_predictions(
        t["y_true"],
        y_score=t["y_score"],
        y_pred=t["y_pred"],
        posteriors=pd.DataFrame(t["posteriors"], columns=list(sim.NAMES)),
        train_sizes=sim.TRAIN_SIZES,
        n_bootstrap=400,
        seed=11,
    )
    lo, hi, _ = percentile_interval(res.components["BA"]["test_c"])
    assert (float(lo), float(hi)) == pytest.approx(ev.intervals["cBA"], rel=1e-12)
    assert res.class_conditional["BA"] == pytest.approx(ev.scores["cBA"], rel=1e-12)
    assert reference_seed(11) != 11 and reference_seed(11) == res.bootstrap["reference_seed"]
    corr = np.corrcoef(res.components["BA"]["test_c"], res.components["BA"]["ref_c"])[0, 1]
    assert abs(corr) < 0.15  # independent streams (400 replicates: sd of r about 0.05)
    again = run(t, reference(r), seed=11, n_bootstrap=400, test_replicates={
        m: res.components[m]["test_c"] for m in ("BA", "F1", "AUC")})  # fmt: skip
    torch.testing.assert_close(again.replicates["rF1"], res.replicates["rF1"], rtol=0, atol=0)


def test_the_score_is_the_class_conditional_one_minus_its_error_on_the_reference_rows():
    assert combine(1.0, 0.5, 0.25) == 0.75
    a, b, c = (torch.tensor([0.9, 0.8]), torch.tensor([0.5, 0.6]), torch.tensor([0.4, 0.4]))
    torch.testing.assert_close(combine(a, b, c), a - (b - c))


def test_few_reference_rows_are_listed_and_warned_by_name_and_count():
    t, r = data(counts=dict(proportional(600), e=3, d=FEW_REFERENCE_ROWS))
    with pytest.warns(FewReferenceRowsWarning, match=r"'e' \(3\)") as rec:
        res = run(t, reference(r), n_bootstrap=50)
    assert "'d'" not in str(rec[0].message)
    assert res.few_reference == ["e"]
    assert res.reference_counts == dict(proportional(600), e=3, d=FEW_REFERENCE_ROWS)
    assert any("'e' (3)" in n for n in res.notes)
    assert res.n_reference == len(r["y_true"])


def test_reference_without_a_class_gives_nan_and_a_warning():
    t, r = data()
    keep = r["y_true"] == 1
    r = {k: v[keep] for k, v in r.items()}
    with pytest.warns(UndefinedMetricWarning, match="undefined.*reference rows") as rec:
        res = run(t, reference(r), n_bootstrap=20)
    assert {str(w.message).split()[0] for w in rec} == {"rBA", "rAUC"}  # rF1 needs class 1 only
    assert not np.isnan(res.scores["rF1"])
    assert np.isnan(res.scores["rBA"]) and np.isnan(res.scores["rAUC"])
    assert np.isnan(res.intervals["rBA"]).all()


def test_rauc_unavailable_without_reference_scores():
    t, r = data()
    r = {k: v for k, v in r.items() if k != "y_score"}
    res = run(t, reference(r), n_bootstrap=20)
    assert np.isnan(res.scores["rAUC"]) and "rAUC" in res.unavailable
    assert not np.isnan(res.scores["rBA"])


@pytest.mark.parametrize(
    ("change", "column", "subconcept", "match"),
    [
        ({"subconcept": None}, "subconcept", None, "true 'subconcept'"),
        ({"posteriors": None}, "q_a", None, "posteriors"),
        ({"y_pred": None, "y_score": None}, "y_pred", None, "'y_pred' or 'y_score'"),
        ({"y_true": None}, "y_true", None, "y_true"),
    ],
)
def test_missing_reference_columns_are_named(change, column, subconcept, match):
    _, r = data()
    with pytest.raises(ReferenceDataError, match=match) as err:
        reference(r, **change)
    assert err.value.column == column and err.value.subconcept == subconcept


def test_reference_subconcept_problems_are_named():
    _, r = data()
    unknown = r["subconcept"].astype(object)
    unknown[3] = "zz"
    with pytest.raises(ReferenceDataError, match="'zz' has no training size") as err:
        reference(r, subconcept=unknown)
    assert err.value.subconcept == "zz"
    wrong = r["y_true"].copy()
    i = int(np.flatnonzero(r["subconcept"] == "d")[0])
    wrong[i] = 0
    with pytest.raises(ReferenceDataError, match=rf"row {i}: subconcept 'd' belongs to class 1"):
        reference(r, y_true=wrong)
    keep = r["subconcept"] != "e"  # a subconcept without reference rows is accepted
    assert reference({k: v[keep] for k, v in r.items()}).counts()["e"] == 0
    frame = pd.DataFrame(r["posteriors"][:, :4], columns=[f"q_{n}" for n in sim.NAMES[:4]])
    with pytest.raises(ReferenceDataError, match=r"missing \['e'\]") as err:
        reference(r, posteriors=frame)
    assert err.value.column == "posteriors"
    with pytest.raises(ReferenceDataError, match="'y_pred' must be 0/1"):
        reference(r, y_pred=r["y_pred"] + 2)


def test_reference_posteriors_by_q_columns_are_reordered():
    _, r = data()
    cols = [f"q_{n}" for n in reversed(sim.NAMES)]
    frame = pd.DataFrame(r["posteriors"][:, ::-1], columns=cols)
    np.testing.assert_array_equal(reference(r, posteriors=frame).posteriors, r["posteriors"])


def test_reference_class_weights_follow_the_utilities_they_are_asked_for():
    """The reference rows' class-conditional weights are kept per utilities: other training
    sizes for the same subconcepts give their own weights, never the first ones again."""
    _, r = data()
    ref = reference(r)
    for sizes in (
        sim.TRAIN_SIZES,
        {k: {**v, "n": 3 * v["n"] + 7 * i} for i, (k, v) in enumerate(sim.TRAIN_SIZES.items())},
    ):
        u = utilities_from_train_sizes(sizes)
        cp = class_posteriors(r["posteriors"], u, r["y_true"])
        expected = expected_class_utility(cp, u, r["y_true"]).numpy()
        fallback = int(cp.fallback.sum())
        got, got_fallback = ref.class_weights(u)
        np.testing.assert_array_equal(got, expected)
        assert got_fallback == fallback
    first = ref.class_weights(U)[0]
    assert not np.array_equal(first, ref.class_weights(u)[0])  # the sizes do change them


def test_reference_for_other_subconcepts_is_refused():
    t, r = data()
    other = utilities_from_train_sizes({**sim.TRAIN_SIZES, "f": {"class": 1, "n": 9}})
    ref = reference(r)
    wider = {**t, "posteriors": np.c_[t["posteriors"], np.zeros(len(t["y_true"]))]}
    with pytest.raises(ReferenceDataError, match="checked against subconcepts"):
        sim.rectify(wider, ref, other)
    with pytest.raises(ValueError, match="stratify='subconcept' needs the true test subconcepts"):
        run(t, ref, stratify="subconcept")


def test_stratify_and_groups_change_only_the_test_side():
    t, r = data(seed=5)
    ref = reference(r)
    base = run(t, ref, seed=3)
    flat = run(t, ref, seed=3, stratify="none")
    clustered = run(t, ref, seed=3, groups=np.arange(len(t["y_true"])) // 2, stratify="none")
    torch.testing.assert_close(flat.components["BA"]["ref_c"], base.components["BA"]["ref_c"])
    assert flat.components["BA"]["test_c"].ne(base.components["BA"]["test_c"]).any()
    assert clustered.components["BA"]["test_c"].ne(flat.components["BA"]["test_c"]).any()
    assert flat.scores == base.scores


def _write_reference(path, r):
    frame = pd.DataFrame(
        {k: r[k] for k in ("y_true", "y_score", "y_pred", "subconcept")}
        | {f"q_{n}": r["posteriors"][:, i] for i, n in enumerate(sim.NAMES)}
    )
    frame.to_csv(path, index=False)


def test_reference_rows_from_a_reference_file(tmp_path):
    from medeval.io.predictions import read_predictions

    t, r = data(seed=6)
    _write_reference(tmp_path / "ref.csv", r)
    ref = ReferenceRows.from_table(read_predictions(tmp_path / "ref.csv", U), U)
    assert ref.source.endswith("ref.csv") and len(ref) == len(r["y_true"])
    np.testing.assert_allclose(ref.posteriors, r["posteriors"], rtol=1e-12)
    np.testing.assert_array_equal(ref.subconcept, [U.index(s) for s in r["subconcept"]])
    from_file, direct = run(t, ref, n_bootstrap=0), run(t, reference(r), n_bootstrap=0)
    assert from_file.scores == pytest.approx(direct.scores, rel=1e-12)
    keep = r["subconcept"] != "d"
    _write_reference(tmp_path / "no_d.csv", {k: v[keep] for k, v in r.items()})
    no_d = ReferenceRows.from_table(read_predictions(tmp_path / "no_d.csv", U), U)
    assert no_d.counts()["d"] == 0  # accepted; the evaluation's note names it
    assert "hold no row of 'd'" in missing_note(no_d)


def test_a_rectified_score_outside_0_1_is_reported_as_computed_with_a_note():
    """A perfect test fold (cBA = 1) and reference rows on which cBA is below wBA give
    rBA = 1 − (cBA(R) − wBA(R)) > 1: docs/method.md, "Rectified scores"'s difference, not clipped,
    and a note says so."""
    sizes = {"m": {"class": 0, "n": 100}, "a": {"class": 1, "n": 80}, "b": {"class": 1, "n": 20}}
    u = utilities_from_train_sizes(sizes)
    names = list(u.names)
    y = np.r_[np.zeros(20, int), np.ones(20, int)]
    sub = ["m"] * 20 + ["a"] * 10 + ["b"] * 10
    onehot = np.eye(3)[[names.index(s) for s in sub]]
    ref_pred = y.copy()
    ref_pred[20:25] = 0  # half of subconcept a missed, every b row found
    ref_q = onehot.copy()
    ref_q[30:] = np.eye(3)[names.index("a")]  # b's rows taken for a: their weight too low
    ref = ReferenceRows.from_arrays(
        u, y_true=y, subconcept=sub, posteriors=ref_q, posterior_columns=names, y_pred=ref_pred
    )
    test = {"y_true": y, "y_pred": y, "posteriors": onehot}
    res = sim.rectify(test, ref, u, n_bootstrap=50)
    rc, rw = res.reference_scores["BA"]["c"], res.reference_scores["BA"]["w"]
    assert res.class_conditional["BA"] == 1.0 and rc < rw
    assert res.scores["rBA"] == pytest.approx(1.0 - (rc - rw)) and res.scores["rBA"] > 1
    note = next(n for n in res.notes if n.startswith("rBA:"))
    assert f"the score {res.scores['rBA']:.4f}" in note and "not clipped" in note
    for name in ("rBA", "rF1"):  # a note exactly where a value leaves [0, 1]
        values = [res.scores[name], *res.intervals[name]]
        noted = any(n.startswith(f"{name}:") and "outside [0, 1]" in n for n in res.notes)
        assert noted == any(not -1e-9 <= v <= 1 + 1e-9 for v in values)


def test_round_off_past_one_is_no_note():
    from medeval.evaluation.rectified import _note_out_of_range

    notes: list[str] = []
    _note_out_of_range("rAUC", 0.97, (0.91, 1.0000000000000007), notes)
    _note_out_of_range("rBA", -2e-16, (-4e-16, 0.2), notes)
    assert notes == []
    _note_out_of_range("rAUC", 0.97, (0.91, 1.0004), notes)
    assert len(notes) == 1 and "high 1.0004 outside [0, 1]" in notes[0]
