"""Nothing lost, nothing silent: a folder is replaced or written into only when it is the
tool's own, and a refused run writes nothing.

* A folder without the tool's marker is the user's unless every file in it is one the tool
  writes (:data:`medeval.atomic.WRITES`): the three names of an earlier ``evaluate`` output
  beside the user's ``notes.txt`` and ``model.pt`` do not make it one.
* File-browser litter is only ``.DS_Store``, ``Thumbs.db``, ``desktop.ini`` and an AppleDouble
  ``._name`` beside an existing ``name``; a ``._draft.txt`` alone is the user's.
* A ``run.json`` that is not a benchmark's settings (an experiment tracker's) makes the folder
  the user's; a benchmark refused for other settings writes no marker.

Calls are in-process (``medeval.cli.<tool>.main``), as a user's command line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from malformed_fixtures import collection_table, tree_digest

from medeval.atomic import MARKER, held_outputs

EVALUATE = ["--example", "--bootstrap", "0", "--quiet"]
BENCH = ["--max-splits", "1", "--n-estimators", "5", "--methods", "none", "--quiet"]


def _evaluate(out: Path) -> int:
    from medeval.cli.evaluate import main

    return main([*EVALUATE, "--out", str(out)])


def _benchmark(collection: Path, out: Path, *extra: str) -> int:
    from medeval.cli.benchmark import main

    argv = ["--collection", str(collection), *BENCH, "--no-analyze", *extra]
    return main([*argv, "--out", str(out)])


def _refused(code: int, capsys, *names: str) -> str:
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for name in names:
        assert name in err, err
    return err


@pytest.fixture
def collection(tmp_path) -> Path:
    folder = tmp_path / "coll"
    folder.mkdir()
    collection_table().to_csv(folder / "t.csv", index=False)
    return folder


# --- 1: the names of a tool's files do not make a folder the tool's -------------------------
def test_a_folder_of_the_users_with_evaluates_file_names_is_refused(tmp_path, capsys):
    mine = tmp_path / "myresults"
    mine.mkdir()
    for name in ("metrics.json", "metrics.csv", "report.html"):
        (mine / name).write_text("the user's own " + name)
    (mine / "notes.txt").write_text("the user's notes")
    (mine / "model.pt").write_bytes(b"weights of a week of training")
    before, locks = tree_digest(tmp_path), held_outputs()
    err = _refused(_evaluate(mine), capsys, f"--out {mine}", "model.pt, notes.txt", MARKER)
    assert "taken for a folder of yours" in err
    assert tree_digest(tmp_path) == before
    assert held_outputs() == locks


def test_an_earlier_versions_output_with_browser_litter_is_still_replaced(tmp_path, capsys):
    legacy = tmp_path / "legacy"
    (legacy / "sub").mkdir(parents=True)
    for name in ("metrics.json", "metrics.csv", "report.html", "subconcepts.png"):
        (legacy / name).write_text("old")
    (legacy / ".DS_Store").write_bytes(b"\0")
    (legacy / "._report.html").write_bytes(b"\0")  # AppleDouble beside report.html
    (legacy / "sub" / "Thumbs.db").write_bytes(b"\0")
    assert _evaluate(legacy) == 0, capsys.readouterr().err
    assert json.loads((legacy / MARKER).read_text())["tool"] == "evaluate"
    assert not (legacy / ".DS_Store").exists() and not (legacy / "sub").exists()


def test_an_earlier_versions_marker_without_a_file_list_keeps_the_users_files(tmp_path, capsys):
    # A marker of an earlier version lists no files: the files evaluate writes stand for it.
    out = tmp_path / "out"
    out.mkdir()
    (out / MARKER).write_text(json.dumps({"tool": "evaluate", "complete": True}))
    (out / "report.html").write_text("old")
    (out / "model.pt").write_bytes(b"the user's")
    before = tree_digest(tmp_path)
    _refused(_evaluate(out), capsys, f"--out {out}", "did not write (model.pt)")
    assert tree_digest(tmp_path) == before


def test_a_legacy_benchmark_folder_holding_the_users_notes_is_refused(tmp_path, collection, capsys):
    out = tmp_path / "results"
    out.mkdir()
    run = {"collection": "coll", "seed": 0, "n_estimators": 5, "subconcepts": "true"}
    (out / "run.json").write_text(json.dumps(run))
    (out / "notes.txt").write_text("the user's notes")
    before = tree_digest(tmp_path)
    _refused(_benchmark(collection, out), capsys, f"--out {out}", "(notes.txt)")
    assert tree_digest(tmp_path) == before


# --- 2: only an AppleDouble companion of an existing file is litter ---------------------------
def test_a_users_dot_underscore_file_is_not_litter(tmp_path, capsys):
    out = tmp_path / "out"
    assert _evaluate(out) == 0
    (out / "._draft.txt").write_text("the user's draft")  # no draft.txt beside it
    before = tree_digest(tmp_path)
    _refused(_evaluate(out), capsys, f"--out {out}", "did not write (._draft.txt)")
    assert tree_digest(tmp_path) == before
    (out / "._draft.txt").unlink()
    (out / "._report.html").write_bytes(b"\0")  # beside report.html: litter, replaced
    (out / "desktop.ini").write_text("[.ShellClassInfo]")
    assert _evaluate(out) == 0, capsys.readouterr().err
    assert not (out / "._report.html").exists() and not (out / "desktop.ini").exists()


# --- 3: another program's run.json; a refused benchmark writes nothing ------------------------
@pytest.mark.parametrize(
    "run_json",
    ['{"experiment": "resnet-lr0.1", "lr": 0.1}', "[1, 2]", "not json"],
    ids=["tracker", "a-list", "not-json"],
)
@pytest.mark.parametrize("notes", [True, False], ids=["with-notes", "alone"])
def test_a_folder_whose_run_json_is_not_a_benchmarks_is_refused(
    tmp_path, collection, capsys, run_json, notes
):
    out = tmp_path / "exp"
    out.mkdir()
    (out / "run.json").write_text(run_json)
    if notes:
        (out / "notes.txt").write_text("the user's notes")
    before, locks = tree_digest(tmp_path), held_outputs()
    err = _refused(_benchmark(collection, out), capsys, f"--out {out}", "run.json")
    assert "collection=None" not in err
    assert tree_digest(tmp_path) == before  # no marker, no lock file left beside it
    assert held_outputs() == locks


def test_a_benchmark_refused_for_other_settings_writes_no_marker(tmp_path, collection, capsys):
    out = tmp_path / "results"  # an earlier version's results (no marker) of another collection
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"collection": "keel", "seed": 0, "n_estimators": 5}))
    before = tree_digest(tmp_path)
    _refused(_benchmark(collection, out), capsys, "collection='keel'")
    assert tree_digest(tmp_path) == before
