"""Per-subconcept recall: the rectified recall, its interval, the worst subconcept and its gap."""

from __future__ import annotations

import json
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import rectified_simulation as sim
from subconcept_recall_rows import MANY, U, _data, _evaluate

from medeval.evaluation.rectified import FewReferenceRowsWarning
from medeval.evaluation.rectified_recall import MIN_REFERENCE_ROWS, R_INTERVAL_METHOD
from medeval.metrics._checks import UndefinedMetricWarning
from medeval.weights import class_posteriors


def _by_hand(rows, names=sim.NAMES):
    """``{subconcept: est_s}`` with the class-renormalised posteriors, and the plain recalls."""
    q = class_posteriors(pd.DataFrame(rows["posteriors"], columns=list(names)), U, rows["y_true"])
    q = q.q.numpy()
    hit = (rows["y_pred"] == rows["y_true"]).astype(float)
    est = {nm: float(q[:, i] @ hit / q[:, i].sum()) for i, nm in enumerate(names)}
    plain = {
        nm: float(hit[rows["subconcept"] == nm].mean())
        for nm in names
        if (rows["subconcept"] == nm).any()
    }
    return est, plain


def test_the_rectified_columns_of_every_subconcept():
    """Every subconcept gets the rectified recall of its test rows with an interval, the gap to
    its class's recall with the same interval, a verdict, the reference rows it is worth, and
    the reference rows' own recall."""
    t, r = _data(1)
    ev = _evaluate(t, r)
    ps = ev.per_subconcept.set_index("subconcept")
    est_t, _ = _by_hand(t)
    _, ref_recall = _by_hand(r)
    hit = t["y_pred"] == t["y_true"]
    for nm in sim.NAMES:
        row = ps.loc[nm]
        cr = hit[t["y_true"] == row["class"]].mean()
        assert row.est_recall == pytest.approx(est_t[nm], abs=1e-12)
        assert row.ref_recall == pytest.approx(ref_recall[nm], abs=1e-12)
        assert row.n_reference == MANY[nm]
        assert row.ref_low <= ref_recall[nm] <= row.ref_high
        assert 0 <= row.r_low <= row.r_recall <= row.r_high <= 1
        assert row.r_gap == pytest.approx(cr - row.r_recall)
        assert (row.r_gap_low, row.r_gap_high) == pytest.approx((cr - row.r_high, cr - row.r_low))
        want = "below" if row.r_gap_low > 0 else "not below" if row.r_gap_high <= 0 else "not known"
        assert row.r_verdict == want
        assert row.r_ess > 0 and 0 <= row.r_p_worst <= 1 and row.r_could_be_worst in (True, False)
        assert row.r_interval_method == R_INTERVAL_METHOD
        if row.r_verdict == "not known":
            assert row.r_more_rows >= 0 or math.isnan(row.r_more_rows)  # 0: close to its class
        else:
            assert math.isnan(row.r_more_rows)
    for c in (0, 1):
        assert ps[ps["class"] == c].r_p_worst.sum() == pytest.approx(1.0)
        assert ps[ps["class"] == c].r_could_be_worst.any()
    assert ev.recommended_per_subconcept == "r_recall"
    d = json.loads(json.dumps(ev.to_dict()))
    assert d["recommended"]["per_subconcept"] == "r_recall"
    assert {row["subconcept"] for row in d["per_subconcept"]} == set(sim.NAMES)
    assert {"r_verdict", "r_gap_low", "r_could_be_worst"} <= set(d["per_subconcept"][0])


def test_the_recommended_column_follows_what_is_known():
    t, r = _data(2)
    assert _evaluate(t, r, labels=True).recommended_per_subconcept == "recall"
    assert _evaluate(t, r).recommended_per_subconcept == "r_recall"
    assert _evaluate(t).recommended_per_subconcept == "est_recall"
    without = _evaluate(t)
    assert without.per_subconcept["r_recall"].isna().all()
    assert [w["source"] for w in without.worst_subconcepts] == ["label-free", "label-free"]


