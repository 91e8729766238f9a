"""medeval.io.outdir: a new folder by default, an existing one only when asked, never the user's;
a folder written whole replaces the previous one in one rename, so that a kill at any moment
leaves one whole run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

import medeval.io.outdir as outdir
from medeval.errors import OutputPathError, UserError
from medeval.io.outdir import (
    MARKER,
    OutputFolder,
    check_in_place,
    check_writable,
    default_out,
    mark,
    read_marker,
    undone_if_refused,
)

REPO = Path(__file__).resolve().parents[2]
FILES = ("metrics.json", "metrics.csv", "report.html")


def _write(out: Path, text: str, *, force: bool = True, names=FILES) -> Path:
    def fill(tmp: Path) -> None:
        for name in names:
            (tmp / name).write_text(text)

    return OutputFolder(out, "evaluate", force=force).check().write(fill)


def _content(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in folder.iterdir() if p.name != MARKER}


def test_check_writable_refuses_a_file_a_path_under_a_file_and_creates_nothing(tmp_path):
    file = tmp_path / "f.txt"
    file.write_text("x")
    with pytest.raises(OutputPathError, match="f.txt is a file, not a folder"):
        check_writable(file, what="--out")
    with pytest.raises(OutputPathError, match="f.txt is a file, not a folder"):
        check_writable(file / "sub" / "out", what="--out")
    with pytest.raises(OutputPathError, match="name too long"):
        check_writable(tmp_path / ("n" * 300), what="--out")
    assert check_writable(tmp_path / "new" / "deeper", what="--out") == tmp_path / "new" / "deeper"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]  # no folder, no probe left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux")
def test_check_writable_tries_rather_than_trusting_permission_bits():
    with pytest.raises(OutputPathError, match="cannot write into /proc"):
        check_writable("/proc/medeval-out", what="--out")


def test_default_names_are_new_and_the_next_free_one_is_taken(tmp_path, monkeypatch):
    monkeypatch.setattr(outdir, "time", SimpleNamespace(strftime=lambda fmt: "20260101-120000"))
    first = default_out("evaluate-preds", root=tmp_path)
    assert first == tmp_path / "evaluate-preds-20260101-120000"
    first.mkdir()
    assert default_out("evaluate-preds", root=tmp_path).name == "evaluate-preds-20260101-120000-2"
    monkeypatch.setenv("MEDEVAL_RUNS", str(tmp_path / "runs"))
    assert default_out("x").parent == tmp_path / "runs"


def test_a_fresh_name_taken_while_the_run_ran_is_not_replaced(tmp_path):
    # Two runs in the same second got the same default name; the second to finish takes the
    # next one instead of replacing the first one's results.
    out = tmp_path / "evaluate-preds-20260101-120000"
    target = OutputFolder(out, "evaluate", fresh=True).check()
    _write(out, "first", force=False)
    written = target.write(lambda tmp: (tmp / "metrics.json").write_text("second"))
    assert written == tmp_path / "evaluate-preds-20260101-120000-2"
    assert _content(out)["metrics.json"] == "first"
    assert _content(written) == {"metrics.json": "second"}


def test_a_folder_is_written_whole_with_a_marker_listing_its_files(tmp_path):
    out = tmp_path / "out"
    assert _write(out, "first", force=False) == out
    marker = json.loads((out / MARKER).read_text())
    assert marker["tool"] == "evaluate" and marker["files"] == sorted(FILES)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary folder left
    with pytest.raises(OutputPathError, match="is not empty; give --force"):
        _write(out, "second", force=False)
    _write(out, "second", names=("metrics.json",))  # --force: files of the previous run go
    assert _content(out) == {"metrics.json": "second"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_failed_run_leaves_the_previous_folder_and_no_temporary_one(tmp_path):
    out = tmp_path / "out"
    _write(out, "first")
    target = OutputFolder(out, "evaluate", force=True).check()

    def fail(tmp: Path) -> None:
        (tmp / "metrics.json").write_text("half")
        raise RuntimeError("report failed")

    with pytest.raises(RuntimeError):
        target.write(fail)
    assert _content(out) == dict.fromkeys(FILES, "first")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_force_never_replaces_a_folder_holding_a_file_medeval_did_not_write(tmp_path):
    out = tmp_path / "out"
    _write(out, "first")
    (out / "notes.txt").write_text("the user's notes")
    (out / "runs" / "evaluate-x").mkdir(parents=True)
    (out / "runs" / "evaluate-x" / "metrics.json").write_text("another run")
    with pytest.raises(OutputPathError, match=r"did not write \(notes.txt, runs/evaluate-x/me"):
        _write(out, "second")
    assert (out / "notes.txt").read_text() == "the user's notes"
    (out / MARKER).write_text(json.dumps({"tool": "evaluate"}))  # a marker without the list
    with pytest.raises(OutputPathError, match="no .medeval-output.json listing its files"):
        _write(out, "second")
    mine = tmp_path / "mine"  # no marker at all
    mine.mkdir()
    (mine / "report.html").write_text("mine")
    with pytest.raises(OutputPathError, match="not written whole by medeval"):
        _write(mine, "second")
    assert (mine / "report.html").read_text() == "mine"


def test_files_put_into_the_folder_during_the_run_stop_its_replacement(tmp_path):
    out = tmp_path / "out"
    _write(out, "first")
    target = OutputFolder(out, "evaluate", force=True).check()

    def fill(tmp: Path) -> None:
        (out / "notes.txt").write_text("written while the run ran")
        (tmp / "metrics.json").write_text("second")

    with pytest.raises(OutputPathError, match=r"did not write \(notes.txt\)"):
        target.write(fill)
    assert (out / "notes.txt").is_file() and _content(out)["metrics.json"] == "first"


def test_force_refuses_a_folder_holding_an_input_or_the_current_folder(tmp_path, monkeypatch):
    out = tmp_path / "out"
    _write(out, "first")
    inputs = (out / "metrics.csv",)
    with pytest.raises(OutputPathError, match="holds the input .*metrics.csv"):
        OutputFolder(out, "evaluate", force=True, inputs=inputs).check()
    monkeypatch.chdir(out)
    for given in (out, Path("."), tmp_path):
        with pytest.raises(OutputPathError, match="holds the current folder"):
            OutputFolder(given, "evaluate", force=True).check()


def test_a_link_to_a_folder_replaces_the_folder_and_keeps_the_link(tmp_path):
    real = tmp_path / "real"
    _write(real, "first")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    assert _write(tmp_path / "link", "second") == tmp_path / "link"
    assert (tmp_path / "link").is_symlink() and _content(real)["metrics.json"] == "second"


def test_without_an_exchange_call_the_three_renames_replace_the_folder(tmp_path, monkeypatch):
    class NoExchange:
        def __init__(self, *args, **kwargs) -> None:
            raise OSError("no C library")

    monkeypatch.setattr(outdir.ctypes, "CDLL", NoExchange)
    out = tmp_path / "out"
    _write(out, "first")
    _write(out, "second")
    assert _content(out) == dict.fromkeys(FILES, "second")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# Writes a new run through OutputFolder, as the tools do, and dies (os._exit, as after SIGKILL:
# no clean-up runs) at file-system step K.
CHILD = textwrap.dedent(
    """
    import os, shutil, sys
    from pathlib import Path
    import medeval.io.outdir as outdir

    target, kill_at = Path(sys.argv[1]), int(sys.argv[2])
    calls = [0]

    def dying(real):
        def step(*args, **kwargs):
            calls[0] += 1
            if calls[0] == kill_at:
                os._exit(137)
            return real(*args, **kwargs)
        return step

    os.mkdir, os.rename = dying(os.mkdir), dying(os.rename)
    shutil.rmtree, outdir._exchange = dying(shutil.rmtree), dying(outdir._exchange)
    folder = outdir.OutputFolder(target, "evaluate", force=True).check()

    def fill(tmp):
        for name in {files!r}:
            (tmp / name).write_text("new")
            calls[0] += 1
            if calls[0] == kill_at:
                os._exit(137)

    folder.write(fill)
    print(calls[0])
    """
).format(files=FILES)


def _child(target: Path, kill_at: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-c", CHILD, str(target), str(kill_at)]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)


def test_a_kill_at_any_step_leaves_the_previous_run_or_the_new_one_whole(tmp_path):
    target = tmp_path / "out"
    _write(target, "old", names=(*FILES, "per_subconcept.csv"))
    old = _content(target)
    steps = int(_child(target, 10**6).stdout)  # counted on a run that is not killed
    assert steps >= 6, steps  # mkdir, 3 files, the exchange, the removal of the previous run
    seen = set()
    for kill_at in range(1, steps + 1):
        shutil.rmtree(target)
        _write(target, "old", names=(*FILES, "per_subconcept.csv"))
        assert _child(target, kill_at).returncode == 137
        held = _content(target)
        assert held in (old, dict.fromkeys(FILES, "new")), (kill_at, held)  # never a mix
        seen.add("new" if held["metrics.json"] == "new" else "old")
        left = [p.name for p in tmp_path.iterdir() if p.name != "out"]
        assert all(n.startswith(".out.medeval-") for n in left), left  # hidden, no result
        for name in left:
            shutil.rmtree(tmp_path / name)
        assert _write(target, "next") == target  # the next run is not blocked
    assert seen == {"old", "new"}


@pytest.mark.parametrize("signal", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_at_any_step_leaves_the_folder_whole_and_nothing_beside(
    tmp_path, monkeypatch, signal
):
    target = tmp_path / "out"
    real = {"rename": os.rename, "mkdir": os.mkdir, "_exchange": outdir._exchange}
    for kill_at in range(1, 10):
        _write(target, "old")
        calls = [0]

        def make(fn, calls=calls, kill_at=kill_at):
            def step(*args, **kwargs):
                calls[0] += 1
                if calls[0] == kill_at:
                    raise signal()
                return fn(*args, **kwargs)

            return step

        monkeypatch.setattr(outdir.os, "rename", make(real["rename"]))
        monkeypatch.setattr(outdir.os, "mkdir", make(real["mkdir"]))
        monkeypatch.setattr(outdir, "_exchange", make(real["_exchange"]))
        finished = False
        try:
            _write(target, "new")
            finished = True
        except (KeyboardInterrupt, SystemExit):
            pass
        monkeypatch.undo()
        assert _content(target) in (dict.fromkeys(FILES, "old"), dict.fromkeys(FILES, "new"))
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
        shutil.rmtree(target)
        if finished:
            break
    assert finished and kill_at > 2


def test_a_folder_written_in_place_is_continued_only_under_its_own_marker(tmp_path):
    run = mark(tmp_path / "run", "benchmark", finished=False)
    (run / "part.json").write_text("{}")
    assert read_marker(run)["tool"] == "benchmark"
    with pytest.raises(OutputPathError, match="is not empty; use --resume"):
        check_in_place(run, tool="benchmark", resume=False, hint="use --resume")
    assert check_in_place(run, tool="benchmark", resume=True) == run
    with pytest.raises(OutputPathError, match="output of medeval benchmark, not a folder of"):
        check_in_place(run, tool="train", resume=True)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("x")
    with pytest.raises(OutputPathError, match="has no .medeval-output.json"):
        check_in_place(tmp_path / "mine", tool="train", resume=True)
    assert check_in_place(tmp_path / "new", tool="train", resume=False) == tmp_path / "new"
    (tmp_path / "link").symlink_to(run, target_is_directory=True)  # written through, in place
    assert check_in_place(tmp_path / "link", tool="benchmark", resume=True) == tmp_path / "link"


def test_of_two_runs_marking_one_new_folder_at_once_one_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    real = outdir.read_marker
    monkeypatch.setattr(outdir, "read_marker", lambda f: None)  # both saw no marker yet
    mark(folder, "train")
    with pytest.raises(OutputPathError, match="another run started writing it just now"):
        mark(folder, "train")
    monkeypatch.setattr(outdir, "read_marker", real)
    assert mark(folder, "train", finished=True) == folder  # its own marker: updated


@pytest.mark.parametrize("before", ["absent", "empty", "resumed"])
def test_a_refused_run_leaves_nothing_in_a_new_or_empty_folder(tmp_path, before):
    folder = tmp_path / "run"
    if before != "absent":
        folder.mkdir()
    if before == "resumed":
        (folder / "config.yaml").write_text("a run")
    with pytest.raises(UserError), undone_if_refused(folder):
        mark(folder, "train")
        (folder / "splits.csv").write_text("written before the refusal")
        raise UserError("refused")
    left = sorted(p.name for p in folder.iterdir()) if folder.exists() else None
    expected = {"absent": None, "empty": [], "resumed": [MARKER, "config.yaml", "splits.csv"]}
    assert left == expected[before]
    with pytest.raises(RuntimeError), undone_if_refused(tmp_path / "bug"):  # not a refusal
        mark(tmp_path / "bug", "train")
        raise RuntimeError("a bug: the folder is kept to look at")
    assert (tmp_path / "bug" / MARKER).is_file()


# A run that replaces TARGET with its own files, slowly: two of them started together.
RACER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from medeval.io.outdir import OutputFolder

    target, tag = Path(sys.argv[1]), sys.argv[2]

    def fill(tmp):
        for name in {files!r}:
            (tmp / name).write_text(tag)
            time.sleep(0.1)

    OutputFolder(target, "evaluate", force=True).check().write(fill)
    """
).format(files=FILES)


def test_two_runs_replacing_one_folder_at_once_leave_one_whole_run(tmp_path):
    out = tmp_path / "out"
    _write(out, "previous")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    runs = [
        subprocess.Popen([sys.executable, "-c", RACER, str(out), tag], env=env, text=True)
        for tag in ("a", "b")
    ]
    assert [run.wait(timeout=120) for run in runs] == [0, 0]
    assert _content(out) in (dict.fromkeys(FILES, "a"), dict.fromkeys(FILES, "b"))
    assert json.loads((out / MARKER).read_text())["files"] == sorted(FILES)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_another_runs_write_probe_in_the_folder_is_not_a_user_file(tmp_path):
    """Two runs replacing one folder at once: one run's write probe, met by the other's check,
    is medeval's own file and does not make --force refuse the folder."""
    out = _write(tmp_path / "out", "previous")
    (out / ".medeval-probe.x1y2z3").write_text("")
    OutputFolder(out, "evaluate", force=True).check()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(OutputPathError, match=r"did not write \(notes\.txt\)"):
        OutputFolder(out, "evaluate", force=True).check()
