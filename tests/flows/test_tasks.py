"""medeval/flows/tasks.py: a task's split manifest with its record, and the --out it may
replace."""

import json

import pytest

from medeval.errors import OutputPathError, UserError
from medeval.flows.tasks import check_manifest_out, write_split_manifest
from medeval.training.data import build_task

PROG = "python -m medeval.tasks split"


def _record(path, manifest, prog=PROG):
    path.write_text(json.dumps({"command": [prog], "manifest": str(manifest)}), encoding="utf-8")


def test_a_new_file_is_accepted(tmp_path):
    check_manifest_out(tmp_path / "m.csv", tmp_path / "m.json", prog=PROG, data=None, force=False)


def test_an_existing_manifest_needs_force_and_its_record(tmp_path):
    out, record = tmp_path / "m.csv", tmp_path / "m.json"
    out.write_text("x\n", encoding="utf-8")
    with pytest.raises(UserError, match="exists; give --force"):
        check_manifest_out(out, record, prog=PROG, data=None, force=False)
    with pytest.raises(UserError, match="is not a split manifest written by"):
        check_manifest_out(out, record, prog=PROG, data=None, force=True)  # no record
    _record(record, "elsewhere/m.csv", prog="another tool")
    with pytest.raises(UserError, match="is not a split manifest written by"):
        check_manifest_out(out, record, prog=PROG, data=None, force=True)
    _record(record, "elsewhere/m.csv")  # compared by file name
    check_manifest_out(out, record, prog=PROG, data=None, force=True)


def test_a_folder_or_the_input_is_never_the_output(tmp_path):
    (tmp_path / "m.csv").mkdir()
    with pytest.raises(OutputPathError, match="is a folder, not a file"):
        check_manifest_out(
            tmp_path / "m.csv", tmp_path / "m.json", prog=PROG, data=None, force=True
        )
    data = tmp_path / "data.csv"
    data.write_text("a\n", encoding="utf-8")
    with pytest.raises(OutputPathError, match="is the input"):
        check_manifest_out(data, tmp_path / "r.json", prog=PROG, data=data, force=True)


def test_the_manifest_is_written_with_its_record(tiny_config, tmp_path):
    task = build_task(tiny_config.data)
    out, record = tmp_path / "m.csv", tmp_path / "m.json"
    scheme, splits = write_split_manifest(
        task, out, record, path=tmp_path, scheme="cv5x2", split_seed=3, command=[PROG, "--x"]
    )
    assert scheme == "cv5x2" and len(splits) == 10 and out.is_file()
    rec = json.loads(record.read_text(encoding="utf-8"))
    assert rec["scheme"] == "cv5x2" and rec["n_rows"] == len(task)
    assert rec["manifest"] == str(out) and rec["command"] == [PROG, "--x"]
    assert (rec["dataset"], rec["source"]) == (task.name, task.source)
    # what it wrote, it may replace
    check_manifest_out(out, record, prog=PROG, data=None, force=True)
