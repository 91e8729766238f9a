"""A whole (tiny) run: files of the run folder, exact resume, re-evaluation with --run."""

import dataclasses
import json
import logging
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from medeval.evaluate import main as evaluate_main
from medeval.evaluation import ALL_SCORES
from medeval.evaluation.rectified import FewReferenceRowsWarning
from medeval.flows.train import run_training
from medeval.splits import read_manifest
from medeval.training.checkpoint import load_checkpoint
from medeval.training.data import build_task

#: The tiny run's reference rows (its validation and calibration parts) hold fewer than five
#: rows of a minority subconcept: each evaluation warns (asserted once, in ``finished``).
pytestmark = pytest.mark.filterwarnings(
    "ignore::medeval.evaluation.rectified.FewReferenceRowsWarning"
)


@pytest.fixture(scope="module")
def finished(tmp_path_factory, tiny_overrides):
    from medeval.training.config import SYNTHETIC, load_config

    torch.set_num_threads(1)
    cfg = load_config(None, tiny_overrides, preset=SYNTHETIC)
    out = tmp_path_factory.mktemp("run")
    with pytest.warns(FewReferenceRowsWarning, match="few reference rows"):
        summary = run_training(cfg, out)
    return cfg, out, summary


def test_run_folder_holds_everything(finished):
    cfg, out, summary = finished
    split = out / "split_0"
    for name in ("config.yaml", "splits.csv", "summary.json", "summary.csv", "report.md"):
        assert (out / name).is_file(), name
    for name in ("epoch_1.pt", "epoch_2.pt", "last.pt", "best.pt"):
        assert (split / "checkpoints" / name).is_file(), name
    for name in (
        "log.csv",
        "predictions.csv",
        "reference.csv",
        "train_sizes.json",
        "calibration.json",
        "metrics.json",
        "per_subconcept.csv",
        "subconcepts.png",
    ):
        assert (split / name).is_file(), name
    log = pd.read_csv(split / "log.csv")
    assert list(log["epoch"]) == [1, 2]
    assert {"loss", "val_BA", "val_cBA", "val_wAUC", "images_per_s", "data_share"} <= set(
        log.columns
    )
    preds = pd.read_csv(split / "predictions.csv")
    task = build_task(cfg.data)
    (manifest,) = read_manifest(out / "splits.csv", task)
    assert len(preds) == len(manifest["test"])
    q = preds[[f"q_{n}" for n in task.subconcept_names]].to_numpy()
    np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-6)
    assert set(summary["scores"]) == set(ALL_SCORES)
    report = (out / "report.md").read_text()
    assert "SYNTHETIC" in report and "RANDOMLY INITIALISED" in report and "ECE" in report
    calib = json.loads((split / "calibration.json").read_text())
    assert calib["temperature"] > 0


def test_run_report_html_is_self_contained(finished):
    _cfg, out, _summary = finished
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "data:image/png;base64," in page
    assert "SYNTHETIC" in page and "Resolved configuration" in page  # warning + config
    assert "Data set and task" in page and "large opacity" in page  # task description
    assert "temperature" in page.lower() and "wBA" in page
    assert json.loads((out / "task.json").read_text())["description"]["kept"] is True


def test_run_report_links_every_split_report_and_shows_its_intervals(finished):
    _cfg, out, summary = finished
    page = (out / "report.html").read_text()
    for split in summary["splits"]:
        assert f'href="{split}/report.html"' in page  # the split's own report, relative
        assert (out / split / "report.html").is_file()
    assert "true recall [95% CI]" in page  # the per-subconcept table with its intervals


def test_parts_are_patient_disjoint_60_15_10_15(finished):
    _, out, _ = finished
    frame = pd.read_csv(out / "splits.csv")
    assert frame.groupby("group")["part"].nunique().max() == 1
    share = frame["part"].value_counts(normalize=True)
    assert share["train"] == pytest.approx(0.6, abs=0.06)
    assert share["calibration"] == pytest.approx(0.1, abs=0.05)


def test_evaluate_run_reproduces_the_metrics(finished, capsys):
    _, out, summary = finished
    before = json.loads((out / "split_0" / "metrics.json").read_text())
    assert evaluate_main(["--run", str(out), "--quiet"]) == 0
    after = json.loads((out / "split_0" / "metrics.json").read_text())
    assert after["scores"] == before["scores"]
    assert after["intervals"] == before["intervals"]
    assert after["reference"] == before["reference"] and np.isfinite(after["scores"]["rBA"])
    again = json.loads((out / "summary.json").read_text())
    assert again["scores"]["pBA"]["mean"] == pytest.approx(summary["scores"]["pBA"]["mean"])


