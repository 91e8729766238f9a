"""A run folder → its splits (re-)evaluated from their saved predictions (with their reference
rows, ``reference.csv``) → the run summary (``python -m medeval.evaluate --run`` and the end of
every training run; the files: docs/imaging.md)."""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from medeval._validation import TypeOf, declared
from medeval.errors import InputError
from medeval.evaluation import (
    ALL_SCORES,
    LABEL_FREE_RECTIFIED,
    EvaluateSettings,
    Evaluation,
    evaluate,
)
from medeval.evaluation.rectified_recall import LabelledRows
from medeval.flows.evaluate import read_labelled
from medeval.io import atomic
from medeval.io.labels import label_files
from medeval.io.predictions import PredictionTable, read_predictions, read_train_sizes
from medeval.io.reference import absent_minority, reference_rows
from medeval.io.tables import read_frame
from medeval.options import EvaluationOptions
from medeval.scores import RECOMMENDED
from medeval.weights import Utilities

__all__ = [
    "REFERENCE_FILE",
    "REFERENCE_SOURCE",
    "MissingReferenceWarning",
    "RerunSettings",
    "check_split_predictions",
    "evaluate_run",
    "evaluate_split",
    "evaluate_split_folder",
    "split_folders",
    "split_line",
    "summarize_run",
]

#: A split's reference rows (its validation and calibration parts), in the predictions format.
REFERENCE_FILE = "reference.csv"
#: Where a split's reference rows come from (``metrics.json`` ``"reference"."source"``).
REFERENCE_SOURCE = "validation+calibration"
#: The parts of a split (``splits.csv`` ``part``) that are its reference rows.
REFERENCE_PARTS = ("validation", "calibration")


@declared(
    {
        "n_bootstrap": [*EvaluationOptions.constraints["n_bootstrap"], None],
        "seed": [*EvaluationOptions.constraints["seed"], None],
        "device": [TypeOf(str, desc="a device name")],
    }
)
@dataclass(frozen=True)
class RerunSettings:
    """Settings of a re-evaluation; ``None`` takes the value in the run's ``config.yaml``; the
    constraints are the evaluation's (:class:`~medeval.options.EvaluationOptions`)."""

    n_bootstrap: int | None = None
    seed: int | None = None
    device: str = "cpu"


def split_folders(run: str | Path) -> list[Path]:
    """``split_<seed>`` folders of a run, by seed."""
    return sorted(Path(run).glob("split_*"), key=lambda p: int(p.name.split("_")[1]))


def _read(path: Path) -> dict:
    return json.loads(path.read_text())


def _num(x) -> float:
    return math.nan if x is None else float(x)


def summarize_run(run: str | Path) -> dict:
    """Collect ``split_*/metrics.json`` into summary.json / summary.csv / report.md /
    report.html.

    Returns:
        The summary record: ``scores`` {name: {mean, sd, n_splits, per_split}}, ``intervals``
        {split: metrics.json intervals}, ``recommended`` {family: score} (the rectified one
        where every split has it), ``reference`` {split: its reference rows} and more.
    """
    import yaml

    from medeval.report.summary import SplitView, config_notes, report_html, report_markdown

    run = Path(run)
    metrics: dict[str, dict] = {}  # split name → its metrics.json
    calib: dict[str, dict] = {}
    views = []  # what the run report shows of every finished split
    for folder in split_folders(run):
        if not (folder / "metrics.json").is_file():
            continue
        metrics[folder.name] = m = _read(folder / "metrics.json")
        if (folder / "calibration.json").is_file():
            calib[folder.name] = _read(folder / "calibration.json")
        png, table = folder / "subconcepts.png", folder / "per_subconcept.csv"
        views.append(
            SplitView(
                name=folder.name,
                metrics=m,
                figure_png=png.read_bytes() if png.is_file() else None,
                per_subconcept=pd.read_csv(table) if table.is_file() else None,
            )
        )
    per_split = {s: {k: _num(m["scores"].get(k)) for k in ALL_SCORES} for s, m in metrics.items()}
    recommended = {s: m.get("recommended", RECOMMENDED) for s, m in metrics.items()}
    config = (run / "config.yaml").read_text() if (run / "config.yaml").is_file() else ""
    summary = {
        "run": str(run),
        "splits": list(metrics),
        "scores": {k: _over_splits(per_split, k) for k in ALL_SCORES},
        "intervals": {s: m.get("intervals", {}) for s, m in metrics.items()},
        "recommended": _common_recommendation(recommended),
        "reference": {s: m.get("reference") for s, m in metrics.items()},
        "worst_subconcepts": {s: m.get("worst_subconcepts") or [] for s, m in metrics.items()},
        "calibration": calib,
        "notes": config_notes(yaml.safe_load(config) if config else None),
    }
    rows = _summary_rows(summary)
    task = _read(run / "task.json") if (run / "task.json").is_file() else None
    page = report_html(f"medeval run {run.name}", str(run), summary, rows, config, task, views)
    atomic.write_json(run / "summary.json", summary)
    atomic.write_text(run / "summary.csv", pd.DataFrame(rows).to_csv(index=False))
    atomic.write_text(run / "report.md", report_markdown(summary))
    atomic.write_text(run / "report.html", page)
    return summary


