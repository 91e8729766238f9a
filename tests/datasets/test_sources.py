"""The source registry: each declared source resolves to its loader, and a source declared once
is known to every tool, to ``load`` and to training configs."""

import json
from importlib import import_module

import numpy as np
import pytest

from medeval.datasets import dataset_names, load, sources
from medeval.datasets.sources import SOURCES, Option, Source, get_source, register_source
from medeval.datasets.synthetic import make_phantoms

LOADERS = {
    "keel": "medeval.datasets.keel.load_keel",
    "pmlb": "medeval.datasets.pmlb.load_cached",
    "csv": "medeval.datasets.tables.load_table",
    "nih": "medeval.datasets.nih.load_nih",
    "ham10000": "medeval.datasets.ham10000.load_ham10000",
    "folder": "medeval.datasets.folder.load_image_folder",
    "images": "medeval.datasets.imagetable.load_image_table",
    "dicom": "medeval.datasets.dicom.load_dicom",
    "medmnist": "medeval.datasets.medmnist.load_medmnist",
    "mmhs150k": "medeval.datasets.mmhs150k.load_mmhs150k",
    "text": "medeval.datasets.tables.load_text_csv",
    "synthetic": "medeval.datasets.synthetic.load_synthetic",
}


def _function(dotted: str):
    module, _, name = dotted.rpartition(".")
    return getattr(import_module(module), name)


def test_every_declared_source_resolves_to_its_loader():
    assert list(SOURCES) == list(LOADERS)
    for name, dotted in LOADERS.items():
        assert get_source(name).load_function() is _function(dotted), name


def test_the_listers_of_folders_of_several_data_sets_resolve():
    listers = {n: s.names for n, s in SOURCES.items() if s.names is not None}
    assert set(listers) == {"keel", "pmlb", "medmnist"}
    for ref in listers.values():
        assert callable(sources._resolve(ref))


def test_an_unknown_source_is_an_error_naming_the_known_ones():
    with pytest.raises(ValueError, match="unknown source 'bogus'; choose from keel, pmlb, csv"):
        load("bogus")
    with pytest.raises(ValueError, match="synthetic$"):
        get_source("bogus")


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="'keel' is registered already"):
        register_source(Source("keel", "again", "tabular", "medeval.datasets.keel:load_keel"))


def test_the_loader_gets_the_name_only_when_it_takes_one(tmp_path):
    calls = []

    def named(path, *, name=None, **options):
        calls.append(("named", path, name, options))
        return make_phantoms(144, size=8)

    def unnamed(path, **options):
        calls.append(("unnamed", path, options))
        return make_phantoms(144, size=8)

    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(SOURCES, "a", Source("a", "a", "image", named))
        mp.setitem(SOURCES, "b", Source("b", "b", "image", unnamed, takes_name=False))
        mp.setitem(
            SOURCES, "c", Source("c", "c", "image", unnamed, takes_name=False, takes_path=False)
        )
        load("a", tmp_path, name="x", k=1)
        load("b", tmp_path, name="x")
        load("c", None)
    assert calls == [
        ("named", tmp_path, "x", {"k": 1}),
        ("unnamed", tmp_path, {}),
        ("unnamed", None, {}),
    ]


def test_config_settings_are_defaults_the_options_refine():
    synthetic = get_source("synthetic")
    data_cfg = {"synthetic": {"n_normal": 240, "size": 32}, "options": {"size": 16}}
    assert synthetic.config_options(data_cfg) == {"n_normal": 240, "size": 16}
    assert get_source("nih").config_options(data_cfg) == {"size": 16}


@pytest.fixture
def fake_source(monkeypatch):
    """A source declared once, with one option: its loader builds small phantoms."""
    seen = []

    def load_fake(path, *, name=None, count: int = 150):
        seen.append(count)
        return make_phantoms(count, size=8, seed=1)

    declared = Source(
        "fake",
        "a source declared in a test",
        "image",
        load_fake,
        (Option("fake-count", "phantoms of the largest class", type=int, keyword="count"),),
        names=lambda path: ["one", "two"],
        takes_path=False,
    )
    monkeypatch.setitem(SOURCES, "fake", declared)
    return seen


def _help(tool: str, argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        import_module(f"medeval.cli.{tool}").main(argv)
    assert exc.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("tool", "argv"),
    [("tasks", ["describe", "--help"]), ("embed", ["--help"]), ("train", ["--help"])],
)
def test_a_declared_source_is_listed_by_every_tool(fake_source, tool, argv, capsys):
    text = _help(tool, argv, capsys)
    assert "fake: a source declared in a test" in " ".join(text.split())
    assert "--fake-count" in text


def test_a_declared_source_is_loaded_by_tasks_describe(fake_source, capsys):
    main = import_module("medeval.cli.tasks").main
    assert main(["describe", "--source", "fake", "--fake-count", "160", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert fake_source == [160]
    assert {"name": "normal", "n": 160} in record["majority"]
    assert dataset_names("fake", "anywhere") == ["one", "two"]


def test_an_option_of_a_declared_source_is_refused_for_another(fake_source, capsys):
    main = import_module("medeval.cli.tasks").main
    assert main(["describe", "--source", "synthetic", "--fake-count", "160"]) == 2
    assert "--fake-count does not apply to source 'synthetic'" in capsys.readouterr().err


def test_a_declared_source_is_training_data(fake_source):
    from medeval.training.config import ConfigError, validate
    from medeval.training.data import build_task

    cfg = validate({"data": {"source": "fake", "options": {"count": 144}}})
    assert cfg.data.source == "fake"
    with pytest.raises(ConfigError, match="data.options.size: source 'fake' takes no option"):
        validate({"data": {"source": "fake", "options": {"size": 8}}})
    task = build_task(cfg.data)
    assert fake_source == [144]
    assert task.source == "synthetic" and np.asarray(task.y).size > 0
