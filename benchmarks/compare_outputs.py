"""Proof that a refactoring is only a move: run the user-facing jobs and compare their outputs.

    python benchmarks/compare_outputs.py run --out /tmp/before      # on the old checkout
    python benchmarks/compare_outputs.py run --out /tmp/after       # on the new checkout
    python benchmarks/compare_outputs.py compare /tmp/before /tmp/after

``run`` executes, each through its command line exactly as a user would:

- ``python -m medeval.evaluate --example`` (``metrics.json``, ``metrics.csv``,
  ``per_subconcept.csv``);
- ``python -m medeval.benchmark`` on two KEEL sets, two splits, 20 trees, true and discovered
  subconcepts (every record and the analysis tables);
- ``python -m medeval.train`` on a tiny synthetic configuration (``summary.csv`` and each split's
  ``metrics.json``); ``--main-job`` adds the embedded default itself (minutes).

``compare`` walks both folders and requires every JSON and CSV file to be identical after
dropping fields that legitimately change between runs (wall times, timestamps, absolute paths,
the package version). It prints each difference and exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

TINY_TRAIN = [
    "data.synthetic.n_normal=144",
    "model.backbone=vgg11",
    "train.batch_size=16",
    "train.epochs=2",
    "train.max_steps_per_epoch=3",
    "train.keep_checkpoints=0",
    "evaluation.n_bootstrap=50",
]
#: Keys whose values change from run to run by nature (matched on the key name).
VOLATILE = re.compile(
    r"(^|_)(time|times|timing|seconds|elapsed|wall|created|started|finished|date|host|"
    r"version|path|paths|dir|folder|out|pid|cwd|python|torch|platform)(_|$)|_s$|^t_",
    re.IGNORECASE,
)


def _run(cmd: list[str], log: Path) -> None:
    print("$", " ".join(cmd), flush=True)
    with log.open("a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, check=False)
    if proc.returncode != 0:
        sys.exit(f"command failed with exit {proc.returncode}; see {log}")


def run(out: Path, data: Path, main_job: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    log = out / "commands.log"
    py = [sys.executable, "-m"]
    _run([*py, "medeval.evaluate", "--example", "--out", str(out / "evaluate")], log)
    common = ["--collection", "keel", "--data", str(data), "--max-splits", "2"]
    common += ["--n-estimators", "20", "--jobs", "1"]
    true_sc = ["--datasets", "vehicle,segment", "--out", str(out / "benchmark")]
    _run([*py, "medeval.benchmark", *common, *true_sc], log)
    discovered = ["--subconcepts", "discovered", "--out", str(out / "benchmark-discovered")]
    _run([*py, "medeval.benchmark", *common, "--datasets", "vehicle", *discovered], log)
    _run([*py, "medeval.train", *TINY_TRAIN, "--out", str(out / "train")], log)
    if main_job:
        _run([*py, "medeval.train", "--out", str(out / "main-job")], log)


def _clean(value):
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if not VOLATILE.search(str(k))}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _csv_rows(path: Path) -> list[dict]:
    import pandas as pd

    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    keep = [c for c in frame.columns if not VOLATILE.search(str(c))]
    return frame[keep].to_dict("records")


def _files(root: Path) -> dict[str, Path]:
    found = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.suffix in (".json", ".csv") and not p.name.startswith("."):
            found[str(p.relative_to(root))] = p
    return found


def compare(a: Path, b: Path) -> int:
    fa, fb = _files(a), _files(b)
    problems = [f"only in {a}: {k}" for k in sorted(fa.keys() - fb.keys())]
    problems += [f"only in {b}: {k}" for k in sorted(fb.keys() - fa.keys())]
    same = 0
    for key in sorted(fa.keys() & fb.keys()):
        pa, pb = fa[key], fb[key]
        if pa.suffix == ".json":
            va, vb = _clean(json.loads(pa.read_text())), _clean(json.loads(pb.read_text()))
        else:
            va, vb = _csv_rows(pa), _csv_rows(pb)
        if va != vb:
            problems.append(f"differs: {key}")
        else:
            same += 1
    for line in problems:
        print(line)
    print(f"{same} files identical, {len(problems)} differences")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the jobs into --out")
    r.add_argument("--out", type=Path, required=True)
    default_data = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
    r.add_argument("--data", type=Path, default=Path(os.environ.get("MEDEVAL_DATA", default_data)))
    r.add_argument("--main-job", action="store_true", help="also run the embedded default")
    c = sub.add_parser("compare", help="compare two output folders")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.out, args.data, args.main_job)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
