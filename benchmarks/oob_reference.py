"""Do out-of-bag training rows behave like held-out rows? (docs/method.md,
"Rectified scores", reference rows)

The rectified score ``rBA = cBA(test) − (cBA(R) − wBA(R))`` is right when the class-conditional
score's error on the reference rows R equals its error on the test fold. In the forest protocol
R is the training part scored out of bag (:mod:`medeval.protocol.oob`). This script fits the
protocol's forests on a few KEEL folds (tasks, 5×2 splits and seeds as ``python -m
medeval.benchmark`` builds them) and compares, per correction,

    d_test = cBA − wBA on the test fold        d_oob = cBA − wBA on the out-of-bag rows

(and the same for F1 and AUC): their mean and sd, and of ``d_test − d_oob`` — the rectified score's
error against the test fold's wBA — next to cBA's own error ``d_test``. Variants that differ
only in what counts as "seen" by a tree (no refit):

* ``ros-leak``: a tree that drew a copy of a row other than the first still scores the row;
* ``smote`` (synthetic points linked to no row, the default) and ``smote-parents`` (a tree that
  drew a synthetic point has seen both rows it was interpolated from);
* ``<method>-xfit`` for each correction in ``--xfit`` (default ``smote``): k-fold
  cross-fitting instead of out-of-bag (``--folds`` extra fits of that correction's forest, each
  on the other folds of the training part; the subconcept posteriors stay out of bag).

It also times the out-of-bag pass against one ``predict_proba`` of the same forest on the test
fold.

    python benchmarks/oob_reference.py --data /work/shared/data/keel
    python benchmarks/oob_reference.py --datasets vehicle,segment --splits 0,1,2,3 --trees 100
    python benchmarks/oob_reference.py --collection pmlb --datasets allbp,dna,ecoli --xfit ros
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from imblearn.over_sampling import SMOTE
from sklearn.ensemble import RandomForestClassifier

from medeval.datasets import load
from medeval.evaluation import evaluate_predictions
from medeval.protocol.crossfit import cross_fit_scores
from medeval.protocol.forest import THRESHOLD, derive_seed
from medeval.protocol.oob import (
    class_score,
    forest_oob,
    full_posteriors,
    reference_rows,
    resample_with_origin,
)
from medeval.splits import cv_5x2
from medeval.tasks import make_binary_task
from medeval.weights import utilities

METHODS = ("none", "ros", "rus", "smote", "weight")
FAMILIES = ("BA", "F1", "AUC")
SCORES = tuple(f"{w}{m}" for m in FAMILIES for w in ("", "c", "w"))


def smote_with_parents(X, y, seed: int):
    """SMOTE that records the two rows each synthetic point is interpolated from: ``X_res (M, F)``,
    ``y_res (M,)`` and ``origin (M, 2)`` — an original row is ``[i, -1]``, a synthetic one
    ``[sample, neighbour]`` (:func:`medeval.protocol.oob.forest_oob` takes it as ``origin``).

    imbalanced-learn does not expose them; a subclass records the indices its sample generator
    receives (same random draws, so the same points) and the result is checked against them.
    """
    calls: list[tuple] = []

    class _Recording(SMOTE):
        def _generate_samples(self, X, nn_data, nn_num, rows, cols, steps, y_type=None, y=None):
            calls.append((y_type, np.array(rows), np.array(nn_num[rows, cols]), np.array(steps)))
            return super()._generate_samples(X, nn_data, nn_num, rows, cols, steps, y_type, y)

    X_res, y_res = _Recording(random_state=seed).fit_resample(X, y)
    n = len(y)
    parents = [np.column_stack([np.arange(n), np.full(n, -1)])]
    for y_type, base, neighbour, _ in calls:
        members = np.flatnonzero(np.asarray(y) == y_type)  # SMOTE's X_class rows, in order
        parents.append(np.column_stack([members[base], members[neighbour]]))
    origin = np.concatenate(parents).astype(np.int64)
    if len(origin) != len(y_res):
        raise RuntimeError("SMOTE's synthetic rows could not be traced to their parents")
    # The points must be the interpolations of the recorded parents: a changed imbalanced-learn
    # that generated them differently would otherwise link rows silently and wrongly.
    steps = np.concatenate([c[3] for c in calls]) if calls else np.zeros((0, 1))
    Xa, syn = np.asarray(X, dtype=np.float64), origin[n:]
    expected = Xa[syn[:, 0]] + steps * (Xa[syn[:, 1]] - Xa[syn[:, 0]])
    if not np.allclose(expected, np.asarray(X_res)[n:], rtol=1e-6, atol=1e-6):
        raise RuntimeError("SMOTE's synthetic rows do not match their recorded parents")
    return X_res, y_res, origin


def _forest(n_trees: int, seed: int, method: str) -> RandomForestClassifier:
    extra = {"class_weight": "balanced"} if method == "weight" else {}
    return RandomForestClassifier(n_estimators=n_trees, random_state=seed, n_jobs=1, **extra)


def _scores(y, score, names_of_rows, posteriors, names, u) -> dict[str, float]:
    with warnings.catch_warnings(record=True):  # ill-defined subsets are NaN; counted below
        warnings.simplefilter("always")
        ev = evaluate_predictions(
            y,
            y_score=score,
            threshold=THRESHOLD,
            subconcept=names_of_rows,
            posteriors=pd.DataFrame(posteriors, columns=names),
            train_sizes=u,
            n_bootstrap=0,
        )
    return {s: float(ev.scores[s]) for s in SCORES}


def _timed(fn, *args, clock=time.perf_counter):
    t = clock()
    out = fn(*args)
    return out, clock() - t


def _cross_fit(X, y, strata, seed: int, n_trees: int, method: str, k: int = 2) -> np.ndarray:
    """(N,) class-1 scores from the protocol's cross-fitting
    (:func:`medeval.protocol.crossfit.cross_fit_scores`): ``k`` forests of ``n_trees`` trees
    under ``method``'s correction, each scoring the fold it was not fitted on."""
    out = cross_fit_scores(
        X, y, strata, method, seed=seed, folds=k,
        make_forest=lambda s: _forest(n_trees, s, method),
    )  # fmt: skip
    return np.full(len(y), np.nan) if out is None else out


