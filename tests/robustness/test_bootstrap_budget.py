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


def test_more_replicates_than_the_memory_holds_are_refused_before_any_work(tmp_path):
    before = tree_digest(tmp_path)
    done = _evaluate(tmp_path, "--bootstrap", "1000000000000")
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "--bootstrap 1000000000000: the replicates' scores need" in done.stderr
    assert "at least 43.7 TiB" in done.stderr and "from the free memory" in done.stderr
    assert tree_digest(tmp_path) == before  # no --out, no lock file


def test_the_exact_size_is_checked_before_the_bootstrap_and_its_advice_fits():
    """300,000 replicates pass the lower bound of a 20 MiB budget (48 bytes each) but not
    their exact size: refused before any work, with the largest count that fits."""
    import numpy as np

    from medeval.metrics.bootstrap import BatchedBootstrap, ReplicateBudgetError

    y = np.r_[np.zeros(50, int), np.ones(50, int)]
    kw = dict(y_pred=y, y_score=np.linspace(0, 1, 100), subsets={"full": np.ones(100, bool)})
    boot = BatchedBootstrap(y, weights={"": np.ones(100), "w": np.arange(100.0)}, **kw,
                            memory_budget=20 * 2**20)  # fmt: skip
    with pytest.raises(ReplicateBudgetError) as err:
        boot.run(300000, seed=0)
    most = int(re.search(r"at most (\d+) replicates", str(err.value)).group(1))
    assert 1000 < most < 300000
    assert boot.run(most, seed=0).n == most
