"""The user's own binary task (docs/method.md,
"The user's own task"): --positive / --negative / --drop / --downsample."""

from __future__ import annotations

import numpy as np
import pytest
from real_data import shared_path

from medeval.datasets.base import DataError, LabelledData
from medeval.tasks.user import SmallSubconceptWarning, TaskSpec, TaskSpecError, make_task

SIZES = {"NV": 30, "BKL": 20, "MEL": 25, "BCC": 12, "SCC": 9, "AK": 5}


def _data() -> LabelledData:
    labels = np.concatenate([[k] * n for k, n in SIZES.items()])
    return LabelledData(labels=labels, source="t", name="skin")


def test_positive_labels_are_class_1_and_every_row_is_kept():
    with pytest.warns(SmallSubconceptWarning, match=r"'AK' has 5"):
        task = make_task(_data(), TaskSpec.build("MEL, BCC,SCC,AK"), seed=0)
    assert len(task) == sum(SIZES.values())  # no row dropped, no ladder
    assert [s.name for s in task.majority] == ["NV", "BKL"]
    assert [(s.name, s.n) for s in task.minority] == [("MEL", 25), ("BCC", 12), ("SCC", 9),
                                                      ("AK", 5)]  # fmt: skip
    assert task.kept and task.user and int(task.y.sum()) == 51
    labels = task.data.labels
    assert set(labels[task.y == 1]) == {"MEL", "BCC", "SCC", "AK"}
    record = task.describe()
    assert record["task"]["positive"] == ["MEL", "BCC", "SCC", "AK"]
    assert "fewer than 8 rows: 'AK' has 5" in record["reason"]
    assert "the user's task" in task.describe_text()


def test_negative_list_needs_every_other_label_listed_or_dropped():
    spec = TaskSpec.build("MEL,BCC", "NV,BKL")
    with pytest.raises(DataError, match=r"labels 'SCC' \(9 rows\), 'AK' \(5 rows\) are in neither"):
        make_task(_data(), spec, seed=0)
    task = make_task(_data(), TaskSpec.build("MEL,BCC", "NV,BKL", "SCC,AK"), seed=0)
    assert len(task) == 30 + 20 + 25 + 12 and task.dropped == ("SCC", "AK")
    assert "SCC" not in set(task.data.labels)


def test_unknown_label_double_label_and_empty_class_are_named():
    with pytest.raises(DataError, match=r"label 'XX' in --positive / task.positive is not a label"):
        make_task(_data(), TaskSpec.build("MEL,XX"), seed=0)
    with pytest.raises(TaskSpecError, match=r"'MEL' is given twice: in --positive .* and --drop"):
        TaskSpec.build("MEL", drop="MEL")
    with pytest.raises(TaskSpecError, match=r"--negative / task.negative"):
        TaskSpec.build(None, "NV")
    every = ",".join(SIZES)
    with pytest.raises(DataError, match=r"class 0 has no rows"):
        make_task(_data(), TaskSpec.build(every), seed=0)


def test_downsample_follows_the_ladder_on_request():
    spec = TaskSpec.build("MEL,BCC", drop="SCC,AK", downsample=True)
    with pytest.warns(SmallSubconceptWarning, match=r"'BCC' has 5"):
        task = make_task(_data(), spec, seed=3)
    # m = 20 (BKL, the smallest class-0 subconcept): MEL keeps min(25, 10), BCC min(12, 5)
    assert [(s.name, s.n_original, s.n) for s in task.minority] == [("MEL", 25, 10),
                                                                    ("BCC", 12, 5)]  # fmt: skip
    with pytest.warns(SmallSubconceptWarning):
        again = make_task(_data(), spec, seed=3)
    assert np.array_equal(task.index, again.index)


def test_without_a_spec_the_ladder_stays_the_default():
    task = make_task(_data(), None, seed=0)
    assert not task.user and "task" not in task.describe()
    assert [s.name for s in task.majority] == ["NV", "MEL", "BKL"]


