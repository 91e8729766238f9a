"""RQ4 on saved folds: the rectified score rM against its power-tuned variant PPI++ (docs/method.md,
"Rectified scores").

Both estimate the true-weight score wM from the class-conditional score cM and reference rows R:

    rectified  rM  = cM(test) − (cM(R) − wM(R))
    PPI++      rM⁺ = wM(R) + λ·(cM(test) − cM(R)),   λ from the joint bootstrap, clipped to [0, 1]

This script reads every fold a benchmark run saved (``python -m medeval.benchmark
--save-predictions``: ``predictions/<set>/<method>-<k>/``, :mod:`medeval.protocol.saved`),
evaluates it with :func:`medeval.evaluation.evaluate_predictions` — with the record's bootstrap
(B, seed, level) and the fold's out-of-bag reference rows — forms PPI++ from that evaluation's
parts (:func:`ppi_part`: its exact cM(test), cM(R), wM(R) and their joint-bootstrap replicates,
so both variants share the replicates; medeval itself computes the rectified score only), and

1. checks that the rectified scores equal the record's rBA / rF1 / rAUC (point estimates, their
   95 % intervals and their values on every subset);
2. builds, per variant, the records with that variant's rM (scores, intervals, subsets) and
   runs the RQ4 analyses of :mod:`medeval.analyses` on them (:func:`agreement_table`,
   :func:`agreement_by_method`, :func:`coverage_by_dataset`): mae and bias against wM of the
   same fold, % of evaluations closer to wM than the unweighted score, coverage of wM by the
   95 % interval, mean width (and relative to cM's), the RQ1 gap;
3. lists, per data set, both variants' coverage next to what explains it: the fewest reference
   rows of a minority subconcept, the within-class balanced accuracy of the subconcept model, the
   mean wAUC and the mean λ.

    MEDEVAL_DATA=/work/shared/data python -m medeval.benchmark --collection keel \\
        --out /tmp/keel --jobs 2 --save-predictions --no-analyze
    python benchmarks/rq4_variants.py /tmp/keel [/tmp/pmlb ...] [--out DIR] [--jobs 2]

Prints Markdown tables (``--out`` also writes them, with the CSVs behind them); exit 1 when a
rectified figure differs from its record.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from medeval.analyses.agreement import agreement_by_method, agreement_table
from medeval.analyses.coverage import coverage_by_dataset
from medeval.analyses.quality import subconcept_model_quality
from medeval.evaluation import Evaluation, evaluate_predictions
from medeval.evaluation.rectified import reference_subset_scores
from medeval.io.predictions import read_predictions, read_train_sizes
from medeval.io.reference import ReferenceRows, load_reference
from medeval.metrics.bootstrap import percentile_interval
from medeval.protocol.saved import fold_folder, has_fold_files
from medeval.protocol.store import ResultsStore
from medeval.scores import FAMILIES, RECOMMENDED_RECTIFIED

#: The compared estimators by prefix, in table order ("r+" marks the PPI++ variant's rows).
LABELS = {"": "unweighted", "w": "wM (truth)", "c": "cM", "r": "rM (rectified)", "r+": "PPI++"}
#: The protocol's decision threshold (``y_pred = y_score >= 0.5``, :mod:`medeval.protocol.forest`).
THRESHOLD = 0.5
#: The compared variants: medeval's rectified score, and PPI++ formed here.
VARIANTS = ("rectified", "ppi++")


@dataclass
class FoldResult:
    """One saved fold evaluated with both variants (what the records need, small enough to
    return from a worker process)."""

    key: tuple[str, str, int]
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    lam: dict[str, float] = field(default_factory=dict)
    ref_w: dict[str, float] = field(default_factory=dict)
    min_reference: int | None = None
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _rectified_part(ev: Evaluation) -> dict[str, Any]:
    """rM's point estimates, intervals and subset values from an evaluation."""
    names = list(RECOMMENDED_RECTIFIED.values())
    sub = ev.subsets[ev.subsets["score"].isin(names)]
    return {
        "scores": {n: float(ev.scores[n]) for n in names},
        "intervals": {n: tuple(map(float, ev.intervals[n])) for n in names if n in ev.intervals},
        "subsets": [
            {"subset": s, "subconcept": c, "score": n, "value": float(v)}
            for s, c, n, v in zip(
                sub["subset"], sub["subconcept"], sub["score"], sub["value"], strict=True
            )
        ],
    }


