"""medeval.flows.label.label_next: the next batch from files, what it says, and its refusals."""

from __future__ import annotations

import label_data
import pytest

from medeval.errors import InputError
from medeval.flows.label import label_next
from medeval.options import LabelSettings


def test_the_first_batch_aims_at_every_subconcept_of_a_class_of_several(tmp_path):
    f = label_data.write(tmp_path, n=400, seed=4)
    b = label_next(f["predictions"], f["train_sizes"], settings=LabelSettings(budget=15))
    assert b.batch == 1 and b.known is None and len(b.frame) == 15
    assert set(b.design.open) == set(label_data.NAMES)
    assert b.lines[-1].startswith("no labels yet")
    assert abs(b.design.pi.sum() - 15) < 1e-9


def test_the_next_batch_says_what_is_decided_and_aims_at_what_is_open(tmp_path):
    f = label_data.write(tmp_path, n=400, seed=4)
    first = label_next(f["predictions"], f["train_sizes"], settings=LabelSettings(budget=40))
    first.frame.to_csv(tmp_path / "sheet.csv", index=False)
    labels = label_data.fill(tmp_path / "sheet.csv", f["truth"], tmp_path / "labels.csv")
    b = label_next(
        f["predictions"], f["train_sizes"], labels=labels, settings=LabelSettings(budget=20)
    )
    assert b.batch == 2 and b.known is not None
    assert any(line.startswith("class 1, so far — ") for line in b.lines)
    assert not set(b.frame["id"]) & set(first.frame["id"])


def test_a_predictions_file_without_posteriors_is_refused(tmp_path):
    f = label_data.write(tmp_path, n=50, seed=5)
    p = tmp_path / "plain.csv"
    p.write_text("id,y_true,y_score\na,0,0.1\nb,1,0.9\n")
    with pytest.raises(InputError, match="needs the subconcept model's posteriors"):
        label_next(p, f["train_sizes"])
