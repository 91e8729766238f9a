"""``python -m medeval.evaluate`` from the shell: start-up time and the whole run end to end,
against a scikit-learn loop over the same number of replicates.

Writes a predictions file (N rows, 6 subconcepts with posteriors; CSV or Parquet) and its
train sizes into a temporary folder, then times in fresh processes:

* ``python -m medeval.evaluate --help`` (best and median of ``--repeat`` runs);
* the evaluation end to end (read, nine scores on every subset, bootstrap, tables, figure,
  HTML report, files written), ``--cli-repeat`` times (the ratios use the median), with the
  largest child's peak RSS;
* in this process, a scikit-learn loop computing the nine full-test scores per replicate on a few
  replicates (``--sklearn-replicates``), scaled to B (arrays prepared once, as in
  ``bench_metrics.py``; it does no subsets, reading or reporting, so the ratio favours it).

    python benchmarks/bench_cli.py                      # N = 100,000, B = 1,000, CSV
    python benchmarks/bench_cli.py --n 2000000 --subconcepts 8 --format parquet --bootstrap 1000
    python benchmarks/bench_cli.py --reference 20000    # and a 20,000-row --reference file

``--reference N`` writes N more rows of the same population (another seed) as a reference
file and passes it with ``--reference``: the run then computes the rectified scores too (their
joint bootstrap draws the reference rows as well). The ratio is then printed twice: against
the loop of nine test scores alone, and against a loop that also resamples the reference rows
and computes what the rectified scores need from them (BA, F1, AUC with class-conditional and
with true weights), the same replicates on both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_inputs(
    folder: Path, n: int, n_sc: int, fmt: str, seed: int = 0, stem: str = "predictions"
) -> tuple[Path, Path]:
    """Predictions (y_true, y_score, subconcept, q_*) and train sizes; 2 majority subconcepts."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    names = [f"maj{i}" for i in range(2)] + [f"min{i}" for i in range(n_sc - 2)]
    p = np.r_[0.5, 0.3, np.geomspace(0.1, 0.01, n_sc - 2)]
    p /= p.sum()
    sc = rng.choice(n_sc, n, p=p)
    side = np.r_[0, 0, np.ones(n_sc - 2, int)]
    y = side[sc]
    score = np.clip(0.35 * y + rng.normal(0.3, 0.15, n), 0, 1).round(4)
    q = rng.dirichlet(np.full(n_sc, 0.3), n)
    q[np.arange(n), sc] += 1.5
    q /= q.sum(1, keepdims=True)
    df = pd.DataFrame({"y_true": y, "y_score": score, "subconcept": np.array(names)[sc]})
    for i, nm in enumerate(names):
        df[f"q_{nm}"] = q[:, i]
    path = folder / f"{stem}.{fmt}"
    df.to_parquet(path) if fmt == "parquet" else df.to_csv(path, index=False)
    sizes = {
        nm: {"class": int(c), "n": int(k)} for nm, c, k in zip(names, side, p * 10_000, strict=True)
    }
    size_path = folder / "train_sizes.json"
    size_path.write_text(json.dumps(sizes))
    return path, size_path


