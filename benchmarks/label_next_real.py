"""Labels chosen where they decide, on real folds: the labels it takes to decide a subconcept's
verdict, active against uniform (docs/method.md, "Labels chosen where they decide").

Reads predictions folders that carry the test rows' true subconcepts (``predictions.csv`` with
``subconcept``, ``train_sizes.json``): the folds a benchmark saved (``--save-predictions``) or
the split folders of a training run. Per fold, with no reference rows, labels are given in
batches of ``--batch`` rows — chosen by :func:`medeval.evaluation.label_design.plan_batch`, or
uniformly at random — by revealing the chosen rows' true subconcepts, until the verdict of the
target subconcept (``--subconcept``; default: the truly worst of class 1) is decided or
``--budget`` labels are spent; each estimate as ``evaluate --labels`` makes it (the
posteriors recalibrated within class on the labelled rows). Reported: the labels each needed
(the budget where never decided), whether the decided verdict agrees with the truth, and the
widths at the budget.

Usage: ``python benchmarks/label_next_real.py RESULTS/predictions/*/none-* --batch 20 --budget 200``
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from medeval.evaluation.checks import labels as checked_labels
from medeval.evaluation.label_design import plan_batch
from medeval.evaluation.rectified_recall import LabelledRows, rectified_recall, verdicts
from medeval.io.predictions import read_predictions, read_train_sizes
from medeval.weights import renormalise_within_class


def load(fold: Path):
    u = read_train_sizes(fold / "train_sizes.json")
    t = read_predictions(fold / "predictions.csv", u)
    y, _, yp = checked_labels(t.y_true, t.y_score, t.y_pred, 0.5)
    q = renormalise_within_class(torch.tensor(t.posteriors[list(u.names)].to_numpy()), u, y)
    sub = np.array([u.names.index(str(s)) for s in t.subconcept])
    return u, y, (yp == y).astype(float), q.q.numpy(), sub


def run(
    fold: Path, target: str | None, batch: int, budget: int, active: bool, seed: int,
    focus: bool = False, looks: bool = False,
):  # fmt: skip
    u, y, hit, q, sub = load(fold)
    names, sides = tuple(u.names), u.sides
    truth = np.array(
        [hit[sub == j].mean() if (sub == j).any() else np.nan for j in range(len(names))]
    )
    if target is None:
        c1 = np.flatnonzero(sides == 1)
        j = int(c1[np.nanargmin(truth[c1])])
    else:
        j = names.index(target)
    cr = hit[y == sides[j]].mean()
    rng = np.random.default_rng(seed)
    rows, pi, bt = np.zeros(0, int), np.zeros(0), np.zeros(0, int)
    k, res = 0, None
    budget = min(budget, len(y))  # a fold smaller than the budget: every row at most
    plan = -(-budget // batch) if looks else None  # the error spent over the planned looks
    while len(rows) < budget:
        k += 1
        lab = None if not len(rows) else LabelledRows(rows, sub[rows], pi, bt, looks=plan)
        size = min(batch, budget - len(rows))
        if active:
            d, _ = plan_batch(
                q, hit, y, sides, names, reference=None, labelled=lab, budget=size, seed=seed + k,
                utility=u.values, focus=names[j] if focus else None,
            )  # fmt: skip
            new, p = d.rows, d.inclusion
        else:
            free = np.setdiff1d(np.arange(len(y)), rows)
            new = rng.choice(free, size, replace=False)
            p = np.full(size, size / len(free))
        rows, pi, bt = np.r_[rows, new], np.r_[pi, p], np.r_[bt, np.full(len(new), k)]
        lab = LabelledRows(rows, sub[rows], pi, bt, looks=plan)
        # rectified_recall recalibrates q on the labels, as evaluate --labels does
        res = rectified_recall(q, hit, y, sides, None, labelled=lab, confidence=0.95)
        v = verdicts(cr - res.high[[j]], cr - res.low[[j]])[0]
        if v != "not known":
            right = (v == "below") == (truth[j] < cr)
            return dict(
                fold=str(fold),
                target=names[j],
                labels=len(rows),
                decided=True,
                right=right,
                width=res.high[j] - res.low[j],
            )
    width = res.high[j] - res.low[j] if np.isfinite(res.low[j]) else 1.0
    return dict(
        fold=str(fold), target=names[j], labels=budget, decided=False, right=np.nan, width=width
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folds", nargs="+", type=Path)
    ap.add_argument("--subconcept", default=None)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3, help="seeds per fold and design")
    ap.add_argument("--out", default=None)
    ap.add_argument(
        "--focus", action="store_true", help="the active design asked about the target alone"
    )
    ap.add_argument(
        "--looks",
        action="store_true",
        help="each round read at its share of the error over budget / batch planned looks",
    )
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    for n, fold in enumerate(a.folds, 1):
        t0 = time.perf_counter()
        for r in range(a.repeats):
            for active in (True, False):
                res = run(
                    fold, a.subconcept, a.batch, a.budget, active, seed=1000 * r + 7,
                    focus=a.focus, looks=a.looks,
                )  # fmt: skip
                rows.append(res | {"design": "active" if active else "uniform", "repeat": r})
        print(f"[{n}/{len(a.folds)}] {fold} {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    df = pd.DataFrame(rows)
    if a.out:
        df.to_csv(a.out, index=False)
    for design, d in df.groupby("design"):
        print(
            f"{design}: decided {d.decided.mean():.3f} of {len(d)} runs within {a.budget} labels;"
            f" labels (the budget where undecided) mean {d.labels.mean():.1f}, median "
            f"{d.labels.median():.0f}; decided verdicts right {d.right.mean():.3f}; width at "
            f"stop {d.width.mean():.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