def ppi_lambda(test_c: torch.Tensor, ref_c: torch.Tensor, ref_w: torch.Tensor) -> float:
    """Power-tuning λ = Cov(wM(R), cM(R)) / (Var cM(test) + Var cM(R)), clipped to [0, 1],
    from replicates ``(B,)`` (undefined ones left out); 1.0 (the plain rectified score) when
    fewer than two replicates are defined or the variances vanish."""
    ok = torch.isfinite(test_c) & torch.isfinite(ref_c) & torch.isfinite(ref_w)
    if int(ok.sum()) < 2:
        return 1.0
    t, c, w = test_c[ok], ref_c[ok], ref_w[ok]
    den = float(t.var() + c.var())
    if not den > 0:
        return 1.0
    cov = float(((w - w.mean()) * (c - c.mean())).sum() / (len(c) - 1))
    return min(1.0, max(0.0, cov / den))


def ppi_part(ev: Evaluation, reference: ReferenceRows, u: Any) -> tuple[dict[str, Any], dict]:
    """PPI++ ``wM(R) + λ·(cM(test) − cM(R))`` from a rectified evaluation's parts: its
    scores, intervals (the same joint replicates) and subset values (each ``sub_i`` with the
    full set's λ), in the form of :func:`_rectified_part`, and λ per family."""
    res = ev.rectified
    lam = {m: ppi_lambda(**parts) for m, parts in res.components.items()}
    out: dict[str, Any] = {"scores": {}, "intervals": {}, "subsets": []}
    for m, parts in res.components.items():
        name, ref = RECOMMENDED_RECTIFIED[m], res.reference_scores[m]
        out["scores"][name] = ref["w"] + lam[m] * (res.class_conditional[m] - ref["c"])
        reps = parts["ref_w"] + lam[m] * (parts["test_c"] - parts["ref_c"])
        if len(reps):
            lo, hi, _ = percentile_interval(reps[:, None], ev.confidence)
            out["intervals"][name] = (float(lo[0]), float(hi[0]))
    for name in RECOMMENDED_RECTIFIED.values():
        out["scores"].setdefault(name, math.nan)
    sub = ev.subsets
    names = [nm for nm in dict.fromkeys(sub["subconcept"]) if isinstance(nm, str)]
    ref_sub = reference_subset_scores(reference, u, names)
    cells = zip(sub["subset"], sub["score"], sub["value"], strict=True)
    test_c = {(s, n[1:]): v for s, n, v in cells if n[0] == "c"}
    for row in _rectified_part(ev)["subsets"]:
        m, nm = row["score"][1:], row["subconcept"]
        if not isinstance(nm, str):  # full
            value = out["scores"][row["score"]]
        else:
            r = ref_sub[nm]
            value = r[("w", m)] + lam[m] * (test_c[(row["subset"], m)] - r[("c", m)])
        out["subsets"].append({**row, "value": float(value)})
    return out, lam


def _evaluate(folder: Path, fold: dict[str, Any]) -> tuple[Evaluation, Any, Any]:
    """The rectified evaluation of a saved fold, the reference rows and the utilities."""
    u = read_train_sizes(folder / "train_sizes.json")
    reference, _ = load_reference(folder / "reference.csv", u, threshold=THRESHOLD)
    table = read_predictions(folder / "predictions.csv", u)
    ev = evaluate_predictions(
        table.y_true,
        y_score=table.y_score,
        y_pred=table.y_pred,
        threshold=THRESHOLD,
        subconcept=table.subconcept,
        posteriors=table.posteriors,
        train_sizes=u,
        n_bootstrap=int(fold["n_bootstrap"]),
        confidence=float(fold["confidence"]),
        seed=int(fold["seed"]),
        reference=reference,
    )
    return ev, reference, u


def evaluate_fold(folder: str | Path) -> FoldResult:
    """Evaluate one saved fold with the rectified and the PPI++ variant.

    The fold's ``fold.json`` gives the bootstrap (replicates, seed, level) its record used; PPI++
    is formed from the same joint replicates (:func:`ppi_part`). Torch runs on one
    thread, as the benchmark grid computes its records (:mod:`medeval.protocol.grid`): on
    folds above torch's parallel grain (about 33,000 rows: connect_4, fars, kddcup, sleep…)
    a multi-threaded sum differs from the records in the last bits. Warnings of the evaluation
    (undefined scores, few reference rows) are collected in ``warnings``.
    """
    folder = Path(folder)
    fold = json.loads((folder / "fold.json").read_text())
    out = FoldResult((fold["dataset"], fold["method"], int(fold["split"])))
    if not fold["reference"]:
        return out
    start, threads = time.perf_counter(), torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # counted and reported, not hidden
            ev, reference, u = _evaluate(folder, fold)
    finally:
        torch.set_num_threads(threads)
    out.warnings = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    ppi, out.lam = ppi_part(ev, reference, u)
    out.variants = {"rectified": _rectified_part(ev), "ppi++": ppi}
    out.ref_w = {m: float(v["w"]) for m, v in ev.rectified.reference_scores.items()}
    counts = reference.counts()
    out.min_reference = min(counts[nm] for nm in u.minority)
    out.seconds = time.perf_counter() - start
    return out


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)


