"""Your own model: features → subconcept posteriors → evaluation (the library side of
``python -m medeval.subconcepts``; inputs, outputs and why there is no within-class calibration
step: docs/own_model.md)."""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medeval.discovery import discover_subconcepts
from medeval.errors import InputError
from medeval.evaluation import NO_REFERENCE_NOTE, EvaluateSettings, Evaluation, evaluate
from medeval.io.atomic import json_text
from medeval.io.features import FEATURE, FeatureTable, binary_column, read_feature_table
from medeval.io.joins import agreeing, joined_rows, no_shared_rows
from medeval.io.predictions import (
    POSTERIOR_PREFIX,
    PredictionTable,
    read_predictions,
    read_predictions_frame,
)
from medeval.io.predictions import _check_subconcepts as check_subconcepts
from medeval.io.reference import reference_rows
from medeval.options import SubconceptSettings
from medeval.subconcept_model import (
    SubconceptModel,
    subconcept_classes,
    subconcept_estimator,
    train_sizes,
)
from medeval.weights import Utilities, utilities_from_train_sizes

__all__ = [
    "OwnModel",
    "SubconceptSettings",
    "evaluate_own_model",
    "fit_and_evaluate",
]

#: The note of a run with ``discover`` and REF: what its rectification can and cannot correct.
DISCOVERED_REFERENCE = (
    "the subconcepts were discovered (--discover), so the reference rows' subconcepts are the "
    "clustering's assignments, not true subtypes: the rectification corrects only the "
    "subconcept forest's disagreement with the clusters (rBA stays close to cBA by "
    "construction) and, like cBA, cannot see a failure the clusters do not separate"
)

#: :data:`~medeval.evaluation.NO_REFERENCE_NOTE` for this flow, whose REF is a table
#: with features (the subconcept model writes the posteriors).
OWN_NO_REFERENCE = NO_REFERENCE_NOTE.split(" Give reference rows")[0] + (
    " Give reference rows — held-out rows of the same population that neither your classifier "
    "nor the subconcept model was fitted on (e.g. your validation set), with the features, "
    "y_true, your classifier's y_score and/or y_pred and the true 'subconcept' — with "
    "--reference REF: the command then reports the rectified rBA / rF1 / rAUC, which correct "
    "that error, and recommends them."
)


@dataclass
class OwnModel:
    """What the flow returns: the output files (name → bytes), the evaluation, the fitted
    subconcept model and, with ``discover``, the discovery."""

    files: dict[str, bytes]
    evaluation: Evaluation
    model: SubconceptModel
    discovery: Any = None


@dataclass
class _Rows:
    """One scored table: its features and the predictions columns as given (text)."""

    table: FeatureTable
    predictions: pd.DataFrame  # non-feature columns, one row per table row, in table order
    source: Path  # the file the predictions columns were read from
    checked: PredictionTable  # the same columns checked, in table order (path: source)


