"""Bootstrap intervals of BA, F1 and AUC: medeval's batched bootstrap against the peers a user
would pick, on the same data and, where the peer's API allows, the very same replicates.

Peers (each timed in this process on the same data):

* ``torchmetrics`` ``BootStrapper`` (B deep copies of a metric, each fed a resampled batch):
  draws its own replicates (``sampling_strategy="multinomial"``); its metrics take no sample
  weights, so it is timed unweighted.
* ``torcheval`` ``binary_auroc(num_tasks=b, weight=...)``: batched weighted AUC, fed medeval's
  replicates as weights ``count × w`` (all three weightings). torcheval has no weighted BA or F1;
  those are timed unweighted, one replicate at a time, on the resampled rows.
* ``scipy.stats.bootstrap`` (paired, vectorised, percentile): draws its own replicates; the
  statistic is a vectorised numpy BA / F1 / AUC with weights (the weights are resampled with the
  rows, which is the same as weighting by ``count × w``).
* A vectorised AUC in the style of EleutherAI elk's ``roc_auc`` (github.com/EleutherAI/elk,
  ``elk/metrics/roc_auc.py``, MIT licence; reimplemented here, not copied): gather the resampled
  rows, sort each replicate, cumulative sums. AUC only, unweighted, ties not averaged (the scores
  here are continuous, so there are no ties).

Agreement: peers on the same replicates must match medeval to rounding (torcheval's AUC
sums in float32, so about 1e-7); peers with their own
replicates must give intervals within Monte Carlo error (bounds compared; the printed figure is
the largest bound difference as a share of medeval's interval width).

    python benchmarks/bench_peers.py --quick                 # N = 10k, B = 200
    python benchmarks/bench_peers.py --n 100000 --b 1000 --peer-replicates 100
    python benchmarks/bench_peers.py                          # N = 10k, 100k, 1M × B = 200, 1000

``--peer-replicates K`` times each peer on K replicates and scales its time by B / K (the peers'
cost is linear in B); medeval always runs all B.
"""

from __future__ import annotations

import argparse
import copy
import os
import time
import warnings

import numpy as np
import torch

from medeval.metrics.bootstrap import BatchedBootstrap, percentile_interval

METRICS = ("BA", "F1", "AUC")
KEYS = ("", "w", "p")  # unweighted, true-utility and predicted-utility weights
_ELEMS = 2**24  # peers process replicates in chunks of at most this many (b × N) elements


def make_data(n: int, seed: int = 0):
    """20 % positives, continuous scores (no ties), three weightings ``{key: (N,)}``."""
    rng = np.random.default_rng(seed)
    sc = rng.choice(6, n, p=[0.48, 0.32, 0.1, 0.055, 0.03, 0.015])
    y = (sc >= 2).astype(np.int64)
    score = 1 / (1 + np.exp(-(1.6 * y - 0.9 * (sc >= 4) * y + rng.normal(-0.8, 1.0, n))))
    u = np.array([1.0, 1.0, 4.8, 8.7, 16.0, 32.0])
    q = rng.dirichlet(np.full(6, 0.3), n)
    q[np.arange(n), sc] += 1.5
    q /= q.sum(1, keepdims=True)
    return y, score, (score >= 0.5).astype(np.int64), {"": np.ones(n), "w": u[sc], "p": q @ u}