def _interval(item: Any) -> tuple[float, float]:
    if item is None:
        return math.nan, math.nan
    if isinstance(item, dict):  # the metrics.json form
        return _num(item.get("low")), _num(item.get("high"))
    return _num(item[0]), _num(item[1])


def _differs(a: float, b: float) -> bool:
    """Exact comparison (saved floats round-trip), NaN equal to NaN / null."""
    return not ((math.isnan(a) and math.isnan(b)) or a == b)


def check_fold(record: dict[str, Any], result: FoldResult) -> list[str]:
    """Where the rectified figures of ``result`` differ from the record's (empty: none)."""
    where = "{} {} split {}".format(*result.key)
    if not result.variants:
        return []
    mine = result.variants["rectified"]
    problems = []
    for name, value in mine["scores"].items():
        theirs = _num(record["scores"].get(name))
        if _differs(value, theirs):
            problems.append(f"{where}: {name} {value!r} != record {theirs!r}")
        lo, hi = mine["intervals"].get(name, (math.nan, math.nan))
        r_lo, r_hi = _interval((record.get("intervals") or {}).get(name))
        if _differs(lo, r_lo) or _differs(hi, r_hi):
            problems.append(f"{where}: {name} interval ({lo!r}, {hi!r}) != ({r_lo!r}, {r_hi!r})")
    recorded = {
        (s["subset"], s["score"]): _num(s["value"])
        for s in record["subsets"]
        if s["score"] in mine["scores"]
    }
    for s in mine["subsets"]:
        theirs = recorded.get((s["subset"], s["score"]), math.nan)
        if _differs(s["value"], theirs):
            problems.append(f"{where}: {s['score']} on {s['subset']} {s['value']!r} != {theirs!r}")
    return problems


def variant_record(record: dict[str, Any], result: FoldResult, variant: str) -> dict[str, Any]:
    """The record with its rM (scores, intervals, subset values) from ``variant``; unchanged
    where the fold had no reference rows."""
    if not result.variants:
        return record
    part = result.variants[variant]
    names = set(part["scores"])
    out = dict(record)
    out["scores"] = {**record["scores"], **_nulls(part["scores"])}
    intervals = {k: v for k, v in (record.get("intervals") or {}).items() if k not in names}
    out["intervals"] = intervals | {k: list(v) for k, v in part["intervals"].items()}
    kept = [s for s in record["subsets"] if s["score"] not in names]
    out["subsets"] = kept + part["subsets"]
    return out


def _nulls(scores: dict[str, float]) -> dict[str, float | None]:
    return {k: None if math.isnan(v) else v for k, v in scores.items()}


def saved_folds(root: str | Path) -> list[tuple[dict[str, Any], Path]]:
    """Every record of a results folder with its saved fold (records without one are skipped)."""
    out = []
    for rec in ResultsStore(root).records():
        if has_fold_files(root, rec["dataset"], rec["method"], rec["split"]):
            out.append((rec, fold_folder(root, rec["dataset"], rec["method"], rec["split"])))
    return out


def evaluate_root(root: str | Path, jobs: int = 1) -> tuple[list[dict], list[FoldResult]]:
    """Every saved fold of ``root`` evaluated with both variants, with its record."""
    pairs = saved_folds(root)
    folders = [str(folder) for _, folder in pairs]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(evaluate_fold, folders, chunksize=4))
    else:
        results = [evaluate_fold(f) for f in folders]
    return [rec for rec, _ in pairs], results


# --- tables ------------------------------------------------------------------------------------


def _label(prefix: str, family: str) -> str:
    return {"": family, "w": f"w{family}", "c": f"c{family}", "r": f"r{family}"}.get(
        prefix, f"r{family} PPI++"
    )