def _common_recommendation(per_split: dict[str, dict]) -> dict[str, str]:
    """Per family the score every split recommends, else the class-conditional one."""
    out = dict(RECOMMENDED)
    for family in out:
        names = {rec.get(family) for rec in per_split.values()}
        if len(names) == 1 and None not in names:
            out[family] = names.pop()
    return out


def _summary_rows(summary: dict) -> list[dict]:
    """``summary.csv``: per score whether it is recommended, mean, sd, n_splits, then per
    split the value and the interval."""
    rows = []
    recommended = set(summary["recommended"].values())
    for k, v in summary["scores"].items():
        row = {"score": k, "recommended": k in recommended}
        row |= {"mean": v["mean"], "sd": v["sd"], "n_splits": v["n_splits"]}
        for split, value in v["per_split"].items():
            iv = summary["intervals"].get(split, {}).get(k) or {}
            row[split] = value
            row[f"{split}_low"] = _num(iv.get("low"))
            row[f"{split}_high"] = _num(iv.get("high"))
        rows.append(row)
    return rows


def split_line(ev: Evaluation) -> str:
    """One line for a split's evaluation: BA, the recommended label-free scores with their
    intervals (marked), wBA (oracle) and pBA."""

    def with_interval(k: str) -> str:
        lo, hi = ev.intervals.get(k, (math.nan, math.nan))
        ci = "" if math.isnan(lo) else f" [{lo:.3f}, {hi:.3f}]"
        return f"{k} {ev.scores[k]:.3f}{ci}"

    rec = ev.recommended
    kind = "rectified" if rec["BA"] in LABEL_FREE_RECTIFIED else "label-free"
    parts = [f"test BA {ev.scores['BA']:.3f}", f"{with_interval(rec['BA'])} (recommended, {kind})"]
    if rec["BA"] != "cBA":
        parts.append(with_interval("cBA"))
    parts += [f"wBA {ev.scores['wBA']:.3f} (oracle)", f"pBA {ev.scores['pBA']:.3f}"]
    parts += [f"{with_interval(rec[m])} (recommended)" for m in ("F1", "AUC")]
    return ", ".join(parts)


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


def _evaluation_config(run: Path) -> EvaluationOptions:
    """The run's ``evaluation`` settings (the defaults when it has no ``config.yaml``)."""
    from medeval.training.config import load_config

    path = run / "config.yaml"
    return load_config(path).evaluation if path.is_file() else EvaluationOptions()


