"""Resuming a results folder: a record that is truncated, not JSON or of another schema is not
counted as finished; it is recomputed, with a warning naming its file."""

import json

import pytest

from medeval.errors import OutputPathError, UserError
from medeval.io.outdir import MARKER
from medeval.protocol.store import CorruptRecordWarning, ResultsStore

GOOD = {"dataset": "iris", "method": "none", "split": 0, "scores": {"BA": 0.5}}

BAD = {
    "truncated": json.dumps(GOOD)[:25],
    "empty": "",
    "not-json": "scores: 0.5\n",
    "binary": b"\xff\xfe\x00garbage",
    "a-list": json.dumps([GOOD]),
    "no-scores": json.dumps({k: v for k, v in GOOD.items() if k != "scores"}),
    "scores-not-object": json.dumps({**GOOD, "scores": 0.5}),
    "other-method": json.dumps({**GOOD, "method": "ros"}),
    "other-split": json.dumps({**GOOD, "split": 1}),
    "split-as-text": json.dumps({**GOOD, "split": "0"}),
    "no-dataset": json.dumps({k: v for k, v in GOOD.items() if k != "dataset"}),
}


@pytest.mark.parametrize("content", BAD.values(), ids=BAD.keys())
def test_a_corrupt_record_is_missing_with_a_warning_naming_it(tmp_path, content):
    store = ResultsStore(tmp_path)
    path = store.record_path("iris", "none", 0)
    path.parent.mkdir(parents=True)
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    with pytest.warns(CorruptRecordWarning, match=rf"{path}: .*; it is recomputed"):
        assert store.missing("iris", ["none"], 0) == ["none"]
    with pytest.raises(UserError, match=str(path)):  # analyses name it too, not a KeyError
        store.records()


def test_a_good_record_is_finished_without_a_word(tmp_path, recwarn):
    store = ResultsStore(tmp_path)
    store.write(GOOD)
    assert store.has("iris", "none", 0) and store.missing("iris", ["none", "ros"], 0) == ["ros"]
    assert len(recwarn) == 0


def test_the_store_refuses_a_folder_of_other_files_and_marks_its_own(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("x")
    with pytest.raises(OutputPathError, match="mine: has no .medeval-output.json, not a fol"):
        ResultsStore(tmp_path / "mine").check_settings({"seed": 0})
    store = ResultsStore(tmp_path / "new")
    store.check_settings({"seed": 0})
    assert json.loads((tmp_path / "new" / MARKER).read_text())["tool"] == "benchmark"


def test_a_truncated_record_is_recomputed_on_resume(shared_data, tmp_path, capsys):
    from medeval.cli.benchmark import main

    out = tmp_path / "bench"
    argv = ["--collection", "keel", "--data", str(shared_data), "--out", str(out)]
    argv += ["--datasets", "vehicle", "--methods", "none,rus", "--n-estimators", "5"]
    argv += ["--max-splits", "1", "--no-analyze", "--quiet"]
    assert main(argv) == 0
    store = ResultsStore(out)
    path = store.record_path("vehicle", "rus", 0)
    good = json.loads(path.read_text())
    path.write_text(path.read_text()[:100])  # a copy cut short
    untouched = store.record_path("vehicle", "none", 0).stat().st_mtime_ns
    with pytest.warns(CorruptRecordWarning, match=rf"{path}: not readable as JSON"):
        assert main([*argv, "--resume"]) == 0
    assert "1 of 1 (data set, split) units to run" in capsys.readouterr().err
    again = json.loads(path.read_text())
    assert again["scores"] == good["scores"]  # recomputed with the same seed
    assert store.record_path("vehicle", "none", 0).stat().st_mtime_ns == untouched