def run_fold(
    task, split, k: int, seed: int, n_trees: int, methods, xfit=("smote",), folds=2, xfit_trees=None
):
    X, y, sc = task.data.X, task.y, task.subconcept
    train, test = split["train"], split["test"]
    names = task.subconcept_names
    name_arr = np.asarray(names, dtype=object)
    u = utilities(task.train_counts(train), task.sides, names)
    rf_sc = _forest(n_trees, derive_seed(seed, task.name, k, "subconcept"), "none")
    _, fit_s = _timed(rf_sc.fit, X[train], sc[train], clock=time.process_time)
    timings = [_time_forest(rf_sc, X[train], None, X[test], task.name, "subconcept", fit_s)]
    q_test = full_posteriors(rf_sc.predict_proba(X[test]), rf_sc.classes_, len(names))
    q_oob = full_posteriors(forest_oob(rf_sc, X[train]).proba, rf_sc.classes_, len(names))
    ytr = y[train]
    rows = []
    for method in methods:
        s = derive_seed(seed, task.name, k, method)
        Xr, yr, origin = resample_with_origin(X[train], ytr, method, s)
        rf, fit_s = _timed(_forest(n_trees, s, method).fit, Xr, yr, clock=time.process_time)
        timings.append(_time_forest(rf, X[train], origin, X[test], task.name, method, fit_s))
        score_test = class_score(rf.predict_proba(X[test]), rf.classes_)
        test_scores = _scores(y[test], score_test, name_arr[sc[test]], q_test, names, u)
        variants = {method: origin}
        if method == "ros":
            first = np.zeros(len(origin), bool)
            first[np.unique(origin, return_index=True)[1]] = True
            variants["ros-leak"] = np.where(first, origin, -1)
        if method == "smote":
            variants["smote-parents"] = smote_with_parents(X[train], ytr, s)[2]
        for variant, org in variants.items():
            oob = forest_oob(rf, X[train], org)
            score = class_score(oob.proba, rf.classes_)
            rows.append(
                _row(task, k, variant, ytr, sc[train], score, q_oob, names, u, test_scores)
                | {"trees_min": float(oob.n_trees[ytr == 1].mean())}
            )
        if method in xfit:
            score, t_x = _timed(
                _cross_fit, X[train], ytr, sc[train], s, xfit_trees or n_trees, method, folds,
                clock=time.process_time,
            )  # fmt: skip
            name = f"{method}-xfit"
            row = _row(task, k, name, ytr, sc[train], score, q_oob, names, u, test_scores)
            rows.append(row | {"trees_min": float(xfit_trees or n_trees), "xfit/fit": t_x / fit_s})
    return rows, timings


def _row(task, k, variant, ytr, sctr, score, q_oob, names, u, test_scores) -> dict:
    ref = reference_rows(
        ytr, score, np.asarray(names, dtype=object)[sctr], q_oob, names, threshold=THRESHOLD
    )
    t = ref.table
    q = t[[f"q_{n}" for n in names]].to_numpy()
    r = _scores(t["y_true"].to_numpy(), t["y_score"].to_numpy(), t["subconcept"], q, names, u)
    out = {"dataset": task.name, "split": k, "variant": variant}
    for fam in FAMILIES:
        out[f"d_test_{fam}"] = test_scores[f"c{fam}"] - test_scores[f"w{fam}"]
        out[f"d_oob_{fam}"] = r[f"c{fam}"] - r[f"w{fam}"]
        out[f"{fam}_test"], out[f"{fam}_oob"] = test_scores[fam], r[fam]
    minority = ytr == 1
    out["dropped"] = ref.n_dropped["total"] / len(ytr)
    out["dropped_min"] = float(np.isnan(score[minority]).mean())
    return out