def evaluate_run(
    run: str | Path,
    settings: RerunSettings | None = None,
    *,
    labels: str | Path | Sequence[str | Path] | None = None,
) -> dict:
    """Re-evaluate every finished split of a run from its saved predictions, then summarise.

    The evaluation's settings are those of the run's ``config.yaml`` (its ``evaluation``
    section); ``settings`` may change the replicates, the seed and the device. ``labels``
    (``python -m medeval.label --run``'s sheets: each a to_label.csv, filled) count in every
    split whose test rows hold all of their ids, the split they were chosen from; the others
    are evaluated without.

    Raises:
        InputError: labels whose ids are the test rows of no split.
    """
    s = settings or RerunSettings()
    run = Path(run)
    if not run.is_dir():
        raise FileNotFoundError(f"{run}: no such run folder")
    ecfg = _evaluation_config(run)
    folders = [f for f in split_folders(run) if (f / "predictions.csv").is_file()]
    if not folders:
        raise FileNotFoundError(f"{run}: no split_*/predictions.csv (unfinished run?)")
    check_split_predictions(run, folders)
    given = {"n_bootstrap": s.n_bootstrap, "seed": s.seed}
    evaluation = EvaluateSettings(
        **(ecfg.evaluation_options() | {k: v for k, v in given.items() if v is not None}),
        device=s.device,
    )
    files = None if labels is None else label_files(labels)
    used: set[Path] = set()
    for folder in folders:
        lab = None if files is None else _labels_of(folder, files)
        used |= set(lab or [])
        evaluate_split_folder(folder, evaluation, title=f"{run.name}/{folder.name}", labels=lab)
    for path in files or []:
        if path not in used:
            raise InputError(path, "its ids are the test rows of no split of the run")
    return summarize_run(run)


def _labels_of(folder: Path, files: list[Path]) -> list[Path] | None:
    """The labels files every id of which is a test row of ``folder``'s split (``None``: none)."""
    ids = set(read_frame(folder / "predictions.csv", as_text=True)["id"].astype(str).str.strip())
    mine = []
    for path in files:
        given = read_frame(path, as_text=True)
        if "id" not in given.columns:
            raise InputError(path, "a labels file needs the column 'id'", column="id")
        if set(given["id"].astype(str).str.strip()) <= ids:
            mine.append(path)
    return mine or None


#: The run's manifest, one line per split and row (:func:`medeval.splits.write_manifest`).
MANIFEST_FILE = "splits.csv"


class MissingReferenceWarning(UserWarning):
    """A split of a run lost its ``reference.csv``: it is re-evaluated without rectified scores."""


def check_split_predictions(run: Path, folders: list[Path]) -> None:
    """Each split's ``predictions.csv`` holds the test rows the run's ``splits.csv`` lists for
    it, and its ``reference.csv`` its validation and calibration rows, before any split is
    re-evaluated (a damaged file must not overwrite a split or the summary). A split whose
    ``reference.csv`` is gone is named in a :class:`MissingReferenceWarning`.

    Raises:
        InputError: naming the split's predictions or reference file and what is missing or
            extra.
    """
    manifest = run / MANIFEST_FILE
    if not manifest.is_file():  # nothing to check against (a folder not made by train)
        return
    plan = read_frame(manifest, as_text=True)
    require = [c for c in ("split_seed", "part", "id") if c not in plan.columns]
    if require:
        raise InputError(manifest, "missing (the run's manifest)", column=require[0])
    lost = []  # (folder, seed, reference rows) of the splits without reference.csv
    for folder in folders:
        seed = folder.name.split("_", 1)[1]
        rows = plan.loc[plan["split_seed"] == seed]
        test = list(rows.loc[rows["part"] == "test", "id"])
        _check_rows(folder / "predictions.csv", test, f"test rows of split {seed}")
        ref = list(rows.loc[rows["part"].isin(REFERENCE_PARTS), "id"])
        if ref and (folder / REFERENCE_FILE).is_file():
            what = f"validation and calibration rows of split {seed}"
            _check_rows(folder / REFERENCE_FILE, ref, what)
        elif ref:
            lost.append((folder, seed, len(ref)))
    for folder, seed, n_ref in lost:
        warnings.warn(
            f"{folder / REFERENCE_FILE} is missing (split {seed}'s {n_ref} validation and "
            "calibration rows): the split gets no rectified scores, and the run recommends "
            "cBA, cF1, cAUC instead of rBA, rF1, rAUC",
            MissingReferenceWarning,
            stacklevel=3,
        )


