"""Labels chosen where they decide, against uniform labels, by simulation with known truth
(docs/method.md, "Labels chosen where they decide").

A test set of ``N`` rows: class 0 (70 %) of two subconcepts (recalls 0.95, 0.90); class 1 of a
rare subconcept ``s`` (a share ``rare`` of the class, recall 0.5) and two others (recalls 0.85,
0.75; 60/40 of the rest). The subconcept model's evidence is ``z ~ N(κ·e_S, I)``, its
posteriors the calibrated ``P(S | z)``; κ = 3 / 1.5 / 0.75 (sharp / medium / weak). No
reference rows: the subconcepts of the labelled test rows are all there is.

Per seed, the same budget two ways: **active** — ``batches`` batches, each chosen by
:func:`medeval.evaluation.label_design.plan_batch` from the labels so far (the first with no
verdict yet), its rows' subconcepts revealed before the next; **uniform** — one simple random
sample of the same size. Each is then evaluated (:func:`medeval.evaluation.rectified_recall.
rectified_recall`). Reported per cell: the mean width of the interval of the truly worst
subconcept of class 1 (width 1 where it has none), its coverage of that subconcept's test recall
(and over every subconcept with an interval), and the share of runs in which its verdict is
decided.

Usage: ``python benchmarks/label_next.py --seeds 200 --out cells.csv``
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

import numpy as np
import pandas as pd
from scipy import special

from medeval.evaluation.label_design import plan_batch
from medeval.evaluation.rectified_recall import LabelledRows, rectified_recall, verdicts

SIDES = np.array([0, 0, 1, 1, 1])
NAMES = ("c0", "c1", "s", "a", "b")
RECALL = np.array([0.95, 0.90, 0.5, 0.85, 0.75])


def draw(rng: np.random.Generator, n: int, rare: float, kappa: float):
    """Subconcept codes, hits and within-class posteriors ``(n, 5)`` of ``n`` test rows."""
    shares = np.array(
        [0.7 * 0.6, 0.7 * 0.4, 0.3 * rare, 0.3 * (1 - rare) * 0.6, 0.3 * (1 - rare) * 0.4]
    )
    sub = rng.choice(5, n, p=shares)
    hit = (rng.random(n) < RECALL[sub]).astype(float)
    z = rng.normal(kappa * np.eye(5)[sub], 1.0)
    logit = np.log(shares) + kappa * z
    own = SIDES[None, :] == SIDES[sub][:, None]
    q = special.softmax(np.where(own, logit, -np.inf), axis=1)
    return sub, hit, q


def evaluate(q, hit, y, sub, rows, pi, batch, seed):
    labelled = LabelledRows(rows, sub[rows], pi, batch)
    return rectified_recall(q, hit, y, SIDES, None, labelled=labelled, confidence=0.95, seed=seed)


def one(rng, n, rare, kappa, budget, batches) -> dict:
    sub, hit, q = draw(rng, n, rare, kappa)
    y = SIDES[sub]
    truth = np.array([hit[sub == j].mean() if (sub == j).any() else np.nan for j in range(5)])
    cr = np.array([hit[y == c].mean() for c in SIDES])
    cls1 = np.flatnonzero(SIDES == 1)
    worst = cls1[np.nanargmin(truth[cls1])]
    seed = int(rng.integers(2**31))
    out = {}
    # active: batches chosen one after another
    rows, pi, batch = np.zeros(0, int), np.zeros(0), np.zeros(0, int)
    sizes = np.diff(np.linspace(0, budget, batches + 1).round().astype(int))
    for k, size in enumerate(sizes, start=1):
        labelled = None if not len(rows) else LabelledRows(rows, sub[rows], pi, batch)
        design, _ = plan_batch(
            q,
            hit,
            y,
            SIDES,
            NAMES,
            reference=None,
            labelled=labelled,
            budget=int(size),
            seed=seed + k,
        )
        rows = np.r_[rows, design.rows]
        pi = np.r_[pi, design.inclusion]
        batch = np.r_[batch, np.full(len(design.rows), k)]
    out["active"] = evaluate(q, hit, y, sub, rows, pi, batch, seed)
    srs = rng.choice(n, budget, replace=False)
    out["uniform"] = evaluate(
        q, hit, y, sub, srs, np.full(budget, budget / n), np.ones(budget, int), seed
    )
    res = {}
    for name, r in out.items():
        ok = np.isfinite(r.low) & np.isfinite(truth)
        cover = (r.low <= truth) & (truth <= r.high)
        v = verdicts(cr - r.high, cr - r.low)
        res[name] = dict(
            width=r.high[worst] - r.low[worst] if ok[worst] else 1.0,
            covers=bool(cover[worst]) if ok[worst] else np.nan,
            all_covers=cover[ok].tolist(),
            decided=v[worst] != "not known",
            labelled_worst=int(r.n_reference[worst]),
        )
    return res


def cell(n, rare, kappa, budget, batches, seeds, ci) -> dict:
    rng = np.random.default_rng([ci, 20261202, 37])
    runs = [one(rng, n, rare, kappa, budget, batches) for _ in range(seeds)]
    row = dict(n_test=n, rare=rare, kappa=kappa, budget=budget, batches=batches, seeds=seeds)
    for name in ("active", "uniform"):
        rs = [r[name] for r in runs]
        row |= {
            f"{name}_width": np.mean([r["width"] for r in rs]),
            f"{name}_covers": np.nanmean([r["covers"] for r in rs]),
            f"{name}_all_covers": np.mean([c for r in rs for c in r["all_covers"]]),
            f"{name}_decided": np.mean([r["decided"] for r in rs]),
            f"{name}_labelled_worst": np.mean([r["labelled_worst"] for r in rs]),
        }
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--test", default="1000,5000")
    ap.add_argument("--rare", default="0.01,0.05")
    ap.add_argument("--kappa", default="3,1.5,0.75")
    ap.add_argument("--budgets", default="40:2,100:3,200:4", help="budget:batches, ...")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    budgets = [tuple(int(x) for x in b.split(":")) for b in a.budgets.split(",")]
    grid = list(
        itertools.product(
            [int(x) for x in a.test.split(",")],
            [float(x) for x in a.rare.split(",")],
            [float(x) for x in a.kappa.split(",")],
            budgets,
        )
    )
    rows, t0 = [], time.perf_counter()
    for ci, (n, rare, kappa, (budget, batches)) in enumerate(grid):
        r = cell(n, rare, kappa, budget, batches, a.seeds, ci)
        rows.append(r)
        print(
            f"[{ci + 1}/{len(grid)}] N={n} rare={rare} kappa={kappa} budget={budget}/{batches}:"
            f" worst's width active {r['active_width']:.3f} uniform {r['uniform_width']:.3f};"
            f" coverage {r['active_covers']:.3f} / {r['uniform_covers']:.3f}; decided "
            f"{r['active_decided']:.2f} / {r['uniform_decided']:.2f}  "
            f"({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    df = pd.DataFrame(rows)
    if a.out:
        df.to_csv(a.out, index=False)
    ratio = df.active_width / df.uniform_width
    print(
        f"worst subconcept's width, active / uniform: mean {ratio.mean():.3f} "
        f"(narrower by {1 - ratio.mean():.1%}); cells more than 5 % wider: "
        f"{int((ratio > 1.05).sum())} of {len(df)}"
    )
    for name in ("active", "uniform"):
        print(
            f"{name}: coverage of the worst {df[f'{name}_covers'].mean():.3f}, of every "
            f"subconcept {df[f'{name}_all_covers'].mean():.3f}; worst decided "
            f"{df[f'{name}_decided'].mean():.3f}; its labelled rows "
            f"{df[f'{name}_labelled_worst'].mean():.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