def _time_forest(rf, X_train, origin, X_test, dataset, forest, fit_s) -> dict:
    """CPU seconds of this process (less sensitive than wall time to other processes on a
    loaded machine): predict_proba on the test fold, the out-of-bag pass alone, and both in one
    pass; medians of 5 interleaved runs."""
    runs = [
        [
            _timed(fn, clock=time.process_time)[1]
            for fn in (
                lambda: rf.predict_proba(X_test),
                lambda: forest_oob(rf, X_train, origin),
                lambda: forest_oob(rf, X_train, origin, X_test=X_test),
            )
        ]
        for _ in range(5)
    ]
    predict_s, oob_s, both_s = np.median(runs, axis=0)
    return {
        "dataset": dataset,
        "forest": forest,
        "fit_s": fit_s,
        "predict_s": predict_s,
        "oob_s": oob_s,
        "both_s": both_s,
    }


def _summary(rows: pd.DataFrame) -> pd.DataFrame:
    out = []
    for variant, g in rows.groupby("variant", sort=False):
        rec = {"variant": variant, "n": len(g)}
        for fam in FAMILIES:
            dt, do = g[f"d_test_{fam}"], g[f"d_oob_{fam}"]
            diff = dt - do
            rec[f"d_test_{fam}"] = f"{dt.mean():+.4f}±{dt.std():.4f}"
            rec[f"d_oob_{fam}"] = f"{do.mean():+.4f}±{do.std():.4f}"
            rec[f"diff_{fam}"] = f"{diff.mean():+.4f}±{diff.std():.4f}"
            rec[f"mae_c/r_{fam}"] = f"{dt.abs().mean():.4f}/{diff.abs().mean():.4f}"
        rec["BA_oob-test"] = f"{(g['BA_oob'] - g['BA_test']).mean():+.4f}"
        rec["drop%min"] = f"{100 * g['dropped_min'].mean():.1f}"
        rec["trees_min"] = f"{g['trees_min'].mean():.1f}"
        if "xfit/fit" in g:
            rec["refit/fit"] = f"{g['xfit/fit'].mean():.2f}" if g["xfit/fit"].notna().any() else ""
        out.append(rec)
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--collection", default="keel", choices=("keel", "pmlb"))
    p.add_argument("--data", default=None, help="its folder (default $MEDEVAL_DATA/<collection>)")
    p.add_argument("--datasets", default="vehicle,segment,satimage,optdigits")
    p.add_argument("--splits", default="0,1", help="which of the ten 5×2 splits")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--trees", type=int, default=100)
    p.add_argument("--xfit", default="smote", help="corrections also cross-fitted (comma list)")
    p.add_argument("--folds", type=int, default=2, help="folds of the cross-fitting")
    p.add_argument("--xfit-trees", type=int, default=None, help="trees per cross-fitted forest")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="write the per-fold rows as CSV")
    a = p.parse_args(argv)
    data = a.data or Path(os.environ.get("MEDEVAL_DATA", "../shared/data")) / a.collection
    rows, timings = [], []
    t0 = time.perf_counter()
    for dataset in a.datasets.split(","):
        task = make_binary_task(load(a.collection, data, name=dataset), seed=a.seed)
        if not task.kept:
            print(f"{dataset}: no task ({task.reason})", flush=True)
            continue
        splits = cv_5x2(task, derive_seed(a.seed, dataset, "split"))
        for k in (int(s) for s in a.splits.split(",")):
            xfit = tuple(a.xfit.split(",")) if a.xfit else ()
            r, t = run_fold(
                task, splits[k], k, a.seed, a.trees, a.methods.split(","), xfit, a.folds,
                a.xfit_trees,
            )  # fmt: skip
            rows += r
            timings += t
        print(f"{dataset}: done at {time.perf_counter() - t0:.0f} s", flush=True)
    frame = pd.DataFrame(rows)
    if a.out:
        frame.to_csv(a.out, index=False)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 30)
    print("\nd = cM − wM; diff = d_test − d_oob (the rectified score's error); mean±sd")
    print(_summary(frame).to_string(index=False))
    for fam in FAMILIES:
        print(f"\nmean |diff_{fam}| per data set (|d_test − d_oob|, the rectified error)")
        pivot = frame.assign(diff=(frame[f"d_test_{fam}"] - frame[f"d_oob_{fam}"]).abs())
        print(pivot.pivot_table("diff", "dataset", "variant", sort=False).round(4).to_string())
    tm = pd.DataFrame(timings)
    tm["oob/predict"] = tm["oob_s"] / tm["predict_s"]
    tm["extra/predict"] = (tm["both_s"] - tm["predict_s"]) / tm["predict_s"]
    tm["oob/fit"] = tm["oob_s"] / tm["fit_s"]
    cols = ["predict_s", "oob/predict", "extra/predict", "oob/fit"]
    print(
        "\nCPU time of the out-of-bag pass (oob) and of the pass that also predicts the test fold"
        "\n(extra = its cost beyond one predict_proba) against one predict_proba on the test fold"
        " and the fit (median)"
    )
    print(tm.groupby("forest", sort=False)[cols].median().round(4).to_string())
    print(tm.groupby("dataset", sort=False)[cols].median().round(4).to_string())
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
