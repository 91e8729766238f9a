"""The main job over several training seeds: does the built-in demonstration show its hidden
failure on this machine and device, whatever the training path?

Runs ``python -m medeval.train --seed S --out DIR/seed-S`` (the README's main job, embedded
synthetic data, default config) for each seed, one after the other, and checks per seed what
the README promises:

* the oracle wBA lies at least 0.05 below BA (the failure is there);
* the recommended rBA (rectified, reference rows = the split's validation and calibration
  parts) lies below BA;
* rBA's 95 % interval contains wBA.

Prints one row per seed (BA, wBA, cBA, pBA, rBA and its interval, the test rows of each
minority subconcept found, the device the checkpoint was trained on, the wall time and the
load), the ranges over the seeds (what the README states) and whether every check held; exit
code 0 when all held, 1 when one did not, 2 when a run failed::

    python benchmarks/main_job_seeds.py                          # seeds 0..4, default device
    python benchmarks/main_job_seeds.py --device cuda --json main_job.json --out runs/seeds
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GAP = 0.05  # wBA at least this far below BA
EXIT_CHECK_FAILED, EXIT_RUN_FAILED = 1, 2


def run_seed(seed: int, out: Path, device: str | None) -> dict:
    """One main job; its headline figures and the checks."""
    cmd = [sys.executable, "-m", "medeval.train", "--seed", str(seed), "--out", str(out)]
    cmd += ["--quiet"] + (["--device", device] if device else [])
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise RuntimeError(f"seed {seed}: {' '.join(cmd)} exited {res.returncode}:\n{res.stderr}")
    return read_run(seed, out, wall=wall, load=(load0, os.getloadavg()[0]))


def read_run(seed: int, out: Path, *, wall: float, load: tuple[float, float]) -> dict:
    """The row of a finished main job in ``out``: figures of its (first) split and checks."""
    split = sorted(out.glob("split_*"))[0]
    metrics = json.loads((split / "metrics.json").read_text())
    best = json.loads((split / "best.json").read_text())
    s, iv = metrics["scores"], metrics["intervals"]
    rec = metrics["recommended"]["BA"]
    low, high = iv[rec]["low"], iv[rec]["high"]
    rare = {
        row["subconcept"]: f"{round(row['recall'] * row['n_test'])}/{row['n_test']}"
        for row in metrics["per_subconcept"]
        if row["class"] == 1
    }
    return {
        "seed": seed,
        "BA": s["BA"],
        "wBA": s["wBA"],
        "cBA": s["cBA"],
        "pBA": s["pBA"],
        "recommended": rec,
        "rBA": s[rec],
        "rBA_interval": [low, high],
        "rare_found": rare,
        "trained_on": best.get("trained_on", {}),
        "best_epoch": best["epoch"],
        "wall_s": round(wall, 1),
        "load": [round(load[0], 2), round(load[1], 2)],
        "checks": {
            f"wBA <= BA - {GAP}": s["wBA"] <= s["BA"] - GAP,
            f"{rec} < BA": s[rec] < s["BA"],
            f"{rec} interval contains wBA": low <= s["wBA"] <= high,
        },
    }


def _range(rows: list[dict], key: str) -> str:
    vals = [r[key] for r in rows]
    return f"{min(vals):.2f}–{max(vals):.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2,3,4", help="comma list of training seeds")
    ap.add_argument("--device", help="cpu, cuda, ... (default: the main job's own, auto)")
    ap.add_argument("--out", type=Path, help="folder for the runs (default: a temporary one)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows, ranges and checks")
    args = ap.parse_args(argv)
    seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
    if not seeds:
        ap.error("--seeds: give at least one seed, e.g. 0,1,2,3,4")
    with tempfile.TemporaryDirectory() as tmp:
        root = args.out or Path(tmp)
        rows = []
        for seed in seeds:
            try:
                row = run_seed(seed, root / f"seed-{seed}", args.device)
            except RuntimeError as exc:
                print(exc, file=sys.stderr)
                return EXIT_RUN_FAILED
            rows.append(row)
            lo, hi = row["rBA_interval"]
            on = row["trained_on"]  # the CPU's kernels and threads decide a CPU run's numbers
            where = " ".join(str(on.get(k, "?")) for k in ("device_name", "cpu_capability"))
            where += f" {on.get('threads', '?')} thread(s) torch {on.get('torch', '?')}"
            ok = (
                "ok"
                if all(row["checks"].values())
                else "FAILED: " + ", ".join(k for k, v in row["checks"].items() if not v)
            )
            print(
                f"seed {seed}: BA {row['BA']:.3f}  wBA {row['wBA']:.3f}  cBA {row['cBA']:.3f}  "
                f"pBA {row['pBA']:.3f}  {row['recommended']} {row['rBA']:.3f} [{lo:.3f}, {hi:.3f}]"
                f"  found {row['rare_found']}  on {where}, {row['wall_s']:.0f} s, "
                f"load {row['load'][0]:.1f}→{row['load'][1]:.1f}  {ok}",
                flush=True,
            )
    summary = {
        "seeds": seeds,
        "device": args.device or "auto",
        "rows": rows,
        "ranges": {k: _range(rows, k) for k in ("BA", "wBA", "cBA", "pBA", "rBA", "wall_s")},
        "all_checks_hold": all(all(r["checks"].values()) for r in rows),
    }
    r = summary["ranges"]
    print(
        f"over {len(rows)} seeds: BA {r['BA']}, wBA {r['wBA']}, rBA {r['rBA']}, cBA {r['cBA']}, "
        f"pBA {r['pBA']}; {r['wall_s']} s each; every check held: {summary['all_checks_hold']}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    return 0 if summary["all_checks_hold"] else EXIT_CHECK_FAILED


if __name__ == "__main__":
    sys.exit(main())
