"""python -m medeval.train: the CLI around the training run."""

from pathlib import Path

import pytest
import torch

from medeval.train import main

REPO = Path(__file__).resolve().parents[2]

# Same tiny run as tests/training/conftest.py: seconds on one core.
TINY = [
    "data.synthetic.n_normal=144",
    "data.synthetic.size=32",
    "model.backbone=vgg11",
    "train.image_size=32",
    "train.batch_size=16",
    "train.epochs=2",
    "train.max_steps_per_epoch=2",
    "evaluation.n_bootstrap=20",
]


@pytest.fixture(autouse=True)
def _one_thread(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    torch.set_num_threads(1)


def test_runs_and_prints_the_headline_table(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["--out", str(out), *TINY, "train.epochs=1"]) == 0
    text = capsys.readouterr().out
    assert "SYNTHETIC" in text
    assert "RANDOMLY INITIALISED" in text
    for score in ("BA", "wBA", "pBA", "pAUC"):
        assert f"\n{score} " in text
    assert f"run folder: {out}" in text
    assert (out / "summary.csv").is_file()


def test_bad_override_is_a_clear_error(tmp_path, capsys):
    assert main(["--out", str(tmp_path), "train.epoch=3"]) == 2
    assert "unknown config key 'train.epoch'" in capsys.readouterr().err


def test_unavailable_pretrained_weights_exit_2_with_advice(tmp_path, capsys):
    code = main(
        ["--out", str(tmp_path / "r"), *TINY, "model.backbone=resnet18", "model.pretrained=true"]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "--weights PATH" in err and "pretrained=false" in err


def test_missing_weights_file(tmp_path, capsys):
    assert main(["--out", str(tmp_path / "r"), *TINY, "--weights", str(tmp_path / "no.pth")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_real_nih_metadata_without_images_is_a_clear_error(shared_data, tmp_path, capsys):
    code = main(
        [
            "--config",
            str(REPO / "configs" / "nih.yaml"),
            f"data.path={shared_data / 'nih'}",
            "model.pretrained=false",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "images listed there are missing" in err and "00000001_000.png" in err


def test_resume_needs_a_run_folder_and_no_overrides(tmp_path, capsys):
    assert main(["--resume", str(tmp_path / "absent")]) == 2
    assert "no run here" in capsys.readouterr().err
    assert main(["--resume", str(tmp_path), "train.epochs=3"]) == 2
    assert "drop the other options" in capsys.readouterr().err


def test_loader_flags_become_data_options_and_wrong_ones_exit_2(shared_data, tmp_path, capsys):
    nih = ["--source", "nih", "--path", str(shared_data / "nih"), "model.pretrained=false"]
    assert main([*nih, "--require-images", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "images listed there are missing" in err  # require_images reached the loader
    assert main([*nih, "--text-column", "t", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "--text-column does not apply to source 'nih'" in err and "text" in err


def test_a_wrong_type_exits_2_naming_the_key(tmp_path, capsys):
    assert main(["--out", str(tmp_path / "r"), "train.epochs=ten"]) == 2
    err = capsys.readouterr().err
    assert "train.epochs: expected int, got 'ten'" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()


def test_a_fresh_run_into_a_run_folder_exits_2_before_training(tmp_path, capsys):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "config.yaml").write_text("name: x\n")
    assert main(["--out", str(tmp_path / "r"), *TINY]) == 2
    assert "holds a run; use --resume" in capsys.readouterr().err
