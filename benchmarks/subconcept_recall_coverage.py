"""Coverage by simulation of the rectified per-subconcept recall's interval constructions
(docs/method.md, "Per-subconcept recall").

One class holds the subconcept ``s`` (true recall ρ) and the rest of the class ``o`` (recall
0.85, twice as many rows: the same mix in the test and the reference rows, as the method
requires). Whether a row is found does not depend on what the
subconcept model sees (the common case: classifier and subconcept model read different
evidence), so the label-free recall ``est_s`` shrinks toward the class's recall unless the model
is sharp. The subconcept model's evidence is ``z ~ N(κ·[row ∈ s], 1)`` and its posterior the
calibrated ``P(s | z)``; κ = 3 / 1.5 / 0.75 (sharp / medium / weak). Reference rows come from
the same population with a fixed count of ``s`` rows.

For every cell (test rows of ``s`` × reference rows of ``s`` × ρ × κ) and seed, the interval of
``r_s = est_s(T) − (est_s(R) − recall_s(R))`` from each construction is checked against the
realised recall of the test rows of ``s``. Constructions (B joint-bootstrap replicates; test
and reference rows each resampled within the class), the first three from the package
(:func:`medeval.evaluation.subconcept_recall.rectified_replicates`):

* ``percentile`` — percentile interval of the joint-bootstrap replicates of ``r_s``;
* ``jeffreys-draw`` — as ``percentile``, but each replicate's ``recall_s(R)`` is a draw from the
  Jeffreys posterior Beta(k_b + ½, n_b − k_b + ½) of that replicate's reference counts;
* ``jeffreys-realised`` (shipped) — ``jeffreys-draw`` plus the test rows' binomial noise that
  diffuse posteriors do not carry
  (:func:`medeval.evaluation.subconcept_recall.realised_noise_scale`);
* ``mover`` — MOVER (Zou & Donner 2008) sum of the Clopper–Pearson interval of ``recall_s(R)``
  and the percentile interval of ``est_s(T) − est_s(R)``;
* ``est_s`` — the label-free recall with the package's interval on its soft counts.

A first round (97 of the 144 cells, reference rows of the rest of the class at least 20, so
the two mixes differed at small counts) also tried half a found and half a missed pseudo row
of ``s`` per replicate: no better than ``percentile`` (mean 95.2 %, 25 cells under 93 %).

Usage: ``python benchmarks/subconcept_recall_coverage.py --seeds 300 --out results.csv``
(prints one line per cell and a summary; ~10 min on 2 cores at 300 seeds).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

import numpy as np
import pandas as pd
from scipy import special

from medeval.evaluation.subconcept_recall import (
    ReferenceSide,
    boundary_rule,
    realised_noise_scale,
    rectified_replicates,
)
from medeval.metrics.proportion import binomial_interval

METHODS = ("percentile", "jeffreys-draw", "jeffreys-realised", "mover", "est_s")
RECALL_OTHER = 0.85


def _rows(rng: np.random.Generator, n_s: int, n_o: int, rho: float, kappa: float):
    """``member`` (1 for s), ``hit`` and calibrated posterior ``q`` of s, each ``(n_s + n_o,)``."""
    member = np.r_[np.ones(n_s), np.zeros(n_o)]
    hit = np.r_[rng.random(n_s) < rho, rng.random(n_o) < RECALL_OTHER].astype(float)
    z = rng.normal(kappa * member, 1.0)
    prior = n_s / (n_s + n_o)
    q = special.expit(special.logit(prior) + kappa * z - kappa**2 / 2)
    return member, hit, q


def _resampled_sums(rng, cols: np.ndarray, b: int) -> np.ndarray:
    """``(b, k)`` sums of the columns ``cols`` ``(n, k)`` over b resamples of the n rows."""
    n = len(cols)
    idx = rng.integers(0, n, size=(b, n))
    return cols[idx].sum(axis=1)


def one(rng, n_test: int, n_ref: int, rho: float, kappa: float, b: int, conf: float) -> dict:
    """Each construction's (covers, width) on one simulated evaluation."""
    n_o_t, n_o_r = 2 * n_test, 2 * n_ref
    mt, ht, qt = _rows(rng, n_test, n_o_t, rho, kappa)
    mr, hr, qr = _rows(rng, n_ref, n_o_r, rho, kappa)
    truth = ht[mt == 1].mean()
    t = _resampled_sums(rng, np.c_[qt * ht, qt], b)
    r = _resampled_sums(rng, np.c_[qr * hr, qr, mr * hr, mr], b)
    est_t = t[:, 0] / t[:, 1]
    est_r = r[:, 0] / r[:, 1]
    cols = np.c_[qr * hr, qr, mr * hr, mr]
    num, den, k, n = (np.atleast_1d(x) for x in cols.sum(0))
    reps = {nm: r[:, [i]] for i, nm in enumerate(("num", "den", "k", "n"))}
    side = ReferenceSide(num, den, k, n, own=np.atleast_1d((qr * mr).sum()), reps=reps)
    scale = realised_noise_scale(np.atleast_1d(qt.sum()), side)
    seed = int(rng.integers(2**31))
    reps = {
        m: np.clip(rectified_replicates(est_t[:, None], side.reps, method=m, seed=seed,
                                        noise_scale=scale)[:, 0], 0, 1)
        for m in ("percentile", "jeffreys-draw", "jeffreys-realised")
    }  # fmt: skip
    alpha = 1 - conf
    out = {}
    for m, v in reps.items():
        v = v[np.isfinite(v)]
        lo, hi = np.quantile(v, [alpha / 2, 1 - alpha / 2])
        if m != "percentile":  # as the package does (boundary_rule)
            (lo,), (hi,) = boundary_rule(np.array([lo]), np.array([hi]), k, n)
        out[m] = (lo <= truth <= hi, hi - lo)
    # MOVER: the reference recall's exact interval and the difference's percentile interval
    k, n = float((mr * hr).sum()), float(mr.sum())
    p = k / n
    d_hat = (qt * ht).sum() / qt.sum() - (qr * hr).sum() / qr.sum()
    d_lo, d_hi = np.quantile(est_t - est_r, [alpha / 2, 1 - alpha / 2])
    ci = binomial_interval(np.array([k]), np.array([n]), confidence=conf)
    point = d_hat + p
    lo = point - np.hypot(d_hat - d_lo, p - ci.low[0])
    hi = point + np.hypot(d_hi - d_hat, ci.high[0] - p)
    out["mover"] = (lo <= truth <= hi, hi - lo)
    # the label-free recall alone, with the package's interval on its soft counts
    mass, mass2 = qt.sum(), (qt**2).sum()
    n_eff = mass**2 / mass2
    e = binomial_interval(np.array([(qt @ ht) / mass * n_eff]), np.array([n_eff]), confidence=conf)
    out["est_s"] = (e.low[0] <= truth <= e.high[0], e.high[0] - e.low[0])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=300)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--test", default="10,30,100,200")
    ap.add_argument("--reference", default="5,10,20,50")
    ap.add_argument("--recall", default="0.3,0.6,0.8,0.95")
    ap.add_argument("--kappa", default="3,1.5,0.75")
    ap.add_argument("--out", default=None, help="CSV of one row per cell and construction")
    a = ap.parse_args(argv)
    grid = list(
        itertools.product(
            [int(x) for x in a.test.split(",")],
            [int(x) for x in a.reference.split(",")],
            [float(x) for x in a.recall.split(",")],
            [float(x) for x in a.kappa.split(",")],
        )
    )
    rows = []
    t0 = time.perf_counter()
    for ci, (n_t, n_r, rho, kappa) in enumerate(grid):
        rng = np.random.default_rng([ci, 20261201])
        acc = {m: [] for m in METHODS}
        for _ in range(a.seeds):
            for m, res in one(rng, n_t, n_r, rho, kappa, a.bootstrap, a.confidence).items():
                acc[m].append(res)
        for m, res in acc.items():
            cov, width = np.array(res, dtype=float).T
            rows.append(
                dict(n_test=n_t, n_reference=n_r, recall=rho, kappa=kappa, method=m,
                     coverage=cov.mean(), width=width.mean(), seeds=a.seeds)
            )  # fmt: skip
        print(
            f"[{ci + 1}/{len(grid)}] n_test={n_t} n_ref={n_r} recall={rho} kappa={kappa}: "
            + ", ".join(f"{m} {np.mean([c for c, _ in acc[m]]):.3f}" for m in METHODS)
            + f"  ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    df = pd.DataFrame(rows)
    if a.out:
        df.to_csv(a.out, index=False)
    g = df.groupby("method")
    summary = pd.DataFrame(
        {
            "coverage_mean": g.coverage.mean(),
            "coverage_min": g.coverage.min(),
            "cells_below_93": g.coverage.apply(lambda c: int((c < 0.93).sum())),
            "width_mean": g.width.mean(),
        }
    )
    print(summary.to_string(float_format=lambda x: f"{x:.3f}"))
    for n_r, sub in df.groupby("n_reference"):
        s = sub.groupby("method").coverage.agg(["mean", "min"])
        print(f"n_reference={n_r}: " + ", ".join(
            f"{m} {r['mean']:.3f} (min {r['min']:.3f})" for m, r in s.iterrows()
        ))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
