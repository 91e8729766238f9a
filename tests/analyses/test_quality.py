"""RQ4 rows of the rectified scores, the weak subconcept model flags, the RQ1 gap left empty
where RQ1 is undefined and the analysis written with coverage, on tiny hand-made results folders."""

import pandas as pd
import pytest

from medeval.analyses.agreement import agreement_by_method, agreement_markdown, agreement_table
from medeval.analyses.coverage import COVERAGE_COLUMNS
from medeval.analyses.quality import subconcept_model_quality, weak_markdown, weighted_classes
from medeval.flows.analyze import analyze
from medeval.protocol.store import ResultsStore
from medeval.scores import WEAK_WITHIN_CLASS_BA

from .results_records import FOLDER, _rec, _s


def _row(table, name):
    rows = table[table.estimator == name]
    assert len(rows) == 1, name
    return rows.iloc[0]


def test_rq4_rows_of_the_rectified_score_by_hand():
    table = agreement_table(FOLDER)
    assert list(table.estimator) == ["BA", "wBA", "pBA", "cBA", "rBA"]
    r = _row(table, "rBA")  # errors +.01, +.01, −.02
    assert r.n == 3 and r.mae == pytest.approx(0.04 / 3) and r.bias == pytest.approx(0.0)
    # closer than BA (errors +.10, −.04, +.10): all three
    assert r.closer_pct == pytest.approx(100.0)
    # sign: a/0 (−.09 vs −.10) yes; a/1 (+.05 vs +.04) yes; b/0 (−.12 vs −.10) yes
    assert r.sign_pct == pytest.approx(100.0)
    assert r.coverage_pct == pytest.approx(200 / 3) and r.mean_width == pytest.approx(0.29 / 3)
    c = _row(table, "cBA")  # errors +.04, −.04, +.06; covers a/1 only
    assert c.mae == pytest.approx(0.14 / 3) and c.coverage_pct == pytest.approx(100 / 3)
    assert c.mean_width == pytest.approx(0.18 / 3)
    # the records carry rBA: it is the score to read, not cBA
    assert table.set_index("estimator").recommended.to_dict() == {
        "BA": False, "wBA": False, "pBA": False, "cBA": False, "rBA": True,
    }  # fmt: skip
    # one of the three evaluations comes from the data set with the weak subconcept model
    assert r.n_weak == 1 and c.n_weak == 1 and _row(table, "wBA").n_weak == 1
    md = agreement_markdown(table, subconcept_model_quality(FOLDER))
    assert "rBA (recommended) is off the true-weight score by 0.013" in md
    assert "cBA: mae 0.047, bias +0.020, coverage 33 %" in md
    assert "1 of these evaluations come from data sets with a weak subconcept model" in md
    assert "**weak subconcept model**: b, class 1: within-class BA 0.500" in md


def test_rectified_rows_are_left_out_where_no_record_has_reference_rows():
    recs = [_rec(r["dataset"], r["split"], {**r["scores"], "rBA": None}) for r in FOLDER]
    table = agreement_table(recs)
    assert list(table.estimator) == ["BA", "wBA", "pBA", "cBA"]
    assert _row(table, "cBA").recommended
    by_method = agreement_by_method(recs)
    assert "rBA" not in set(by_method.estimator)


def test_weak_flags_follow_the_weighted_class_and_the_threshold():
    assert weighted_classes(FOLDER[0]) == ["class 1"]
    # class 0 weighted too (its subconcepts differ in utility): its accuracy counts as well
    both = _rec("c", 0, _s(0.8, 0.7, 0.7, 0.7), utilities={0: [1.0, 3.0], 1: [2.0, 4.0]})
    both["subconcept_model_within_class"] = {"class 0": 0.6, "class 1": 0.9}
    # class 0 with one utility is not weighted: its low accuracy does not flag the data set
    equal = _rec("d", 0, _s(0.8, 0.7, 0.7, 0.7))
    equal["subconcept_model_within_class"] = {"class 0": 0.1, "class 1": 0.9}
    # the flag uses the mean over a data set's records: 0.6 and 0.82 average to 0.71
    avg = [_rec("e", k, _s(0.8, 0.7, 0.7, 0.7), within=w) for k, w in enumerate((0.6, 0.82))]
    q = subconcept_model_quality([*FOLDER, both, equal, *avg])
    weak = q[q.weak]
    assert set(zip(weak.dataset, weak["class"], strict=True)) == {
        ("b", "class 1"),
        ("c", "class 0"),
    }
    e = q[q.dataset == "e"].iloc[0]
    assert e.within_class_ba == pytest.approx(0.71) and e.min_within_class_ba == 0.6
    assert e.n_records == 2 and not e.weak and 0.71 > WEAK_WITHIN_CLASS_BA
    assert "No data set is flagged weak" in weak_markdown(q[~q.weak])
    # records that do not store the accuracy: no flag, and the text says so
    bare = [{k: v for k, v in r.items() if k != "subconcept_model_within_class"} for r in FOLDER]
    assert "No record stores" in weak_markdown(subconcept_model_quality(bare))


def test_rq1_gap_is_empty_where_rq1_is_undefined(tmp_path):
    """One data set under five methods: RQ1 (across data sets) is undefined, and the RQ4 gap
    must not be a correlation across the five method means instead."""
    methods = ("none", "ros", "rus", "smote", "weight")
    recs = []
    for i, m in enumerate(methods):
        for k in range(2):
            scores = _s(0.8 + 0.02 * i, 0.7 + 0.01 * i, 0.72 + 0.03 * i, 0.7 + 0.01 * k)
            recs.append(_rec("a", k, scores, method=m))
    store = ResultsStore(tmp_path / "res")
    for r in recs:
        store.write(r)
    analyze(tmp_path / "res")
    out = tmp_path / "res" / "analysis"
    rq1 = pd.read_csv(out / "rq1.csv")
    assert (rq1.n_datasets < 3).all() and rq1.gap.isna().all()
    agreement = pd.read_csv(out / "agreement.csv", keep_default_na=False)
    assert (agreement.rq1_gap == "").all()  # an empty cell, not a number
    by_method = pd.read_csv(out / "agreement_by_method.csv", keep_default_na=False)
    assert (by_method.rq1_gap == "").all()


def test_analyze_writes_coverage_and_flags_weak_subconcept_models(tmp_path):
    store = ResultsStore(tmp_path / "res")
    for r in FOLDER:
        store.write(r)
    analyze(tmp_path / "res")
    out = tmp_path / "res" / "analysis"
    cov = pd.read_csv(out / "coverage_by_dataset.csv")
    assert list(cov.columns) == COVERAGE_COLUMNS and set(cov.dataset) == {"a", "b"}
    quality = pd.read_csv(out / "subconcept_model.csv")
    assert quality[quality.weak].dataset.tolist() == ["b"]
    agreement = pd.read_csv(out / "agreement.csv")
    assert _row(agreement, "rBA").n_weak == 1 and _row(agreement, "rBA").recommended
    summary = (out / "summary.md").read_text()
    assert "**weak subconcept model**: b, class 1" in summary
    assert "### Coverage per data set" in summary and "- b none rBA: 0 % of 1" in summary
    page = (out / "report.html").read_text()
    assert "weak subconcept model: b, class 1" in page
    assert "Coverage per data set" in page and "b none rBA: 0 % of 1" in page
