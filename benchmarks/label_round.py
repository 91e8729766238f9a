"""One round of the label loop on a large test set, as a user runs it: ``python -m
medeval.label`` (the next batch) and then ``python -m medeval.evaluate --labels`` (the estimate
with the labels so far), each timed in a fresh process, median of ``--repeat``.

The test rows: ``--n`` rows, class 0 of two subconcepts and class 1 of three (one rare, 2.5 %
of the rows, recall 0.45), Dirichlet posteriors (weight 4 on the true subconcept). The labels of
earlier rounds are filled in from the truth (``--rounds - 1`` batches before the timed one), so
the timed round carries labels, as a team's third round does.

    python benchmarks/label_round.py                  # N = 100,000, budget 20, round 3
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

import numpy as np
import pandas as pd

NAMES = ("A", "B", "big", "mid", "rare")
SIDES = np.array([0, 0, 1, 1, 1])
SHARES = np.array([0.3, 0.2, 0.475 * 60 / 95, 0.475 * 35 / 95, 0.025])
RECALL = np.array([0.90, 0.85, 0.90, 0.85, 0.45])


def write(folder: Path, n: int, seed: int = 0) -> tuple[Path, Path, pd.Series]:
    rng = np.random.default_rng(seed)
    sub = rng.choice(5, n, p=SHARES)
    y = SIDES[sub]
    hit = rng.random(n) < RECALL[sub]
    score = np.where(hit == (y == 1), 0.75, 0.25) + rng.uniform(-0.2, 0.2, n)
    alpha = np.ones((n, 5))
    alpha[np.arange(n), sub] = 4.0
    g = rng.gamma(alpha) * (SIDES[None, :] == y[:, None])
    q = g / g.sum(1, keepdims=True)
    ids = [f"r{i:06d}" for i in range(n)]
    frame = pd.DataFrame({"id": ids, "y_true": y, "y_score": score.round(4)})
    for j, nm in enumerate(NAMES):
        frame[f"q_{nm}"] = q[:, j].round(6)
    pred = folder / "predictions.csv"
    frame.to_csv(pred, index=False)
    sizes = {nm: {"class": int(c), "n": round(s * 8000) + 5}
             for nm, c, s in zip(NAMES, SIDES, SHARES, strict=True)}  # fmt: skip
    (folder / "train_sizes.json").write_text(json.dumps(sizes))
    truth = pd.Series(np.asarray(NAMES)[sub], index=ids)
    return pred, folder / "train_sizes.json", truth


def run(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def fill(sheet: Path, truth: pd.Series, labels: Path) -> None:
    s = pd.read_csv(sheet, dtype={"id": str})
    s["subconcept"] = s["id"].map(truth)
    old = pd.read_csv(labels, dtype={"id": str}) if labels.exists() else None
    keep = ["id", "inclusion_probability", "batch", "subconcept"]
    (s[keep] if old is None else pd.concat([old, s[keep]])).to_csv(labels, index=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--budget", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3, help="the timed round (earlier ones filled)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    py = [sys.executable, "-m"]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        pred, sizes, truth = write(d, a.n)
        labels = d / "labels.csv"
        common = ["--predictions", str(pred), "--train-sizes", str(sizes), "--quiet"]
        for k in range(1, a.rounds):
            extra = ["--labels", str(labels)] if labels.exists() else []
            run([*py, "medeval.label", *common, "--budget", str(a.budget), *extra,
                 "--out", str(d / f"l{k}")])  # fmt: skip
            fill(d / f"l{k}" / "to_label.csv", truth, labels)
        load = os.getloadavg()[0]
        t_label, t_eval = [], []
        for r in range(a.repeat):
            t_label.append(run([*py, "medeval.label", *common, "--budget", str(a.budget),
                                "--labels", str(labels), "--out", str(d / f"t{r}")]))  # fmt: skip
            t_eval.append(run([*py, "medeval.evaluate", *common, "--labels", str(labels),
                               "--out", str(d / f"e{r}")]))  # fmt: skip
        n_lab = len(pd.read_csv(labels))
    print(
        f"{a.n:,} test rows, round {a.rounds} ({n_lab} labels so far, budget {a.budget}); "
        f"load average {load:.2f} -> {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)"
    )
    print(f"label:             median {statistics.median(t_label):.2f} s  {t_label}")
    print(f"evaluate --labels: median {statistics.median(t_eval):.2f} s  {t_eval}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