def _run(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _sklearn_arrays(path: Path, u, *, reference: bool = False) -> dict:
    """Labels, predictions, scores and weightings of a predictions file: unweighted, true and
    predicted weights (the test side's nine scores) or, for reference rows, class-conditional
    and true weights (the rectified scores' reference side)."""
    import pandas as pd

    from medeval.io.predictions import read_predictions
    from medeval.weights import class_conditional_weights, predicted_weights

    t = read_predictions(path, u)
    y, s = t.y_true.astype(int), t.y_score
    w_true = u.values[np.array([u.index(nm) for nm in t.subconcept.categories])][t.subconcept.codes]
    q = pd.DataFrame(t.posteriors)
    if reference:
        weights = (class_conditional_weights(q, u, y).cpu().numpy(), w_true)
    else:
        weights = (np.ones(len(y)), w_true, predicted_weights(q, u).cpu().numpy())
    return {"y": y, "s": s, "pred": (s >= 0.5).astype(int), "weights": weights}


def _sklearn_replicate(a: dict, rng: np.random.Generator) -> None:
    """One replicate: counts drawn within class (as medeval resamples), then BA, F1 and AUC
    with scikit-learn under every weighting."""
    from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

    y = a["y"]
    c = np.zeros(len(y))
    for cls in (0, 1):
        idx = np.flatnonzero(y == cls)
        c[idx] = np.bincount(rng.integers(0, len(idx), len(idx)), minlength=len(idx))
    for w in a["weights"]:
        sw = c * w
        balanced_accuracy_score(y, a["pred"], sample_weight=sw)
        f1_score(y, a["pred"], sample_weight=sw)
        roc_auc_score(y, a["s"], sample_weight=sw)


def sklearn_seconds_per_replicate(
    path: Path, sizes: Path, k: int, seed: int, reference: Path | None = None
) -> float:
    """The nine full-test scores with scikit-learn on ``k`` multinomial replicates; with
    ``reference``, each replicate also resamples the reference rows and scores them as the
    rectified scores do (BA, F1, AUC with class-conditional and with true weights)."""
    import sklearn.metrics  # noqa: F401  (imported before the clock starts)

    from medeval.io.predictions import read_train_sizes

    u = read_train_sizes(sizes)
    sides = [_sklearn_arrays(path, u)]
    if reference is not None:
        sides.append(_sklearn_arrays(reference, u, reference=True))
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    for _ in range(k):
        for a in sides:
            _sklearn_replicate(a, rng)
    return (time.perf_counter() - t0) / k


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--subconcepts", type=int, default=6)
    ap.add_argument("--format", choices=("csv", "parquet"), default="csv")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5, help="--help timings")
    ap.add_argument(
        "--cli-repeat", type=int, default=3, help="end-to-end runs (the ratio uses their median)"
    )
    ap.add_argument("--sklearn-replicates", type=int, default=5)
    ap.add_argument("--skip-sklearn", action="store_true")
    ap.add_argument("--reference", type=int, default=0, help="rows of a --reference file (0: none)")
    args = ap.parse_args()
    py = [sys.executable, "-m", "medeval.evaluate"]
    print(f"{os.cpu_count()} cores, load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("PYTHONDONTWRITEBYTECODE is set: every run compiles medeval's modules again")
    helps = [_run([*py, "--help"]) for _ in range(args.repeat)]
    print(f"--help          : best {min(helps):.2f} s, median {statistics.median(helps):.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path, sizes = write_inputs(folder, args.n, args.subconcepts, args.format)
        mb = path.stat().st_size / 2**20
        cmd = [*py, "--predictions", str(path), "--train-sizes", str(sizes), "--quiet"]
        cmd += ["--out", str(folder / "out"), "--force", "--bootstrap", str(args.bootstrap)]
        if args.reference:
            ref, _ = write_inputs(
                folder, args.reference, args.subconcepts, args.format, seed=1, stem="reference"
            )
            cmd += ["--reference", str(ref)]
        runs = [_run(cmd) for _ in range(max(1, args.cli_repeat))]
        t_cli = statistics.median(runs)
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(
            f"CLI end to end  : median {t_cli:.2f} s of {len(runs)} runs "
            f"({', '.join(f'{t:.2f}' for t in runs)} s; N = {args.n:,}, "
            f"{args.subconcepts} subconcepts, "
            f"B = {args.bootstrap:,}, {args.format} {mb:.0f} MB"
            + (f", {args.reference:,} reference rows" if args.reference else "")
            + f"; peak RSS of the largest child "
            f"{rss:.0f} MB)"
        )
        if not args.skip_sklearn:
            per = sklearn_seconds_per_replicate(path, sizes, args.sklearn_replicates, seed=0)
            t_sk = per * args.bootstrap
            print(
                f"sklearn loop    : {t_sk:.1f} s  ({per * 1000:.0f} ms per replicate, timed on "
                f"{args.sklearn_replicates}, scaled to {args.bootstrap}; 9 full-test scores only)"
            )
            print(f"ratio           : {t_sk / t_cli:.1f}x  (goal: >= 40x at N = 100k, B = 1,000)")
            if args.reference:
                per = sklearn_seconds_per_replicate(
                    path, sizes, args.sklearn_replicates, seed=0, reference=ref
                )
                t_sk = per * args.bootstrap
                print(
                    f"sklearn + ref   : {t_sk:.1f} s  ({per * 1000:.0f} ms per replicate: the 9 "
                    "scores and the reference rows' 6 (c- and w-weighted BA, F1, AUC))"
                )
                print(f"ratio with ref  : {t_sk / t_cli:.1f}x  (the same replicates on both sides)")
    print("load average at the end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
