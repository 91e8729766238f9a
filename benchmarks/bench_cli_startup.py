"""Start-up time of every command-line tool: ``python -m medeval.<tool> --help``, against a
baseline measured in the same run (``python -c pass`` and importing the library the tool runs).

The tools import the library inside their run function, so ``--help`` and argument errors
should cost little more than the interpreter itself::

    python benchmarks/bench_cli_startup.py            # median of 5 runs per command
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

TOOLS = ("evaluate", "train", "tasks", "benchmark", "analyze", "embed")
LIBRARY = {  # what each tool imports once it runs
    "evaluate": "medeval.flows.evaluate",
    "train": "medeval.flows.train",
    "tasks": "medeval.splits",
    "benchmark": "medeval.flows.benchmark",
    "analyze": "medeval.flows.analyze",
    "embed": "medeval.embeddings.table",
}


def _seconds(cmd: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    py = sys.executable
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, load {os.getloadavg()}")
    base = _seconds([py, "-c", "pass"], args.repeats)
    print(f"python -c pass: {base:.3f} s")
    print(f"{'tool':<10} {'--help s':>9} {'library import s':>17} {'help/library':>13}")
    for tool in TOOLS:
        help_s = _seconds([py, "-m", f"medeval.{tool}", "--help"], args.repeats)
        lib_s = _seconds([py, "-c", f"import {LIBRARY[tool]}"], args.repeats)
        print(f"{tool:<10} {help_s:>9.3f} {lib_s:>17.3f} {help_s / lib_s:>13.2f}")


if __name__ == "__main__":
    main()
