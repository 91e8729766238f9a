"""Two runs on one ``--out``: the second is refused (exit 2, naming the first one's pid) while
the first holds the folder, and the previous run is never lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from medeval.io.outdir import replace_folder
from medeval.io.tool_files import MARKER

REPO = Path(__file__).resolve().parents[2]

# A run of "evaluate": check the folder, then write the new run; waits for GO if given.
CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from medeval.io.outdir import check_out, replace_folder
    from medeval.errors import OutputPathError

    target, tag, go = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    try:
        check_out(target, tool="evaluate")
    except OutputPathError as err:
        print(err, file=sys.stderr)
        sys.exit(2)
    print("locked", flush=True)
    with replace_folder(target) as tmp:
        (tmp / "metrics.json").write_text(tag)
        if go == "-":
            time.sleep(0.5)
        else:
            while not Path(go).exists():
                time.sleep(0.02)
        (tmp / "report.html").write_text(tag)
    """
)


def _child(target: Path, tag: str, go: str = "-") -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(target), tag, go],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def _previous(target: Path) -> None:
    with replace_folder(target, tool="evaluate") as tmp:
        (tmp / "metrics.json").write_text("previous")
        (tmp / "report.html").write_text("previous")


def _held(target: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in target.iterdir() if p.name != MARKER}


def _leftovers(target: Path) -> list[str]:
    return sorted(p.name for p in target.parent.iterdir() if p.name.startswith(f".{target.name}."))


def test_the_evaluate_cli_is_refused_while_another_run_writes_the_folder(tmp_path, capsys):
    from medeval.cli.evaluate import main

    out = tmp_path / "out"
    _previous(out)
    go = tmp_path / "go"
    first = _child(out, "first", str(go))
    try:
        assert first.stdout.readline().strip() == "locked"
        argv = ["--example", "--bootstrap", "0", "--quiet", "--out", str(out)]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"--out {out}: another run (pid {first.pid}) is writing it" in err
        assert _held(out) == {"metrics.json": "previous", "report.html": "previous"}
    finally:
        go.touch()
        _out, first_err = first.communicate(timeout=60)
    assert first.returncode == 0, first_err
    assert _held(out) == {"metrics.json": "first", "report.html": "first"}
    assert _leftovers(out) == []


def test_two_runs_started_together_never_lose_the_previous_run(tmp_path):
    out = tmp_path / "out"
    _previous(out)
    runs = [_child(out, "a"), _child(out, "b")]
    errs = [run.communicate(timeout=60)[1] for run in runs]
    codes = [run.returncode for run in runs]
    assert sorted(set(codes)) in ([0], [0, 2]), (codes, errs)
    for code, err, run in zip(codes, errs, runs, strict=True):
        if code == 2:  # refused: names the other run's pid
            other = next(r for r in runs if r is not run)
            assert f"another run (pid {other.pid})" in err, err
    held = _held(out)
    assert held in ({n: t for n in ("metrics.json", "report.html")} for t in ("a", "b")), held
    assert json.loads((out / MARKER).read_text())["complete"] is True
    assert _leftovers(out) == []


def test_a_stale_lock_file_of_a_killed_run_does_not_block(tmp_path):
    out = tmp_path / "out"
    _previous(out)
    (tmp_path / ".out.lock").write_text("99999999\n")  # its process is gone: no flock on it
    t0 = time.perf_counter()
    with replace_folder(out, tool="evaluate") as tmp:
        (tmp / "metrics.json").write_text("next")
    assert _held(out) == {"metrics.json": "next"} and time.perf_counter() - t0 < 5
    assert _leftovers(out) == []
