"""MMHS150K hate-speech tweets (``MMHS150K_GT.json``): the label is the majority of three
annotators; the tie rule is in docs/tasks.md."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from medeval.datasets.base import DataError, LabelledData, find_file

__all__ = ["LABEL_NAMES", "load_mmhs150k", "majority_vote"]

LABEL_NAMES = ("NotHate", "Racist", "Sexist", "Homophobe", "Religion", "OtherHate")


def majority_vote(votes: np.ndarray, *, tie: str = "drop") -> tuple[np.ndarray, np.ndarray]:
    """(N, 3) annotator codes → (N,) majority code and (N,) bool ``has_majority``.

    Tied rows (three different codes) get -1 with ``tie="drop"``, the first annotator's code
    with ``tie="first"``.
    """
    votes = np.asarray(votes)
    a, b, c = votes[:, 0], votes[:, 1], votes[:, 2]
    has = (a == b) | (a == c) | (b == c)
    winner = np.where((a == b) | (a == c), a, b)
    if tie == "drop":
        winner = np.where(has, winner, -1)
    elif tie == "first":
        winner = np.where(has, winner, a)
    else:
        raise ValueError(f"tie must be 'drop' or 'first', got {tie!r}")
    return winner, has


def load_mmhs150k(path: str | Path, *, tie: str = "drop") -> LabelledData:
    """Read MMHS150K.

    Args:
        path: ``MMHS150K_GT.json`` or the folder holding it.
        tie: what to do with three-way disagreements (see module doc).

    Returns:
        ``LabelledData`` with ``text`` (N,) tweet texts, ``labels`` (N,) names, ``ids`` tweet ids.
    """
    file = find_file(path, ["MMHS150K_GT.json"], "MMHS150K_GT.json")
    try:
        records = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{file}: not valid JSON: {exc}") from exc
    ids = list(records)
    votes = np.empty((len(ids), 3), dtype=np.int64)
    texts = []
    for row, tweet_id in enumerate(ids):
        rec = records[tweet_id]
        labels = rec.get("labels") if isinstance(rec, dict) else None
        if labels is None or "tweet_text" not in rec:
            raise DataError(
                f"{file}: tweet {tweet_id} (row {row}): needs 'labels' and 'tweet_text'"
            )
        if len(labels) != 3 or any(lab not in range(len(LABEL_NAMES)) for lab in labels):
            raise DataError(
                f"{file}: tweet {tweet_id} (row {row}): labels {labels} are not three codes 0-5"
            )
        votes[row] = labels
        texts.append(str(rec["tweet_text"]))
    winner, has = majority_vote(votes, tie=tie)
    keep = winner >= 0
    return LabelledData(
        labels=np.asarray(LABEL_NAMES)[winner[keep]],
        source="mmhs150k",
        name="mmhs150k",
        text=np.asarray(texts, dtype=object)[keep],
        ids=np.asarray(ids)[keep],
        meta={
            "path": str(file),
            "tie": tie,
            "ties_dropped": int((~has).sum()) if tie == "drop" else 0,
            "ties": int((~has).sum()),
        },
    )
