"""The benchmark grid's wall time and metric share, against a baseline version run beside it
(alternating, on the same machine): by default the last version before the rectified scores
(no reference rows, no out-of-bag predictions), so the ratio is what the reference rows cost.

Each round runs ``python -m medeval.benchmark --collection keel --jobs 2 --no-analyze`` (every
data set, every correction, 10 splits, B = 200 intervals per fold) once with each version,
alternating (baseline first), in fresh output folders, and prints per run the wall time of the
command, the fold compute summed over the workers (``timing.unit_s``), the metric time
(``timing.metrics_s``: ``evaluate_predictions`` with its bootstrap, the reference rows and the
subconcept model's scores), the metric share and the 1-minute load before and after; then the
ratio of the medians::

    python benchmarks/bench_grid.py                      # 2 rounds, baseline b6e1d46
    python benchmarks/bench_grid.py --rounds 3 --baseline b6e1d46 --datasets vehicle,segment

The KEEL files are read from ``$MEDEVAL_DATA`` (default ``../shared/data``). The baseline is
unpacked with ``git archive`` into a temporary folder and run from there (``cwd`` and
``PYTHONPATH`` both point at it), the working tree as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_outputs import DATA, REPO, source_tree


def run_grid(tree: Path, out: Path, datasets: str | None) -> dict[str, float]:
    """One grid run of the package in ``tree``; its wall time and summed record timings."""
    cmd = [sys.executable, "-m", "medeval.benchmark", "--collection", "keel", "--jobs", "2"]
    cmd += ["--no-analyze", "--quiet", "--out", str(out)]
    if datasets:
        cmd += ["--datasets", datasets]
    env = {**os.environ, "PYTHONPATH": str(tree), "MEDEVAL_DATA": str(DATA), "MPLBACKEND": "Agg"}
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    records = [json.loads(p.read_text()) for p in sorted((out / "records").rglob("*.json"))]
    compute = sum(r["timing"]["unit_s"] for r in records)
    metrics = sum(r["timing"]["metrics_s"] for r in records)
    return {
        "wall_s": wall,
        "records": len(records),
        "compute_s": compute,
        "metrics_s": metrics,
        "share": metrics / compute,
        "load": (load0, os.getloadavg()[0]),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default="b6e1d46", help="git ref of the baseline version")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--datasets", default=None, help="comma-separated KEEL sets (default all)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = source_tree(args.baseline, Path(tmp) / "baseline")
        runs: dict[str, list[dict]] = {"baseline": [], "current": []}
        for r in range(args.rounds):
            for name, tree in (("baseline", base), ("current", REPO)):
                res = run_grid(tree, Path(tmp) / f"{name}-{r}", args.datasets)
                runs[name].append(res)
                print(
                    f"round {r} {name:8s}: wall {res['wall_s']:6.1f} s, {res['records']} records,"
                    f" compute {res['compute_s']:6.1f} s, metrics {res['metrics_s']:5.2f} s ="
                    f" {res['share']:.2%}; load {res['load'][0]:.2f} -> {res['load'][1]:.2f}",
                    flush=True,
                )
    med = {k: {f: statistics.median(x[f] for x in v) for f in ("wall_s", "share")}
           for k, v in runs.items()}  # fmt: skip
    b, c = med["baseline"], med["current"]
    print(
        f"median wall: baseline {b['wall_s']:.1f} s, current {c['wall_s']:.1f} s = "
        f"{c['wall_s'] / b['wall_s']:.2f}x; metric share: baseline {b['share']:.2%}, "
        f"current {c['share']:.2%}"
    )


if __name__ == "__main__":
    main()
