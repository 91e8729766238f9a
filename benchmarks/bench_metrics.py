"""Bootstrap intervals for the nine scores: batched medeval vs a scikit-learn loop.

N = 100,000 test instances (20 % positives, 2 majority + 4 minority subconcepts, posteriors
from a simulated subconcept model), B = 1,000 replicates. Both sides use the very same
replicates (the counts medeval draws), so their replicate scores must agree; the script checks
that and prints both times, their ratio and peak memory.

    python benchmarks/bench_metrics.py                      # the full comparison (~5 min)
    python benchmarks/bench_metrics.py --sklearn-replicates 50   # sklearn timed on 50, scaled
    python benchmarks/bench_metrics.py --device cuda        # medeval on a GPU
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch
from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

from medeval.metrics.bootstrap import BatchedBootstrap, percentile_interval

SIZES = {"normal": 48_000, "benign": 32_000, "A": 10_000, "B": 5_500, "C": 3_000, "D": 1_500}
SIDES = {"normal": 0, "benign": 0, "A": 1, "B": 1, "C": 1, "D": 1}


def make_data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    names = list(SIZES)
    p = np.array(list(SIZES.values()), dtype=float)
    sc = rng.choice(len(names), n, p=p / p.sum())
    y = np.array([SIDES[k] for k in names])[sc]
    hard = np.isin(sc, [4, 5])  # the two smallest minority subconcepts are hard
    score = np.clip(0.35 * y - 0.25 * hard * y + rng.normal(0.3, 0.15, n), 0, 1).round(4)
    train = np.array(list(SIZES.values()), dtype=float)
    u = np.where(np.array([SIDES[k] for k in names]) == 1, train[:2].max() / train, 1.0)
    q = rng.dirichlet(np.full(len(names), 0.3), n)
    q[np.arange(n), sc] += 1.5
    q /= q.sum(1, keepdims=True)
    return y, score, (score >= 0.5).astype(int), {"": np.ones(n), "w": u[sc], "p": q @ u}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument(
        "--sklearn-replicates",
        type=int,
        default=None,
        help="time the sklearn loop on this many replicates and scale (default: all)",
    )
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(torch.get_num_threads())
    y, score, pred, weights = make_data(args.n)
    B = args.replicates
    rss0 = peak_rss_mb()

    t0 = time.perf_counter()
    boot = BatchedBootstrap(
        y,
        y_pred=pred,
        y_score=score,
        weights=weights,
        subsets={"full": np.ones(len(y), bool)},
        device=args.device,
    )
    reps = boot.run(B, seed=args.seed)
    intervals = {f"{k}{m}": percentile_interval(v[:, 0]) for (k, m), v in reps.scores.items()}
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    t_medeval = time.perf_counter() - t0
    rss1 = peak_rss_mb()
    gpu_peak = torch.cuda.max_memory_allocated() / 2**20 if args.device.startswith("cuda") else None

    k_sk = args.sklearn_replicates or B
    ref = np.empty((k_sk, 9))
    t0 = time.perf_counter()
    done = 0
    for chunk in boot.iter_counts(k_sk, seed=args.seed):
        for c in chunk.cpu().numpy():
            row = []
            for w in weights.values():
                sw = c * w
                row += [
                    balanced_accuracy_score(y, pred, sample_weight=sw),
                    f1_score(y, pred, sample_weight=sw),
                    roc_auc_score(y, score, sample_weight=sw),
                ]
            ref[done] = row
            done += 1
    t_sklearn = (time.perf_counter() - t0) * B / k_sk

    order = [(k, m) for k in weights for m in ("BA", "F1", "AUC")]
    ours = torch.stack([reps.scores[o][:k_sk, 0] for o in order], 1).cpu().numpy()
    max_diff = float(np.abs(ours - ref).max())

    print(
        f"N = {len(y):,} instances ({y.mean():.0%} positives), B = {B:,} replicates, "
        f"9 scores (BA, F1, AUC × unweighted, true, predicted weights), device {args.device}"
    )
    for name, (lo, hi, nu) in intervals.items():
        print(
            f"  {name:<5} 95 % interval [{lo.item():.4f}, {hi.item():.4f}]  "
            f"undefined replicates: {int(nu)}"
        )
    scaled = "" if k_sk == B else f" (timed on {k_sk} replicates, scaled to {B})"
    print(f"medeval batched : {t_medeval:8.2f} s  ({t_medeval / B * 1000:.2f} ms per replicate)")
    print(
        f"sklearn loop    : {t_sklearn:8.2f} s  ({t_sklearn / B * 1000:.1f} ms per replicate)"
        f"{scaled}"
    )
    print(f"speed-up        : {t_sklearn / t_medeval:8.1f}x  (goal: >= 50x)")
    print(f"max |medeval - sklearn| over {k_sk} replicates x 9 scores: {max_diff:.2e}")
    print(f"peak RSS        : {rss1:.0f} MB (process before the bootstrap: {rss0:.0f} MB)")
    if gpu_peak is not None:
        print(f"peak GPU memory : {gpu_peak:.0f} MB")


if __name__ == "__main__":
    main()