def fit_and_evaluate(
    train: str | Path | pd.DataFrame,
    test: str | Path | pd.DataFrame,
    reference: str | Path | pd.DataFrame | None = None,
    *,
    predictions: str | Path | None = None,
    reference_predictions: str | Path | None = None,
    train_labels: str | Path | None = None,
    settings: SubconceptSettings | None = None,
    estimator: Any = None,
) -> OwnModel:
    """The whole flow, in memory: the subconcept model is fitted on TRAIN (or the subconcepts
    discovered per class, with ``discover``); TEST and REF gain ``q_<subconcept>`` columns, and
    those very tables are evaluated by :func:`medeval.evaluation.evaluate`, REF as the
    reference rows.

    Args:
        train, test, reference: files, or DataFrames with the same columns (read as the same
            table in a Parquet file would be; messages call them ``"train (DataFrame)"``,
            ``"test (DataFrame)"``, ``"reference (DataFrame)"``).
        predictions: the test predictions columns in a file of their own (default: in TEST).
        reference_predictions: the same for REF.
        train_labels: TRAIN's ``y_true`` and ``subconcept`` (and any other column) in a file of
            their own, joined to TRAIN's rows like the predictions (default: in TRAIN).
        estimator: an unfitted scikit-learn classifier for the subconcept model (default: the
            random forest of :class:`~medeval.subconcept_model.SubconceptModel`).

    Files: ``predictions.csv``, ``reference.csv`` (with REF), ``train_sizes.json``,
    ``subconcept_model.json``, ``discovery.json`` (with ``discover``) and the evaluation
    outputs of ``python -m medeval.evaluate`` (``metrics.json``, ``metrics.csv``,
    ``per_subconcept.csv``, ``subconcepts.png``, ``report.html``). Every input is read and
    checked before the subconcept model is fitted (or the subconcepts discovered).

    Raises:
        InputError: a bad input, naming the file, column and row where known.
    """
    s = settings or SubconceptSettings()
    tr = read_feature_table(train, s.features, name="train (DataFrame)")
    if train_labels is not None:
        labels = read_predictions_frame(train_labels)
        rest = joined_rows(tr, labels, Path(train_labels), what="labels")
        rest = agreeing(tr.rest, rest.reset_index(drop=True), tr.path, Path(train_labels))
        if tr.ids is not None:  # TRAIN's own names: the held-out check compares them
            rest["id"] = tr.ids
        tr = dataclasses.replace(tr, rest=rest)
    # Every input is checked before any model is fitted: a typo in REF shows at once.
    y = binary_column(tr, "y_true")
    for c in (0, 1):
        if (y == c).sum() == 0:
            raise InputError(tr.path, f"no row of class {c}: TRAIN needs both", column="y_true")
    if s.discover and tr.has("subconcept"):
        raise InputError(
            tr.path,
            "has a 'subconcept' column but discovery was asked for (--discover): drop one",
            column="subconcept",
        )
    names = None if s.discover else _train_subconcepts(tr, y)
    u = None if names is None else utilities_from_train_sizes(train_sizes(names, y))
    te = _scored(test, predictions, tr, u, s, role="test")
    ref = None
    if reference is not None:
        ref = _scored(reference, reference_predictions, tr, u, s, role="reference")
        no_shared_rows(te.table, ref.table, "reference", other="TEST")
    model, disc = _fit_model(tr, y, names, s, estimator)
    if ref is not None and disc is not None:  # discovered: the clustering names each REF row
        found = disc.assign(ref.table.X, ref.checked.y_true)
        ref.predictions["subconcept"] = found
        ref.checked.subconcept = pd.Categorical(np.asarray(found).astype(str))
    tables, files = _posterior_files(model, te, ref)
    ev = _evaluate(tables, model, s, ref)
    if ref is not None and disc is not None:
        ev = dataclasses.replace(ev, notes=[*ev.notes, DISCOVERED_REFERENCE])
    files["subconcept_model.json"] = json_text(_describe(model, tr, s, estimator)).encode()
    if disc is not None:
        files["discovery.json"] = json_text(disc.describe()).encode()
    files.update(_outputs(ev, tr, te, ref, s))
    return OwnModel(files, ev, model, disc)


def _fit_model(
    tr: FeatureTable, y: np.ndarray, names: np.ndarray | None, s: SubconceptSettings, estimator
) -> tuple[SubconceptModel, Any]:
    """The subconcept model fitted on TRAIN's ``names``, or on discovered ones (``None``)."""
    disc = None
    if names is None:
        disc = discover_subconcepts(tr.X, y, **s.discovery_options(), seed=s.seed)
        names = np.asarray(disc.labels).astype(str)
    if estimator is None:
        counts = pd.Series(names).value_counts()
        estimator = subconcept_estimator(
            chosen_subconcept_model(s.subconcept_model, tr.path),
            n_estimators=s.n_estimators,
            seed=s.seed,
            min_count=int(counts.min()),
        )
    model = SubconceptModel(estimator, n_estimators=s.n_estimators, random_state=s.seed)
    return model.fit(tr.X, names, y), disc


def chosen_subconcept_model(kind: str, train: Any) -> str:
    """``auto`` resolved: ``logistic`` when TRAIN is an image embedding table of a pretrained
    backbone (its ``<name>.embedding.json`` names the weights, not RANDOMLY INITIALISED: where
    it was measured better), else ``forest``; other kinds as they are."""
    if kind != "auto":
        return kind
    if isinstance(train, (str, Path)):
        from medeval.io.embeddings import table_record

        record = table_record(train)
        source = (record or {}).get("weights_source")
        if source and source != "RANDOMLY INITIALISED":
            return "logistic"
    return "forest"


