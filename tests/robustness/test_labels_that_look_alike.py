"""Labels that look alike (#38): a label of the data that the user's lists do not name but
that is spelled like a listed one (``mel`` beside ``MEL``) would silently join class 0; it is
refused naming both spellings. A refused ``--scheme presplit`` names the option."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_malformed_inputs import run_tool

from medeval.datasets.base import DataError, LabelledData
from medeval.tasks.user import TaskSpec, make_user_task


def _data(labels: list[str]) -> LabelledData:
    return LabelledData(labels=labels, source="t", name="t")


@pytest.mark.parametrize("alike", ["mel", "MEL\u200b", "Mel "])
def test_a_look_alike_label_is_refused_naming_both(alike):
    data = _data(["MEL"] * 10 + [alike.strip()] * 9 + ["nv"] * 30 + ["bcc"] * 10)
    with pytest.raises(DataError) as err:
        make_user_task(data, TaskSpec(("MEL", "bcc")))
    message = str(err.value)
    assert "label 'MEL' in --positive / task.positive and label " in message
    assert "(9 rows) of the data differ only in spelling" in message


def test_both_spellings_listed_are_taken_as_given():
    data = _data(["MEL"] * 10 + ["mel"] * 9 + ["nv"] * 30 + ["bcc"] * 10)
    task = make_user_task(data, TaskSpec(("MEL", "bcc"), drop=("mel",)))
    assert sorted(task.subconcept_names) == ["MEL", "bcc", "nv"]


def test_the_tools_refuse_a_look_alike_label_with_one_line(tmp_path, capsys):
    labels = ["MEL"] * 10 + ["mel"] * 9 + ["nv"] * 30 + ["bcc"] * 10
    frame = pd.DataFrame({"x": np.arange(len(labels), dtype=float), "label": labels})
    frame.to_csv(tmp_path / "t.csv", index=False)
    argv = ["describe", "--source", "csv", "--path", str(tmp_path / "t.csv")]
    assert run_tool("tasks", [*argv, "--positive", "MEL,bcc"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'MEL'" in err and "'mel' (9 rows)" in err


def test_a_refused_presplit_names_the_option(tmp_path, capsys):
    frame = pd.DataFrame({"x": np.arange(60.0), "label": ["a"] * 30 + ["b"] * 20 + ["c"] * 10})
    frame.to_csv(tmp_path / "t.csv", index=False)
    argv = ["split", "--source", "csv", "--path", str(tmp_path / "t.csv"), "--positive", "b,c"]
    argv += ["--scheme", "presplit", "--out", str(tmp_path / "s.csv")]
    assert run_tool("tasks", argv) == 2
    err = capsys.readouterr().err.strip()
    assert "--scheme presplit: csv/t has no distributed split" in err and "--parts" in err
