"""``--bootstrap B`` whose replicates' scores the memory budget cannot hold is refused before
any work: one line naming ``--bootstrap`` and the budget, exit 2, nothing written (it was a
MemoryError traceback, or torch asked for 320 TB at once under ``--memory-budget 200M``).

The commands run as a user types them, in a child process whose address space is capped, so
that a regression fails here with a MemoryError instead of taking the machine's memory.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from malformed_fixtures import tree_digest

REPO = Path(__file__).resolve().parents[2]
CAP = 8 * 2**30  # address space of the child: torch and its libraries take a few GiB of it


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def _evaluate(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    argv = ["-m", "medeval.evaluate", "--example", "--quiet", "--out", str(tmp_path / "out")]
    return subprocess.run(
        [sys.executable, *argv, *extra],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        preexec_fn=_cap,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


@pytest.mark.parametrize(
    ("extra", "names"),
    [
        (["--bootstrap", "1000000000000"], ["at least 43.7 TiB", "by default"]),
        (
            ["--bootstrap", "1000000000000", "--memory-budget", "200M"],
            ["at least 43.7 TiB", "(--memory-budget 200 MiB)"],
        ),
    ],
    ids=["default-budget", "200M"],
)
def test_more_replicates_than_the_budget_holds_are_refused_before_any_work(tmp_path, extra, names):
    before = tree_digest(tmp_path)
    done = _evaluate(tmp_path, *extra)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "--bootstrap 1000000000000: the replicates' scores need" in done.stderr
    for name in names:
        assert name in done.stderr, done.stderr
    assert tree_digest(tmp_path) == before  # no --out, no lock file


def test_the_exact_size_is_checked_before_the_bootstrap_and_its_advice_fits(tmp_path):
    # 300,000 replicates pass the lower bound of 20 MiB (48 bytes each) but not their exact size
    before = tree_digest(tmp_path)
    done = _evaluate(tmp_path, "--bootstrap", "300000", "--memory-budget", "20M")
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "(--memory-budget 20 MiB)" in done.stderr, done.stderr
    assert tree_digest(tmp_path) == before
    most = int(re.search(r"use --bootstrap (\d+) or fewer", done.stderr).group(1))
    assert 1000 < most < 300000
    done = _evaluate(tmp_path, "--bootstrap", str(most), "--memory-budget", "20M")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "out" / "metrics.json").is_file()
