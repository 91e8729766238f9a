"""The Dockerfiles agree with the project (no Docker engine runs here, so they are read, not
built): the extras they install exist, the entry module imports and parses its options, the
copied paths exist, and the mounted /data and /runs match the configs and the run folder."""

import importlib
import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOCKERFILES = [REPO / "docker" / "Dockerfile", REPO / "docker" / "Dockerfile.cpu"]


def _instructions(path: Path) -> list[tuple[str, str]]:
    text = re.sub(r"\\\n\s*", " ", path.read_text())  # join continuation lines
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            op, _, arg = line.partition(" ")
            out.append((op.upper(), arg.strip()))
    return out


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_extras_installed_exist_in_pyproject(path):
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    installs = [arg for op, arg in _instructions(path) if op == "RUN" and "pip install" in arg]
    wanted = set()
    for arg in installs:
        for m in re.finditer(r"\"\.\[([^\]]+)\]\"", arg):
            wanted |= {e.strip() for e in m.group(1).split(",")}
    assert wanted, "the image must install the package itself"
    assert wanted <= set(extras), f"unknown extras {wanted - set(extras)}"


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_entry_point_module_imports(path):
    entry = [json.loads(arg) for op, arg in _instructions(path) if op == "ENTRYPOINT"]
    assert entry == [["python", "-m", "medeval.train"]]
    module = importlib.import_module(entry[0][2])
    assert callable(module.main)
    assert module.build_parser().parse_args(["--config", "configs/nih.yaml"]).config


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_copied_paths_exist_and_mounts_are_declared(path):
    ins = _instructions(path)
    for op, arg in ins:
        if op == "COPY":
            *sources, _ = shlex.split(arg)
            for src in sources:
                assert (REPO / src).exists(), f"{path.name} copies {src}, which is missing"
    volumes = [v for op, arg in ins if op == "VOLUME" for v in json.loads(arg)]
    assert volumes == ["/data", "/runs"]
    env = " ".join(arg for op, arg in ins if op == "ENV")
    assert "MEDEVAL_RUNS=/runs" in env and "MEDEVAL_DATA=/data" in env


def test_config_data_paths_live_under_the_data_mount():
    configs = sorted((REPO / "configs").glob("*.yaml"))
    assert {c.stem for c in configs} >= {"nih", "ham10000", "folder", "dicom"}
    for cfg in configs:
        data = yaml.safe_load(cfg.read_text()).get("data", {})
        if data.get("source") == "synthetic":
            continue
        assert str(data["path"]).startswith("/data/"), f"{cfg.name}: data.path {data['path']}"


def test_run_folders_go_to_the_runs_mount(monkeypatch):
    from medeval.io.outdir import default_out

    monkeypatch.setenv("MEDEVAL_RUNS", "/runs")
    assert default_out("nih").parent == Path("/runs")
    monkeypatch.delenv("MEDEVAL_RUNS")
    assert default_out("nih").parent == Path("runs")


def test_the_imaging_docs_give_the_gpu_run_line():
    docs = (REPO / "docs" / "imaging.md").read_text()
    assert "docker run --gpus all" in docs and "-v" in docs
    # the README's documentation list points there for Docker
    assert "Docker (GPU)" in (REPO / "README.md").read_text()
