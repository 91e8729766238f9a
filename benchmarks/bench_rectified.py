"""Measurements behind the rectified scores' defaults (``medeval.evaluation.rectified``) and the
label-free per-subconcept recall interval (``medeval.metrics.proportion``), on simulated data
with a known truth (``tests/rectified_simulation.py``).

    PYTHONPATH=. python benchmarks/bench_rectified.py [--seeds 200]

Prints four tables:
1. bias / sd / coverage of cM, rM (plain) and PPI++ against the realised test-set wM, at
   temperatures 0.5 and 2, for reference rows with a fixed subconcept mix and for a random
   sample, each resampled within subconcept and within class;
2. rBA error and interval as the smallest minority subconcept's reference rows shrink;
3. coverage of the label-free per-subconcept recall interval against the true recall;
4. exact coverage and mean width of the binomial intervals.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import rectified_simulation as sim
from rq4_variants import ppi_lambda

from medeval.evaluation.rectified import point_scores
from medeval.io.reference import ReferenceRows
from medeval.metrics.proportion import METHODS, exact_coverage, soft_recall_interval
from medeval.weights import class_posteriors, utilities_from_train_sizes

U = utilities_from_train_sizes(sim.TRAIN_SIZES)


def proportional(n: int) -> dict[str, int]:
    """Reference counts in the population's mix (as a split stratified by subconcept gives),
    at least one row of every subconcept."""
    return {nm: max(1, round(n * p)) for nm, p in zip(sim.NAMES, sim.SHARES, strict=True)}


FIXED_MIX = proportional(290)  # a 136, b 102, c 34, d 14, e 5
ENRICHED = {"a": 120, "b": 90, "c": 40, "d": 25, "e": 15}  # 290 rows, e over-represented


def evaluate(seed, temperature, n_test, ref_counts, reference_stratify, n_bootstrap=200):
    """One simulated evaluation: the result and the realised test-set true-weight scores."""
    rng = np.random.default_rng(seed)
    t = sim.draw_test(rng, n_test, temperature)
    if ref_counts is None:  # a random sample of 290 rows (every minority subconcept present)
        while True:
            r = sim.draw_test(rng, 290, temperature)
            if set(U.minority) <= set(r["subconcept"]):
                break
    else:
        r = sim.draw_reference(rng, ref_counts, temperature)
    ref = ReferenceRows.from_arrays(U, **r)
    w = U.values[[U.index(s) for s in t["subconcept"]]]
    truth = point_scores(t["y_true"], t["y_pred"], t["y_score"], {"w": w})
    with warnings.catch_warnings(record=True):  # few-reference warnings are measured here
        warnings.simplefilter("always")
        res = sim.rectify(
            t, ref, U, n_bootstrap=n_bootstrap, seed=seed, reference_stratify=reference_stratify
        )
    return res, truth


def table_bias(seeds: int) -> None:
    print("\n| T | reference | resampled within | family | est | bias | sd | coverage | width |")
    print("|---|---|---|---|---|---|---|---|---|")
    for temperature in (0.5, 2.0):
        mixes = (("population mix", FIXED_MIX), ("random sample", None), ("enriched", ENRICHED))
        for mix, counts in mixes:
            for strat in ("subconcept", "class"):
                acc: dict = {}
                for seed in range(seeds):
                    res, truth = evaluate(seed, temperature, 400, counts, strat)
                    for m in ("BA", "F1", "AUC"):
                        tw = truth[("w", m)]
                        p = res.components[m]
                        lam = ppi_lambda(**p)
                        rc, rw = res.reference_scores[m]["c"], res.reference_scores[m]["w"]
                        pt = rw + lam * (res.class_conditional[m] - rc)  # PPI++
                        pr = p["ref_w"] + lam * (p["test_c"] - p["ref_c"])
                        ests = {
                            "c": (res.class_conditional[m], p["test_c"]),
                            "r": (res.scores["r" + m], res.replicates["r" + m]),
                            "ppi++": (pt, pr),
                        }
                        for name, (v, reps) in ests.items():
                            lo, hi = np.nanquantile(reps.numpy(), [0.025, 0.975])
                            acc.setdefault((m, name), []).append((v - tw, lo <= tw <= hi, hi - lo))
                for (m, name), rows in acc.items():
                    a = np.array(rows, dtype=float)
                    label = name + (m if name != "ppi++" else "")
                    print(
                        f"| {temperature} | {mix} | {strat} | {m} | {label} | "
                        f"{a[:, 0].mean():+.4f} | {a[:, 0].std():.4f} | "
                        f"{100 * a[:, 1].mean():.1f} % | {a[:, 2].mean():.3f} |"
                    )


def table_few(seeds: int) -> None:
    print("\n| rows of 'e' | reference rows | rBA bias | error sd | sd ratio | coverage | width |")
    print("|---|---|---|---|---|---|---|")
    base = None
    for k in (50, 20, 10, 5, 3, 1):
        counts = proportional(round(k / sim.SHARES[-1]))
        rows = []
        for seed in range(seeds):
            res, truth = evaluate(seed, 2.0, 400, counts, "class")
            lo, hi = res.intervals["rBA"]
            err = res.scores["rBA"] - truth[("w", "BA")]
            rows.append((err, lo <= truth[("w", "BA")] <= hi, hi - lo))
        a = np.array(rows, dtype=float)
        sd = a[:, 0].std()
        base = base or sd
        print(
            f"| {k} | {sum(counts.values())} | {a[:, 0].mean():+.4f} | {sd:.4f} | "
            f"{sd / base:.2f} | {100 * a[:, 1].mean():.1f} % | {a[:, 2].mean():.3f} |"
        )


def table_soft(seeds: int) -> None:
    from scipy import stats

    true = stats.norm.cdf(sim.MU)  # minority recall Φ(μ_s)
    print("\n| T | n_test | method | coverage c / d / e | mean n_eff c / d / e |")
    print("|---|---|---|---|---|")
    for temperature in (1.0, 0.5, 2.0):
        for n in (300, 1000):
            for method in ("clopper-pearson", "wilson"):
                cov, neff = [], []
                for seed in range(seeds):
                    t = sim.draw_test(np.random.default_rng(seed), n, temperature)
                    q = class_posteriors(t["posteriors"], U, t["y_true"]).q.numpy()
                    hit = (t["y_pred"] == t["y_true"]).astype(float)
                    ci = soft_recall_interval(q[:, 2:], hit, method=method)
                    cov.append((ci.low <= true[2:]) & (true[2:] <= ci.high))
                    neff.append(ci.n)
                c, e = 100 * np.mean(cov, 0), np.mean(neff, 0)
                print(
                    f"| {temperature} | {n} | {method} | {c[0]:.0f} / {c[1]:.0f} / {c[2]:.0f} % "
                    f"| {e[0]:.0f} / {e[1]:.0f} / {e[2]:.0f} |"
                )


def table_exact() -> None:
    print("\n| method | n | p | coverage | mean width |")
    print("|---|---|---|---|---|")
    for method in METHODS:
        for n in (5, 9, 20, 50):
            for p in (0.5, 0.9, 0.95):
                c, w = exact_coverage(n, p, method=method)
                print(f"| {method} | {n} | {p} | {100 * c:.1f} % | {w:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--tables", default="bias,few,soft,exact")
    args = ap.parse_args()
    tables = args.tables.split(",")
    if "bias" in tables:
        table_bias(args.seeds)
    if "few" in tables:
        table_few(args.seeds)
    if "soft" in tables:
        table_soft(args.seeds)
    if "exact" in tables:
        table_exact()


if __name__ == "__main__":
    main()
