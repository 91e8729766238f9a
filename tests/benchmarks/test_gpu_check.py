"""benchmarks/gpu_check.py stops at once, with exit code 3 and a message, where there is no GPU."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.slow
def test_cpu_dry_run_exercises_every_section(tmp_path):
    """Every section's code path runs (the script is run on a GPU rarely, so a change to the
    package that breaks it must show here): the JSON holds each section with finite losses,
    the store-fed training is compared with the in-memory rate, and the temporary PNGs are
    gone."""
    out = tmp_path / "gpu_check.json"
    work = tmp_path / "work"
    work.mkdir()
    res = subprocess.run(
        [sys.executable, str(SCRIPT), "--cpu-dry-run", "--json", str(out), "--work", str(work)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    figures = json.loads(out.read_text())
    assert json.loads(res.stdout) == figures
    assert {"bootstrap", "train", "embed", "files", "ddp"} <= set(figures)
    files = figures["files"]
    assert files["files"] == 12 and files["embed_rows"] == 20
    assert files["train_final_loss_finite"] and figures["train"]["final_loss_finite"]
    # the ratio is the store's unrounded rate over the printed in-memory rate; the printed store
    # rate is rounded to 0.1 image/s, which at a few images/s moves it by several per cent
    store, in_memory = files["train_from_store_images_per_s"], figures["train"]["images_per_s"]
    ratio = files["train_from_store_over_in_memory"]
    assert (store - 0.05) / in_memory - 0.0005 <= ratio <= (store + 0.05) / in_memory + 0.0005
    assert files["store_first_pass_images_per_s"] > 0
    assert files["train_float32_final_loss_finite"]
    assert files["train_from_store_float32_images_per_s"] > 0
    assert figures["ddp"]["all_reduce_ok"] and figures["ddp"]["loss_finite"]
    assert list(work.iterdir()) == []


def test_the_gpu_session_script_parses_and_names_what_exists():
    """benchmarks/gpu_session.sh (run only on a lent GPU) is valid bash and every script and
    test file it runs is in the repository."""
    session = SCRIPT.parent / "gpu_session.sh"
    res = subprocess.run(["bash", "-n", str(session)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    text = session.read_text()
    named = {w for w in text.split() if w.endswith((".py",)) and "/" in w}
    assert named == {
        "tests/test_cuda.py",
        "benchmarks/gpu_check.py",
        "benchmarks/main_job_seeds.py",
    }
    assert all((SCRIPT.parents[1] / path).is_file() for path in named)
