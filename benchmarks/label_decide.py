"""Does the label design decide a rare failing subconcept with few labels? Simulation with known
truth, the case of the issue "Decide the rare failure" and cells around it.

A test set of ``N`` rows, half of each class. Class 0: A (60 %, recall 0.90), B (40 %, 0.85).
Class 1: ``big`` (recall 0.90), ``mid`` (0.85) and ``rare`` (recall 0.45) — ``rare`` a share
``r`` of all rows, big and mid 60/35 of the rest of class 1 (the issue's case: N = 2,000,
big 600, mid 350, rare 50). The subconcept model's posteriors within the known class are
Dirichlet draws with weight ``w`` on the row's true subconcept and 1 on each sibling (w = 2 /
4 / 8: weak / medium / sharp; the issue's case w = 4). No reference rows.

Per seed, the same budget three ways: **design** — batches of ``--batch`` rows chosen one after
another by :func:`medeval.evaluation.label_design.plan_batch` (utilities from the class shares,
as a training set of the same make-up gives them), each batch's subconcepts revealed before the
next; **focus** — the same with ``focus="rare"`` (the question "is rare below its class?");
**uniform** — simple random samples of the same sizes. After every batch: ``rare``'s rectified
recall interval (:func:`~medeval.evaluation.rectified_recall.rectified_recall`), whether it holds
rare's test recall, whether the verdict says ``below``, its width, and the labels that reached
rare; and whether any subconcept's verdict contradicts the truth (``wrong``: called
``below`` at a true gap ≤ 0, ``not below`` at one > 0), at the last round and at any round —
the error of a team that reads the verdicts after every batch. A closing line sets each design's
least round's coverage beside the least that chance alone gives as many cell-rounds of as many
seeds each covering exactly 95 % (:func:`least_round_reference`).

    python benchmarks/label_decide.py --seeds 100                 # the issue's case
    python benchmarks/label_decide.py --seeds 200 --grid          # rare 1–5 %, w 2/4/8, budgets
    python benchmarks/label_decide.py --seeds 200 --looks         # the error spent over looks
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time

import numpy as np
import pandas as pd

from medeval.evaluation.label_design import plan_batch
from medeval.evaluation.rectified_recall import LabelledRows, rectified_recall, verdicts
from medeval.weights import utilities_from_train_sizes

NAMES = ("A", "B", "big", "mid", "rare")
SIDES = np.array([0, 0, 1, 1, 1])
RECALL = np.array([0.90, 0.85, 0.90, 0.85, 0.45])
RARE = 4
#: the label design, the same with ``focus="rare"``, and uniform labels; each estimated as
#: ``evaluate --labels`` does (the posteriors recalibrated within class on the labelled rows)
HOWS = ("design", "focus", "uniform")


def shares(rare: float) -> np.ndarray:
    rest = 0.5 - rare
    return np.array([0.3, 0.2, rest * 60 / 95, rest * 35 / 95, rare])


def draw(rng: np.random.Generator, n: int, rare: float, w: float):
    """Subconcept codes, hits and within-class posteriors ``(n, 5)`` (exact counts)."""
    counts = np.rint(shares(rare) * n).astype(int)
    counts[0] += n - counts.sum()
    sub = rng.permutation(np.repeat(np.arange(5), counts))
    hit = np.zeros(n)
    for j in range(5):  # each subconcept's recall as exactly as its count allows
        idx = np.flatnonzero(sub == j)
        hit[rng.choice(idx, round(RECALL[j] * len(idx)), replace=False)] = 1.0
    q = np.zeros((n, 5))
    for c in (0, 1):
        cols = np.flatnonzero(SIDES == c)
        rows = np.flatnonzero(SIDES[sub] == c)
        alpha = np.ones((len(rows), len(cols)))
        alpha[np.arange(len(rows)), np.searchsorted(cols, sub[rows])] = w
        q[np.ix_(rows, cols)] = rng.gamma(alpha)
        q[rows] /= q[rows].sum(1, keepdims=True)
    return sub, hit, q


def one(
    rng, n, rare, w, budget, batch, hows=HOWS, calibrated_model=False, looks=False
) -> list[dict]:
    sub, hit, q = draw(rng, n, rare, w)
    y = SIDES[sub]
    if calibrated_model:  # the generator's own P(S | q): ∝ class share × q_s^(w − 1)
        q = shares(rare)[None, :] * q ** (w - 1) * (SIDES[None, :] == y[:, None])
        q /= q.sum(1, keepdims=True)
    truth = hit[sub == RARE].mean()
    cr = hit[y == 1].mean()
    class_r = np.array([hit[y == c].mean() for c in SIDES])
    true_gap = class_r - np.array([hit[sub == j].mean() for j in range(len(NAMES))])
    sizes = np.rint(shares(rare) * 4 * n).astype(int)  # a training set of the same make-up
    u = utilities_from_train_sizes(
        {nm: {"class": int(c), "n": int(k)} for nm, c, k in zip(NAMES, SIDES, sizes, strict=True)}
    )
    seed = int(rng.integers(2**31))
    plan = -(-budget // batch) if looks else None  # the error spent over the planned looks
    out = []
    for how in hows:
        rows, pi, bt = np.zeros(0, int), np.zeros(0), np.zeros(0, int)
        k = 0
        while len(rows) < budget:
            k += 1
            size = min(batch, budget - len(rows))
            lab = None if not len(rows) else LabelledRows(rows, sub[rows], pi, bt, looks=plan)
            if how == "uniform":
                free = np.setdiff1d(np.arange(n), rows)
                new = rng.choice(free, size, replace=False)
                inc = np.full(size, size / len(free))
            else:
                focus = "rare" if how == "focus" else None
                d, _ = plan_batch(
                    q, hit, y, SIDES, NAMES, reference=None, labelled=lab, budget=size,
                    seed=seed + k, utility=u.values, focus=focus,
                )  # fmt: skip
                new, inc = d.rows, d.inclusion
            rows, pi = np.r_[rows, new], np.r_[pi, inc]
            bt = np.r_[bt, np.full(len(new), k)]
            lab = LabelledRows(rows, sub[rows], pi, bt, looks=plan)
            res = rectified_recall(  # recalibrates q on the labels, as evaluate --labels does
                q, hit, y, SIDES, None, labelled=lab, confidence=0.95, seed=seed
            )
            lo, hi = res.low[RARE], res.high[RARE]
            ok = np.isfinite(lo) and np.isfinite(hi)
            v = verdicts(np.array([cr - hi]), np.array([cr - lo]))[0]
            every = verdicts(class_r - res.high, class_r - res.low)
            wrong = ((every == "below") & (true_gap <= 0)) | (
                (every == "not below") & (true_gap > 0)
            )
            out.append(
                dict(
                    how=how, round=k, labels=len(rows), on_rare=int((sub[rows] == RARE).sum()),
                    width=hi - lo if ok else 1.0, covers=(lo <= truth <= hi) if ok else np.nan,
                    below=v == "below", wrong=bool(wrong.any()),
                )
            )  # fmt: skip
    return out


def cell(
    n, rare, w, budget, batch, seeds, ci, hows=HOWS, calibrated_model=False, looks=False
) -> pd.DataFrame:
    rng = np.random.default_rng([ci, 20261207, 45])
    rows = []
    for s in range(seeds):
        for r in one(rng, n, rare, w, budget, batch, hows, calibrated_model, looks):
            rows.append(dict(n=n, rare=rare, w=w, budget=budget, batch=batch, seed=s, **r))
    return pd.DataFrame(rows)


def round_cover(df: pd.DataFrame) -> pd.Series:
    """Each cell-round's coverage of rare's test recall, over the seeds with an interval."""
    return df.groupby(["n", "rare", "w", "budget", "how", "round"])["covers"].mean()


def summary(df: pd.DataFrame) -> pd.DataFrame:
    last = df[df.labels == df.budget]
    g = last.groupby(["n", "rare", "w", "budget", "how"])
    t = g.agg(
        on_rare=("on_rare", "mean"),
        below=("below", "mean"),
        width=("width", "mean"),
        covers=("covers", "mean"),
    )
    t["min_round_cover"] = round_cover(df).groupby(["n", "rare", "w", "budget", "how"]).min()
    # a verdict that contradicts the truth (any subconcept): at the last round, and at any
    # round (a team that reads the verdicts after every batch and stops at the first decision)
    keys = ["n", "rare", "w", "budget", "how"]
    t["wrong_last"] = last.groupby(keys)["wrong"].mean()
    t["wrong_any_round"] = df.groupby([*keys, "seed"])["wrong"].any().groupby(keys).mean()
    return t.reset_index()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--grid", action="store_true", help="rare 1/2.5/5 %%, w 2/4/8, budget 60/200")
    ap.add_argument("--out", default=None, help="every round of every seed, as CSV")
    ap.add_argument("--hows", default=",".join(HOWS), help="which designs, comma-separated")
    ap.add_argument(
        "--calibrated-model", action="store_true", help="the model's posteriors calibrated already"
    )
    ap.add_argument(
        "--looks",
        action="store_true",
        help="read each round at its share of the error over budget / batch planned looks "
        "(medeval.evaluation.looks), as label plans them",
    )
    a = ap.parse_args(argv)
    cells = [(2000, 0.025, 4.0, 60)]
    if a.grid:
        cells = list(itertools.product([2000], [0.01, 0.025, 0.05], [2.0, 4.0, 8.0], [60, 200]))
    print(f"load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)", flush=True)
    t0, frames = time.perf_counter(), []
    for ci, (n, rare, w, budget) in enumerate(cells):
        hows = tuple(a.hows.split(","))
        frames.append(
            cell(n, rare, w, budget, a.batch, a.seeds, ci, hows, a.calibrated_model, a.looks)
        )
        print(f"[{ci + 1}/{len(cells)}] {time.perf_counter() - t0:.0f} s", flush=True)
    df = pd.concat(frames, ignore_index=True)
    if a.out:
        df.to_csv(a.out, index=False)
    t = summary(df)
    with pd.option_context("display.width", 140, "display.precision", 3):
        print(t.to_string(index=False))
    for key, part in t.groupby(["n", "rare", "w", "budget"]):
        by = part.set_index("how").width
        pairs = [(h, h.replace("design", "uniform").replace("focus", "uniform")) for h in by.index]
        said = [f"{h}/{b} {by[h] / by[b]:.2f}" for h, b in pairs if h != b and b in by.index]
        print(f"{key}: width " + ", ".join(said))
    print(least_round_reference(df, a.seeds))
    print(f"load average {os.getloadavg()[0]:.2f}; {time.perf_counter() - t0:.0f} s")
    return 0


def least_round_reference(df: pd.DataFrame, seeds: int, level: float = 0.95) -> str:
    """How to read ``min_round_cover``: per design, the least coverage over its cell-rounds,
    against the median least of as many independent ``seeds``-seed binomials that each cover
    exactly ``level`` (on 100 seeds the least of 27 such is about 0.90: a low worst round on
    few seeds is not evidence of a cell under ``level``)."""
    rng = np.random.default_rng(0)
    rounds = round_cover(df).dropna().reset_index()
    said = []
    for how, part in rounds.groupby("how"):
        k = len(part)
        least = np.median(rng.binomial(seeds, level, (4000, k)).min(1)) / seeds
        low = part.covers.min()
        said.append(f"{how} {low:.3f} over {k} cell-rounds (chance alone {least:.3f})")
    return f"least round's coverage, {seeds} seeds, each at {level:.0%}: " + "; ".join(said)


if __name__ == "__main__":
    sys.exit(main())