def test_validation_and_calibration_parts_are_the_reference_rows(finished, capsys):
    cfg, out, summary = finished
    split = out / "split_0"
    ref = pd.read_csv(split / "reference.csv")
    task = build_task(cfg.data)
    (manifest,) = read_manifest(out / "splits.csv", task)
    n_val, n_cal = len(manifest["validation"]), len(manifest["calibration"])
    assert list(ref["part"]) == ["validation"] * n_val + ["calibration"] * n_cal
    assert set(ref["id"]) == set(np.asarray(task.ids)[manifest["validation"]]) | set(
        np.asarray(task.ids)[manifest["calibration"]]
    )
    q = ref[[f"q_{n}" for n in task.subconcept_names]].to_numpy()
    np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-6)
    m = json.loads((split / "metrics.json").read_text())
    assert m["reference"]["source"] == "validation+calibration"
    assert m["reference"]["n"] == n_val + n_cal
    assert m["recommended"] == {"BA": "rBA", "F1": "rF1", "AUC": "rAUC", "per_subconcept": "recall"}
    for k in ("rBA", "rF1", "rAUC"):
        assert np.isfinite(m["scores"][k]), k
        assert m["intervals"][k]["low"] <= m["scores"][k] <= m["intervals"][k]["high"]
    # the reference rows rectify every subconcept's label-free recall too; the test part's true
    # subconcepts stay the recall to read, and name the worst subconcept of each class
    per_sc = pd.DataFrame(m["per_subconcept"]).set_index("subconcept")
    counts = ref["subconcept"].value_counts()
    for nm, row in per_sc.iterrows():
        assert row["n_reference"] == counts.get(nm, 0)
        assert (row["r_recall"] is not None and np.isfinite(row["r_recall"])) == (nm in counts)
    assert {w["source"] for w in m["worst_subconcepts"]} == {"true"}
    assert "Which subconcept fails?" in (out / "report.md").read_text()
    families = {k: v for k, v in m["recommended"].items() if k != "per_subconcept"}
    assert summary["recommended"] == families
    rows = pd.read_csv(out / "summary.csv").set_index("score")
    assert bool(rows.loc["rBA", "recommended"]) and not bool(rows.loc["cBA", "recommended"])
    assert rows.loc["rBA", "split_0_low"] == pytest.approx(m["intervals"]["rBA"]["low"])
    assert "<- recommended, label-free, rectified" in (out / "report.md").read_text()
    assert "validation and calibration parts" in (out / "report.html").read_text()
    # the split's files reproduce its numbers through the evaluate command
    again = out.parent / "again"
    e = cfg.evaluation
    args = ["--predictions", str(split / "predictions.csv"), "--train-sizes"]
    args += [str(split / "train_sizes.json"), "--reference", str(split / "reference.csv")]
    args += ["--bootstrap", str(e.n_bootstrap), "--seed", str(e.seed), "--out", str(again)]
    assert evaluate_main([*args, "--threshold", str(e.threshold), "--quiet"]) == 0
    other = json.loads((again / "metrics.json").read_text())
    assert other["scores"] == m["scores"] and other["intervals"] == m["intervals"]
    assert other["reference"]["per_subconcept"] == m["reference"]["per_subconcept"]


def test_split_whose_reference_rows_lack_a_minority_subconcept_says_so(finished, tmp_path):
    import shutil

    from medeval.evaluation import EvaluateSettings
    from medeval.flows.rerun import evaluate_split_folder

    _cfg, out, _ = finished
    folder = tmp_path / "split_0"
    shutil.copytree(out / "split_0", folder, ignore=shutil.ignore_patterns("checkpoints"))
    ref = pd.read_csv(folder / "reference.csv")
    rare = ref[ref.y_true == 1].subconcept.value_counts().index[-1]
    ref[ref.subconcept != rare].to_csv(folder / "reference.csv", index=False)
    from medeval.metrics import UndefinedMetricWarning

    with pytest.warns(UndefinedMetricWarning, match=f"rectified recall undefined for {rare!r}"):
        ev = evaluate_split_folder(folder, EvaluateSettings(n_bootstrap=0), title="t")
    assert ev.recommended == {"BA": "cBA", "F1": "cF1", "AUC": "cAUC"}
    assert np.isnan(ev.scores["rBA"]) and repr(rare) in ev.unavailable["rBA"]
    assert any(n.startswith("rectified scores not computed") for n in ev.notes)
    # the other subconcepts' rect. recalls still read the reference rows; the absent one's not
    per = ev.per_subconcept.set_index("subconcept")
    assert np.isnan(per.loc[rare, "r_recall"]) and per.loc[rare, "r_verdict"] == "not known"
    assert per.drop(index=rare)["r_recall"].notna().any()


def test_finished_run_is_not_overwritten_and_resume_skips_it(finished, caplog):
    cfg, out, _ = finished
    with pytest.raises(FileExistsError, match="--resume"):
        run_training(cfg, out)
    with caplog.at_level(logging.INFO, logger="medeval.flows.train"):
        run_training(cfg, out, resume=True)
    assert any("finished earlier, skipped" in m for m in caplog.messages)


