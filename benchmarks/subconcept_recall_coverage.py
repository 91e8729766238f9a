"""The rectified per-subconcept recall, measured by simulation with known truth (docs/method.md,
"Per-subconcept recall"): coverage and width of its interval, its verdicts, the set of
subconcepts that could be worst, and the predicted number of further reference rows.

One class holds three subconcepts: ``s`` (the smallest: ``n_test`` test and ``n_reference``
reference rows, true recall ρ), ``a`` (twice as many rows, recall 0.85) and ``b`` (twice as
many, recall 0.7), in the same mix in the test and the reference rows. Whether a row is found
does not depend on what the subconcept model sees, so the label-free recall shrinks toward the
class's recall unless the model is sharp. The model's evidence is ``z ~ N(κ·e_S, I)`` and its
posteriors the calibrated ``P(S | z)``; κ = 3 / 1.5 / 0.75 (sharp / medium / weak).

Per cell (test rows of s × reference rows of s × ρ × κ) and seed, against the test rows' own
recalls: whether ``s``'s interval holds its recall, its width, and the width of the exact
(Clopper–Pearson) interval of the same reference rows alone (the yardstick); every subconcept's
verdict against its true gap to the class; whether the could-be-worst set holds the truly worst
subconcept and is a single one; whether the subconcept named worst is the truly worst (and how
often the label-free ``est_recall`` names it); whether the interval printed for it (after
selection) holds its recall; with ``--more-rows``, the predicted number of further reference rows
against the number found by simulating them.

Usage: ``python benchmarks/subconcept_recall_coverage.py --seeds 300 --out cells.csv``
(one line per cell, then a summary).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

import numpy as np
import pandas as pd
from scipy import special

from medeval.evaluation.rectified_recall import (
    ReferenceEvidence,
    could_be_worst,
    more_rows,
    rectified_recall,
    verdicts,
    worst_bounds,
)
from medeval.metrics.proportion import binomial_interval

RECALLS = (None, 0.85, 0.7)  # s (the cell's ρ), a, b
SIZES = (1, 2, 2)  # rows of each per row of s


def draw_rows(rng: np.random.Generator, n_s: int, rho: float, kappa: float):
    """Subconcept codes ``(n,)``, hits ``(n,)`` and calibrated posteriors ``(n, 3)``."""
    sizes = [n_s * k for k in SIZES]
    sub = np.repeat(np.arange(3), sizes)
    recall = np.array([rho, *RECALLS[1:]])
    hit = rng.random(len(sub)) < recall[sub]
    z = rng.normal(kappa * np.eye(3)[sub], 1.0)
    logit = np.log(np.array(sizes) / sum(sizes)) + kappa * z
    q = special.softmax(logit, axis=1)
    return sub, hit.astype(float), q


def one(rng, n_test, n_ref, rho, kappa, conf, n_draws) -> dict:
    st, ht, qt = draw_rows(rng, n_test, rho, kappa)
    sr, hr, qr = draw_rows(rng, n_ref, rho, kappa)
    truth = np.array([ht[st == j].mean() for j in range(3)])
    ref = ReferenceEvidence(q=qr, hit=hr, y=np.ones(len(sr), dtype=int), subconcept=sr)
    res = rectified_recall(
        qt,
        ht,
        np.ones(len(st), dtype=int),
        np.ones(3, dtype=int),
        ref,
        confidence=conf,
        n_draws=n_draws,
        seed=int(rng.integers(2**31)),
    )
    k = (hr[sr == 0]).sum()
    yard = binomial_interval(np.array([k]), np.array([float(n_ref)]), confidence=conf)
    cr = ht.mean()
    gap_true = cr - truth
    verdict = verdicts(cr - res.high, cr - res.low)
    if res.draws is None:  # the further-rows search needs the verdict and width only
        inside = np.ones(3, dtype=bool)
    else:
        inside, _ = could_be_worst(res.recall, res.draws, conf)
    worst = int(np.argmin(truth))
    est = (qt * ht[:, None]).sum(0) / qt.sum(0)
    # the package's rule: the lowest label-free recall among those that could be worst
    cand = np.flatnonzero(inside)
    named = int(cand[np.argmin(est[cand])]) if len(cand) > 1 else int(np.argmin(res.recall))
    w_lo, w_hi = worst_bounds(res, np.flatnonzero(inside), named, conf)
    next_gap = np.sort(truth)[1] - truth[worst]
    more = more_rows(
        res.recall, np.full(3, cr), res.deff, res.n_reference.astype(float), res.n_test, conf
    )
    return dict(
        covers=res.low[0] <= truth[0] <= res.high[0],
        width=res.high[0] - res.low[0],
        yard_covers=yard.low[0] <= truth[0] <= yard.high[0],
        yard_width=yard.high[0] - yard.low[0],
        ess=res.ess[0],
        below_true=[v == "below" for v, g in zip(verdict, gap_true, strict=True) if g >= 0.10],
        below_false=[v == "below" for v, g in zip(verdict, gap_true, strict=True) if g <= 0],
        set_holds=bool(inside[truth == truth[worst]].any()),
        set_single=bool(inside.sum() == 1) if next_gap >= 0.10 else None,
        named_right=truth[named] == truth[worst],  # a tie names the worst too
        est_right=truth[int(np.argmin(est))] == truth[worst],
        named_covers=w_lo <= truth[named] <= w_hi,
        naive_covers=res.low[named] <= truth[named] <= res.high[named],
        known=verdict[0] != "not known",
        more=more[0],
    )


def cell(n_t, n_r, rho, kappa, seeds, conf, n_draws, ci) -> dict:
    rng = np.random.default_rng([ci, 20261202])
    out = [one(rng, n_t, n_r, rho, kappa, conf, n_draws) for _ in range(seeds)]
    flat = lambda key: [x for o in out for x in o[key]]  # noqa: E731
    single = [o["set_single"] for o in out if o["set_single"] is not None]
    more = np.array([o["more"] for o in out if not o["known"]], dtype=float)
    return dict(
        n_test=n_t,
        n_reference=n_r,
        recall=rho,
        kappa=kappa,
        seeds=seeds,
        coverage=np.mean([o["covers"] for o in out]),
        width=np.nanmean([o["width"] for o in out]),
        yard_coverage=np.mean([o["yard_covers"] for o in out]),
        yard_width=np.mean([o["yard_width"] for o in out]),
        ess=np.nanmean([o["ess"] for o in out]),
        power_n=len(flat("below_true")),
        power=np.mean(flat("below_true") or [np.nan]),
        false_n=len(flat("below_false")),
        false_below=np.mean(flat("below_false") or [np.nan]),
        set_holds=np.mean([o["set_holds"] for o in out]),
        set_single=np.mean(single) if single else np.nan,
        single_n=len(single),
        named_right=np.mean([o["named_right"] for o in out]),
        est_right=np.mean([o["est_right"] for o in out]),
        named_covers=np.mean([o["named_covers"] for o in out]),
        naive_covers=np.mean([o["naive_covers"] for o in out]),
        not_known=1 - np.mean([o["known"] for o in out]),
        more_median=float(np.nanmedian(more)) if np.isfinite(more).any() else np.nan,
    )


def simulated_rows(n_t, rho, kappa, target, seeds, conf, ci) -> float:
    """The fewest reference rows of s (searched on a grid) at which s's verdict is decided or
    its interval narrower than the target width in at least half the seeds."""
    from medeval.evaluation.rectified_recall import DECISIVE_WIDTH

    for n in sorted(
        {
            round(target * f)
            for f in (0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.15, 1.3, 1.5, 1.75, 2, 2.5, 3, 4)
        }
    ):
        if n < 2:
            continue
        rng = np.random.default_rng([ci, n, 7])
        ok = 0
        for _ in range(seeds):
            o = one(rng, n_t, n, rho, kappa, conf, 0)
            ok += o["known"] or o["width"] < DECISIVE_WIDTH
        if ok >= seeds / 2:
            return float(n)
    return np.nan


def add_grid_arguments(ap: argparse.ArgumentParser) -> None:
    """The cells' options: test and reference rows of s, its recall, the model's sharpness."""
    ap.add_argument("--test", default="10,30,100,200")
    ap.add_argument("--reference", default="5,10,20,50")
    ap.add_argument("--recall", default="0.3,0.6,0.8,0.95")
    ap.add_argument("--kappa", default="3,1.5,0.75")


def cell_grid(a: argparse.Namespace) -> list[tuple[int, int, float, float]]:
    """The cells ``(n_test, n_reference, recall, kappa)`` the options name, in order."""
    return list(
        itertools.product(
            [int(x) for x in a.test.split(",")],
            [int(x) for x in a.reference.split(",")],
            [float(x) for x in a.recall.split(",")],
            [float(x) for x in a.kappa.split(",")],
        )
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=300)
    ap.add_argument("--draws", type=int, default=1000, help="joint draws per evaluation")
    ap.add_argument("--confidence", type=float, default=0.95)
    add_grid_arguments(ap)
    ap.add_argument("--more-rows", action="store_true", help="check the predicted further rows")
    ap.add_argument("--out", default=None, help="CSV of one row per cell")
    a = ap.parse_args(argv)
    grid = cell_grid(a)
    rows, t0 = [], time.perf_counter()
    for ci, (n_t, n_r, rho, kappa) in enumerate(grid):
        r = cell(n_t, n_r, rho, kappa, a.seeds, a.confidence, a.draws, ci)
        if a.more_rows and r["not_known"] >= 0.5 and np.isfinite(r["more_median"]):
            predicted = n_r + r["more_median"]
            r["more_predicted"] = predicted
            r["more_simulated"] = simulated_rows(
                n_t, rho, kappa, predicted, max(a.seeds // 3, 50), a.confidence, ci
            )
        rows.append(r)
        print(
            f"[{ci + 1}/{len(grid)}] n_test={n_t} n_ref={n_r} recall={rho} kappa={kappa}: "
            f"coverage {r['coverage']:.3f} width {r['width']:.3f} "
            f"(reference alone {r['yard_width']:.3f})  ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    df = pd.DataFrame(rows)
    if a.out:
        df.to_csv(a.out, index=False)
    summary(df)
    return 0


def summary(df: pd.DataFrame) -> None:
    df = df.assign(ratio=df.width / df.yard_width)
    wmean = lambda d, v, n: float((d[v] * d[n]).sum() / d[n].sum())  # noqa: E731
    print(
        f"coverage: mean {df.coverage.mean():.3f}, worst cell {df.coverage.min():.3f}; "
        f"cells under 92 % at >= 10 reference rows: "
        f"{int(((df.coverage < 0.92) & (df.n_reference >= 10)).sum())}, under 90 % at 5: "
        f"{int(((df.coverage < 0.90) & (df.n_reference < 10)).sum())} of {len(df)}"
    )
    print(f"reference rows alone (exact interval): coverage {df.yard_coverage.mean():.3f}")
    for kappa, d in df.groupby("kappa"):
        print(
            f"kappa {kappa}: coverage {d.coverage.mean():.3f}, width {d.width.mean():.3f} = "
            f"{d.ratio.mean():.2f}x the reference rows' exact interval "
            f"({d.yard_width.mean():.3f}), r_ess / n_reference "
            f"{(d.ess / d.n_reference).mean():.2f}"
        )
    print(
        f"verdicts: power {wmean(df, 'power', 'power_n'):.3f} (true gap >= 0.10), "
        f"wrongly below {wmean(df, 'false_below', 'false_n'):.4f} (not below its class)"
    )
    print(
        f"could-be-worst set holds the worst {df.set_holds.mean():.3f}; single where the "
        f"worst is >= 0.10 below the next {wmean(df, 'set_single', 'single_n'):.3f}"
    )
    print(
        f"named worst right {df.named_right.mean():.3f} (est_recall {df.est_right.mean():.3f});"
        f" its printed interval holds its recall {df.named_covers.mean():.3f} "
        f"(unadjusted {df.naive_covers.mean():.3f})"
    )
    if "more_simulated" in df:
        d = df.dropna(subset=["more_simulated"])
        within = (abs(d.more_predicted - d.more_simulated) <= 0.3 * d.more_simulated).mean()
        print(
            f"further reference rows: predicted within 30 % of simulated in {within:.3f} of "
            f"{len(d)} cells"
        )


if __name__ == "__main__":
    sys.exit(main())