def comparison_table(rect: list[dict], ppi: list[dict], by: Sequence[str] = ()) -> pd.DataFrame:
    """Per family (and ``by``: ``["method"]``): the unweighted score, wM, cM, rM and PPI++ with
    the RQ4 statistics of :func:`agreement_table` and the width relative to cM's."""
    table = agreement_by_method if by else agreement_table
    a, b = table(rect), table(ppi)
    keys = list(by)
    b = b[b["estimator"].str.startswith("r")].assign(estimator=lambda t: "r+" + t["family"])
    both = pd.concat([a, b], ignore_index=True)
    both["prefix"] = [
        e[: len(e) - len(f)] for e, f in zip(both.estimator, both.family, strict=True)
    ]
    both = both[both.prefix.isin(LABELS)]
    c_width = both[both.prefix == "c"].set_index([*keys, "family"])["mean_width"]
    idx = pd.MultiIndex.from_frame(both[[*keys, "family"]]) if keys else both["family"]
    both["width_vs_c"] = both["mean_width"].to_numpy() / c_width.reindex(idx).to_numpy()
    order = {p: i for i, p in enumerate(LABELS)}
    both["_f"] = both.family.map(FAMILIES.index)
    both["_p"] = both.prefix.map(order)
    both = both.sort_values([*keys, "_f", "_p"])
    both["estimator"] = [_label(p, f) for p, f in zip(both.prefix, both.family, strict=True)]
    cols = [*keys, "family", "estimator", "n", "mae", "bias", "closer_pct", "coverage_pct"]
    return both[[*cols, "mean_width", "width_vs_c", "rq1_gap"]].reset_index(drop=True)


def dataset_table(
    rect: list[dict], ppi: list[dict], results: list[FoldResult], by_method: bool = False
) -> pd.DataFrame:
    """Per data set (pooled over methods unless ``by_method``): coverage and mae of rM and of
    PPI++ per family, with what explains them (fewest minority reference rows, within-class
    BA of the subconcept model, mean wAUC, mean λ per family)."""
    quality = subconcept_model_quality(rect)
    a, b = coverage_by_dataset(rect, quality), coverage_by_dataset(ppi, quality)
    if by_method:
        a, b = a[a.method != "all"], b[b.method != "all"]
    elif (a.method == "all").any():  # several methods: their pooled rows
        a, b = a[a.method == "all"], b[b.method == "all"]
    keys = ["dataset", "method"] if by_method else ["dataset"]
    cols = ["r_coverage_pct", "r_mae", "r_bias", "r_mean_width"]
    wide = a.set_index([*keys, "family"])[["n", "within_class_ba", *cols]].join(
        b.set_index([*keys, "family"])[cols].rename(columns=lambda c: "ppi" + c[1:])
    )
    wide = wide.unstack("family")
    wide.columns = [f"{f}_{c}" for c, f in wide.columns]
    extra = _fold_extras(rect, results, keys)
    return wide.join(extra).reset_index()


def _fold_extras(records: list[dict], results: list[FoldResult], keys: list[str]) -> pd.DataFrame:
    rows = []
    for rec, res in zip(records, results, strict=True):
        row = {"dataset": rec["dataset"], "method": rec["method"]}
        row["min_ref_rows"] = np.nan if res.min_reference is None else res.min_reference
        row["mean_wAUC"] = _num(rec["scores"].get("wAUC"))
        row |= {f"lambda_{m}": res.lam.get(m, np.nan) for m in FAMILIES}
        rows.append(row)
    frame = pd.DataFrame(rows)
    agg = {"min_ref_rows": "min", "mean_wAUC": "mean"} | {f"lambda_{m}": "mean" for m in FAMILIES}
    return frame.groupby(keys).agg(agg)


def head_to_head(rect: list[dict], ppi: list[dict]) -> pd.DataFrame:
    """Per family, evaluation by evaluation: how often PPI++ is nearer wM than rM (a tie, within
    1e-12, is neither), and the mean of |PPI++ − wM| − |rM − wM|."""
    rows = []
    for m in FAMILIES:
        name = RECOMMENDED_RECTIFIED[m]
        w = np.array([_num(r["scores"].get("w" + m)) for r in rect])
        a = np.abs(np.array([_num(r["scores"].get(name)) for r in rect]) - w)
        b = np.abs(np.array([_num(r["scores"].get(name)) for r in ppi]) - w)
        ok = np.isfinite(a) & np.isfinite(b)
        if not ok.any():
            continue
        d = b[ok] - a[ok]
        rows.append(
            {
                "family": m,
                "n": int(ok.sum()),
                "pct_ppi_nearer": 100 * float(np.mean(d < -1e-12)),
                "pct_rectified_nearer": 100 * float(np.mean(d > 1e-12)),
                "mean_diff_abs_err": float(d.mean()),
            }
        )
    return pd.DataFrame(rows)


