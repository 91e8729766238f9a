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


def _after_one_batch(tmp_path, **kw):
    f = label_data.write(tmp_path, n=400, seed=4)
    first = label_next(f["predictions"], f["train_sizes"], settings=LabelSettings(budget=40))
    first.frame.to_csv(tmp_path / "sheet.csv", index=False)
    labels = label_data.fill(tmp_path / "sheet.csv", f["truth"], tmp_path / "labels.csv")
    return (
        f,
        labels,
        label_next(f["predictions"], f["train_sizes"], labels=labels, settings=LabelSettings(**kw)),
    )


def test_the_labelling_budget_cuts_the_batch_and_once_spent_proposes_none(tmp_path):
    f, labels, cut = _after_one_batch(tmp_path, budget=20, max_labels=50)
    assert len(cut.frame) == 10 and any("10 labels left" in n for n in cut.notes)
    spent = label_next(
        f["predictions"], f["train_sizes"], labels=labels,
        settings=LabelSettings(budget=20, max_labels=40),
    )  # fmt: skip
    assert spent.design is None and spent.frame.empty
    assert spent.lines[-1].startswith("the labelling budget (--max-labels 40) is spent: 40 rows")
    assert any(line.startswith("class 1, so far — ") for line in spent.lines)


def test_open_verdicts_get_a_forecast_of_labels_still_needed(tmp_path):
    _, _, b = _after_one_batch(tmp_path, budget=20, forecast=4)
    said = [line for line in b.lines if line.startswith("labels still needed to decide")]
    opened = [line for line in b.lines if "not known: " in line]
    assert said and opened  # this data leaves verdicts open after one batch
    if said:
        assert "4 worlds drawn from today's estimates, batches of 20" in said[0]
        names = opened[0].split("not known: ")[1].split(", ")
        assert all(f"{nm} " in said[0] for nm in names)
    (tmp_path / "b").mkdir()
    _, _, none = _after_one_batch(tmp_path / "b", budget=20, forecast=0)
    assert not [line for line in none.lines if line.startswith("labels still needed")]
