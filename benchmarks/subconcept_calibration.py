"""Does a cross-fitted within-class calibration of the subconcept forest help
``python -m medeval.subconcepts``?

Per KEEL set (binary task of :func:`medeval.tasks.make_binary_task`, seed 0) and split seed:
TRAIN 40 % / REF 30 % / TEST 30 % stratified by subconcept, a scikit-learn logistic
regression (standardised features) fitted on TRAIN scores REF and TEST, and the subconcept
forest of :class:`medeval.subconcept_model.SubconceptModel` is fitted on TRAIN. Two posteriors:

* ``raw``: the forest's own;
* ``calibrated``: within each class c, the forest's within-class posteriors raised to a power
  t_c and renormalised, t_c minimising the log loss of TRAIN's true subconcepts on 5-fold
  out-of-fold forest posteriors (cross-fitted: no TRAIN row is scored by a forest that saw it);
  the class masses stay the forest's.

Reported per variant, against the test rows' true wBA: the mean and sd of cBA − wBA and
rBA − wBA (REF as reference rows), how often rBA's 95 % bootstrap interval holds wBA, and
the paired difference of the absolute errors (calibrated − raw, negative = calibration helps).

    python benchmarks/subconcept_calibration.py --datasets vehicle,segment --seeds 0,1,2
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize_scalar
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from medeval.datasets import load
from medeval.evaluation import evaluate_predictions
from medeval.io.reference import ReferenceRows
from medeval.subconcept_model import SubconceptModel
from medeval.tasks import make_binary_task
from medeval.weights import utilities_from_train_sizes


def _within(q: np.ndarray, sides: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Posteriors renormalised over the subconcepts of each row's class (uniform if none)."""
    m = q * (sides[None, :] == y[:, None])
    mass = m.sum(1, keepdims=True)
    uni = (sides[None, :] == y[:, None]).astype(float)
    return np.where(mass > 0, m / np.maximum(mass, 1e-300), uni / uni.sum(1, keepdims=True))


def _power(q: np.ndarray, sides: np.ndarray, t: dict[int, float]) -> np.ndarray:
    """``q`` with each class's block raised to t_c, renormalised to that class's mass."""
    out = q.copy()
    for c, tc in t.items():
        cols = sides == c
        block = np.power(np.maximum(q[:, cols], 1e-12), tc)
        block /= block.sum(1, keepdims=True)
        out[:, cols] = block * q[:, cols].sum(1, keepdims=True)
    return out


def _fit_powers(X, codes, y, sides, seed: int) -> dict[int, float]:
    oof = np.zeros((len(X), len(sides)))
    for fit, held in StratifiedKFold(5, shuffle=True, random_state=seed).split(X, codes):
        m = SubconceptModel(random_state=seed).fit(X[fit], codes[fit].astype(str), y[fit])
        cols = [int(c) for c in m.classes_]
        oof[np.ix_(held, cols)] = m.predict_proba(X[held])
    qw = _within(oof, sides, y)
    t = {}
    for c in (0, 1):
        rows, cols = y == c, sides == c
        if cols.sum() < 2:
            t[c] = 1.0
            continue
        block, truth = qw[np.ix_(rows, cols)], codes[rows] - np.flatnonzero(cols)[0]

        def loss(tc, block=block, truth=truth):
            b = np.power(np.maximum(block, 1e-12), tc)
            b /= b.sum(1, keepdims=True)
            return -np.mean(np.log(b[np.arange(len(b)), truth]))

        t[c] = float(minimize_scalar(loss, bounds=(0.05, 5), method="bounded").x)
    return t


def one_split(task, seed: int, n_bootstrap: int) -> dict[str, dict[str, float]]:
    X, y, codes = task.data.X, task.y, task.subconcept
    sides = np.array([s.side for s in task.subconcepts])
    idx = np.arange(len(y))
    tr, rest = train_test_split(idx, test_size=0.6, stratify=codes, random_state=seed)
    ref, te = train_test_split(rest, test_size=0.5, stratify=codes[rest], random_state=seed)
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X[tr], y[tr])
    model = SubconceptModel(random_state=seed).fit(X[tr], codes[tr].astype(str), y[tr])
    order = [int(c) for c in model.classes_]  # model columns → task codes
    sizes = {str(c): {"class": int(sides[c]), "n": int((codes[tr] == c).sum())} for c in order}
    t = _fit_powers(X[tr], codes[tr], y[tr], sides, seed)
    out = {}
    for name in ("raw", "calibrated"):
        q = {}
        for part, rows in (("ref", ref), ("test", te)):
            raw = np.zeros((len(rows), len(sides)))
            raw[:, order] = model.predict_proba(X[rows])
            q[part] = raw if name == "raw" else _power(raw, sides, t)
        cols = [str(c) for c in range(len(sides))]
        s_ref, s_te = clf.predict_proba(X[ref])[:, 1], clf.predict_proba(X[te])[:, 1]
        rows = ReferenceRows.from_arrays(
            utilities_from_train_sizes(sizes),
            y_true=y[ref],
            subconcept=[str(c) for c in codes[ref]],
            posteriors=q["ref"],
            posterior_columns=cols,
            y_score=s_ref,
        )
        ev = evaluate_predictions(
            y[te],
            y_score=s_te,
            posteriors=q["test"],
            posterior_columns=cols,
            train_sizes=sizes,
            n_bootstrap=n_bootstrap,
            reference=rows,
        )
        truth = evaluate_predictions(
            y[te],
            y_score=s_te,
            subconcept=[str(c) for c in codes[te]],
            train_sizes=sizes,
            n_bootstrap=0,
        ).scores["wBA"]
        lo, hi = ev.intervals["rBA"]
        out[name] = {
            "c_err": ev.scores["cBA"] - truth,
            "r_err": ev.scores["rBA"] - truth,
            "covered": float(lo <= truth <= hi),
        }
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    data = Path(os.environ.get("MEDEVAL_DATA", "../shared/data")) / "keel"
    p.add_argument("--data", default=str(data), help="KEEL folder (default $MEDEVAL_DATA/keel)")
    p.add_argument("--datasets", default="vehicle,segment,satimage")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--bootstrap", type=int, default=200)
    a = p.parse_args(argv)
    t0 = time.time()
    print("dataset   variant     cBA-wBA: mean  |mean|  rBA-wBA: mean  |mean|  rBA covers wBA")
    for name in a.datasets.split(","):
        task = make_binary_task(load("keel", a.data, name=name), seed=0)
        runs = [one_split(task, int(s), a.bootstrap) for s in a.seeds.split(",")]
        for v in ("raw", "calibrated"):
            c = np.array([r[v]["c_err"] for r in runs])
            r = np.array([r[v]["r_err"] for r in runs])
            cov = np.mean([r_[v]["covered"] for r_ in runs])
            print(
                f"{name:9s} {v:11s} {c.mean():+.4f} {np.abs(c).mean():.4f}   "
                f"{r.mean():+.4f} {np.abs(r).mean():.4f}"
                f"  {cov:.2f} of {len(runs)}"
            )
        for e in ("c_err", "r_err"):
            d = np.array([abs(r_["calibrated"][e]) - abs(r_["raw"][e]) for r_ in runs])
            sd = d.std(ddof=1) if len(d) > 1 else float("nan")
            print(f"{name:9s} paired |calibrated| - |raw| of {e}: {d.mean():+.4f} (sd {sd:.4f})")
    print(f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
