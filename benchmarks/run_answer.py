"""What a finished ``python -m medeval.train`` run answered, split by split, and whether its
intervals held: the figures ``docs/imaging.md`` quotes for ``configs/isic_skin.yaml``.

Per split: BA, wBA (oracle), rBA (recommended) and whether rBA's interval holds wBA; the
subconcept head's within-class accuracy on the test rows (its calibrated posteriors
renormalised within each row's known class, argmax = the true subconcept); and over every
split × subconcept, how often the rectified per-subconcept interval (``r_low``–``r_high``)
holds the test rows' own recall (and how often the label-free ``est_low``–``est_high`` does).

    python benchmarks/run_answer.py /path/to/run
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd


def within_class_accuracy(pred: pd.DataFrame, sides: dict[str, int]) -> float:
    """Argmax of the ``q_`` posteriors within the row's class = its true subconcept."""
    names = [c.removeprefix("q_") for c in pred.columns if c.startswith("q_")]
    q = pred[[f"q_{n}" for n in names]].to_numpy()
    side = np.array([sides[n] for n in names])
    q = q * (side[None, :] == pred["y_true"].to_numpy()[:, None])
    return float((np.asarray(names)[q.argmax(1)] == pred["subconcept"].to_numpy()).mean())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", type=Path)
    run = p.parse_args().run
    rows, cells, est_cells = [], [], []
    for folder in sorted(run.glob("split_*"), key=lambda f: int(f.name.split("_")[1])):
        m = json.loads((folder / "metrics.json").read_text())
        per = pd.read_csv(folder / "per_subconcept.csv")
        sides = dict(zip(per["subconcept"], per["class"], strict=True))
        s, iv = m["scores"], m["intervals"]["rBA"]
        rows.append(
            {
                "split": folder.name,
                "BA": s["BA"],
                "wBA": s["wBA"],
                "rBA": s["rBA"],
                "rBA holds wBA": iv["low"] <= s["wBA"] <= iv["high"],
                "within-class acc": within_class_accuracy(
                    pd.read_csv(folder / "predictions.csv"), sides
                ),
            }
        )
        for bounds, into in (("r", cells), ("est", est_cells)):
            ok = per.dropna(subset=["recall", f"{bounds}_low", f"{bounds}_high"])
            into += list(
                (ok[f"{bounds}_low"] <= ok["recall"]) & (ok["recall"] <= ok[f"{bounds}_high"])
            )
    t = pd.DataFrame(rows)
    with pd.option_context("display.width", 120, "display.precision", 3):
        print(t.to_string(index=False))
    print(f"load average at the end: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    for c in ("BA", "wBA", "rBA", "within-class acc"):
        v = t[c].to_numpy()
        print(
            f"{c:>17}: mean {v.mean():.3f} ± {v.std(ddof=1):.3f}, range {v.min():.3f}–{v.max():.3f}"
        )
    print(
        f"rBA interval holds wBA in {t['rBA holds wBA'].sum()} of {len(t)} splits; "
        f"mean |rBA - wBA| {np.abs(t['rBA'] - t['wBA']).mean():.4f}"
    )
    print(
        f"r_recall interval holds the test rows' recall in {np.mean(cells):.1%} of "
        f"{len(cells)} split × subconcept cells; the label-free est_recall interval in "
        f"{np.mean(est_cells):.1%} of {len(est_cells)}"
    )


if __name__ == "__main__":
    main()