def test_resume_after_interruption_equals_uninterrupted(tiny_config, tmp_path, caplog):
    straight = tmp_path / "straight"
    run_training(tiny_config, straight)
    broken = tmp_path / "broken"
    first = dataclasses.replace(tiny_config, train=dataclasses.replace(tiny_config.train, epochs=1))
    run_training(first, broken)
    # Simulate an interruption after epoch 1: the split has its checkpoints but no results.
    for name in ("metrics.json", "predictions.csv"):
        (broken / "split_0" / name).unlink()
    with caplog.at_level(logging.INFO, logger="medeval.training.loop"):
        run_training(tiny_config, broken, resume=True)
    assert any("resuming after epoch 1" in m for m in caplog.messages)
    a = load_checkpoint(straight / "split_0" / "checkpoints" / "last.pt")
    b = load_checkpoint(broken / "split_0" / "checkpoints" / "last.pt")
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k
    pa = pd.read_csv(straight / "split_0" / "predictions.csv")
    pb = pd.read_csv(broken / "split_0" / "predictions.csv")
    pd.testing.assert_frame_equal(pa, pb)


def test_split_evaluated_in_memory_equals_its_written_files(finished, tmp_path):
    """Training evaluates the tables it writes in memory; re-reading the split's files (what
    evaluate --run does) gives every number of its metrics.json again."""
    import shutil

    from medeval.evaluation import EvaluateSettings
    from medeval.flows.rerun import evaluate_split_folder

    cfg, out, _ = finished
    folder = tmp_path / "split_0"
    shutil.copytree(out / "split_0", folder, ignore=shutil.ignore_patterns("checkpoints"))
    e = cfg.evaluation
    s = EvaluateSettings(n_bootstrap=e.n_bootstrap, threshold=e.threshold, seed=e.seed)
    evaluate_split_folder(folder, s, title="t")
    keys = ("scores", "intervals", "subsets", "per_subconcept", "subconcept_model", "reference")
    written = json.loads((out / "split_0" / "metrics.json").read_text())
    again = json.loads((folder / "metrics.json").read_text())
    assert {k: again[k] for k in keys} == {k: written[k] for k in keys}


def test_a_runs_evaluation_section_sets_the_level_and_strata(finished, tmp_path):
    """evaluation.confidence and evaluation.stratify of a run's config reach its evaluation
    (re-evaluated with evaluate --run's flow, as a training run evaluates its splits)."""
    import shutil

    import yaml

    from medeval.flows.rerun import evaluate_run

    _, out, _ = finished
    run = tmp_path / "run"
    shutil.copytree(out, run, ignore=shutil.ignore_patterns("checkpoints"))
    config = yaml.safe_load((run / "config.yaml").read_text())
    config["evaluation"] |= {"confidence": 0.8, "stratify": "none", "n_bootstrap": 30}
    (run / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    evaluate_run(run)
    m = json.loads((run / "split_0" / "metrics.json").read_text())
    assert m["confidence"] == 0.8
    assert m["bootstrap"]["stratify"] == "none" and m["bootstrap"]["n"] == 30


def test_the_weights_do_not_depend_on_the_machines_core_count(tiny_config, tmp_path):
    """A CPU step's sums depend on how torch splits them over threads, and torch starts one
    thread per core: ``train.threads`` (default 1) fixes the number for the run, so a machine
    with 1 core and one with 3 train the same weights; torch's own count is restored after."""
    weights = {}
    for name, threads, cores in (("one core", 1, 1), ("three cores", 1, 3), ("torch's", 0, 3)):
        cfg = dataclasses.replace(
            tiny_config, train=dataclasses.replace(tiny_config.train, threads=threads)
        )
        torch.set_num_threads(cores)  # what torch picks by itself on such a machine
        try:
            run_training(cfg, tmp_path / name)
            assert torch.get_num_threads() == cores
        finally:
            torch.set_num_threads(1)
        weights[name] = load_checkpoint(tmp_path / name / "split_0/checkpoints/last.pt")["model"]
    for k, v in weights["one core"].items():
        assert torch.equal(v, weights["three cores"][k]), k
    # without the fixed number the machine's core count shows in the weights
    assert not all(torch.equal(v, weights["torch's"][k]) for k, v in weights["one core"].items())
    trained_on = json.loads((tmp_path / "three cores/split_0/best.json").read_text())["trained_on"]
    assert trained_on["threads"] == 1 and trained_on["cpu_capability"]


def test_label_from_a_run_and_evaluate_the_run_with_the_labels(finished, tmp_path, capsys):
    """label --run proposes test rows of a split; evaluate --run --labels counts them there."""
    from medeval.cli.label import main as label_main

    _, out, _ = finished
    sheet_dir = tmp_path / "sheet"
    assert label_main(["--run", str(out), "--budget", "6", "--out", str(sheet_dir), "--quiet"]) == 0
    sheet = pd.read_csv(sheet_dir / "to_label.csv", dtype={"id": str})
    truth = pd.read_csv(out / "split_0" / "predictions.csv", dtype={"id": str}).set_index("id")
    sheet["subconcept"] = truth.loc[sheet["id"], "subconcept"].to_numpy()
    sheet.to_csv(tmp_path / "labels.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tiny run's few reference rows
        assert (
            evaluate_main(["--run", str(out), "--labels", str(tmp_path / "labels.csv"), "--quiet"])
            == 0
        )
    m = json.loads((out / "split_0" / "metrics.json").read_text())
    assert sum(r["n_labelled"] for r in m["per_subconcept"]) == 6
    assert any(re.match(r"labels: 6 of \d+ test rows labelled", n) for n in m["notes"])