def test_same_seed_same_answer_and_the_draws_follow_the_seed():
    t, r = _data(4)
    a, b, c = (_evaluate(t, r, seed=s) for s in (7, 7, 8))
    cols = ["r_low", "r_high", "r_p_worst"]
    pd.testing.assert_frame_equal(a.per_subconcept[cols], b.per_subconcept[cols])
    # the interval is analytic; the share of draws in which each is worst follows the seed
    pd.testing.assert_frame_equal(a.per_subconcept[cols[:2]], c.per_subconcept[cols[:2]])
    assert not a.per_subconcept["r_p_worst"].equals(c.per_subconcept["r_p_worst"])
    assert a.worst_subconcepts == b.worst_subconcepts


def test_few_and_no_reference_rows_are_said():
    counts = dict(MANY, e=MIN_REFERENCE_ROWS - 1)
    t, r = _data(5, counts=counts)
    with pytest.warns(FewReferenceRowsWarning) as caught:  # rBA's warning and the recall's
        ev = _evaluate(t, r)
    recall_warning = rf"fewer than {MIN_REFERENCE_ROWS} reference rows for 'e' \(1; needs 1 more\)"
    assert sum(bool(re.search(recall_warning, str(w.message))) for w in caught) == 1
    assert any(re.search(recall_warning, n) for n in ev.notes)
    e = ev.per_subconcept.set_index("subconcept").loc["e"]
    assert np.isfinite(e.r_recall) and math.isnan(e.r_low) and e.r_verdict == "not known"
    # no reference row of a majority subconcept: its rectified recall is NaN with a note
    t, r = _data(6)
    keep = r["subconcept"] != "b"
    r = {k: v[keep] for k, v in r.items()}
    with pytest.warns(UndefinedMetricWarning, match="rectified recall undefined for 'b'"):
        ev = _evaluate(t, r)
    ps = ev.per_subconcept.set_index("subconcept")
    assert math.isnan(ps.loc["b", "r_recall"]) and ps.loc["b", "n_reference"] == 0
    assert math.isnan(ps.loc["b", "r_low"]) and np.isfinite(ps.loc["a", "r_low"])


def test_without_a_bootstrap_the_rectified_recall_keeps_its_interval_not_its_draws():
    t, r = _data(7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = _evaluate(t, r, n_bootstrap=0)
    ps = ev.per_subconcept
    assert ps["r_recall"].notna().all() and ps["r_low"].notna().all()
    assert ps["r_p_worst"].isna().all() and ps["r_could_be_worst"].isna().all()
    assert all(np.isfinite(w["gap_low"]) for w in ev.worst_subconcepts)


def _covers(seed: int, temperature: float) -> tuple[bool, bool, float, float]:
    """Whether r_recall's and est_recall's intervals of 'e' hold its true test recall, and the
    two errors (about 9 test and 17 reference rows of e)."""
    t, r = _data(seed, temperature=temperature, n_test=500, n_reference=1000)
    ev = _evaluate(t, r, n_bootstrap=200, seed=seed)
    e = ev.per_subconcept.set_index("subconcept").loc["e"]
    truth = (t["y_pred"] == t["y_true"])[t["subconcept"] == "e"].mean()
    return (
        bool(e.r_low <= truth <= e.r_high),
        bool(e.est_low <= truth <= e.est_high),
        float(e.r_recall - truth),
        float(e.est_recall - truth),
    )


@pytest.mark.parametrize("temperature", [2.0])
def test_rectified_recall_holds_the_true_recall_where_the_label_free_one_shrinks(temperature):
    """Known truth, 100 seeds: an underconfident subconcept model (temperature 2) pulls the
    label-free recall of the smallest subconcept e (recall 0.42) toward its class's (~0.8); the
    rectified recall's interval holds e's true test recall (measured 91.5 % over 400 seeds at
    these few rows: about 9 test rows of e, their number varying from seed to seed; the
    reference rows alone held it in 91 %)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewReferenceRowsWarning)  # e has ~17 reference rows
        res = np.array([_covers(s, temperature) for s in range(100)])
    r_cov, est_cov = res[:, 0].mean(), res[:, 1].mean()
    assert r_cov >= 0.89
    assert est_cov < 0.3
    assert res[:, 3].mean() > 0.3  # est_recall shrinks toward the class's recall
    assert abs(res[:, 2].mean()) < 0.05  # the rectified recall does not
