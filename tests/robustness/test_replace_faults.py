"""A folder replacement killed or interrupted between any two of its steps, then rerun: the
folder holds the previous complete run or the new one, never none, never a mix, and the rerun
leaves no ``.new``/``.old`` folder or lock file behind.

A *kill* is ``os._exit`` in a child process at the k-th file-system step (``os.mkdir``,
``os.replace``, ``os.unlink``, ``shutil.rmtree``): nothing of the replacement's own clean-up
runs, as after SIGKILL. An *interrupt* is ``KeyboardInterrupt`` / ``SystemExit`` raised in
process at step k: the clean-up runs, and the folder must be whole right away.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from medeval.io.locks import unlock_output
from medeval.io.outdir import OutputRecoveredWarning, check_out, replace_folder
from medeval.io.tool_files import MARKER

REPO = Path(__file__).resolve().parents[2]
FILES = ("metrics.json", "metrics.csv", "report.html")

# Writes the new run through medeval.io,  as the tools do, and dies at step K.
CHILD = textwrap.dedent(
    """
    import os, shutil, sys
    from pathlib import Path

    target, kill_at = Path(sys.argv[1]), int(sys.argv[2])
    calls = [0]

    def dying(real):
        def step(*args, **kwargs):
            calls[0] += 1
            if calls[0] == kill_at:
                os._exit(137)
            return real(*args, **kwargs)
        return step

    os.mkdir, os.replace = dying(os.mkdir), dying(os.replace)
    os.unlink, shutil.rmtree = dying(os.unlink), dying(shutil.rmtree)
    from medeval.io.atomic import write_bytes
    from medeval.io.outdir import check_out, replace_folder
    check_out(target, tool="evaluate")
    with replace_folder(target) as tmp:
        for name in {files!r}:
            write_bytes(tmp / name, b"new")
    print(calls[0])
    """
).format(files=FILES)


def _previous(target: Path) -> None:
    with replace_folder(target, tool="evaluate") as tmp:
        for name in FILES:
            (tmp / name).write_bytes(b"old")
        (tmp / "per_subconcept.csv").write_bytes(b"old")  # only in the previous run
    assert not (target.parent / f".{target.name}.lock").exists()


def _content(target: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in target.iterdir() if p.name != MARKER}


OLD = {**{n: b"old" for n in FILES}, "per_subconcept.csv": b"old"}
NEW = {n: b"new" for n in FILES}


def _leftovers(parent: Path, name: str) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


def _run_child(target: Path, kill_at: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(target), str(kill_at)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _rerun_and_check(target: Path, *, had_previous: bool) -> str:
    """The next run's check: the folder comes back whole; returns which run it holds
    (``+`` when it had to be put back)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_out(target, tool="evaluate")
    unlock_output(target)
    recovered = [w for w in caught if issubclass(w.category, OutputRecoveredWarning)]
    assert _leftovers(target.parent, target.name) == []
    if not target.exists():
        assert not had_previous  # killed before the first run was complete: nothing to lose
        return "none"
    assert json.loads((target / MARKER).read_text())["complete"] is True
    held = _content(target)
    assert held in (OLD, NEW), held  # one whole run, never a mix
    for w in recovered:  # a folder put back is named in the warning
        assert str(target) in str(w.message) and f".{target.name}." in str(w.message)
    return ("new" if held == NEW else "old") + ("+" if recovered else "")


@pytest.mark.parametrize("had_previous", [True, False], ids=["replace", "first-run"])
def test_a_kill_between_any_two_steps_then_a_rerun_keeps_one_whole_run(tmp_path, had_previous):
    target = tmp_path / "out"
    if had_previous:
        _previous(target)
    counted = tmp_path / "count" / "out"
    if had_previous:
        _previous(counted)
    steps = int(_run_child(counted, 10**6).stdout.strip() or 0)
    # probe, mkdir, 3 files, marker, rename(s), removal of the previous run, lock file
    assert steps >= (10 if had_previous else 8), steps
    seen = set()
    for kill_at in range(1, steps + 1):
        proc = _run_child(target, kill_at)
        assert proc.returncode == 137, (kill_at, proc.stderr)
        seen.add(_rerun_and_check(target, had_previous=had_previous))
        # The run after that one replaces the folder normally.
        with replace_folder(target, tool="evaluate") as tmp:
            for name in FILES:
                (tmp / name).write_bytes(b"new")
        assert _content(target) == NEW and _leftovers(tmp_path, "out") == []
        shutil.rmtree(target)
        if had_previous:
            _previous(target)
    # Killed before the swap: the previous run; after it: the new one; between the two
    # renames, the folder was missing and the complete new one was put back.
    assert {"new", "new+"} <= seen and ("old" in seen) == had_previous, seen


@pytest.mark.parametrize("signal", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_at_any_step_leaves_the_folder_whole_at_once(tmp_path, monkeypatch, signal):
    import medeval.io.atomic
    import medeval.io.outdir

    target = tmp_path / "out"
    real = {"replace": os.replace, "mkdir": os.mkdir, "rmtree": shutil.rmtree}
    for kill_at in range(1, 30):
        _previous(target)
        calls = [0]

        def make(fn, calls=calls, kill_at=kill_at):
            def step(*args, **kwargs):
                calls[0] += 1
                if calls[0] == kill_at:
                    raise signal()
                return fn(*args, **kwargs)

            return step

        monkeypatch.setattr(medeval.io.outdir.os, "replace", make(real["replace"]))
        monkeypatch.setattr(medeval.io.outdir.os, "mkdir", make(real["mkdir"]))
        monkeypatch.setattr(medeval.io.outdir.shutil, "rmtree", make(real["rmtree"]))
        finished = False
        try:
            with replace_folder(target, tool="evaluate") as tmp:
                for name in FILES:
                    medeval.io.atomic.write_bytes(tmp / name, b"new")
            finished = True
        except (KeyboardInterrupt, SystemExit):
            pass
        monkeypatch.undo()
        assert _content(target) in (OLD, NEW), kill_at  # whole right away, no rerun needed
        assert not (tmp_path / ".out.lock").exists()
        assert _rerun_and_check(target, had_previous=True) in ("old", "new")  # nothing put back
        shutil.rmtree(target)
        if finished:
            break
    assert finished and kill_at > 5


def test_a_half_written_new_folder_is_never_promoted(tmp_path):
    target = tmp_path / "out"
    half = tmp_path / ".out.new-abcd1234"
    half.mkdir()
    (half / "metrics.json").write_text("{")  # no marker: the run died while writing
    check_out(target, tool="evaluate")
    unlock_output(target)
    assert not target.exists() and not half.exists()


def test_an_earlier_versions_hidden_previous_run_is_put_back(tmp_path):
    # Earlier versions moved the folder into .out.old-<id>/out before renaming the new one.
    hidden = tmp_path / ".out.old-k2_x9a0q" / "out"
    hidden.mkdir(parents=True)
    (hidden / "metrics.json").write_text("{}")
    (hidden / "report.html").write_text("<html>")
    (hidden / "metrics.csv").write_text("a\n")
    target = tmp_path / "out"
    with pytest.warns(OutputRecoveredWarning, match=r"put back the previous results .*\.out\.old-"):
        check_out(target, tool="evaluate")
    unlock_output(target)
    assert (target / "metrics.json").read_text() == "{}"
    assert _leftovers(tmp_path, "out") == []
