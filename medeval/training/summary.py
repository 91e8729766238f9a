"""Run-level summary: mean ± sd of the nine scores over splits, and re-evaluation of a run.

Files in the run folder: ``summary.json``, ``summary.csv`` (one row per score: mean, sd,
n_splits, then one column per split) and ``report.md`` (headline table, calibration, notes).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from medeval import atomic
from medeval.evaluation import ALL_SCORES, RECOMMENDED, WEAK_WITHIN_CLASS_BA

__all__ = [
    "evaluate_run",
    "evaluate_split_folder",
    "split_folders",
    "summarize_run",
    "summary_table",
]


def split_folders(run: str | Path) -> list[Path]:
    """``split_<seed>`` folders of a run, by seed."""
    return sorted(Path(run).glob("split_*"), key=lambda p: int(p.name.split("_")[1]))


def _read(path: Path) -> dict:
    return json.loads(path.read_text())


def summarize_run(run: str | Path) -> dict:
    """Collect ``split_*/metrics.json`` into summary.json / summary.csv / report.md.

    Returns:
        The summary record: ``scores`` {name: {mean, sd, n_splits, per_split}} and more.
    """
    run = Path(run)
    per_split: dict[str, dict[str, float]] = {}
    intervals: dict[str, dict] = {}
    calib: dict[str, dict] = {}
    for folder in split_folders(run):
        if (folder / "metrics.json").is_file():
            m = _read(folder / "metrics.json")
            per_split[folder.name] = {k: _num(m["scores"].get(k)) for k in ALL_SCORES}
            intervals[folder.name] = m.get("intervals", {})
            if (folder / "calibration.json").is_file():
                calib[folder.name] = _read(folder / "calibration.json")
    scores = {}
    for k in ALL_SCORES:
        vals = np.array([per_split[s][k] for s in per_split], dtype=np.float64)
        ok = vals[~np.isnan(vals)]
        scores[k] = {
            "mean": float(ok.mean()) if len(ok) else math.nan,
            "sd": float(ok.std(ddof=1)) if len(ok) > 1 else math.nan,
            "n_splits": len(ok),
            "per_split": {s: per_split[s][k] for s in per_split},
        }
    config = (run / "config.yaml").read_text() if (run / "config.yaml").is_file() else ""
    summary = {
        "run": str(run),
        "splits": list(per_split),
        "scores": scores,
        "intervals": intervals,
        "calibration": calib,
        "notes": _notes(config),
    }
    rows = [
        {"score": k, "mean": v["mean"], "sd": v["sd"], "n_splits": v["n_splits"], **v["per_split"]}
        for k, v in scores.items()
    ]
    atomic.write_json(run / "summary.json", summary)
    atomic.write_text(run / "summary.csv", pd.DataFrame(rows).to_csv(index=False))
    atomic.write_text(run / "report.md", _report(summary))
    atomic.write_text(run / "report.html", _report_html(run, summary, rows, config))
    return summary


def _nan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _num(x) -> float:
    return math.nan if x is None else float(x)


def _notes(config_text: str) -> list[str]:
    import yaml

    cfg = yaml.safe_load(config_text) if config_text else {}
    notes = []
    if cfg and cfg.get("data", {}).get("source") == "synthetic":
        notes.append(
            "DATA ARE SYNTHETIC: built-in chest-radiograph phantoms (medeval.synthetic), "
            "not real images; the numbers test the pipeline only."
        )
    model = (cfg or {}).get("model", {})
    if model and not model.get("pretrained") and not model.get("weights"):
        notes.append(
            f"The {model.get('backbone')} backbone was randomly initialised "
            "(no pretrained weights)."
        )
    return notes


def summary_table(summary: dict) -> str:
    """Headline table: mean ± sd over splits; with one split, its bootstrap interval instead."""
    n = len(summary["splits"])
    one = summary["splits"][0] if n == 1 else None
    last = "95% interval (bootstrap)" if one else f"over {n} splits"
    lines = [f"{'score':<6} {'mean':>7} {'± sd':>8}   {last}"]
    for k, v in summary["scores"].items():
        mean = "   NaN" if _nan(v["mean"]) else f"{v['mean']:.3f}"
        sd = "—" if _nan(v["sd"]) else f"{v['sd']:.3f}"
        ci = ""
        if one:
            iv = summary.get("intervals", {}).get(one, {}).get(k) or {}
            lo, hi = iv.get("low"), iv.get("high")
            ci = "" if _nan(lo) or _nan(hi) else f"[{lo:.3f}, {hi:.3f}]"
        mark = "  <- recommended, label-free" if k in RECOMMENDED.values() else ""
        lines.append(f"{k:<6} {mean:>7} {sd:>8}   {ci:<16}{mark}".rstrip())
    lines.append(
        "BA/F1/AUC unweighted; w = true utility weights (oracle: needs test subconcept labels); "
        "c = label-free estimate of the w score (class-conditional predicted weights); p = the "
        "paper's predicted weights (biased upward; pAUC = predicted-weight ROC AUC, not partial "
        "AUC)."
    )
    return "\n".join(lines)


def _report(summary: dict) -> str:
    out = [f"# medeval run `{summary['run']}`", ""]
    for note in summary["notes"]:
        out += [f"**{note}**", ""]
    out += ["", "## Scores, mean ± sd over splits", "", "```", summary_table(summary), "```"]
    if summary["calibration"]:
        out += [
            "",
            "## Subconcept-head calibration (temperature scaling)",
            "",
            "| split | T | ECE cal. before | after | ECE test before | after |",
            "|---|---|---|---|---|---|",
        ]
        for s, c in summary["calibration"].items():
            out.append(
                f"| {s} | {c['temperature']:.3f} | {c['ece_calibration_before']:.3f} | "
                f"{c['ece_calibration_after']:.3f} | {c['ece_test_before']:.3f} | "
                f"{c['ece_test_after']:.3f} |"
            )
    out += [
        "",
        "Per split: `split_<seed>/metrics.json`, `per_subconcept.csv`, "
        "`subconcepts.png`, `log.csv`, `predictions.csv`.",
        "",
    ]
    return "\n".join(out)


def _report_html(run: Path, summary: dict, rows: list[dict], config: str) -> str:
    """Self-contained run report: headline table, calibration, data set, per-split figures,
    the resolved config and every warning (undefined scores, skipped files, synthetic data)."""
    from medeval.report.html import Section, render

    sections = []
    warn = list(summary["notes"])
    head = Section("Scores over the splits")
    head.text(
        f"{len(summary['splits'])} split(s). BA/F1/AUC unweighted; w = true utility weights "
        "(oracle: needs test subconcept labels); c = the label-free estimate of the w score, "
        "from the calibrated subconcept head's posteriors renormalised within each instance's "
        "known class (recommended: cBA, cF1, cAUC); p = the paper's predicted utility weights, "
        "kept for reproduction (biased upward; pAUC = predicted-weight ROC AUC, not partial "
        "AUC). When cBA lies below BA, the small subconcepts are the hard ones: look at the "
        "per-subconcept recalls."
    )
    head.table(pd.DataFrame(rows))
    sections.append(head)
    if summary["calibration"]:
        cal = pd.DataFrame(
            [
                {"split": s, **{k: v for k, v in c.items() if not isinstance(v, dict | list)}}
                for s, c in summary["calibration"].items()
            ]
        )
        sections.append(
            Section("Subconcept-head calibration (temperature scaling)")
            .text(
                "Expected calibration error before and after fitting a temperature on the "
                "calibration part."
            )
            .table(cal)
        )
    task_file = run / "task.json"
    if task_file.is_file():
        task = _read(task_file)
        sections.append(Section("Data set and task").pre(task["text"]))
        warn += [
            f"skipped unreadable file {s['path']} (row {s['row']}): {s['reason']}"
            for s in task.get("skipped", [])
        ]
    for folder in split_folders(run):
        if not (folder / "metrics.json").is_file():
            continue
        sec = Section(f"Split {folder.name.split('_')[1]}")
        if (folder / "subconcepts.png").is_file():
            sec.image(
                (folder / "subconcepts.png").read_bytes(),
                caption="Subconcept prevalence and recall (solid: true; hatched: label-free "
                "estimate); lines: BA, pBA, cBA, wBA.",
            )
        if (folder / "per_subconcept.csv").is_file():
            sec.table(pd.read_csv(folder / "per_subconcept.csv"))
        metrics = _read(folder / "metrics.json")
        warn += [f"{folder.name}: {n}" for n in metrics.get("notes", [])]
        warn += _weak_model_notes(folder.name, metrics)
        sections.append(sec)
    if config:
        sections.append(Section("Resolved configuration").pre(config))
    if warn:
        sections.insert(0, Section("Warnings").notes(warn))
    return render(f"medeval run {run.name}", sections, subtitle=str(run))


def _weak_model_notes(split: str, metrics: dict) -> list[str]:
    """A warning per class whose label-free weights rest on a weak subconcept head."""
    out = []
    for c, v in (metrics.get("subconcept_model") or {}).items():
        if c in metrics.get("weighted_classes", ["class 1"]) and v is not None:
            if v < WEAK_WITHIN_CLASS_BA:
                out.append(
                    f"{split}: the subconcept head is weak within {c} (balanced accuracy {v:.2f} "
                    "over its subconcepts on the test part): the label-free cBA / cF1 / cAUC then "
                    "move toward BA / F1 / AUC and may understate a hidden failure"
                )
    return out


def evaluate_run(
    run: str | Path, *, n_bootstrap: int | None = None, device: str = "cpu", seed: int | None = None
) -> dict:
    """Re-evaluate every finished split of a run from its saved predictions, then summarise.

    Bootstrap settings default to those in the run's ``config.yaml``.
    """
    import yaml

    run = Path(run)
    if not run.is_dir():
        raise FileNotFoundError(f"{run}: no such run folder")
    cfg = (
        yaml.safe_load((run / "config.yaml").read_text()) if (run / "config.yaml").is_file() else {}
    )
    ecfg = (cfg or {}).get("evaluation", {})
    folders = [f for f in split_folders(run) if (f / "predictions.csv").is_file()]
    if not folders:
        raise FileNotFoundError(f"{run}: no split_*/predictions.csv (unfinished run?)")
    for folder in folders:
        evaluate_split_folder(
            folder,
            n_bootstrap=int(ecfg.get("n_bootstrap", 1000) if n_bootstrap is None else n_bootstrap),
            threshold=float(ecfg.get("threshold", 0.5)),
            seed=int(ecfg.get("seed", 0) if seed is None else seed),
            device=device,
            title=f"{run.name}/{folder.name}",
        )
    return summarize_run(run)


def evaluate_split_folder(
    folder: str | Path,
    *,
    n_bootstrap: int,
    threshold: float,
    seed: int,
    device,
    title: str,
):
    """Evaluate ``folder/predictions.csv`` with ``folder/train_sizes.json``; write the outputs.

    Training and ``python -m medeval.evaluate --run`` both go through here, so a re-evaluation
    with the same settings reproduces the numbers exactly.
    """
    from medeval.report.outputs import evaluate_file, output_files

    folder = Path(folder)
    _table, ev = evaluate_file(
        folder / "predictions.csv",
        folder / "train_sizes.json",
        n_bootstrap=n_bootstrap,
        threshold=threshold,
        seed=seed,
        device=device,
    )
    atomic.write_files(folder, output_files(ev, title=title))
    return ev
