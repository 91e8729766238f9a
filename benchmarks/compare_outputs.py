"""Are two versions of medeval the same to a user? Run the same commands with both and compare
every output file byte for byte.

Commands: ``evaluate --example`` (with and without the bootstrap), ``discover`` on a small
two-class blob data set, ``benchmark`` on two KEEL sets (two splits, 20 trees, every correction;
true and discovered subconcepts: every record and the analysis tables) and, with ``--train``, a
tiny synthetic ``train`` followed by ``evaluate --run``; ``--main-job`` adds the embedded
default ``python -m medeval.train`` itself (minutes). Differences that are not the software's
(the output path, the time stamp of an HTML report, the timing columns of ``log.csv``, progress
bars on stderr) are normalised away; checkpoints are compared tensor by tensor::

    python benchmarks/compare_outputs.py main            # main against the working tree
    python benchmarks/compare_outputs.py b6e1d46 87de40a --train  # two commits, with training

The KEEL files are read from ``$MEDEVAL_DATA`` (default ``../shared/data``). Wall times in the
benchmark records (``timing``) and the ``timing.*`` tables are left out of the comparison.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TINY = [
    "data.synthetic.n_normal=144",
    "data.synthetic.size=32",
    "model.backbone=vgg11",
    "train.image_size=32",
    "train.batch_size=16",
    "train.epochs=2",
    "train.max_steps_per_epoch=2",
    "train.keep_checkpoints=0",
    "evaluation.n_bootstrap=20",
]
DATA = Path(os.environ.get("MEDEVAL_DATA", REPO.parent / "shared" / "data"))
# Bounded: an unbounded prefix backtracks quadratically over the base64 images of a report.
EXAMPLES = re.compile(r"[^\s\"'<>]{0,400}/medeval/examples")
STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")


def source_tree(ref: str | None, into: Path) -> Path:
    """The package at git ``ref`` (``None``: the working tree as it is)."""
    if ref is None:
        return REPO
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref], capture_output=True)
    archive.check_returncode()
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def blobs(folder: Path) -> None:
    """Train/test embeddings (f0000…, label, id) and test predictions for ``discover``."""
    import numpy as np
    import pandas as pd
    from sklearn.datasets import make_blobs

    folder.mkdir(parents=True)
    X0, _ = make_blobs([90, 60], n_features=5, center_box=(-20, 20), random_state=0)
    X1, t1 = make_blobs([40, 20], n_features=5, center_box=(-20, 20), random_state=1)
    frame = pd.DataFrame(np.vstack([X0, X1]), columns=[f"f{j:04d}" for j in range(5)])
    frame["label"] = ["normal"] * len(X0) + ["effusion"] * len(X1)
    frame["id"] = [f"img{i:03d}" for i in range(len(frame))]
    rng = np.random.default_rng(0)
    rows = rng.permutation(len(frame))[:80]
    test = frame.loc[rows].reset_index(drop=True)
    y = (test["label"] == "effusion").to_numpy(int)
    small = np.r_[np.zeros(len(X0), bool), t1 == 1][rows]
    score = np.where(y == 1, np.where(small, 0.3, 0.8), 0.2) + rng.uniform(-0.1, 0.1, len(y))
    pd.DataFrame({"id": test["id"], "y_true": y, "y_score": score}).to_csv(
        folder / "preds.csv", index=False
    )
    frame.drop(index=rows).to_parquet(folder / "train.parquet", index=False)
    test.to_parquet(folder / "test.parquet", index=False)


def run_all(tree: Path, out: Path, inputs: Path, *, train: bool, main_job: bool = False) -> None:
    """Every command with the package in ``tree``, outputs under ``out``."""
    env = {"PYTHONPATH": str(tree), "MEDEVAL_RUNS": str(out / "runs"), "TQDM_DISABLE": "1"}
    commands = {
        "ev": ["evaluate", "--example", "--out", str(out / "ev")],
        "evq": ["evaluate", "--example", "--bootstrap", "0", "-q", "--out", str(out / "evq")],
        "disc": [
            "discover",
            *("--train", str(inputs / "train.parquet"), "--test", str(inputs / "test.parquet")),
            *("--predictions", str(inputs / "preds.csv"), "--positive", "effusion"),
            *("--out", str(out / "disc"), "--n-estimators", "20", "--bootstrap", "50"),
        ],
    }
    grid = [
        "--collection",
        "keel",
        "--data",
        str(DATA),
        "--max-splits",
        "2",
        "--n-estimators",
        "20",
    ]
    commands["bench"] = ["benchmark", *grid, "--datasets", "vehicle,segment"]
    commands["bench"] += ["--out", str(out / "bench")]
    commands["bench-disc"] = ["benchmark", *grid, "--datasets", "vehicle"]
    commands["bench-disc"] += ["--subconcepts", "discovered", "--out", str(out / "bench-disc")]
    if main_job:
        commands["main"] = ["train", "--out", str(out / "main")]
    if train:
        commands["train"] = ["train", *TINY, "--out", str(out / "train")]
        commands["rerun"] = ["evaluate", "--run", str(out / "train"), "--bootstrap", "30"]
    out.mkdir(parents=True)
    for name, args in commands.items():
        r = subprocess.run(
            [sys.executable, "-m", f"medeval.{args[0]}", *args[1:]],
            capture_output=True,
            text=True,
            env={**os.environ, **env},
            cwd=out,  # not the checkout: `python -m` puts the working folder first on sys.path
        )
        (out / f"{name}.stdout").write_text(f"exit {r.returncode}\n{r.stdout}")


def _without_timing(text: str) -> str:
    """A benchmark record without its wall times (they depend on the machine's load)."""
    import json

    record = json.loads(text)
    if isinstance(record, dict):
        record.pop("timing", None)
    return json.dumps(record, indent=2, sort_keys=True)


def _normalised(path: Path, root: Path) -> bytes:
    data = path.read_bytes()
    if path.name.startswith("timing.") or path.name in ("run.json", "runs.json"):
        return b""  # wall times of the grid
    if path.suffix in (".html", ".md", ".json", ".csv", ".stdout", ".yaml"):
        text = data.decode().replace(str(root), "<out>")
        text = STAMP.sub("<time>", text)
        text = EXAMPLES.sub("<examples>", text)
        if path.name.endswith(".stdout"):  # throughput depends on the machine's load
            text = re.sub(r"\d+\.\d img/s", "<rate>", text)
            text = re.sub(r"\d+(\.\d+)? ?(s|min)\b", "<seconds>", text)
        if "records" in path.parts and path.suffix == ".json":
            text = _without_timing(text)
        if path.name.endswith(".stdout"):
            text = re.sub(r"data \d+%", "data <share>", text)
        if path.name == "summary.md":  # the analysis' wall-time section
            text = re.sub(r"### Time\n.*?(?=\n### |\Z)", "### Time <wall times>", text, flags=re.S)
        if path.name == "report.html":
            time_section = r"<h2>Time and memory</h2>.*?(?=<h2>|</body>)"
            text = re.sub(time_section, "<time>", text, flags=re.S)
        data = text.encode()
    return data


def _compared(path: Path) -> bool:
    """Output files proper: not the folder marker (it holds the time it was written)."""
    return path.name != ".medeval-output.json"


def differences(a: Path, b: Path) -> list[str]:
    """Files that differ between output folders ``a`` and ``b`` (after normalisation)."""
    import pandas as pd
    import torch

    out = []
    names = {p.relative_to(a) for p in a.rglob("*") if p.is_file() and _compared(p)}
    names |= {p.relative_to(b) for p in b.rglob("*") if p.is_file() and _compared(p)}
    for name in sorted(names):
        pa, pb = a / name, b / name
        if not (pa.is_file() and pb.is_file()):
            out.append(f"{name}: only in {'the first' if pa.is_file() else 'the second'}")
        elif name.suffix == ".pt":
            ta, tb = torch.load(pa, weights_only=False), torch.load(pb, weights_only=False)
            if any(not torch.equal(ta["model"][k], tb["model"][k]) for k in ta["model"]):
                out.append(f"{name}: other weights")
        elif name.name == "log.csv":
            fa, fb = pd.read_csv(pa), pd.read_csv(pb)
            keep = [c for c in fa.columns if c not in ("seconds", "images_per_s", "data_share")]
            if list(fa.columns) != list(fb.columns) or not fa[keep].equals(fb[keep]):
                out.append(f"{name}: other epochs")
        elif _normalised(pa, a) != _normalised(pb, b):
            out.append(f"{name}: other bytes")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before", help="git ref of the first version")
    p.add_argument("after", nargs="?", help="git ref of the second (default: working tree)")
    p.add_argument("--train", action="store_true", help="also a tiny training run (minutes)")
    p.add_argument("--main-job", action="store_true", help="also the embedded default (minutes)")
    p.add_argument("--keep", type=Path, help="copy both output folders here, to look at them")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        blobs(tmp / "inputs")
        for side, ref in (("before", args.before), ("after", args.after)):
            tree = source_tree(ref, tmp / "src" / side)
            run_all(tree, tmp / side, tmp / "inputs", train=args.train, main_job=args.main_job)
        diff = differences(tmp / "before", tmp / "after")
        if args.keep is not None:
            import shutil

            for side in ("before", "after"):
                shutil.copytree(tmp / side, args.keep / side, dirs_exist_ok=True)
    print("\n".join(diff) if diff else "identical: every output file, byte for byte")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
