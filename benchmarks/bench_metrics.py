"""Bootstrap intervals for the nine scores: batched medeval vs a scikit-learn loop.

N = 100,000 test instances (20 % positives, 2 majority + 4 minority subconcepts, posteriors
from a simulated subconcept model), B = 1,000 replicates. Both sides use the very same
replicates (the counts medeval draws), so their replicate scores must agree; the script checks
that and prints both times, their ratio and peak memory.

    python benchmarks/bench_metrics.py                      # the full comparison (~5 min)
    python benchmarks/bench_metrics.py --sklearn-replicates 50   # sklearn timed on 50, scaled
    python benchmarks/bench_metrics.py --device cuda        # medeval on a GPU
    python benchmarks/bench_metrics.py --large              # 2,000,000 rows, 8 subconcepts

The large case: N = 2,000,000 instances of 8 subconcepts (3 majority, 5 minority), the nine
scores on the full test set plus the recall of each subconcept, B = 1,000; the scikit-learn loop
is timed on 3 replicates (``--sklearn-replicates``) and scaled. Peak RSS is the whole process
(Python, torch, the data) up to the end of the bootstrap, before the scikit-learn loop runs.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np
import torch
from sklearn.metrics import balanced_accuracy_score, f1_score, recall_score, roc_auc_score

from medeval.metrics.bootstrap import BatchedBootstrap, default_memory_budget, percentile_interval

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


LARGE = {"m1": 0.45, "m2": 0.25, "m3": 0.1, "A": 0.08, "B": 0.05, "C": 0.04, "D": 0.02, "E": 0.01}


def make_large(n: int, seed: int = 0):
    """8 subconcepts (m1-m3 majority, A-E minority), float32 where the values allow."""
    rng = np.random.default_rng(seed)
    names = list(LARGE)
    p = np.array(list(LARGE.values()))
    sc = rng.choice(len(names), n, p=p / p.sum()).astype(np.int8)
    side = np.array([0, 0, 0, 1, 1, 1, 1, 1], dtype=np.int8)
    y = side[sc]
    hard = sc >= 6
    score = rng.normal(0.3, 0.15, n).astype(np.float32)
    score += (0.35 * y - 0.25 * hard * y).astype(np.float32)
    score = np.clip(score, 0, 1).round(4).astype(np.float64)
    train = p * 10_000
    u = np.where(side == 1, train[:3].max() / train, 1.0)
    q = rng.dirichlet(np.full(len(names), 0.3), n).astype(np.float32)
    q[np.arange(n), sc] += 1.5
    q /= q.sum(1, keepdims=True)
    weights = {"": np.ones(n), "w": u[sc], "p": (q @ u.astype(np.float32)).astype(np.float64)}
    del q
    return y, score, (score >= 0.5).astype(np.int8), weights, sc, side


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def sklearn_replicate(c, y, pred, score, weights, sc, side) -> list[float]:
    """The nine scores (and, with subconcepts, each subconcept's recall) for counts ``c``."""
    row = []
    for w in weights.values():
        sw = c * w
        row += [
            balanced_accuracy_score(y, pred, sample_weight=sw),
            f1_score(y, pred, sample_weight=sw),
            roc_auc_score(y, score, sample_weight=sw),
        ]
    if sc is not None:
        for k in range(len(side)):
            m = sc == k
            row.append(
                recall_score(y[m], pred[m], pos_label=int(side[k]), sample_weight=c[m])
                if side[k] == 1
                else recall_score(1 - y[m], 1 - pred[m], sample_weight=c[m])
            )
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=None, help="instances (100,000; large 2,000,000)")
    ap.add_argument("--large", action="store_true", help="the 8-subconcept case, N = 2,000,000")
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument(
        "--sklearn-replicates",
        type=int,
        default=None,
        help="time the sklearn loop on this many replicates and scale (default: all; large: 3)",
    )
    ap.add_argument(
        "--memory-budget", type=float, default=None, help="MiB for the bootstrap's work buffers"
    )
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: all)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads or torch.get_num_threads())
    n = args.n or (2_000_000 if args.large else 100_000)
    sc = side = None
    if args.large:
        y, score, pred, weights, sc, side = make_large(n)
        k_sk = args.sklearn_replicates or 3
    else:
        y, score, pred, weights = make_data(n)
        k_sk = args.sklearn_replicates or args.replicates
    B = args.replicates
    budget = (
        int(args.memory_budget * 2**20)
        if args.memory_budget
        else default_memory_budget(args.device)
    )
    rss0 = peak_rss_mb()

    t0 = time.perf_counter()
    boot = BatchedBootstrap(
        y,
        y_pred=pred,
        y_score=score,
        weights=weights,
        subsets={"full": np.ones(len(y), bool)},
        subconcept=sc,
        n_subconcepts=None if sc is None else len(side),
        device=args.device,
        memory_budget=budget,
    )
    t_plan = time.perf_counter() - t0
    reps = boot.run(B, seed=args.seed)
    intervals = {f"{k}{m}": percentile_interval(v[:, 0]) for (k, m), v in reps.scores.items()}
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    t_medeval = time.perf_counter() - t0
    rss1 = peak_rss_mb()
    gpu_peak = torch.cuda.max_memory_allocated() / 2**20 if args.device.startswith("cuda") else None
    chunks = boot._chunks(B, None)

    ref = []
    t0 = time.perf_counter()
    # The same chunks as run(): the torch generator (GPUs) draws differently per chunk size.
    for chunk in boot.iter_counts(B, seed=args.seed, chunk_size=max(chunks)):
        for c in chunk[: k_sk - len(ref)].cpu().numpy():
            ref.append(sklearn_replicate(c, y, pred, score, weights, sc, side))
        if len(ref) == k_sk:
            break
    t_sklearn = (time.perf_counter() - t0) * B / k_sk

    order = [(k, m) for k in weights for m in ("BA", "F1", "AUC")]
    ours = torch.stack([reps.scores[o][:k_sk, 0] for o in order], 1)
    if sc is not None:
        ours = torch.cat([ours, reps.subconcept_recall[:k_sk]], 1)
    max_diff = float(np.abs(ours.cpu().numpy() - np.array(ref)).max())

    what = "9 scores (BA, F1, AUC × unweighted, true, predicted weights)"
    if sc is not None:
        what += f" + recall of {len(side)} subconcepts"
    print(
        f"N = {len(y):,} instances ({y.mean():.0%} positives), B = {B:,} replicates, "
        f"{what}, device {args.device}, {torch.get_num_threads()} threads"
    )
    for name, (lo, hi, nu) in intervals.items():
        print(
            f"  {name:<5} 95 % interval [{lo.item():.4f}, {hi.item():.4f}]  "
            f"undefined replicates: {int(nu)}"
        )
    scaled = "" if k_sk == B else f" (timed on {k_sk} replicates, scaled to {B})"
    print(
        f"memory budget   : {budget / 2**20:.0f} MiB → chunks of {max(chunks)} replicates "
        f"({len(chunks)} chunks)"
    )
    print(
        f"medeval batched : {t_medeval:8.2f} s  ({t_medeval / B * 1000:.2f} ms per replicate; "
        f"plan {t_plan:.2f} s)"
    )
    print(
        f"sklearn loop    : {t_sklearn:8.2f} s  ({t_sklearn / B * 1000:.1f} ms per replicate)"
        f"{scaled}"
    )
    goal = 100 if args.large else 200
    print(f"speed-up        : {t_sklearn / t_medeval:8.1f}x  (goal: >= {goal}x)")
    print(
        f"max |medeval - sklearn| over {k_sk} replicates x {ours.shape[1]} scores: {max_diff:.2e}"
    )
    print(f"peak RSS        : {rss1:.0f} MB (process before the bootstrap: {rss0:.0f} MB)")
    if gpu_peak is not None:
        print(f"peak GPU memory : {gpu_peak:.0f} MB")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average    : {load} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