def low_coverage(rect: list[dict], ppi: list[dict], below: float = 80.0) -> pd.DataFrame:
    """(data set, method, family) where either variant's coverage is below ``below`` %."""
    quality = subconcept_model_quality(rect)
    keys = ["dataset", "method", "family"]
    cols = ["n", "within_class_ba", "r_coverage_pct", "r_mae", "r_bias"]
    a = coverage_by_dataset(rect, quality)
    b = coverage_by_dataset(ppi, quality)
    a, b = a[a.method != "all"].set_index(keys), b[b.method != "all"].set_index(keys)
    both = a[cols].join(b[cols[2:]].rename(columns=lambda c: "ppi" + c[1:]))
    low = (both.r_coverage_pct < below) | (both.ppi_coverage_pct < below)
    return both[low].reset_index()


def level_table(records: list[dict], results: list[FoldResult]) -> pd.DataFrame:
    """Per method and family, why PPI++ errs where rM does not.

    PPI++ = (1 − λ)·wM(R) + λ·rM, so its error against the test fold's wM is
    (1 − λ)·(wM(R) − wM) + λ·(rM − wM): it inherits part of the *level* gap between the
    reference rows' own true-weight score and the test fold's, which rM (using only the
    difference cM(R) − wM(R)) does not. Columns: mean and mean |.| of that gap, mean λ,
    and the two errors' means (bias)."""
    rows = []
    for rec, res in zip(records, results, strict=True):
        for m, lam in res.lam.items():
            w = _num(rec["scores"].get("w" + m))
            r = res.variants["rectified"]["scores"][RECOMMENDED_RECTIFIED[m]]
            ppi = res.variants["ppi++"]["scores"][RECOMMENDED_RECTIFIED[m]]
            gap = res.ref_w.get(m, math.nan) - w
            rows.append((rec["method"], m, gap, abs(gap), lam, r - w, ppi - w))
    cols = ["method", "family", "level_gap", "abs_level_gap", "lambda", "r_bias", "ppi_bias"]
    frame = pd.DataFrame(rows, columns=cols).dropna()
    frame["_f"] = frame.family.map(FAMILIES.index)
    out = frame.groupby(["method", "_f", "family"]).agg(
        n=("level_gap", "size"), **{c: (c, "mean") for c in cols[2:]}
    )
    return out.reset_index().drop(columns="_f")


def lambda_table(results: list[FoldResult]) -> pd.DataFrame:
    """Per family: how λ of PPI++ is distributed over the folds (1 = the rectified score)."""
    rows = []
    for m in FAMILIES:
        lam = np.array([r.lam[m] for r in results if m in r.lam])
        if not len(lam):
            continue
        rows.append(
            {
                "family": m,
                "n": len(lam),
                "mean": lam.mean(),
                "median": float(np.median(lam)),
                "pct_at_1": 100 * float(np.mean(lam >= 1 - 1e-12)),
                "pct_below_0.5": 100 * float(np.mean(lam < 0.5)),
                "pct_at_0": 100 * float(np.mean(lam <= 1e-12)),
            }
        )
    return pd.DataFrame(rows)


# --- output ------------------------------------------------------------------------------------


def _cell(v: Any, col: str) -> str:
    if isinstance(v, float | np.floating):
        if not math.isfinite(v):
            return "–"
        if col.endswith("pct") or col.startswith("pct"):
            return f"{v:.1f} %"
        if col == "level_gap" or col.endswith("bias") or col.startswith("mean_diff"):
            return f"{v:+.4f}".replace("-", "−")
        if col in ("width_vs_c", "mean", "median", "lambda") or col.startswith(
            ("lambda_", "within")
        ):
            return f"{v:.2f}"
        if col == "min_ref_rows":
            return f"{v:.0f}"
        return f"{v:.4f}" if abs(v) < 1 else f"{v:.3f}"
    return str(v)


def markdown(frame: pd.DataFrame) -> str:
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v, c) for v, c in zip(row, cols, strict=True)) + " |")
    return "\n".join(lines)


