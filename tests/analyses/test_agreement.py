"""RQ4 agreement table on a tiny hand-made results folder; RQ1 with the new weightings."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from medeval.analyses.agreement import (
    COLUMNS,
    agreement_by_method,
    agreement_figure,
    agreement_markdown,
    agreement_table,
)
from medeval.analyses.common import dataset_means, split_measure, subset_frame
from medeval.analyses.correlation_gap import gap_figure, gap_markdown, gap_table
from medeval.evaluation import PAPER_SCORES
from medeval.flows.analyze import analyze
from medeval.protocol.store import ResultsStore
from medeval.scores import parse_score as split_prefix

PNG = b"\x89PNG"
NAN = float("nan")


def _rec(dataset, split, scores, intervals=None, *, method="none", sub=None, kind=None):
    """A record whose subsets repeat each score on full; largest / smallest from ``sub``.

    ``sub``: ``{score: (largest, smallest)}``; scores not in it take their full value.
    """
    sub = sub or {}
    subsets = []
    for name, value in scores.items():
        largest, smallest = sub.get(name, (value, value))
        for subset, sc, v in (
            ("full", None, value),
            ("largest", "A", largest),
            ("smallest", "B", smallest),
        ):
            subsets.append({"subset": subset, "subconcept": sc, "score": name, "value": v})
    rec = {
        "collection": "toy",
        "dataset": dataset,
        "method": method,
        "split": split,
        "scores": scores,
        "subsets": subsets,
    }
    if intervals is not None:
        rec["intervals"] = intervals
    if kind is not None:
        rec["subconcepts"] = kind
    return rec


def _ba(ba, wba, pba, cba):
    return {"BA": ba, "wBA": wba, "pBA": pba, "cBA": cba}


# Hand-checked folder (BA family):
#   a/0: BA .80  wBA .70  pBA .85  cBA .72    intervals: BA [.75,.85] pBA [.80,.90]
#                                                        cBA [.65,.75] wBA [.60,.80]
#   a/1: BA .60  wBA .65  pBA .55  cBA .60    (cBA ties BA; "low/high" dict form; the cBA
#                                              interval has wBA on its upper bound)
#   b/0: wBA null → left out of every statistic
#   b/1: BA .70  wBA .70  pBA .70  cBA .75    no intervals at all (an old record)
HAND = [
    _rec(
        "a",
        0,
        _ba(0.80, 0.70, 0.85, 0.72),
        {"BA": [0.75, 0.85], "pBA": [0.80, 0.90], "cBA": [0.65, 0.75], "wBA": [0.60, 0.80]},
    ),
    _rec(
        "a",
        1,
        _ba(0.60, 0.65, 0.55, 0.60),
        {
            "BA": {"low": 0.55, "high": 0.70},
            "pBA": {"low": 0.50, "high": 0.60},
            "cBA": {"low": 0.55, "high": 0.65},
            "wBA": {"low": 0.60, "high": 0.70},
        },
    ),
    _rec("b", 0, _ba(0.90, None, 0.88, 0.91), {"cBA": [0.85, 0.95]}),
    _rec("b", 1, _ba(0.70, 0.70, 0.70, 0.75)),
]


def _row(table, name):
    rows = table[table.estimator == name]
    assert len(rows) == 1, name
    return rows.iloc[0]


def test_agreement_columns_by_hand():
    table = agreement_table(HAND)
    assert list(table.columns) == ["subconcepts", *COLUMNS]
    assert list(table.estimator) == ["BA", "wBA", "pBA", "cBA"]
    assert (table.family == "BA").all() and table.n.eq(3).all()

    c = _row(table, "cBA")  # errors +.02, −.05, +.05
    assert c.mae == pytest.approx(0.12 / 3) and c.bias == pytest.approx(0.02 / 3)
    # closer: a/0 yes; a/1 tie with BA → not closer; b/1 |.05| vs 0 → no
    assert c.closer_pct == pytest.approx(100 / 3)
    # sign: a/0 (−.08 vs −.10) agree; a/1 (0 vs +.05) no; b/1 (+.05 vs 0) no
    assert c.sign_pct == pytest.approx(100 / 3)
    # coverage over the two evaluations with intervals; the bound counts as inside
    assert c.coverage_pct == pytest.approx(100.0) and c.mean_width == pytest.approx(0.10)

    p = _row(table, "pBA")  # errors +.15, −.10, 0
    assert p.mae == pytest.approx(0.25 / 3) and p.bias == pytest.approx(0.05 / 3)
    assert p.closer_pct == 0.0  # b/1: an exact tie (0 vs 0) is not closer
    assert p.sign_pct == pytest.approx(100 / 3)  # b/1: no change agrees with no change
    assert p.coverage_pct == 0.0 and p.mean_width == pytest.approx(0.10)

    u = _row(table, "BA")  # errors +.10, −.05, 0
    assert u.mae == pytest.approx(0.05) and u.bias == pytest.approx(0.05 / 3)
    assert math.isnan(u.closer_pct) and math.isnan(u.sign_pct)
    assert u.coverage_pct == pytest.approx(50.0) and u.mean_width == pytest.approx(0.125)

    w = _row(table, "wBA")  # the oracle: only its count and own interval width
    assert all(math.isnan(w[k]) for k in ("mae", "bias", "closer_pct", "sign_pct"))
    assert math.isnan(w.coverage_pct) and w.mean_width == pytest.approx(0.15)

    assert dict(zip(table.estimator, table.recommended, strict=True)) == {
        "BA": False,
        "wBA": False,
        "pBA": False,
        "cBA": True,
    }


def test_coverage_is_nan_without_any_interval_and_families_are_separate():
    recs = [
        _rec("a", k, {"F1": f, "wF1": t, "cF1": e, "rF1": e2, "AUC": 0.9, "wAUC": None})
        for k, (f, t, e, e2) in enumerate([(0.5, 0.4, 0.45, 0.3), (0.6, 0.62, 0.61, 0.55)])
    ]
    recs[0]["scores"]["MCC"] = 0.3  # another family: left out of RQ4
    table = agreement_table(recs)
    assert list(table.estimator) == ["F1", "wF1", "cF1", "rF1", "AUC", "wAUC"]
    c, r = _row(table, "cF1"), _row(table, "rF1")
    assert c.n == 2 and c.mae == pytest.approx(0.03) and c.bias == pytest.approx(0.02)
    assert c.closer_pct == 100.0 and c.sign_pct == 100.0
    assert r.mae == pytest.approx(0.085) and r.closer_pct == 0.0 and r.sign_pct == 50.0
    assert math.isnan(c.coverage_pct) and math.isnan(c.mean_width)
    auc = _row(table, "AUC")  # the true-weight AUC is never finite
    assert auc.n == 0 and math.isnan(auc.mae) and math.isnan(auc.coverage_pct)
    assert table.set_index("estimator").recommended.to_dict() == {
        "F1": False,
        "wF1": False,
        "cF1": False,
        "rF1": True,  # the records carry the rectified score: it is the one to read
        "AUC": False,
        "wAUC": False,
    }


def _gap_folder(methods, n_datasets=6, seed=0):
    """Records whose cBA subsets are random: the RQ1 gap is then a known Pearson difference."""
    rng = np.random.default_rng(seed)
    recs = []
    for m in methods:
        for i in range(n_datasets):
            for k in range(2):
                full, large, small = rng.uniform(0.5, 1, 3)
                scores = _ba(full + 0.05, full, full + 0.02, full)
                recs.append(_rec(f"d{i}", k, scores, method=m, sub={"cBA": (large, small)}))
    return recs


def test_rq1_gap_pools_dataset_method_means():
    recs = _gap_folder(["none", "ros"])
    means = dataset_means(subset_frame(recs))
    cba = means[means.score == "cBA"].pivot_table(
        index=["dataset", "method"], columns="subset", values="value"
    )
    expected = (
        stats.pearsonr(cba["full"], cba["largest"]).statistic
        - stats.pearsonr(cba["full"], cba["smallest"]).statistic
    )
    table = agreement_table(recs)
    assert _row(table, "cBA").rq1_gap == pytest.approx(expected)
    # per method: that method's data-set means, i.e. RQ1's own gap
    by_method = agreement_by_method(recs)
    assert list(by_method.columns) == ["subconcepts", "method", *COLUMNS]
    rq1 = gap_table(means)
    for m in ("none", "ros"):
        row = by_method[(by_method.method == m) & (by_method.estimator == "cBA")].iloc[0]
        ref = rq1[(rq1.method == m) & (rq1.measure == "cBA")].gap.item()
        assert row.rq1_gap == pytest.approx(ref) and row.n == 12


def test_a_malformed_interval_names_the_record_and_score():
    bad = _rec("a", 3, _ba(0.8, 0.7, 0.8, 0.7), {"cBA": [0.6]})
    with pytest.raises(ValueError, match=r"a none split 3: cBA: interval must be \[low, high\]"):
        agreement_table([*HAND, bad])


def test_by_method_splits_the_evaluations():
    recs = [*HAND, *(_rec(r["dataset"], r["split"], r["scores"], method="ros") for r in HAND)]
    recs[-1]["scores"] = _ba(0.70, 0.70, 0.70, 0.60)  # ros b/1: cBA error −.10
    by_method = agreement_by_method(recs)
    none = by_method[(by_method.method == "none") & (by_method.estimator == "cBA")].iloc[0]
    ros = by_method[(by_method.method == "ros") & (by_method.estimator == "cBA")].iloc[0]
    assert none.mae == pytest.approx(0.04) and ros.mae == pytest.approx(0.17 / 3)
    assert math.isnan(ros.coverage_pct)  # the ros copies carry no intervals
    pooled = _row(agreement_table(recs), "cBA")
    assert pooled.n == 6 and pooled.mae == pytest.approx((0.12 + 0.17) / 6)
    assert pooled.coverage_pct == 100.0  # only the none records have intervals


def test_subconcepts_column_says_the_kind_and_splits_mixed_folders():
    alone = agreement_table([_rec(**_kw(r), kind="discovered") for r in HAND])
    assert list(alone.columns) == ["subconcepts", *COLUMNS]
    assert set(alone.subconcepts) == {"discovered"}
    recs = [*HAND, _rec("a", 0, _ba(0.8, 0.7, 0.8, 0.9), kind="discovered")]
    table = agreement_table(recs)
    assert list(table.columns) == ["subconcepts", *COLUMNS]
    disc = table[(table.subconcepts == "discovered") & (table.estimator == "cBA")].iloc[0]
    true = table[(table.subconcepts == "true") & (table.estimator == "cBA")].iloc[0]
    assert disc.n == 1 and disc.bias == pytest.approx(0.2)
    assert true.n == 3 and true.mae == pytest.approx(0.04)
    by_method = agreement_by_method(recs)
    assert list(by_method.columns[:2]) == ["subconcepts", "method"]
    fig = agreement_figure(recs, table, kind="discovered")
    assert fig.get_suptitle().endswith("(discovered subconcepts), 1 evaluations")
    md = agreement_markdown(table)
    assert "(discovered subconcepts)" in md and "(true subconcepts)" in md


def _kw(r):
    return {"dataset": r["dataset"], "split": r["split"], "scores": r["scores"]}


def test_markdown_reads_the_recommended_row_and_figure_is_png():
    table = agreement_table(HAND)
    md = agreement_markdown(table)
    assert "cBA (recommended) is off the true-weight score by 0.040" in md
    assert "bias +0.007" in md and "in 33 % of 3 evaluations" in md
    assert "cBA: label-free, class-conditional predicted weights" in md
    fig = agreement_figure(HAND, table)
    assert [ax.get_title() for ax in fig.axes] == ["BA: estimate − wBA"]
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["BA", "pBA", "cBA"]
    assert any("cov 100 %" in t.get_text() for t in fig.axes[0].texts)


def test_split_measure_knows_the_new_prefixes():
    assert split_measure("cBA") == ("class-conditional", "BA")
    assert split_measure("rAUC") == ("rectified", "AUC")
    assert split_measure("pAUC") == ("predicted", "AUC") and split_measure("F1") == (
        "unweighted",
        "F1",
    )
    assert split_prefix("xF1") == ("x", "F1")
    with pytest.raises(ValueError, match="'MCC'"):
        split_prefix("MCC")


def test_rq1_table_figure_and_markdown_show_the_new_weightings():
    rng = np.random.default_rng(4)
    names = [*PAPER_SCORES, "cBA", "cF1", "cAUC", "rBA"]
    recs = []
    for i in range(5):
        full, large, small = rng.uniform(0.5, 1, 3)
        scores = dict.fromkeys(names, full)
        recs.append(_rec(f"d{i}", 0, scores, sub=dict.fromkeys(names, (large, small))))
    table = gap_table(dataset_means(subset_frame(recs)))
    assert list(table.measure) == [
        "BA", "wBA", "pBA", "cBA", "rBA", "F1", "wF1", "pF1", "cF1",
        "AUC", "wAUC", "pAUC", "cAUC",
    ]  # fmt: skip
    row = table[table.measure == "cBA"].iloc[0]
    assert row.weighting == "class-conditional" and row.family == "BA" and row.n_datasets == 5
    assert table[table.measure == "rBA"].weighting.item() == "rectified"
    md = gap_markdown(table)
    assert "| cBA |" in md and "| rBA |" in md
    assert "cBA: label-free, class-conditional predicted weights" in md
    fig = gap_figure(table, "toy")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "cBA: label-free, class-conditional predicted weights" in labels
    assert "rBA: label-free, cBA rectified with reference rows (prediction-powered)" in labels
    assert len(labels) == 5
    # BA panel: one bar per weighting (one method)
    assert len(fig.axes[1].patches) == 5


def _full_record(r):
    """Add what RQ2, RQ3 and the timing table read to a hand record."""
    per_sc = [
        {
            "subconcept": k,
            "class": int(k != "M"),
            "n_train": n,
            "utility": 1.0,
            "n_test": n,
            "prevalence": 0.5,
            "recall": 0.5,
            "true_weight_sum": float(n),
            "predicted_weight_sum": float(n),
        }
        for k, n in (("M", 10), ("A", 4), ("B", 2))
    ]
    perf = dict.fromkeys(("auc_ovr_macro", "balanced_accuracy", "f1_macro"), 0.8)
    timing = {"unit_s": 1.0, "metrics_s": 0.01, "worker_peak_rss_mb": 100.0}
    return {**r, "per_subconcept": per_sc, "subconcept_model": perf, "timing": timing}


def test_analyze_writes_agreement_tables_figure_and_report_sections(tmp_path):
    store = ResultsStore(tmp_path / "res")
    for r in HAND:
        store.write(_full_record(r))
    analyze(tmp_path / "res")
    out = tmp_path / "res" / "analysis"
    table = pd.read_csv(out / "agreement.csv")
    assert list(table.columns) == ["subconcepts", *COLUMNS]
    assert _row(table, "cBA").mae == pytest.approx(0.04)
    assert _row(table, "cBA").recommended and not _row(table, "pBA").recommended
    by_method = pd.read_csv(out / "agreement_by_method.csv")
    assert list(by_method.columns) == ["subconcepts", "method", *COLUMNS] and set(
        by_method.method
    ) == {"none"}
    assert (out / "agreement.png").read_bytes().startswith(PNG)
    summary = (out / "summary.md").read_text()
    assert "### RQ4" in summary and "cBA (recommended) is off" in summary
    page = (out / "report.html").read_text()
    assert "RQ4" in page and "cBA (recommended) is off" in page


def test_reference_sources_names_each_source_with_its_methods_and_counts():
    from medeval.analyses.agreement import reference_sources

    records = (
        [{"method": "none", "reference": {"source": "out-of-bag", "n": 5}}] * 3
        + [{"method": "ros", "reference": {"source": "cross-fitted", "n": 5}}] * 2
        + [{"method": "smote", "reference": {"source": "out-of-bag", "n": 0, "unavailable": "x"}}]
        + [{"method": "none"}]  # an older record without reference rows
    )
    text = reference_sources(records)
    assert text == (
        "Reference rows of the rectified scores: cross-fitted for ros (2 records); "
        "out-of-bag for none (3 records); unavailable for smote (1 record)."
    )
    assert reference_sources([{"method": "none"}]) == ""
    table = agreement_table([_rec("d", 0, _ba(0.8, 0.7, 0.75, 0.72))])
    assert text in agreement_markdown(table, sources=text)
    assert "Reference rows" not in agreement_markdown(table)
