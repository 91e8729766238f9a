"""RQ1–RQ3 on synthetic records whose answers are known, and the analyze entry point."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from medeval.analyses.common import dataset_means, pearson, subset_frame
from medeval.analyses.correlation_gap import gap_table
from medeval.analyses.recall_panels import recall_panel_data, recall_sheets
from medeval.analyses.weight_error import weight_error_by_dataset, weight_error_table
from medeval.evaluation import PAPER_SCORES
from medeval.flows.analyze import analyze
from medeval.protocol.store import ResultsStore

PNG = b"\x89PNG"


def _record(dataset, split, full, largest, smallest, *, method="none", sc=None, perf=0.8):
    """A minimal record: every measure takes the given full / largest / smallest values."""
    subsets = []
    for score in PAPER_SCORES:
        for name, sub, value in (
            ("full", None, full),
            ("sub_1", "A", largest),
            ("sub_2", "B", smallest),
            ("largest", "A", largest),
            ("smallest", "B", smallest),
        ):
            subsets.append({"subset": name, "subconcept": sub, "score": score, "value": value})
    sc = sc or {"M": (10, 10.0, 10.0), "A": (6, 12.0, 12.0), "B": (2, 16.0, 16.0)}
    per_sc = [
        {
            "subconcept": k,
            "class": int(k != "M"),
            "n_train": n,
            "utility": t / n,
            "n_test": n,
            "prevalence": n / 8 if k != "M" else 1.0,
            "recall": 0.5,
            "true_weight_sum": t,
            "predicted_weight_sum": p,
        }
        for k, (n, t, p) in sc.items()
    ]
    return {
        "collection": "toy",
        "dataset": dataset,
        "method": method,
        "split": split,
        "scores": dict.fromkeys(PAPER_SCORES, full),
        "subsets": subsets,
        "per_subconcept": per_sc,
        "subconcept_model": {"auc_ovr_macro": perf, "balanced_accuracy": perf, "f1_macro": perf},
        "timing": {"unit_s": 1.0, "metrics_s": 0.01, "worker_peak_rss_mb": 100.0},
    }


def test_pearson_matches_scipy_and_is_nan_when_undefined():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=20), rng.normal(size=20)
    r, p, n = pearson(x, y)
    ref = stats.pearsonr(x, y)
    assert (r, p, n) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue), 20)
    x[3] = np.nan
    assert pearson(x, y)[2] == 19
    assert math.isnan(pearson(np.ones(5), y[:5])[0])
    assert math.isnan(pearson(x[:2], y[:2])[0])


def test_fold_scores_are_averaged_per_data_set():
    recs = [_record("a", 0, 0.2, 0.2, 0.2), _record("a", 1, 0.4, 0.4, float("nan"))]
    means = dataset_means(subset_frame(recs))
    full = means[(means.subset == "full") & (means.score == "BA")]
    assert full.value.item() == pytest.approx(0.3)
    small = means[(means.subset == "smallest") & (means.score == "BA")]
    assert small.value.item() == pytest.approx(0.2) and small.n_splits.item() == 1


def test_rq1_gap_is_positive_when_full_tracks_the_largest_subconcept():
    rng = np.random.default_rng(1)
    full = rng.uniform(0.5, 1, 12)
    smallest = rng.uniform(0.5, 1, 12)
    recs = [
        _record(f"d{i}", 0, f, f, s) for i, (f, s) in enumerate(zip(full, smallest, strict=True))
    ]
    table = gap_table(dataset_means(subset_frame(recs)))
    assert len(table) == 9 and set(table.measure) == set(PAPER_SCORES)
    row = table[table.measure == "pBA"].iloc[0]
    assert row.weighting == "predicted" and row.family == "BA" and row.n_datasets == 12
    assert row.r_largest == pytest.approx(1.0)
    assert row.r_smallest == pytest.approx(stats.pearsonr(full, smallest).statistic)
    assert row.gap == pytest.approx(1.0 - row.r_smallest)


def test_rq2_pools_sums_over_splits_before_averaging():
    # subconcept B: split 0 t̄ = 16/2 = 8, p̄ = 4/2 = 2; split 1 n = 6: t = 48, p = 36.
    # pooled: t̄ = 64/8 = 8, p̄ = 40/8 = 5 → |8 − 5| = 3 (a mean of split means would give 4.5)
    recs = [
        _record("a", 0, 1, 1, 1, sc={"M": (10, 10.0, 10.0), "B": (2, 16.0, 4.0)}, perf=0.6),
        _record("a", 1, 1, 1, 1, sc={"M": (10, 10.0, 10.0), "B": (6, 48.0, 36.0)}, perf=0.8),
        # another method of the same split must not be counted twice
        _record("a", 1, 1, 1, 1, method="ros", sc={"M": (10, 10.0, 10.0), "B": (6, 48.0, 36.0)}),
    ]
    per_ds = weight_error_by_dataset(recs)
    assert per_ds.mu.item() == pytest.approx((0 + 3) / 2)
    assert per_ds.n_splits.item() == 2 and per_ds.n_subconcepts.item() == 2
    assert per_ds.balanced_accuracy.item() == pytest.approx(0.7)


def test_rq2_drops_outliers_beyond_four_sd():
    rng = np.random.default_rng(2)
    n = 30
    perf = rng.uniform(0.6, 0.9, n)
    mu = 2 - 2 * perf + rng.normal(0, 0.01, n)
    mu[0] = 100.0  # |z| > 4 with 30 data sets
    frame = pd.DataFrame(
        {
            "collection": "toy",
            "dataset": [f"d{i}" for i in range(n)],
            "mu": mu,
            "auc_ovr_macro": perf,
            "balanced_accuracy": perf,
            "f1_macro": perf,
        }
    )
    table = weight_error_table(frame)
    row = table[table.performance == "balanced_accuracy"].iloc[0]
    assert row.n_dropped == 1 and row.dropped == "d0" and row.n_datasets == n - 1
    assert row.r == pytest.approx(stats.pearsonr(mu[1:], perf[1:]).statistic)
    assert row.r < -0.9


def test_rq3_panel_averages_splits_and_sheets_are_pngs():
    recs = [_record(f"d{i}", k, 0.5 + 0.1 * k, 0.6, 0.4) for i in range(3) for k in range(2)]
    table, scores = recall_panel_data(recs, "d1", "none")
    assert list(table.subconcept) == ["M", "A", "B"]
    assert scores["BA"] == pytest.approx(0.55)
    with pytest.raises(ValueError, match="d1.*smote"):
        recall_panel_data(recs, "d1", "smote")
    panels, sheets = recall_sheets(recs, per_sheet=2)
    assert sorted(panels) == ["d0", "d1", "d2"] and len(sheets) == 2
    assert all(b.startswith(PNG) for b in [*panels.values(), *sheets])


def test_analyze_writes_every_table_and_figure(tmp_path):
    store = ResultsStore(tmp_path / "res")
    rng = np.random.default_rng(3)
    for i in range(5):
        for k in range(2):
            store.write(_record(f"d{i}", k, *rng.uniform(0.5, 1, 3), perf=rng.uniform()))
    msg = analyze(tmp_path / "res")
    assert "10 records, 5 data sets" in msg
    out = tmp_path / "res" / "analysis"
    rq1 = pd.read_csv(out / "rq1.csv")
    assert len(rq1) == 9 and rq1.n_datasets.eq(5).all()
    assert pd.read_csv(out / "weight_error_by_dataset.csv").shape[0] == 5
    for name in ("rq1_gap_toy.png", "rq2_scatter_toy.png", "rq3_sheet_toy_1.png", "rq3/d0.png"):
        assert (out / name).read_bytes().startswith(PNG)
    summary = (out / "summary.md").read_text()
    assert "RQ1 — toy (5 data sets)" in summary and "| ALL | 10 |" in summary
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("data:image/png;base64,") >= 3
    assert "RQ1" in page and "RQ2" in page and "RQ3" in page and "report.html" in msg
    with pytest.raises(FileNotFoundError, match="no records"):
        analyze(tmp_path / "empty")
