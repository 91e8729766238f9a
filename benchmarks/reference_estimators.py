"""Do reference data beat the class-conditional label-free score? (issue: RQ4 comparisons)

docs/method.md, "Label-free scores" lists refinements that use *reference data* R: held-out
instances with known subconcept, the classifier's prediction and the subconcept model's posteriors.
In the random-forest protocol R is the training fold's out-of-bag (OOB) predictions of both forests.
This script measures, on the same folds as ``python -m medeval.benchmark`` (correction ``none``):

* ``cBA`` / ``cF1`` / ``cAUC``: class-conditional predicted weights (the package's recommended
  scores, computed by :func:`medeval.evaluate_predictions`);
* ``nBA`` / ``nF1`` (named ``n`` so as not to clash with the package's rectified ``rBA``): the
  per-predicted-label count correction (NNLS) *with* the class condition: for each predicted
  label ŷ, ``A_ŷ[s', s]`` = mean of ``q̃_{s'}`` over R's minority instances of subconcept s
  predicted ŷ, ``c_ŷ[s'] = Σ_i q̃_{s'}(x_i)`` over the test fold's minority instances
  predicted ŷ, and ``n_ŷ = NNLS(A_ŷ, c_ŷ)`` estimates how many of them belong to each subconcept.
  Majority utilities are 1, so only the minority recall is estimated:
  ``Σ_s u_s n_1[s] / Σ_s u_s (n_1[s] + n_0[s])``. (It gives class-level counts, not instance
  weights, so there is no ROC AUC version.) Its bootstrap resamples the test rows (within class)
  and the reference rows (within class) in the same replicate.

It writes benchmark-style records (``scores``, ``intervals``, ``subsets``) and prints the RQ4
agreement table of :func:`medeval.analyses.agreement.agreement_table` for them. The estimators that
do not beat the class-conditional score stay here, out of the package (docs/method.md says why).

    python benchmarks/reference_estimators.py --collection keel --out /tmp/ref-keel
    python benchmarks/reference_estimators.py --collection pmlb --datasets ecoli,glass --jobs 2
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.optimize import nnls
from sklearn.ensemble import RandomForestClassifier

from medeval import evaluate_predictions
from medeval.analyses.agreement import agreement_table
from medeval.protocol.grid import resolve_collection
from medeval.splits import cv_5x2, derive_seed
from medeval.tasks import make_binary_task
from medeval.weights import utilities

B = 200


def _forest(seed: int) -> RandomForestClassifier:
    return RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1, oob_score=True)


def _within_minority(q: np.ndarray, minority: np.ndarray) -> np.ndarray:
    """(N, S) posteriors → (N, S1) renormalised over the minority subconcepts (uniform if 0)."""
    qm = q[:, minority]
    mass = qm.sum(1, keepdims=True)
    return np.where(mass > 0, qm / np.where(mass > 0, mass, 1), 1.0 / len(minority))


def count_correction(
    ct: np.ndarray,
    cr: np.ndarray,
    test: dict[str, np.ndarray],
    ref: dict[str, np.ndarray],
    u_min: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """nBA and nF1 for replicate count matrices ``ct (B, N)`` (test) and ``cr (B, R)`` (ref).

    ``test``: ``y, yp (N,)``, ``q (N, S1)``; ``ref``: ``yp (R,)``, ``sc (R,)`` minority codes,
    ``q (R, S1)`` (reference rows are minority instances only). Returns two ``(B,)`` arrays.
    """
    y, yp, qt = test["y"], test["yp"], test["q"]
    s1 = qt.shape[1]
    tn = ct @ ((y == 0) & (yp == 0)).astype(float)
    fp = ct @ ((y == 0) & (yp == 1)).astype(float)
    n_b = ct.shape[0]
    weighted = np.zeros((n_b, 2))  # Σ_s u_s n_ŷ[s] for ŷ = 0, 1
    onehot = np.eye(s1)[ref["sc"]]  # (R, S1)
    pooled_num = cr @ (ref["q"][:, :, None] * onehot[:, None, :]).reshape(len(ref["sc"]), -1)
    pooled_den = cr @ onehot
    for pred in (0, 1):
        c = ct @ (qt * ((y == 1) & (yp == pred))[:, None])  # (B, S1)
        m = (ref["yp"] == pred).astype(float)
        num = cr @ ((ref["q"][:, :, None] * onehot[:, None, :]) * m[:, None, None]).reshape(
            len(m), -1
        )
        den = cr @ (onehot * m[:, None])
        for b in range(n_b):
            a = num[b].reshape(s1, s1)
            d = den[b].copy()
            empty = d <= 0  # no reference instance of s predicted ŷ: use all of s's, then e_s
            a[:, empty] = pooled_num[b].reshape(s1, s1)[:, empty]
            d[empty] = pooled_den[b][empty]
            a = np.where(d > 0, a / np.where(d > 0, d, 1), np.eye(s1))
            n_hat, _ = nnls(a, c[b])
            total = c[b].sum()
            if n_hat.sum() > 0:
                n_hat *= total / n_hat.sum()  # keep the cell's size
            weighted[b, pred] = u_min @ n_hat
    tp_w, fn_w = weighted[:, 1], weighted[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        rba = 0.5 * (tn / (tn + fp) + tp_w / (tp_w + fn_w))
        rf1 = 2 * tp_w / (2 * tp_w + fp + fn_w)
    return rba, rf1


def _multinomial_within(rng: np.random.Generator, strata: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((n, len(strata)))
    for s in np.unique(strata):
        idx = np.flatnonzero(strata == s)
        for b in range(n):
            out[b, idx] = np.bincount(rng.integers(0, len(idx), len(idx)), minlength=len(idx))
    return out


def run_dataset(collection, dataset: str, seed: int = 0) -> list[dict]:
    task = make_binary_task(collection.load(dataset), seed=seed)
    if not task.kept:
        return []
    splits = cv_5x2(task, derive_seed(seed, dataset, "split"))
    names = task.subconcept_names
    sides = task.sides
    minority = np.flatnonzero(sides == 1)
    X, y, sc = task.data.X, task.y, task.subconcept
    records = []
    for k, split in enumerate(splits):
        train, test = split["train"], split["test"]
        u = utilities(task.train_counts(train), sides, names)
        rf_sc = _forest(derive_seed(seed, dataset, k, "subconcept")).fit(X[train], sc[train])
        proba = np.zeros((len(test), len(names)))
        proba[:, rf_sc.classes_] = rf_sc.predict_proba(X[test])
        oob_sc = np.zeros((len(train), len(names)))
        oob_sc[:, rf_sc.classes_] = rf_sc.oob_decision_function_
        rf = _forest(derive_seed(seed, dataset, k, "none")).fit(X[train], y[train])
        score = rf.predict_proba(X[test])[:, list(rf.classes_).index(1)]
        oob = rf.oob_decision_function_[:, list(rf.classes_).index(1)]
        ev = evaluate_predictions(
            y[test],
            y_score=score,
            subconcept=np.asarray(names, dtype=object)[sc[test]],
            posteriors=pd.DataFrame(proba, columns=names),
            train_sizes=u,
            n_bootstrap=B,
            seed=derive_seed(seed, dataset, k, "none", "bootstrap"),
        )
        yp = (score >= 0.5).astype(int)
        # Reference rows: minority training instances with an OOB prediction from both forests.
        ok = (y[train] == 1) & np.isfinite(oob) & (oob_sc.sum(1) > 0)
        code = {c: i for i, c in enumerate(minority)}
        ref = {
            "yp": (oob[ok] >= 0.5).astype(int),
            "sc": np.array([code[c] for c in sc[train][ok]]),
            "q": _within_minority(oob_sc[ok], minority),
        }
        u_min = u.values[minority]
        rng = np.random.default_rng(derive_seed(seed, dataset, k, "reference-bootstrap"))
        subsets = {"full": np.ones(len(test), bool)}
        for i, s in enumerate(sorted(minority, key=lambda c: -u.counts[c]), start=1):
            subsets[f"sub_{i}"] = (y[test] == 0) | (sc[test] == s)
        rows = []
        for name, m in subsets.items():
            t = {"y": y[test][m], "yp": yp[m], "q": _within_minority(proba[m], minority)}
            point = count_correction(np.ones((1, m.sum())), np.ones((1, ok.sum())), t, ref, u_min)
            rows += [(name, "nBA", float(point[0][0])), (name, "nF1", float(point[1][0]))]
            if name == "full":
                ct = _multinomial_within(rng, t["y"], B)
                cr = _multinomial_within(rng, np.zeros(ok.sum(), int), B)
                reps = count_correction(ct, cr, t, ref, u_min)
                r_iv = {
                    n: [float(np.nanquantile(v, 0.025)), float(np.nanquantile(v, 0.975))]
                    for n, v in zip(("nBA", "nF1"), reps, strict=True)
                }
        n_sub = len(subsets) - 1
        subset_rows = []
        for name, score_name, value in rows:
            subset_rows.append({"subset": name, "score": score_name, "value": value})
            if name == "sub_1":
                subset_rows.append({"subset": "largest", "score": score_name, "value": value})
            if name == f"sub_{n_sub}":
                subset_rows.append({"subset": "smallest", "score": score_name, "value": value})
        base = ev.subsets[ev.subsets.score.isin(["BA", "wBA", "pBA", "cBA", "F1", "wF1", "cF1"])]
        subset_rows += base[["subset", "score", "value"]].to_dict(orient="records")
        scores = {k: ev.scores[k] for k in ("BA", "wBA", "pBA", "cBA", "F1", "wF1", "pF1", "cF1")}
        scores |= {r[1]: r[2] for r in rows if r[0] == "full"}
        intervals = {k: list(ev.intervals[k]) for k in scores if k in ev.intervals} | r_iv
        for row in subset_rows:
            row.setdefault("subconcept", None)
        records.append(
            {
                "dataset": dataset,
                "method": "none",
                "split": k,
                "scores": scores,
                "intervals": intervals,
                "subsets": subset_rows,
                "n_reference": int(ok.sum()),
            }
        )
    return records


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--collection", default="keel")
    p.add_argument("--data", default=os.environ.get("MEDEVAL_DATA", "../shared/data"))
    p.add_argument("--datasets", default=None, help="comma-separated (default all)")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", type=Path, default=None, help="write records.json and agreement.csv")
    args = p.parse_args()
    collection = resolve_collection(args.collection, args.data)
    names = args.datasets.split(",") if args.datasets else collection.datasets()
    t0 = time.perf_counter()
    parts = Parallel(n_jobs=args.jobs)(delayed(run_dataset)(collection, n) for n in names)
    records = [r for part in parts for r in part]
    wall = time.perf_counter() - t0
    table = agreement_table(records)
    print(
        f"{args.collection}: {len(names)} data sets, {len(records)} evaluations, "
        f"B = {B}; {wall:.0f} s on {os.cpu_count()} cores ({platform.machine()}), "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.round(4).to_string(index=False))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "records.json").write_text(json.dumps(records))
        table.to_csv(args.out / "agreement.csv", index=False)


if __name__ == "__main__":
    main()
