"""A run folder → its splits (re-)evaluated from their saved predictions → the run summary
(``python -m medeval.evaluate --run`` and the end of every training run).

Files in the run folder: ``summary.json``, ``summary.csv`` (one row per score: mean, sd,
n_splits, then one column per split), ``report.md`` and ``report.html`` (rendered by
:mod:`medeval.report.summary`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from medeval import atomic
from medeval.evaluation import ALL_SCORES, Evaluation
from medeval.flows.evaluate import EvaluateSettings, evaluate_file

__all__ = [
    "RerunSettings",
    "evaluate_run",
    "evaluate_split_folder",
    "split_folders",
    "summarize_run",
]


@dataclass(frozen=True)
class RerunSettings:
    """Settings of a re-evaluation; ``None`` takes the value in the run's ``config.yaml``.

    Raises:
        ValueError: a negative ``n_bootstrap``, naming the field.
    """

    n_bootstrap: int | None = None
    seed: int | None = None
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.n_bootstrap is not None and self.n_bootstrap < 0:
            raise ValueError(f"n_bootstrap must be >= 0, got {self.n_bootstrap}")


def split_folders(run: str | Path) -> list[Path]:
    """``split_<seed>`` folders of a run, by seed."""
    return sorted(Path(run).glob("split_*"), key=lambda p: int(p.name.split("_")[1]))


def _read(path: Path) -> dict:
    return json.loads(path.read_text())


def _num(x) -> float:
    return math.nan if x is None else float(x)


def _config(run: Path) -> tuple[str, dict]:
    """The run's ``config.yaml`` as text and as a mapping (empty when absent)."""
    import yaml

    text = (run / "config.yaml").read_text() if (run / "config.yaml").is_file() else ""
    return text, (yaml.safe_load(text) if text else {}) or {}


def summarize_run(run: str | Path) -> dict:
    """Collect ``split_*/metrics.json`` into summary.json / summary.csv / report.md /
    report.html.

    Returns:
        The summary record: ``scores`` {name: {mean, sd, n_splits, per_split}} and more.
    """
    from medeval.report.summary import config_notes, report_html, report_markdown

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
    scores = {k: _over_splits(per_split, k) for k in ALL_SCORES}
    config, cfg = _config(run)
    summary = {
        "run": str(run),
        "splits": list(per_split),
        "scores": scores,
        "intervals": intervals,
        "calibration": calib,
        "notes": config_notes(cfg),
    }
    rows = [
        {"score": k, "mean": v["mean"], "sd": v["sd"], "n_splits": v["n_splits"], **v["per_split"]}
        for k, v in scores.items()
    ]
    task = _read(run / "task.json") if (run / "task.json").is_file() else None
    page = report_html(
        f"medeval run {run.name}", str(run), summary, rows, config, task, _split_views(run)
    )
    atomic.write_json(run / "summary.json", summary)
    atomic.write_text(run / "summary.csv", pd.DataFrame(rows).to_csv(index=False))
    atomic.write_text(run / "report.md", report_markdown(summary))
    atomic.write_text(run / "report.html", page)
    return summary


def _over_splits(per_split: dict[str, dict[str, float]], k: str) -> dict:
    """Mean, sd and count of score ``k`` over the splits where it is defined."""
    vals = np.array([per_split[s][k] for s in per_split], dtype=np.float64)
    ok = vals[~np.isnan(vals)]
    return {
        "mean": float(ok.mean()) if len(ok) else math.nan,
        "sd": float(ok.std(ddof=1)) if len(ok) > 1 else math.nan,
        "n_splits": len(ok),
        "per_split": {s: per_split[s][k] for s in per_split},
    }


def _split_views(run: Path) -> list:
    """What the run report shows of every finished split folder."""
    from medeval.report.summary import SplitView

    views = []
    for folder in split_folders(run):
        if not (folder / "metrics.json").is_file():
            continue
        png, table = folder / "subconcepts.png", folder / "per_subconcept.csv"
        views.append(
            SplitView(
                name=folder.name,
                metrics=_read(folder / "metrics.json"),
                figure_png=png.read_bytes() if png.is_file() else None,
                per_subconcept=pd.read_csv(table) if table.is_file() else None,
            )
        )
    return views


def _evaluation_config(run: Path):
    """The run's ``evaluation`` settings (the defaults when it has no ``config.yaml``)."""
    from medeval.training.config import EvaluationConfig, load_config

    path = run / "config.yaml"
    return load_config(path).evaluation if path.is_file() else EvaluationConfig()


def evaluate_run(run: str | Path, settings: RerunSettings | None = None) -> dict:
    """Re-evaluate every finished split of a run from its saved predictions, then summarise.

    Bootstrap settings default to those in the run's ``config.yaml``.
    """
    s = settings or RerunSettings()
    run = Path(run)
    if not run.is_dir():
        raise FileNotFoundError(f"{run}: no such run folder")
    ecfg = _evaluation_config(run)
    folders = [f for f in split_folders(run) if (f / "predictions.csv").is_file()]
    if not folders:
        raise FileNotFoundError(f"{run}: no split_*/predictions.csv (unfinished run?)")
    evaluation = EvaluateSettings(
        n_bootstrap=ecfg.n_bootstrap if s.n_bootstrap is None else s.n_bootstrap,
        threshold=ecfg.threshold,
        seed=ecfg.seed if s.seed is None else s.seed,
        device=s.device,
    )
    for folder in folders:
        evaluate_split_folder(folder, evaluation, title=f"{run.name}/{folder.name}")
    return summarize_run(run)


def evaluate_split_folder(
    folder: str | Path, settings: EvaluateSettings, *, title: str
) -> Evaluation:
    """Evaluate ``folder/predictions.csv`` with ``folder/train_sizes.json``; write the outputs.

    Training and ``python -m medeval.evaluate --run`` both go through here, so a re-evaluation
    with the same settings reproduces the numbers exactly.
    """
    from medeval.report.outputs import output_files

    folder = Path(folder)
    _table, ev = evaluate_file(
        folder / "predictions.csv", folder / "train_sizes.json", settings=settings
    )
    atomic.write_files(folder, output_files(ev, title=title))
    return ev
