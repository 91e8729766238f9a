"""Rebuild the bundled example: real test predictions of a random forest on a KEEL data set.

``python -m medeval.examples.make_example --data ../shared/data`` (KEEL letter, seed 0)"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier

from medeval.datasets import load
from medeval.io import atomic
from medeval.splits import cv_5x2
from medeval.tasks import make_binary_task

HERE = Path(__file__).parent


def make_example(data_dir: Path, dataset: str, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """Predictions table of the first fold of the 5x2 CV (docs/method.md, "Protocols"), one row per
    test instance: ``y_score`` of a binary forest, ``q_<subconcept>`` of a subconcept forest on the
    same training fold; and that fold's subconcept sizes (``train_sizes.json``)."""
    task = make_binary_task(load("keel", data_dir / "keel", name=dataset), seed=seed)
    task.require_kept()
    split = cv_5x2(task, seed)[0]
    train, test = split["train"], split["test"]
    X = task.data.X
    names = task.subconcept_names
    binary = RandomForestClassifier(n_estimators=200, random_state=seed, n_jobs=-1)
    binary.fit(X[train], task.y[train])
    sub = RandomForestClassifier(n_estimators=200, random_state=seed, n_jobs=-1)
    sub.fit(X[train], task.subconcept[train])
    q = np.zeros((len(test), len(names)))
    q[:, sub.classes_] = sub.predict_proba(X[test])
    frame = pd.DataFrame(
        {
            "y_true": task.y[test],
            "y_score": binary.predict_proba(X[test])[:, 1].round(4),
            "subconcept": np.asarray(names)[task.subconcept[test]],
        }
    )
    q_cols = [f"q_{n}" for n in names]
    frame[q_cols] = q.round(6)
    frame[q_cols] = frame[q_cols].div(frame[q_cols].sum(axis=1), axis=0).round(6)
    counts = task.train_counts(train)
    sizes = {
        n: {"class": int(s), "n": int(c)} for n, s, c in zip(names, task.sides, counts, strict=True)
    }
    return frame, sizes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="shared data folder (holds keel/)")
    ap.add_argument("--dataset", default="letter")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args()
    frame, sizes = make_example(args.data, args.dataset, args.seed)
    atomic.write_text(args.out / "predictions.csv", frame.to_csv(index=False))
    atomic.write_json(args.out / "train_sizes.json", sizes)
    print(f"wrote {len(frame)} test predictions of keel/{args.dataset} to {args.out}")


if __name__ == "__main__":
    main()
