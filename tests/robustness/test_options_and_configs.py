"""Options and configs (#38): an unknown config key names the nearest real one, wherever it is
given (an override, a config file); an empty config file is refused; an option that another
makes meaningless (``--benchmark-args`` with ``--no-benchmark``) is refused. Each with exit
code 2, one line, nothing written."""

from __future__ import annotations

import importlib

import pytest
from test_malformed_inputs import _no_work, run_tool


def _refused(capsys, tmp_path, tool: str, argv: list[str], *parts: str) -> None:
    assert run_tool(tool, [*argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for part in parts:
        assert part in err, (part, err)
    assert not (tmp_path / "out").exists()


@pytest.fixture(autouse=True)
def no_work(monkeypatch):
    for module, name in (
        ("medeval.flows.train", "run_training"),
        ("medeval.embeddings.table", "embed_table"),
    ):
        monkeypatch.setattr(importlib.import_module(module), name, _no_work)


@pytest.mark.parametrize(
    ("override", "key", "nearest"),
    [
        ("train.epoch=3", "train.epoch", "train.epochs"),
        ("trian.epochs=3", "trian", "train"),
        ("splits.sed=1", "splits.sed", "splits.seeds"),
    ],
)
def test_an_unknown_override_key_suggests_the_nearest(tmp_path, capsys, override, key, nearest):
    said = f"unknown config key {key!r}: did you mean {nearest!r}?"
    _refused(capsys, tmp_path, "train", [override], said)


def test_an_unknown_key_in_a_config_file_suggests_the_nearest(tmp_path, capsys):
    (tmp_path / "cfg.yaml").write_text("model:\n  dropuot: 0.2\n")
    argv = ["--config", str(tmp_path / "cfg.yaml")]
    _refused(capsys, tmp_path, "train", argv, "cfg.yaml", "did you mean 'model.dropout'?")


@pytest.mark.parametrize("text", ["", "# settings to come\n"], ids=["empty", "comment-only"])
def test_an_empty_config_file_is_refused(tmp_path, capsys, text):
    (tmp_path / "cfg.yaml").write_text(text)
    argv = ["--config", str(tmp_path / "cfg.yaml")]
    _refused(capsys, tmp_path, "train", argv, "cfg.yaml: the config file is empty")


def test_benchmark_args_with_no_benchmark_are_refused(tmp_path, capsys):
    argv = ["--source", "synthetic", "--random-init", "--no-benchmark"]
    argv += ["--benchmark-args", "--max-splits 1"]
    _refused(capsys, tmp_path, "embed", argv, "--benchmark-args", "--no-benchmark")