def _train_subconcepts(tr: FeatureTable, y: np.ndarray) -> np.ndarray:
    """TRAIN's subconcept names, checked: one class each, two or more in class 1."""
    if not tr.has("subconcept"):
        raise InputError(
            tr.path,
            "missing column 'subconcept' (the subconcept of each training row); without "
            "subconcept labels, discover them with --discover",
            column="subconcept",
        )
    names = tr.rest["subconcept"].astype(str).to_numpy()
    empty = np.flatnonzero(np.char.str_len(names.astype(str)) == 0)
    if len(empty):
        raise InputError(tr.path, "empty subconcept", column="subconcept", row=int(empty[0]) + 1)
    try:
        sides = subconcept_classes(names, y)
    except ValueError as err:  # rows counted from 0 there, from 1 in a file
        name = next(str(n) for n in pd.unique(names) if len(set(y[names == n])) > 1)
        rows = np.flatnonzero(names == name)
        other = int(rows[np.argmax(y[rows] != y[rows[0]])])
        raise InputError(
            tr.path,
            f"subconcept {name!r} has rows of class {y[rows[0]]} (row {rows[0] + 1}) and class "
            f"{y[other]} (row {other + 1}); a subconcept belongs to one class",
            column="subconcept",
            row=other + 1,
        ) from err
    _warn_single_rows(tr.path, names, sides)
    minority = sorted(n for n, c in sides.items() if c == 1)
    if len(minority) < 2:
        raise InputError(
            tr.path,
            f"class 1 has a single subconcept {minority[0]!r}: every class-1 row then has the "
            "same utility, so the utility-weighted scores equal the unweighted ones (wBA = BA) "
            "and a subconcept model has nothing to tell apart; give two or more class-1 "
            "subconcepts, or evaluate with python -m medeval.evaluate",
            column="subconcept",
        )
    return names


def _warn_single_rows(path: Path, names: np.ndarray, sides: dict[str, int]) -> None:
    """Name each class-1 subconcept of one training row: it gets the largest utility there is."""
    found, counts = np.unique(names, return_counts=True)
    largest = max(k for n, k in zip(found, counts, strict=True) if sides[n] == 0)
    single = [repr(n) for n, k in zip(found, counts, strict=True) if k == 1 and sides[n] == 1]
    if single:
        warnings.warn(
            f"{path}: class-1 subconcept(s) {', '.join(single)} have a single training row: "
            f"utility {largest}× from one row, so their test rows dominate class 1's weighted "
            "scores; merge them with another subconcept or add training rows",
            stacklevel=4,
        )


def _scored(
    path: str | Path | pd.DataFrame,
    predictions: str | Path | None,
    tr: FeatureTable,
    utilities: Utilities | None,
    s: SubconceptSettings,
    *,
    role: str,
) -> _Rows:
    """TEST or REF: features like TRAIN's, predictions checked against the train sizes."""
    table = read_feature_table(path, tr.features, name=f"{role} (DataFrame)")
    extra = [c for c in table.rest.columns if FEATURE.match(str(c))]
    if s.features is None and extra:  # the model would silently leave them out
        raise InputError(
            table.path,
            f"has feature column {extra[0]!r} that TRAIN {tr.path} lacks ({len(tr.features)} "
            f"feature columns there, {len(tr.features) + len(extra)} here): give both the same "
            "features, or name the ones to use with --features",
            column=extra[0],
        )
    source = Path(predictions) if predictions is not None else table.path
    given = predictions if predictions is not None else path  # a file, or the caller's frame
    checked = read_predictions(given, None if s.discover else utilities, name=str(source))
    if s.discover and checked.subconcept is not None:
        raise InputError(
            source,
            "has a 'subconcept' column, but with --discover the subconcepts are the discovered "
            "ones (the reference rows get theirs from the clustering): drop the column",
            column="subconcept",
        )
    if checked.posteriors is not None:
        raise InputError(
            source,
            "already has q_ posterior columns: the subconcept model writes them (drop them)",
            column=POSTERIOR_PREFIX + str(checked.posteriors.columns[0]),
        )
    if predictions is None:
        frame = table.rest
    else:
        frame = joined_rows(table, read_predictions_frame(source), source)
        checked = _in_order(checked, frame.index.to_numpy())
        frame = agreeing(table.rest, frame.reset_index(drop=True), table.path, source)
        if checked.subconcept is None and table.has("subconcept") and not s.discover:
            frame, checked = _own_subconcepts(table, frame, checked, utilities)
    if role == "reference" and not s.discover and checked.subconcept is None:
        raise InputError(
            source,
            "reference rows need the true subconcept of each row (column 'subconcept')",
            column="subconcept",
        )
    no_shared_rows(tr, table, role)
    return _Rows(table, frame.reset_index(drop=True).copy(), source, checked)


def _own_subconcepts(
    table: FeatureTable, frame: pd.DataFrame, checked: PredictionTable, utilities: Utilities | None
) -> tuple[pd.DataFrame, PredictionTable]:
    """The table's own ``subconcept`` column joined to predictions from a file of their own."""
    names = table.rest["subconcept"].astype(str).str.strip()
    empty = np.flatnonzero((names == "").to_numpy())
    if len(empty):
        raise InputError(table.path, "missing value", column="subconcept", row=int(empty[0]) + 1)
    sc = pd.Categorical(names.to_numpy())
    if utilities is not None:
        check_subconcepts(table.path, sc, checked.y_true, utilities)
    frame = frame.assign(subconcept=table.rest["subconcept"].to_numpy())
    return frame, dataclasses.replace(checked, subconcept=sc)


