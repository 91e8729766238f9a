"""What ``--out`` accepts: a new or empty folder, an earlier output of the same tool (marked, or
written by an earlier version), and a folder an interrupted run left missing, put back first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medeval.errors import OutputPathError
from medeval.io.locks import held_outputs, unlock_output
from medeval.io.outdir import check_out, claim_folder
from medeval.io.tool_files import MARKER

EVALUATE = ["--example", "--bootstrap", "0", "--quiet"]


def _evaluate(out: Path) -> int:
    from medeval.cli.evaluate import main

    return main([*EVALUATE, "--out", str(out)])


def test_evaluate_marks_its_folder_and_replaces_it_on_a_rerun(tmp_path, capsys):
    out, locks = tmp_path / "out", held_outputs()
    assert _evaluate(out) == 0
    marker = json.loads((out / MARKER).read_text())
    assert marker["tool"] == "evaluate" and marker["complete"] is True
    assert {"version", "written_utc"} <= set(marker)
    assert marker["files"] == sorted(p.name for p in out.iterdir() if p.name != MARKER)
    (out / "report.html").write_text("edited")  # a file of the run: replaced with the folder
    (out / ".DS_Store").write_bytes(b"\0")  # a file browser's litter: replaced too
    assert _evaluate(out) == 0
    assert "edited" not in (out / "report.html").read_text()
    assert not (out / ".DS_Store").exists()
    assert held_outputs() == locks and not (tmp_path / ".out.lock").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    (out / "stale.csv").write_text("the user's")  # not the tool's: it would be deleted, so
    assert _evaluate(out) == 2  # the rerun is refused, naming it
    assert "did not write (stale.csv)" in capsys.readouterr().err
    assert (out / "stale.csv").read_text() == "the user's"
    assert held_outputs() == locks


def test_an_empty_folder_and_an_earlier_versions_output_are_replaced(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert _evaluate(tmp_path / "empty") == 0
    legacy = tmp_path / "legacy"  # the files of evaluate, no marker: before the marker existed
    legacy.mkdir()
    for name in ("metrics.json", "metrics.csv", "report.html"):
        (legacy / name).write_text("old")
    assert _evaluate(legacy) == 0
    assert json.loads((legacy / MARKER).read_text())["tool"] == "evaluate"


def test_a_folder_left_missing_is_put_back_with_a_one_line_warning(tmp_path, capsys):
    out = tmp_path / "out"
    assert _evaluate(out) == 0
    hidden = tmp_path / ".out.old-0a1b2c3d"  # killed between the two renames
    out.rename(hidden)
    assert _evaluate(out) == 0
    err = capsys.readouterr().err
    warning = [line for line in err.splitlines() if line.startswith("warning: --out")]
    assert len(warning) == 1 and str(hidden) in warning[0] and "put back" in warning[0]
    assert (out / "report.html").is_file() and not hidden.exists()


def test_analyze_refuses_its_results_folder_but_takes_the_default(tmp_path, capsys):
    from medeval.cli.analyze import main

    results = tmp_path / "results"
    claim_folder(results, tool="benchmark")
    assert main(["--results", str(results), "--out", str(results)]) == 2
    assert f"--out {results}: holds the input {results}" in capsys.readouterr().err
    # The default RESULTS/analysis lies inside the results, which is fine; here it fails only
    # because the folder holds no records.
    assert main(["--results", str(results)]) == 2
    assert "no records" in capsys.readouterr().err


@pytest.mark.parametrize("tool", ["benchmark", "embed", "train"])
def test_a_folder_written_file_by_file_resumes_only_under_its_own_marker(tmp_path, tool):
    locks = held_outputs()
    run = claim_folder(tmp_path / "run", tool=tool)
    (run / "part.json").write_text("{}")
    assert check_out(run, tool=tool, resumable=True) == run
    unlock_output(run)
    other = "analyze"
    with pytest.raises(OutputPathError, match=f"output of medeval {tool}, not {other}"):
        check_out(run, tool=other, resumable=True)
    assert held_outputs() == locks
    claim_folder(run, tool=other)  # a marker is never overwritten by another tool's claim
    assert json.loads((run / MARKER).read_text())["tool"] == tool
