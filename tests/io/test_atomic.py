"""medeval.io.outdir and medeval.io.atomic: output paths checked up front, whole folders
replaced, one JSON cleaner."""

import json
import math
import shutil
import sys

import numpy as np
import pytest

from medeval.errors import OutputPathError
from medeval.io.atomic import json_ready, write_json
from medeval.io.outdir import check_out, replace_folder
from medeval.io.tool_files import MARKER


def test_check_out_rejects_a_file_a_path_under_a_file_and_an_unwritable_folder(tmp_path):
    file = tmp_path / "f.txt"
    file.write_text("x")
    with pytest.raises(OutputPathError, match="is a file, not a folder"):
        check_out(file)
    with pytest.raises(OutputPathError, match="f.txt is a file"):
        check_out(file / "sub" / "out")
    with pytest.raises(OutputPathError, match="is a folder, not a file"):
        check_out(tmp_path, kind="file")
    assert check_out(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()  # checking creates nothing
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]  # and leaves no probe behind


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux")
def test_check_out_rejects_a_folder_nobody_can_write(tmp_path):
    with pytest.raises(OutputPathError, match="cannot write into /proc"):
        check_out("/proc/medeval-out")


def test_replace_folder_leaves_the_previous_run_when_writing_fails(tmp_path):
    out = tmp_path / "out"
    with replace_folder(out) as tmp:
        (tmp / "a.csv").write_text("first")
        (tmp / "b.png").write_text("first")
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "a.csv", "b.png"]
    with pytest.raises(RuntimeError), replace_folder(out) as tmp:
        (tmp / "a.csv").write_text("second")
        raise RuntimeError("report failed")
    assert (out / "a.csv").read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # temporary folder removed


def test_replace_folder_drops_files_of_the_previous_run(tmp_path):
    out = tmp_path / "out"
    with replace_folder(out) as tmp:
        (tmp / "per_subconcept.csv").write_text("old")
    with replace_folder(out) as tmp:
        (tmp / "metrics.json").write_text("new")
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "metrics.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_replace_folder_refuses_to_delete_files_its_tool_did_not_write(tmp_path):
    # The marker lists what the tool wrote; a file added later (the user's notes, another
    # tool's output written inside) stops the replacement, which would delete it.
    out = tmp_path / "out"
    with replace_folder(out, tool="evaluate") as tmp:
        (tmp / "metrics.json").write_text("first")
        (tmp / "figures").mkdir()
        (tmp / "figures" / "a.png").write_text("first")
    mark = json.loads((out / MARKER).read_text())
    assert mark["files"] == ["figures/a.png", "metrics.json"] and mark["tool"] == "evaluate"
    with replace_folder(out, tool="evaluate") as tmp:  # its own files only: replaced
        (tmp / "metrics.json").write_text("second")
    (out / "notes.txt").write_text("the user's notes")
    (out / "runs" / "evaluate-x").mkdir(parents=True)
    (out / "runs" / "evaluate-x" / "metrics.json").write_text("another run")
    with pytest.raises(OutputPathError) as err, replace_folder(out, tool="evaluate") as tmp:
        (tmp / "metrics.json").write_text("third")
    assert "did not write (notes.txt, runs/evaluate-x/metrics.json)" in str(err.value)
    assert (out / "metrics.json").read_text() == "second"
    assert (out / "notes.txt").read_text() == "the user's notes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    # a marker without the list (written by an earlier version): the files the tool writes
    # stand for it, so the user's notes still stop the replacement ...
    (out / MARKER).write_text(json.dumps({"tool": "evaluate", "complete": True}))
    with pytest.raises(OutputPathError, match=r"did not write \(notes.txt, runs/evaluate-x"):
        with replace_folder(out, tool="evaluate") as tmp:
            (tmp / "metrics.json").write_text("fourth")
    assert (out / "notes.txt").read_text() == "the user's notes"
    (out / "notes.txt").unlink()  # ... and without them the folder is replaced
    shutil.rmtree(out / "runs")
    with replace_folder(out, tool="evaluate") as tmp:
        (tmp / "metrics.json").write_text("fourth")
    assert (out / "metrics.json").read_text() == "fourth"


def test_json_ready_makes_strict_json_of_nan_and_numpy():
    value = {
        1: np.float64("nan"),
        "b": [np.int64(3), (math.inf, -math.inf)],
        "c": np.array([1.5, np.nan]),
        "d": np.bool_(True),
    }
    out = json_ready(value)
    assert out == {"1": None, "b": [3, [None, None]], "c": [1.5, None], "d": True}
    assert type(out["b"][0]) is int
    json.dumps(out, allow_nan=False)


def test_write_json_writes_null_for_nan(tmp_path):
    path = write_json(tmp_path / "x.json", {"v": float("nan")})
    assert json.loads(path.read_text()) == {"v": None}


def test_check_out_refuses_a_path_too_long_for_the_temporary_folder_beside_it(tmp_path):
    deep = tmp_path.joinpath(*["d" * 200] * 21)  # > PATH_MAX (4096) once .new-<id> is added
    with pytest.raises(OutputPathError, match="name too long"):
        check_out(deep, tool="evaluate")
    with pytest.raises(OutputPathError, match="name too long"):
        check_out(tmp_path / ("n" * 245), tool="evaluate")  # NAME_MAX 255 with .new-<id>
    assert check_out(tmp_path / ("n" * 240)) == tmp_path / ("n" * 240)
    assert list(tmp_path.iterdir()) == []


def test_a_refused_or_finished_check_leaves_no_folder_it_made_for_its_lock(tmp_path):
    from medeval.io.locks import unlock_output

    out = tmp_path / "runs" / "deeper" / "out"
    check_out(out, tool="evaluate")
    assert (tmp_path / "runs" / "deeper" / ".out.lock").is_file()
    unlock_output(out)
    assert list(tmp_path.iterdir()) == []
    with replace_folder(out, tool="evaluate") as tmp:
        (tmp / "a.csv").write_text("x")
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]