def test_config_task_section_is_checked(tmp_path):
    from medeval.training.config import ConfigError, load_config, task_spec

    cfg = load_config(None, ["task.positive=[MEL, 1]", "task.drop=[AK]"])
    assert task_spec(cfg) == TaskSpec(("MEL", "1"), None, ("AK",), False)
    with pytest.raises(ConfigError, match=r"'MEL' is given twice"):
        load_config(None, ["task.positive=[MEL]", "task.negative=[MEL]"])
    with pytest.raises(ConfigError, match=r"without --positive / task.positive"):
        load_config(None, ["task.downsample=true"])


def test_train_flags_become_task_overrides():
    from medeval.cli.train import _overrides, build_parser

    args = build_parser().parse_args(["--positive", "MEL,BCC", "--drop", "AK", "--downsample"])
    out = _overrides(args, "synthetic")
    assert 'task.positive=["MEL", "BCC"]' in out and 'task.drop=["AK"]' in out
    assert "task.downsample=true" in out


def test_tasks_describe_builds_the_users_task_or_exits_2(tmp_path, capsys):
    from medeval.cli.tasks import main

    table = tmp_path / "t.csv"
    table.write_text("x,label\n" + "".join(f"{i},{'abc'[i % 3]}\n" for i in range(30)))
    argv = ["describe", "--source", "csv", "--path", str(table), "--label-column", "label"]
    assert main([*argv, "--positive", "b,c", "--json"]) == 0
    import json

    record = json.loads(capsys.readouterr().out)
    assert record["task"]["positive"] == ["b", "c"] and len(record["minority"]) == 2
    assert main([*argv, "--positive", "b", "--negative", "a"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "label 'c' (10 rows) is in neither" in err


def test_train_with_an_unknown_label_exits_2_and_writes_nothing(tmp_path, capsys, monkeypatch):
    import huggingface_hub.constants

    from medeval.train import main

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    out = tmp_path / "run"
    argv = ["--out", str(out), "data.synthetic.n_normal=144", "--positive", "small nodule,XX"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "label 'XX' in --positive" in err
    assert not out.exists() or not any(out.iterdir())


def test_embed_with_an_unknown_label_exits_2_before_embedding(tmp_path, capsys):
    from medeval.embed import main

    out = tmp_path / "emb"
    argv = ["--source", "synthetic", "--random-init", "--size", "32", "--no-benchmark",
            "--out", str(out), "--cache", str(tmp_path / "c"), "--positive", "XX"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "label 'XX' in --positive" in err
    assert not out.exists() or not any(out.iterdir())


def test_the_isic_skin_gpu_config_is_the_cpu_one_at_the_papers_scale():
    from pathlib import Path

    from medeval.training.config import load_config, task_spec

    repo = Path(__file__).resolve().parents[2]
    cpu = load_config(repo / "configs" / "isic_skin.yaml")
    gpu = load_config(repo / "configs" / "isic_skin_gpu.yaml")
    assert task_spec(gpu) == task_spec(cpu) and gpu.data.options == cpu.data.options
    assert (gpu.train.image_size, gpu.model.backbone, gpu.model.features) == (224, "vgg16", "head")
    assert gpu.model.pretrained and gpu.splits.n == 10


def test_the_isic_skin_config_builds_its_task_on_the_real_labels():
    from pathlib import Path

    import pandas as pd

    from medeval.training.config import load_config, task_spec

    repo = Path(__file__).resolve().parents[2]
    cfg = load_config(repo / "configs" / "isic_skin.yaml")
    assert cfg.data.source == "images" and cfg.data.options["group_column"] == "lesion_id"
    meta = shared_path("isic_skin", "metadata.csv")
    labels = pd.read_csv(meta, dtype=str)["dx"].to_numpy()
    task = make_task(LabelledData(labels=labels, source="images", name="isic_skin"),
                     task_spec(cfg), seed=0)  # fmt: skip
    assert len(task) == len(labels)  # every image kept
    assert sum(s.n for s in task.minority) == 1116 and sum(s.n for s in task.majority) == 1025
