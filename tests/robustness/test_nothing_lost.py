"""Nothing lost, nothing silent: a folder is replaced or written into only when it is the
tool's own, and a refused run writes nothing.

* A folder without the tool's marker is the user's unless every file in it is one the tool
  writes (:data:`medeval.io.tool_files.WRITES`): the three names of an earlier ``evaluate`` output
  beside the user's ``notes.txt`` and ``model.pt`` do not make it one.
* File-browser litter is only ``.DS_Store``, ``Thumbs.db``, ``desktop.ini`` and an AppleDouble
  ``._name`` beside an existing ``name``; a ``._draft.txt`` alone is the user's.
* A ``run.json`` that is not a benchmark's settings (an experiment tracker's) makes the folder
  the user's; a benchmark refused for other settings writes no marker.
* ``analyze`` on a results folder a benchmark is still writing is refused unless ``--partial``
  (said in its output), and the benchmark's own analysis waits for an analyze writing
  ``analysis/`` instead of failing after all its work.

Calls are in-process (``medeval.cli.<tool>.main``), as a user's command line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from malformed_fixtures import build_results, collection_table, tree_digest

from medeval.io.locks import held_outputs
from medeval.io.tool_files import MARKER

REPO = Path(__file__).resolve().parents[2]
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


# --- 5: analyze and a benchmark still writing its results folder -----------------------------
# Holds the lock of a folder, as a running benchmark (or analyze) does, until GO exists or
# HOLD_S seconds have passed.
HOLDER = """
import sys, time
from pathlib import Path
from medeval.io.locks import lock_output, unlock_output

target, go, hold_s = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
lock_output(target)
print("locked", flush=True)
end = time.monotonic() + hold_s
while not go.exists() and time.monotonic() < end:
    time.sleep(0.02)
unlock_output(target)
"""


@contextmanager
def _held_by_another_process(target: Path, go: Path, hold_s: float = 120.0):
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(target), str(go), str(hold_s)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert child.stdout.readline().strip() == "locked", child.stderr.read()
        yield child
    finally:
        go.touch()
        child.communicate(timeout=60)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, Path]:
    """A finished benchmark results folder (no analysis yet) and its collection."""
    base = tmp_path_factory.mktemp("finished")
    (base / "coll").mkdir()
    collection_table().to_csv(base / "coll" / "t.csv", index=False)
    build_results(base / "res", base / "coll")
    return base / "res", base / "coll"


@pytest.fixture
def results(tmp_path, finished) -> tuple[Path, Path]:
    shutil.copytree(finished[0], tmp_path / "res")
    return tmp_path / "res", finished[1]


def test_analyze_refuses_a_results_folder_a_benchmark_is_writing(tmp_path, results, capsys):
    from medeval.cli.analyze import main

    res, _coll = results
    with _held_by_another_process(res, tmp_path / "go") as bench:
        before = tree_digest(tmp_path)
        code = main(["--results", str(res), "--quiet"])
        err = _refused(code, capsys, f"--results {res}", f"pid {bench.pid}", "--partial")
        assert "still writing" in err
        assert tree_digest(tmp_path) == before  # no analysis/, no lock file in the results


def test_analyze_partial_says_so_and_the_benchmarks_analysis_replaces_it(tmp_path, results, capsys):
    from medeval.cli.analyze import main

    res, _coll = results
    with _held_by_another_process(res, tmp_path / "go") as bench:
        assert main(["--results", str(res), "--quiet", "--partial"]) == 0
        out = capsys.readouterr().out
        assert f"PARTIAL (a benchmark, pid {bench.pid}, is still writing {res})" in out, out
    assert (res / "analysis" / "report.html").is_file()
    assert not (res / ".analysis.lock").exists()  # nothing left to block the benchmark


def test_the_benchmarks_own_analysis_waits_for_an_analyze_writing_it(tmp_path, results, capsys):
    # An analyze (e.g. --partial) still writes RESULTS/analysis when the benchmark's work ends:
    # its own analysis waits for it instead of failing after all the work.
    from medeval.cli.benchmark import main

    res, coll = results
    argv = ["--collection", str(coll), *BENCH, "--out", str(res)]
    with _held_by_another_process(res / "analysis", tmp_path / "go", hold_s=1.5) as other:
        assert main(argv) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert f"waiting for the run writing it (pid {other.pid})" in err, err
    assert (res / "analysis" / "report.html").is_file()


def test_a_benchmarks_analysis_refused_names_its_folder_once(
    tmp_path, results, capsys, monkeypatch
):
    import medeval.cli.benchmark as benchmark

    monkeypatch.setattr(benchmark, "ANALYSIS_WAIT_S", 0.5)
    res, coll = results
    argv = ["--collection", str(coll), *BENCH, "--out", str(res)]
    with _held_by_another_process(res / "analysis", tmp_path / "go") as other:
        assert benchmark.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"another run (pid {other.pid}) is writing it" in err, err
    assert err.count(str(res / "analysis")) == 1, err
    assert "--out's analysis folder" in err, err
