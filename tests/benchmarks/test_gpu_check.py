"""benchmarks/gpu_check.py stops at once, with exit code 3 and a message, where there is no GPU."""

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_check.py"


def test_fails_fast_and_clearly_without_a_gpu():
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # hides any GPU this machine may have
    res = subprocess.run(
        [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 3
    assert res.stdout == ""  # no half-made JSON
    assert "no CUDA device" in res.stderr and "--cpu-dry-run" in res.stderr
    assert "Traceback" not in res.stderr