def _chunks(b: int, n: int) -> list[int]:
    size = max(1, _ELEMS // n)
    return [min(size, b - i) for i in range(0, b, size)]


def _resampled_rows(counts: torch.Tensor) -> torch.Tensor:
    """``(b, N)`` counts → ``(b, N)`` row indices (each row i repeated count times)."""
    b, n = counts.shape
    flat = torch.repeat_interleave(torch.arange(n).repeat(b), counts.reshape(-1).long())
    return flat.view(b, n)


# -- medeval ---------------------------------------------------------------------------------
def run_medeval(y, score, pred, weights, B, seed):
    t0 = time.perf_counter()
    boot = BatchedBootstrap(
        y, y_pred=pred, y_score=score, weights=weights, subsets={"full": np.ones(len(y), bool)}
    )
    reps = boot.run(B, seed=seed)
    out = {(k, m): reps.scores[(k, m)][:, 0] for k in KEYS for m in METRICS}
    ivs = {km: percentile_interval(v) for km, v in out.items()}
    return time.perf_counter() - t0, boot, out, ivs


# -- peers on medeval's replicates -------------------------------------------------------------
def run_torcheval(y, score, pred, weights, counts):
    """Weighted batched AUC (3 weightings) and unweighted per-replicate BA, F1."""
    from torcheval.metrics.functional import binary_auroc, binary_f1_score, multiclass_recall

    yt, st, pt = (torch.as_tensor(a) for a in (y, score, pred))
    K, n = counts.shape
    vals = {(k, "AUC"): [] for k in KEYS} | {("", "BA"): [], ("", "F1"): []}
    t0 = time.perf_counter()
    row = 0
    for b in _chunks(K, n):
        c = counts[row : row + b]
        for k in KEYS:
            w = c * torch.as_tensor(weights[k])
            vals[(k, "AUC")].append(
                binary_auroc(st.expand(b, n), yt.expand(b, n), num_tasks=b, weight=w).reshape(b)
            )
        row += b
    for c in counts:
        idx = torch.repeat_interleave(torch.arange(n), c.long())
        vals[("", "BA")].append(
            multiclass_recall(pt[idx], yt[idx], num_classes=2, average="macro").reshape(1)
        )
        vals[("", "F1")].append(binary_f1_score(pt[idx], yt[idx]).reshape(1))
    return time.perf_counter() - t0, {km: torch.cat(v).double() for km, v in vals.items()}


def elk_style_roc_auc(y_true: torch.Tensor, y_pred: torch.Tensor) -> torch.Tensor:
    """Batched ROC AUC over the last axis ``(b, n) → (b,)``, after elk's ``roc_auc``: sort each
    row by score (descending), cumulative true and false positive rates, rectangle rule."""
    order = y_pred.argsort(descending=True, dim=-1)
    t = y_true.gather(-1, order).double()
    tpr = t.cumsum(-1) / t.sum(-1, keepdim=True)
    fpr = (1 - t).cumsum(-1) / (1 - t).sum(-1, keepdim=True)
    widths = torch.cat([fpr[..., 1:] - fpr[..., :-1], torch.zeros_like(fpr[..., :1])], -1)
    return (tpr * widths).sum(-1)


def run_elk(y, score, counts):
    yt, st = torch.as_tensor(y), torch.as_tensor(score)
    K, n = counts.shape
    vals, row = [], 0
    t0 = time.perf_counter()
    for b in _chunks(K, n):
        idx = _resampled_rows(counts[row : row + b])
        vals.append(elk_style_roc_auc(yt[idx], st[idx]))
        row += b
    return time.perf_counter() - t0, {("", "AUC"): torch.cat(vals)}


# -- peers with their own replicates ---------------------------------------------------------
def _np_scores(y, pred, score, w, axis=-1):
    """Weighted BA, F1, AUC along ``axis`` of ``(..., N)`` arrays (no ties in ``score``)."""
    pos, neg = w * y, w * (1 - y)
    tp, tn = (pos * pred).sum(axis), (neg * (1 - pred)).sum(axis)
    P, Nn = pos.sum(axis), neg.sum(axis)
    fp = Nn - tn
    ba = 0.5 * (tp / P + tn / Nn)
    f1 = 2 * tp / (2 * tp + fp + (P - tp))
    order = np.argsort(score, axis=axis)
    pos_s, neg_s = (np.take_along_axis(a, order, axis) for a in (pos, neg))
    below = np.cumsum(neg_s, axis) - neg_s  # negative weight ranked below each instance
    auc = (pos_s * below).sum(axis) / (P * Nn)
    return np.stack([ba, f1, auc])


def run_scipy(y, score, pred, weights, K, seed):
    from scipy.stats import bootstrap

    n = len(y)
    batch = max(1, _ELEMS // (8 * n))
    ivs, t0 = {}, time.perf_counter()
    for k in KEYS:
        r = bootstrap(
            (y, pred, score, weights[k]),
            _np_scores,
            paired=True,
            vectorized=True,
            n_resamples=K,
            batch=batch,
            method="percentile",
            rng=np.random.default_rng(seed + 1),
        )
        for j, m in enumerate(METRICS):
            ivs[(k, m)] = (r.confidence_interval.low[j], r.confidence_interval.high[j])
    return time.perf_counter() - t0, ivs


def run_torchmetrics(y, score, pred, K, seed, max_auc_elems: int):
    from torchmetrics.classification import BinaryAUROC, BinaryF1Score, MulticlassRecall
    from torchmetrics.wrappers import BootStrapper

    yt, st, pt = (torch.as_tensor(a) for a in (y, score, pred))
    metrics = {
        "BA": (MulticlassRecall(num_classes=2, average="macro"), pt),
        "F1": (BinaryF1Score(), pt),
        "AUC": (BinaryAUROC(thresholds=None), st),
    }
    if K * len(y) > max_auc_elems:  # every copy keeps its resampled scores: B × N floats
        del metrics["AUC"]
    torch.manual_seed(seed)
    ivs, t0 = {}, time.perf_counter()
    for m, (metric, inp) in metrics.items():
        bs = BootStrapper(
            copy.deepcopy(metric),
            num_bootstraps=K,
            mean=False,
            std=False,
            raw=True,
            sampling_strategy="multinomial",
        )
        bs.update(inp, yt)
        raw = bs.compute()["raw"].double()
        ivs[("", m)] = tuple(t.item() for t in percentile_interval(raw)[:2])
    return time.perf_counter() - t0, ivs


# -- driver ------------------------------------------------------------------------------------
def _width_share(ivs, ref) -> float:
    """Largest |bound difference| / medeval interval width over the scores in ``ivs``."""
    worst = 0.0
    for km, (lo, hi) in ivs.items():
        rlo, rhi = (float(v) for v in ref[km][:2])
        worst = max(worst, abs(float(lo) - rlo) / (rhi - rlo), abs(float(hi) - rhi) / (rhi - rlo))
    return worst


def bench(n: int, B: int, K: int, seed: int, peers: list[str], max_auc_elems: int) -> list[dict]:
    y, score, pred, weights = make_data(n, seed)
    t_me, boot, ours, ivs = run_medeval(y, score, pred, weights, B, seed)
    counts = torch.cat(list(boot.iter_counts(K, seed=seed)))  # the first K replicates
    rows = [dict(peer="medeval", what="BA F1 AUC × 3 weightings", t=t_me, check="reference")]
    scale = B / K
    if "torcheval" in peers:
        t, vals = run_torcheval(y, score, pred, weights, counts)
        diff = max(float((vals[km] - ours[km][:K]).abs().max()) for km in vals)
        what = "AUC × 3 weightings (batched); BA, F1 unweighted (loop)"
        rows.append(dict(peer="torcheval", what=what, t=t * scale, check=f"max |diff| {diff:.1e}"))
    if "elk" in peers:
        t, vals = run_elk(y, score, counts)
        diff = float((vals[("", "AUC")] - ours[("", "AUC")][:K]).abs().max())
        rows.append(
            dict(
                peer="elk-style", what="AUC unweighted", t=t * scale, check=f"max |diff| {diff:.1e}"
            )
        )
    if "scipy" in peers:
        t, p_ivs = run_scipy(y, score, pred, weights, K, seed)
        share = _width_share(p_ivs, ivs)
        rows.append(
            dict(
                peer="scipy.stats.bootstrap",
                what="BA F1 AUC × 3 weightings (own draws)",
                t=t * scale,
                check=f"bounds within {share:.0%} of width",
            )
        )
    if "torchmetrics" in peers:
        t, p_ivs = run_torchmetrics(y, score, pred, K, seed, max_auc_elems)
        what = "BA F1 AUC unweighted (own draws)"
        if ("", "AUC") not in p_ivs:
            what = "BA F1 unweighted (own draws; AUC skipped: K × N scores)"
        share = _width_share(p_ivs, ivs)
        rows.append(
            dict(
                peer="torchmetrics BootStrapper",
                what=what,
                t=t * scale,
                check=f"bounds within {share:.0%} of width",
            )
        )
    for r in rows:
        r.update(n=n, B=B, K=B if r["peer"] == "medeval" else K, ratio=r["t"] / t_me)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--b", type=int, nargs="+", default=[200, 1000], help="replicates B")
    ap.add_argument("--quick", action="store_true", help="N = 10,000 and B = 200 only")
    ap.add_argument(
        "--peer-replicates",
        type=int,
        default=None,
        help="time the peers on this many replicates and scale to B (default: all B)",
    )
    ap.add_argument(
        "--peers",
        nargs="+",
        default=["torcheval", "elk", "scipy", "torchmetrics"],
        choices=["torcheval", "elk", "scipy", "torchmetrics"],
    )
    ap.add_argument(
        "--max-auc-elems",
        type=float,
        default=5e7,
        help="skip torchmetrics' AUC when replicates × N exceeds this (memory)",
    )
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.quick:
        args.n, args.b = [10_000], [200]
    warnings.filterwarnings("ignore", category=UserWarning)
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
        f"{os.cpu_count()} cores, load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    header = f"{'N':>9} {'B':>5} {'K':>5}  {'peer':<26} {'time s':>8} {'× medeval':>9}  check; what"
    print(header)
    for n in args.n:
        for B in args.b:
            K = min(B, args.peer_replicates or B)
            for r in bench(n, B, K, args.seed, args.peers, int(args.max_auc_elems)):
                print(
                    f"{r['n']:>9,} {r['B']:>5} {r['K']:>5}  {r['peer']:<26} {r['t']:>8.2f} "
                    f"{r['ratio']:>9.1f}  {r['check']}; {r['what']}",
                    flush=True,
                )
    print("load average at the end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