def _dataset_view(per_set: pd.DataFrame) -> pd.DataFrame:
    """The per-data-set table as read: coverage rM / PPI++ per family, then the diagnostics."""
    view = per_set[["dataset"] + (["method"] if "method" in per_set else [])].copy()
    view["n"] = per_set["BA_n"]
    view["within-class BA"] = per_set["BA_within_class_ba"]
    for m in FAMILIES:
        if f"{m}_r_coverage_pct" in per_set:
            view[f"r{m} / PPI++ cov"] = [
                f"{_cell(a, 'pct')} / {_cell(b, 'pct')}"
                for a, b in zip(
                    per_set[f"{m}_r_coverage_pct"], per_set[f"{m}_ppi_coverage_pct"], strict=True
                )
            ]
            view[f"r{m} / PPI++ mae"] = [
                f"{_cell(a, 'mae')} / {_cell(b, 'mae')}"
                for a, b in zip(per_set[f"{m}_r_mae"], per_set[f"{m}_ppi_mae"], strict=True)
            ]
    view["min ref rows"] = per_set["min_ref_rows"]
    view["mean wAUC"] = per_set["mean_wAUC"]
    for m in FAMILIES:
        view[f"lambda_{m}"] = per_set[f"lambda_{m}"]
    return view.rename(columns={"min ref rows": "min_ref_rows"})


def report(root: str | Path, jobs: int = 1) -> tuple[str, dict[str, pd.DataFrame], list[str]]:
    """Markdown, tables and mismatches of one results folder."""
    start = time.perf_counter()
    records, results = evaluate_root(root, jobs)
    mismatches = [
        p for rec, res in zip(records, results, strict=True) for p in check_fold(rec, res)
    ]
    rect = [variant_record(r, x, "rectified") for r, x in zip(records, results, strict=True)]
    ppi = [variant_record(r, x, "ppi++") for r, x in zip(records, results, strict=True)]
    collections = sorted({str(r.get("collection", r.get("source", ""))) for r in records})
    methods = sorted({r["method"] for r in records})
    tables = {"agreement": comparison_table(rect, ppi)}
    if len(methods) > 1:
        tables["agreement_by_method"] = comparison_table(rect, ppi, by=["method"])
    tables["by_dataset"] = dataset_table(rect, ppi, results)
    tables["head_to_head"] = head_to_head(rect, ppi)
    tables["low_coverage"] = low_coverage(rect, ppi)
    tables["lambda"] = lambda_table([r for r in results if r.variants])
    tables["level_gap"] = level_table(records, results)
    n_ref = sum(bool(r.variants) for r in results)
    n_warn = sum(bool(r.warnings) for r in results)
    head = (
        f"## {', '.join(collections)}: {root}\n\n{len(records)} evaluations "
        f"({n_ref} with reference rows), methods {', '.join(methods)}; "
        f"{time.perf_counter() - start:.0f} s; rectified figures differing from the records: "
        f"{len(mismatches)}; folds with warnings: {n_warn}\n"
    )
    parts = [head, "### Agreement with wM\n", markdown(tables["agreement"])]
    if "agreement_by_method" in tables:
        parts += ["\n### Per correction\n", markdown(tables["agreement_by_method"])]
    parts += ["\n### Per data set\n", markdown(_dataset_view(tables["by_dataset"]))]
    parts += ["\n### PPI++ against rM, evaluation by evaluation\n"]
    parts += [markdown(tables["head_to_head"])]
    parts += ["\n### Coverage below 80 % (data set × method × family)\n"]
    parts += [markdown(tables["low_coverage"]) if len(tables["low_coverage"]) else "none"]
    parts += ["\n### λ of PPI++\n", markdown(tables["lambda"])]
    parts += ["\n### PPI++'s level gap wM(R) − wM\n", markdown(tables["level_gap"]), ""]
    parts += [f"- mismatch: {p}" for p in mismatches[:20]]
    warned = sorted({w for r in results for w in r.warnings})
    parts += [f"- warning: {w}" for w in warned[:10]]
    return "\n".join(parts), tables, mismatches


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", type=Path, help="benchmark folders (--save-predictions)")
    p.add_argument("--out", type=Path, help="also write the Markdown and CSVs here")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    args = p.parse_args(argv)
    bad = 0
    for root in args.results:
        text, tables, mismatches = report(root, args.jobs)
        print(text, flush=True)
        bad += len(mismatches)
        if args.out is not None:
            folder = args.out / root.name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "rq4_variants.md").write_text(text + "\n")
            for name, t in tables.items():
                t.to_csv(folder / f"{name}.csv", index=False)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