def _check_rows(path: Path, expected: list[str], rows: str) -> None:
    """``path`` holds exactly the ids ``expected`` (the ``rows`` of a split), whole."""
    listed = f"the run's {MANIFEST_FILE} lists {len(expected)} {rows}"
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        raise InputError(path, f"ends mid-row (the file was cut short); {listed}")
    frame = read_frame(path, as_text=True)
    if "id" not in frame.columns:
        if len(frame) != len(expected):
            raise InputError(path, f"holds {len(frame)} rows but {listed}")
        return
    ids = list(frame["id"])
    missing = sorted(set(expected) - set(ids))
    extra = sorted(set(ids) - set(expected))
    if missing:
        raise InputError(
            path,
            f"holds {len(ids)} rows but {listed}; {len(missing)} missing, first "
            f"{missing[0]!r} (the file was cut short?)",
        )
    if extra or len(ids) != len(expected):
        what = f"id {extra[0]!r} is not one of them" if extra else "some ids appear twice"
        raise InputError(path, f"holds {len(ids)} rows but {listed}; {what}")


def evaluate_split_folder(
    folder: str | Path,
    settings: EvaluateSettings,
    *,
    title: str,
    labels: Path | Sequence[Path] | None = None,
) -> Evaluation:
    """:func:`evaluate_split` of the tables in ``folder`` (``predictions.csv``,
    ``train_sizes.json`` and, when present, ``reference.csv``)."""
    folder = Path(folder)
    u = read_train_sizes(folder / "train_sizes.json")
    ref_path, reference = folder / REFERENCE_FILE, None
    if ref_path.is_file():
        try:
            reference = read_predictions(ref_path, u)
        except InputError as e:  # kept: the split is evaluated without it, saying why
            reference = e
    table = read_predictions(folder / "predictions.csv", u)
    lab, notes = (
        (None, [])
        if labels is None
        else read_labelled(
            labels, folder / "predictions.csv", table, u, confidence=settings.confidence
        )
    )
    return evaluate_split(
        folder, table, u, reference, settings, title=title, labels=lab, notes=notes
    )


def evaluate_split(
    folder: str | Path,
    table: PredictionTable,
    utilities: Utilities,
    reference: PredictionTable | InputError | None,
    settings: EvaluateSettings,
    *,
    title: str,
    labels: LabelledRows | None = None,
    notes: list[str] | None = None,
) -> Evaluation:
    """Evaluate a split's test table with its reference rows (the table of its validation and
    calibration parts, or the error that made them unreadable) and write the outputs into
    ``folder``. Reference rows that cannot be used (e.g. a minority subconcept with no image
    in the validation and calibration parts) leave the split its class-conditional scores,
    and the notes say why it has no rectified ones."""
    from medeval.report.outputs import output_files

    rows, unusable = None, reference if isinstance(reference, InputError) else None
    if isinstance(reference, PredictionTable):
        try:
            rows = reference_rows(
                reference, utilities, threshold=settings.threshold, source=REFERENCE_SOURCE
            )
        except InputError as e:
            unusable = e
    ev = evaluate(table, utilities, reference=rows, labels=labels, settings=settings)
    ev.notes = [*(notes or []), *ev.notes]
    if unusable is not None:
        why = f"the split's reference rows ({REFERENCE_SOURCE}) cannot be used: {unusable}"
        ev.notes.append(f"rectified scores not computed: {why}")
        for k in LABEL_FREE_RECTIFIED:
            ev.unavailable[k] = why
    elif rows is not None and (absent := absent_minority(rows, utilities)):
        # labelled test rows may hold it: then the rectified scores stand
        if ev.unavailable.get("rBA") == absent:
            ev.notes.append(f"rectified scores not computed: {absent}")
    atomic.write_files(Path(folder), output_files(ev, title=title))
    return ev
