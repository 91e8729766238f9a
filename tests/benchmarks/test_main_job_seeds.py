"""benchmarks/main_job_seeds.py reads a finished main job's figures and checks them as the README
states them, and its exit code says whether every check held."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import torch

from medeval.train import main as train_main

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "main_job_seeds.py"


@pytest.fixture(scope="module")
def seeds():
    spec = importlib.util.spec_from_file_location("main_job_seeds", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.filterwarnings("ignore::medeval.evaluation.rectified.FewReferenceRowsWarning")
def test_the_row_of_a_run_holds_its_figures_and_checks(
    seeds, tiny_overrides, tmp_path, monkeypatch
):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    torch.set_num_threads(1)
    out = tmp_path / "run"
    assert train_main(["--out", str(out), "--quiet", *tiny_overrides, "train.epochs=1"]) == 0
    row = seeds.read_run(3, out, wall=12.0, load=(0.5, 0.75))
    metrics = json.loads(next(out.glob("split_*/metrics.json")).read_text())
    s, rec = metrics["scores"], metrics["recommended"]["BA"]
    assert rec == "rBA" and row["recommended"] == rec
    assert (row["seed"], row["BA"], row["wBA"], row["rBA"]) == (3, s["BA"], s["wBA"], s["rBA"])
    low, high = metrics["intervals"]["rBA"]["low"], metrics["intervals"]["rBA"]["high"]
    assert row["rBA_interval"] == [low, high]
    assert row["checks"] == {
        "wBA <= BA - 0.05": s["wBA"] <= s["BA"] - 0.05,
        "rBA < BA": s["rBA"] < s["BA"],
        "rBA interval contains wBA": low <= s["wBA"] <= high,
    }
    minority = [r for r in metrics["per_subconcept"] if r["class"] == 1]
    assert set(row["rare_found"]) == {r["subconcept"] for r in minority}
    assert row["trained_on"]["device"] == "cpu"
    assert row["wall_s"] == 12.0 and row["load"] == [0.5, 0.75]


def test_exit_code_says_whether_every_check_held(seeds, tmp_path, monkeypatch, capsys):
    def fake(seed, out, device):
        ok = seed != 2
        return {
            "seed": seed, "BA": 0.8, "wBA": 0.7, "cBA": 0.75, "pBA": 0.85, "recommended": "rBA",
            "rBA": 0.72, "rBA_interval": [0.6, 0.9], "rare_found": {}, "trained_on": {},
            "best_epoch": 1, "wall_s": 50.0, "load": [1.0, 1.0],
            "checks": {"wBA <= BA - 0.05": True, "rBA < BA": ok, "rBA interval contains wBA": True},
        }  # fmt: skip

    monkeypatch.setattr(seeds, "run_seed", fake)
    assert seeds.main(["--seeds", "0,1", "--out", str(tmp_path)]) == 0
    report = tmp_path / "all.json"
    assert seeds.main(["--seeds", "0,2", "--out", str(tmp_path), "--json", str(report)]) == 1
    text = capsys.readouterr().out
    assert "seed 2:" in text and "FAILED: rBA < BA" in text
    summary = json.loads(report.read_text())
    assert summary["all_checks_hold"] is False and summary["ranges"]["BA"] == "0.80–0.80"

    def broken(seed, out, device):
        raise RuntimeError(f"seed {seed}: exited 1")

    monkeypatch.setattr(seeds, "run_seed", broken)
    assert seeds.main(["--seeds", "0", "--out", str(tmp_path)]) == 2
    with pytest.raises(SystemExit) as exc:
        seeds.main(["--seeds", ","])
    assert exc.value.code == 2
