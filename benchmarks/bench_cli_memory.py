"""Peak memory of ``python -m medeval.evaluate`` on millions of rows, and where the peak is.

Writes (or reuses, with ``--inputs``) a predictions file of N rows with 8 subconcepts and their
posteriors, in CSV and Parquet, then runs the command in fresh processes and prints each run's
wall time and peak RSS (``getrusage`` of that child alone), with the machine's load::

    python benchmarks/bench_cli_memory.py                        # 2M rows, B = 1,000, 3 runs each
    python benchmarks/bench_cli_memory.py --stages --runs 1      # RSS peak of each stage

``--stages`` runs the command once more in a child that samples its own RSS every 2 ms and
prints the peak reached inside each stage (reading, plan, point estimates, bootstrap, report).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli import write_inputs

_STAGES = r"""
import sys, threading, time, functools
import psutil
proc = psutil.Process()
peak = [0]
def sample():
    while True:
        peak[0] = max(peak[0], proc.memory_info().rss)
        time.sleep(0.002)
threading.Thread(target=sample, daemon=True).start()

def staged(mod, name, label):
    f = getattr(mod, name)
    @functools.wraps(f)
    def g(*a, **k):
        before = proc.memory_info().rss
        peak[0] = before
        out = f(*a, **k)
        time.sleep(0.01)
        after = proc.memory_info().rss
        print(f"  {label:<28} RSS before {before / 2**20:7.0f} MB, peak {peak[0] / 2**20:7.0f} MB,"
              f" after {after / 2**20:7.0f} MB", file=sys.stderr)
        peak[0] = after
        return out
    setattr(mod, name, g)

import medeval.flows.evaluate as fe, medeval.evaluation.core as ev, medeval.report.outputs as ro
import medeval.cli.evaluate as ce
from medeval.metrics import bootstrap as bs
staged(fe, "read_predictions", "read_predictions")
staged(ev, "_plan", "plan (weights, subsets)")
staged(ev, "_point_scores", "point estimates")
staged(bs.BatchedBootstrap, "__init__", "bootstrap plan")
staged(bs.BatchedBootstrap, "run", "bootstrap replicates")
staged(ev, "per_subconcept", "per-subconcept tables")
staged(ro, "output_files", "report files")
ce.output_files = ro.output_files
rc = ce.main(sys.argv[1:])
import resource
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"  overall peak (getrusage)     {peak_mb:7.0f} MB", file=sys.stderr)
sys.exit(rc)
"""


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_once(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit(f"command failed ({p.returncode}): {' '.join(cmd)}")
    return time.perf_counter() - t0, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--subconcepts", type=int, default=8)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--formats", nargs="+", default=["parquet", "csv"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--inputs", type=Path, default=None, help="folder to write or reuse inputs")
    ap.add_argument("--stages", action="store_true", help="also print each stage's RSS peak")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.inputs or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        print(f"{os.cpu_count()} cores, load average {_load()}")
        for fmt in args.formats:
            path, sizes = folder / f"predictions.{fmt}", folder / "train_sizes.json"
            if not (path.is_file() and sizes.is_file()):
                path, sizes = write_inputs(folder, args.n, args.subconcepts, fmt)
            opts = ["--predictions", str(path), "--train-sizes", str(sizes), "--quiet"]
            opts += ["--out", str(Path(tmp) / "out"), "--force"]  # each run replaces the last
            opts += ["--bootstrap", str(args.bootstrap)]
            mb = path.stat().st_size / 2**20
            results = []
            for _ in range(args.runs):
                load = _load()
                secs, rss = run_once([sys.executable, "-m", "medeval.evaluate", *opts])
                results.append(rss)
                print(f"{fmt:<8} {mb:5.0f} MB  {secs:6.1f} s  peak RSS {rss:6.0f} MB  load {load}")
            if results:
                print(
                    f"{fmt:<8} peak RSS min {min(results):.0f}, median "
                    f"{statistics.median(results):.0f}, max {max(results):.0f} MB"
                )
            if args.stages:
                print(f"{fmt} stages:", flush=True)
                subprocess.run([sys.executable, "-c", _STAGES, *opts], check=True)
        print(f"load average at the end: {_load()}")


if __name__ == "__main__":
    main()