def _in_order(table: PredictionTable, order: np.ndarray) -> PredictionTable:
    """``table``'s rows ``order`` ``(N,)`` (the feature table's row order)."""
    pick = [None if a is None else a[order] for a in (table.y_true, table.y_score, table.y_pred)]
    sc = None if table.subconcept is None else table.subconcept[order]
    return PredictionTable(table.path, *pick, sc, None)


def _posterior_files(
    model: SubconceptModel, te: _Rows, ref: _Rows | None
) -> tuple[dict[str, PredictionTable], dict[str, bytes]]:
    """The test (and reference) tables with the model's posteriors, and their files."""
    files = {"train_sizes.json": json_text(model.train_sizes_).encode()}
    tables = {}
    for name, rows in (("predictions.csv", te), ("reference.csv", ref)):
        if rows is None:
            continue
        out = rows.predictions.copy()
        q = model.predict_proba(rows.table.X)
        for j, sc in enumerate(model.classes_):
            out[f"{POSTERIOR_PREFIX}{sc}"] = q[:, j]
        files[name] = out.to_csv(index=False).encode()
        posteriors = pd.DataFrame(q, columns=[str(c) for c in model.classes_])
        tables[name] = dataclasses.replace(rows.checked, posteriors=posteriors)
    return tables, files


def _evaluate(
    tables: dict[str, PredictionTable],
    model: SubconceptModel,
    s: SubconceptSettings,
    ref: _Rows | None,
) -> Evaluation:
    """The evaluation of the tables, REF as the reference rows; messages name the user's files."""
    u = utilities_from_train_sizes(model.train_sizes_)
    es = EvaluateSettings(**s.evaluation_options(), device=s.device)
    rows = None
    if ref is not None:  # e.g. no reference row of a minority subconcept: naming REF's file
        source = str(ref.table.path)
        rows = reference_rows(tables["reference.csv"], u, threshold=es.threshold, source=source)
    ev = evaluate(tables["predictions.csv"], u, reference=rows, settings=es)
    notes = [OWN_NO_REFERENCE if n == NO_REFERENCE_NOTE else n for n in ev.notes]
    return dataclasses.replace(ev, notes=notes)


def _describe(
    model: SubconceptModel, tr: FeatureTable, s: SubconceptSettings, estimator: Any
) -> dict[str, Any]:
    return {
        "estimator": repr(model.estimator_),
        "subconcept_model": "given"
        if estimator is not None
        else chosen_subconcept_model(s.subconcept_model, tr.path),
        "default_forest": estimator is None
        and chosen_subconcept_model(s.subconcept_model, tr.path) == "forest",
        "train": str(tr.path),
        "rows": len(tr),
        "features": tr.features,
        "subconcepts": model.train_sizes_,
        "discovered": s.discover,
        "calibration": None,  # none within class: docs/own_model.md
    }


def _outputs(
    ev: Evaluation, tr: FeatureTable, te: _Rows, ref: _Rows | None, s: SubconceptSettings
) -> dict[str, bytes]:
    from medeval.report.outputs import output_files

    source = (
        f"train: {tr.path} ({len(tr)} rows, {len(tr.features)} features)\n"
        f"test: {te.table.path}"
        + (f" (predictions: {te.source})" if te.source != te.table.path else "")
        + (f"\nreference: {ref.table.path}" if ref is not None else "\nreference: (none)")
        + f"\nsubconcepts: {'discovered' if s.discover else 'given in TRAIN'}"
        + f"\nthreshold: {s.threshold}\nbootstrap: {s.n_bootstrap} (seed {s.seed})"
    )
    return output_files(ev, title=te.table.path.name, source=source)


def evaluate_own_model(
    train: str | Path | pd.DataFrame,
    test: str | Path | pd.DataFrame,
    reference: str | Path | pd.DataFrame | None = None,
    *,
    estimator: Any = None,
    settings: SubconceptSettings | None = None,
) -> Evaluation:
    """The :class:`~medeval.evaluation.Evaluation` of ``python -m medeval.subconcepts``, in one
    call: files or DataFrames with the columns of docs/own_model.md.

    Example::

        ev = evaluate_own_model("train.parquet", "test.csv", "validation.csv")
        ev.recommended["BA"], ev.scores["rBA"], ev.intervals["rBA"]
    """
    own = fit_and_evaluate(train, test, reference, settings=settings, estimator=estimator)
    return own.evaluation
