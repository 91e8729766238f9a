"""benchmarks/rq4_variants.py on one tiny saved fold: its rectified figures are the record's and
``evaluate_predictions``'s, its PPI++ figures formed from that evaluation's joint replicates
(wM(R) + λ·(cM(test) − cM(R)) on every subset), and its tables are the RQ4 statistics of those
figures."""

from __future__ import annotations

import copy
import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from medeval.benchmark import main as benchmark_main
from medeval.evaluation import evaluate_predictions
from medeval.io.predictions import read_predictions, read_train_sizes
from medeval.io.reference import load_reference

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "rq4_variants.py"
NAMES = ("rBA", "rF1", "rAUC")


@pytest.fixture(scope="module")
def rq4():
    spec = importlib.util.spec_from_file_location("rq4_variants", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


@pytest.fixture(scope="module")
def saved(shared_data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rq4v") / "bench"
    argv = [
        "--collection", "keel", "--data", str(shared_data), "--out", str(out),
        "--datasets", "vehicle", "--methods", "none", "--n-estimators", "10",
        "--max-splits", "1", "--no-analyze", "--quiet", "--save-predictions",
    ]  # fmt: skip
    assert benchmark_main(argv) == 0
    return out


def _library(folder: Path):
    """evaluate_predictions on the saved fold, called here directly."""
    fold = json.loads((folder / "fold.json").read_text())
    u = read_train_sizes(folder / "train_sizes.json")
    reference, _ = load_reference(folder / "reference.csv", u)
    t = read_predictions(folder / "predictions.csv", u)
    return evaluate_predictions(
        t.y_true, y_score=t.y_score, subconcept=t.subconcept, posteriors=t.posteriors,
        train_sizes=u, n_bootstrap=fold["n_bootstrap"], seed=fold["seed"],
        reference=reference,
    )  # fmt: skip


def test_rectified_figures_are_the_records_and_the_librarys(rq4, saved):
    [(record, folder)] = rq4.saved_folds(saved)
    res = rq4.evaluate_fold(folder)
    assert rq4.check_fold(record, res) == []
    ev = _library(folder)
    mine = res.variants["rectified"]
    for name in NAMES:
        assert mine["scores"][name] == ev.scores[name]
        assert mine["intervals"][name] == tuple(ev.intervals[name])
    # PPI++ differs from the rectified score: λ < 1 somewhere
    assert any(lam < 1 for lam in res.lam.values())
    assert res.variants["ppi++"]["scores"] != res.variants["rectified"]["scores"]
    # λ from the joint replicates' covariances; λ = 1 would be the rectified score itself
    for family, parts in ev.rectified.components.items():
        assert res.lam[family] == rq4.ppi_lambda(**parts)
    # the level-gap table's identity: PPI++ = (1 − λ)·wM(R) + λ·rM
    for family, name in zip(("BA", "F1", "AUC"), NAMES, strict=True):
        lam, r = res.lam[family], res.variants["rectified"]["scores"][name]
        ppi = res.variants["ppi++"]["scores"][name]
        assert ppi == pytest.approx((1 - lam) * res.ref_w[family] + lam * r, abs=1e-12)
    # on every subset: a value where the rectified score has one
    rect = {(s["subset"], s["score"]): s["value"] for s in mine["subsets"]}
    ppi_sub = {(s["subset"], s["score"]): s["value"] for s in res.variants["ppi++"]["subsets"]}
    assert rect.keys() == ppi_sub.keys() and len(rect) > 3
    assert ppi_sub[("full", "rBA")] == res.variants["ppi++"]["scores"]["rBA"]


def test_ppi_lambda_recovers_the_optimum_and_is_clipped(rq4):
    import torch

    g = torch.Generator().manual_seed(0)
    z, e1, e2 = (torch.randn(20000, generator=g, dtype=torch.float64) for _ in range(3))
    ref_c, ref_w, test_c = z + e1, 0.5 * z, e2  # Cov = 0.5, Var = 2 + 1
    assert rq4.ppi_lambda(test_c, ref_c, ref_w) == pytest.approx(0.5 / 3, abs=0.01)
    assert rq4.ppi_lambda(test_c, ref_c, -ref_w) == 0.0
    assert rq4.ppi_lambda(test_c * 0, ref_c * 0, ref_w) == 1.0


def test_a_differing_record_is_reported(rq4, saved):
    [(record, folder)] = rq4.saved_folds(saved)
    res = rq4.evaluate_fold(folder)
    bad = copy.deepcopy(record)
    bad["scores"]["rF1"] += 1e-9
    bad["intervals"]["rAUC"][0] -= 1e-9
    problems = rq4.check_fold(bad, res)
    assert len(problems) == 2
    assert "rF1" in problems[0] and "rAUC interval" in problems[1]


def test_tables_hold_each_variants_errors(rq4, saved):
    records, results = rq4.evaluate_root(saved)
    rect = [rq4.variant_record(r, x, "rectified") for r, x in zip(records, results, strict=True)]
    ppi = [rq4.variant_record(r, x, "ppi++") for r, x in zip(records, results, strict=True)]
    assert ppi[0]["scores"]["rBA"] == results[0].variants["ppi++"]["scores"]["rBA"]
    assert ppi[0]["scores"]["cBA"] == records[0]["scores"]["cBA"]
    table = rq4.comparison_table(rect, ppi).set_index("estimator")
    w = records[0]["scores"]["wBA"]
    for name, recs in (("rBA", rect), ("rBA PPI++", ppi)):
        est = recs[0]["scores"]["rBA"]
        assert table.loc[name, "mae"] == pytest.approx(abs(est - w), abs=1e-15)
        lo, hi = recs[0]["intervals"]["rBA"]
        assert table.loc[name, "coverage_pct"] == (100.0 if lo <= w <= hi else 0.0)
        c_lo, c_hi = records[0]["intervals"]["cBA"]
        assert table.loc[name, "width_vs_c"] == pytest.approx((hi - lo) / (c_hi - c_lo))
    per_set = rq4.dataset_table(rect, ppi, results)
    assert list(per_set["dataset"]) == ["vehicle"]
    assert per_set["lambda_BA"].iloc[0] == results[0].lam["BA"]
    lam = rq4.lambda_table(results).set_index("family")
    assert lam.loc["BA", "n"] == 1 and math.isclose(lam.loc["BA", "mean"], results[0].lam["BA"])
    assert np.isfinite(per_set["BA_ppi_coverage_pct"].iloc[0])
    level = rq4.level_table(records, results).set_index("family")
    gap = results[0].ref_w["BA"] - w
    assert level.loc["BA", "level_gap"] == pytest.approx(gap, abs=1e-15)
    assert level.loc["BA", "ppi_bias"] == pytest.approx(
        results[0].variants["ppi++"]["scores"]["rBA"] - w, abs=1e-15
    )
