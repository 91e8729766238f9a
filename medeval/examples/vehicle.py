"""The own-model example of ``python -m medeval.subconcepts --example`` (and of the tests): a
classifier that is not medeval's on a real KEEL set.

KEEL ``vehicle`` (18 features) becomes a binary task of 597 rows with four subconcepts
(:func:`medeval.tasks.make_binary_task`, seed 0: bus and saab in class 0, opel and van in
class 1); its rows are split into TRAIN (40 %), REF (30 %) and TEST (30 %), stratified by
subconcept, and a scikit-learn logistic regression fitted on TRAIN scores REF and TEST. The
set is the smallest KEEL set with two minority subconcepts, and its weighted and unweighted
balanced accuracies differ (the weighting matters there).

The KEEL file is read where the other real data sets are (``--data``, else ``$MEDEVAL_DATA``,
else ``../shared/data``: a folder holding ``keel/vehicle.dat``); it is not bundled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.errors import UserError

__all__ = ["EXAMPLE_FILES", "OwnModelData", "vehicle"]

#: The example's tables as ``--example`` writes them beside the command's outputs.
EXAMPLE_FILES = {
    "train.csv": "TRAIN: features f0000…, y_true, subconcept",
    "test.csv": "TEST: features, y_true, y_score (the test subconcepts left out)",
    "validation.csv": "REF as given to --reference: features, y_true, y_score, subconcept",
    "test_truth.csv": (
        "id, subconcept: the test rows' true subconcepts, which the command never read "
        "(to fill the label sheets of a trial loop)"
    ),
}


@dataclass
class OwnModelData:
    """The three tables (features ``f0000…``, ``y_true``, ``subconcept``, ``y_score``, ``id``)
    and the test rows' true subconcepts (left out of ``test``)."""

    train: pd.DataFrame
    reference: pd.DataFrame
    test: pd.DataFrame
    test_subconcept: np.ndarray

    def write(self, folder: Path) -> tuple[Path, Path, Path]:
        paths = folder / "train.csv", folder / "reference.csv", folder / "test.csv"
        for frame, path in zip((self.train, self.reference, self.test), paths, strict=True):
            frame.to_csv(path, index=False)
        return paths

    def truth(self) -> pd.DataFrame:
        """``id``, ``subconcept`` of every test row (``test_truth.csv``)."""
        return pd.DataFrame({"id": self.test["id"], "subconcept": self.test_subconcept})

    def files(self) -> dict[str, bytes]:
        """:data:`EXAMPLE_FILES`, rendered: the tables as ``--example`` leaves them."""
        frames = (self.train, self.test, self.reference, self.truth())
        return {
            name: frame.to_csv(index=False).encode()
            for name, frame in zip(EXAMPLE_FILES, frames, strict=True)
        }


def vehicle(data: str | Path | None = None, seed: int = 0) -> OwnModelData:
    """The example's tables from KEEL vehicle under ``data`` (a folder holding ``keel/``;
    default :func:`medeval.datasets.base.data_root`).

    Raises:
        UserError: no ``keel/vehicle.dat`` there, naming the path looked at.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from medeval.datasets import load
    from medeval.datasets.base import data_root
    from medeval.tasks import make_binary_task

    root = Path(data) if data is not None else data_root()
    if not (root / "keel" / "vehicle.dat").is_file():
        raise UserError(
            f"the example reads KEEL vehicle from {root / 'keel' / 'vehicle.dat'}, which is "
            "absent: give --data DIR (a folder holding keel/vehicle.dat, the KEEL or UCI Statlog "
            "vehicle file) or set MEDEVAL_DATA to it"
        )
    task = make_binary_task(load("keel", root / "keel", name="vehicle"), seed=0)
    X, y = task.data.X, task.y
    sc = np.array([task.subconcepts[c].name for c in task.subconcept], dtype=object)
    idx = np.arange(len(y))
    tr, rest = train_test_split(idx, test_size=0.6, stratify=task.subconcept, random_state=seed)
    ref, te = train_test_split(
        rest, test_size=0.5, stratify=task.subconcept[rest], random_state=seed
    )
    clf = make_pipeline(StandardScaler(), LogisticRegression()).fit(X[tr], y[tr])

    def frame(rows: np.ndarray, *, scored: bool, labelled: bool) -> pd.DataFrame:
        f = pd.DataFrame(X[rows], columns=[f"f{j:04d}" for j in range(X.shape[1])])
        f.insert(0, "id", [f"v{i:04d}" for i in rows])
        f["y_true"] = y[rows]
        if scored:
            f["y_score"] = clf.predict_proba(X[rows])[:, 1]
        if labelled:
            f["subconcept"] = sc[rows]
        return f

    return OwnModelData(
        train=frame(tr, scored=False, labelled=True),
        reference=frame(ref, scored=True, labelled=True),
        test=frame(te, scored=True, labelled=False),
        test_subconcept=sc[te],
    )
