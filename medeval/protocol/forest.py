"""One fold of the random-forest protocol (docs/method.md, "Protocols"): one subconcept forest
shared by every correction method, one binary forest per method; reference rows out of bag
(:mod:`medeval.protocol.oob`) or cross-fitted (:mod:`medeval.protocol.crossfit`)."""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata
from sklearn.ensemble import RandomForestClassifier

from medeval.errors import UserError
from medeval.evaluation import EvaluateSettings, Evaluation, evaluate
from medeval.evaluation.subconcept_recall import PER_SUBCONCEPT_COLUMNS
from medeval.io.atomic import json_ready
from medeval.io.predictions import PredictionTable
from medeval.io.reference import ReferenceDataError, ReferenceRows, absent_minority
from medeval.metrics.multiclass import confusion, macro_balanced_accuracy, macro_f1
from medeval.options import CORRECTIONS, PROTOCOL_OPTIONS, EvaluationOptions
from medeval.protocol.crossfit import CROSS_FIT, FOLDS, cross_fit_scores, trees_per_fold
from medeval.protocol.oob import ReferenceRows as OobRows
from medeval.protocol.oob import (
    class_score,
    forest_oob,
    full_posteriors,
    reference_rows,
    resample_with_origin,
)
from medeval.protocol.saved import save_fold
from medeval.scores import ALL_SCORES, RECOMMENDED
from medeval.splits import Split, derive_seed
from medeval.subconcept_model import subconcept_forest
from medeval.tasks import BinaryTask
from medeval.weights import train_utilities

__all__ = ["METHODS", "derive_seed", "fold_record", "run_fold"]

#: Correction methods: none, random over-/under-sampling, SMOTE, cost-sensitive forest
#: (declared with the benchmark's settings, :class:`medeval.options.BenchmarkSettings`).
METHODS = CORRECTIONS


#: The forest's predicted label by default: class 1 where its score >= THRESHOLD.
THRESHOLD = PROTOCOL_OPTIONS.threshold

#: Columns of a record's long subsets table.
SUBSET_FIELDS = ("subset", "subconcept", "score", "value")

#: Bootstrap replicates per fold for the intervals of every score on the full test fold
#: (default; the benchmark's --bootstrap).
N_BOOTSTRAP = PROTOCOL_OPTIONS.n_bootstrap


def fold_settings(
    options: EvaluationOptions, *, seed: int, n_bootstrap: int | None = None
) -> EvaluateSettings:
    """A fold's evaluation settings: the run's ``options`` with the fold's derived ``seed``
    (and ``n_bootstrap`` where the caller needs none or other replicates)."""
    given = options.evaluation_options() | {"seed": seed}
    if n_bootstrap is not None:
        given["n_bootstrap"] = n_bootstrap
    return EvaluateSettings(**given)


#: Where a record's reference rows come from: out of bag, or cross-fitted for the corrections
#: in :data:`~medeval.protocol.crossfit.CROSS_FIT`; and what "out of bag" means under each method.
REFERENCE_SOURCE = "out-of-bag"
CROSS_FIT_SOURCE = "cross-fitted"
CROSS_FITTED = (
    f"{FOLDS}-fold cross-fitting of the binary forest: each training row scored by a forest with "
    f"the same correction and 1/{FOLDS} of its trees, fitted on the other fold(s); subconcept "
    "posteriors out of bag"
)
OUT_OF_BAG = {
    "none": "trees that did not draw the row",
    "weight": "trees that did not draw the row",
    "ros": "trees that drew no copy of the row (rows copied into every tree are dropped)",
    "rus": "trees that did not draw the row (rows the undersampler dropped: every tree)",
    "smote": "trees that did not draw the row; SMOTE's synthetic points are linked to no row "
    "(a measured leak that leaves cBA − wBA unbiased)",
}


def check_methods(methods: list[str] | tuple[str, ...]) -> list[str]:
    """Validate method names; keep the given order, drop duplicates."""
    if not methods:
        raise UserError(f"no method named; choose from {', '.join(METHODS)}")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise UserError(f"unknown method(s) {unknown}; choose from {', '.join(METHODS)}")
    return list(dict.fromkeys(methods))


def _forest(n_estimators: int, seed: int, **kwargs: Any) -> RandomForestClassifier:
    # n_jobs=1: parallelism comes from the grid, not from the trees.
    return RandomForestClassifier(n_estimators=n_estimators, random_state=seed, n_jobs=1, **kwargs)


def subconcept_model_scores(codes: np.ndarray, proba: np.ndarray) -> dict[str, float]:
    """Subconcept model on the test fold: one-vs-rest macro ROC AUC, BA, macro F1, equal to
    scikit-learn's ``roc_auc_score(multi_class="ovr", average="macro")``,
    ``balanced_accuracy_score`` and ``f1_score(average="macro")``.

    Args:
        codes: (N,) true subconcept codes 0..K-1.
        proba: (N, K) posteriors, column k = code k.
    """
    k = proba.shape[1]
    pred = proba.argmax(axis=1)
    cm = confusion(codes, pred, k)
    present = cm.sum(1) > 0
    ba, f1 = macro_balanced_accuracy(cm), macro_f1(cm)
    cols = np.flatnonzero(present)
    if len(cols) < 2:
        return {"auc_ovr_macro": math.nan, "balanced_accuracy": ba, "f1_macro": f1}
    q = proba[:, cols]
    if len(cols) < k:  # sklearn scores only the labels present, renormalised
        q = q / q.sum(1, keepdims=True).clip(1e-12)
    aucs = []
    for j, c in enumerate(cols):
        pos = codes == c
        n1, n0 = int(pos.sum()), int((~pos).sum())
        ranks = rankdata(q[:, j])  # average ranks: ties count ½
        aucs.append((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))
    if len(cols) == 2:  # binary: sklearn's single AUC of the second label
        aucs = aucs[1:]
    return {"auc_ovr_macro": float(np.mean(aucs)), "balanced_accuracy": ba, "f1_macro": f1}


def _fit_binary(
    task: BinaryTask,
    train: np.ndarray,
    test: np.ndarray,
    method: str,
    *,
    seed: int,
    n_estimators: int,
    oob: bool = True,
) -> tuple[np.ndarray, np.ndarray | None, str | None]:
    """Binary forest's class-1 test scores, reference-row scores (or ``None``) and their source."""
    X, y = task.data.X, task.y
    Xtr, ytr, origin = resample_with_origin(X[train], y[train], method, seed)
    extra = {"class_weight": "balanced"} if method == "weight" else {}
    rf = _forest(n_estimators, seed, **extra).fit(Xtr, ytr)
    if not oob:
        return class_score(rf.predict_proba(X[test]), rf.classes_), None, None
    if method in CROSS_FIT:
        score = class_score(rf.predict_proba(X[test]), rf.classes_)
        held_out = cross_fit_scores(
            X[train], y[train], task.subconcept[train], method, seed=seed,
            make_forest=lambda s: _forest(trees_per_fold(n_estimators), s, **extra),
            groups=task.groups[train] if task.has_groups else None,
        )  # fmt: skip
        if held_out is not None:
            return score, held_out, CROSS_FIT_SOURCE
    out = forest_oob(rf, X[train], origin, X_test=X[test])
    test_score = class_score(out.test_proba, rf.classes_)
    return test_score, class_score(out.proba, rf.classes_), REFERENCE_SOURCE


def run_fold(
    task: BinaryTask,
    split: Split,
    methods: list[str] | tuple[str, ...],
    *,
    seed: int,
    n_estimators: int = 100,
    split_index: int | None = None,
    options: EvaluationOptions = PROTOCOL_OPTIONS,
    save_predictions: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Fit and evaluate one 5×2 fold under every method (docs/method.md, "Protocols", "Evaluation
    subsets and analyses").

    Args:
        task: binary task with tabular features ``task.data.X`` (N, F).
        split: parts ``train`` / ``test`` (row positions into the task).
        methods: subset of :data:`METHODS`.
        seed: base seed; every forest, sampler and bootstrap gets a seed derived from (seed,
            data set, fold, role), so results do not depend on which methods run together.
        split_index: position 0..9 of the split (default ``2·repeat + fold``).
        options: the evaluation's options (default :data:`PROTOCOL_OPTIONS`); its ``seed`` is
            not used.
        save_predictions: a results folder; each method's fold is written under its
            ``predictions/`` (:mod:`medeval.protocol.saved`) before the record is returned.

    Returns:
        One JSON-ready record per method: scores, intervals, subsets (long), per-subconcept
        rows, subconcept-model scores, the reference rows' description and timings.
    """
    methods, k = fold_start(task, split, methods, split_index)
    shared = _shared_fold(task, split, k, seed=seed, n_estimators=n_estimators)
    records = []
    for method in methods:  # the shared time split evenly over the methods
        tf = time.perf_counter()
        method_seed = derive_seed(seed, task.name, k, method)
        score, oob_score, how = _fit_binary(
            task, split["train"], split["test"], method, seed=method_seed, n_estimators=n_estimators
        )
        t_fit = time.perf_counter() - tf
        tm = time.perf_counter()
        boot_seed = derive_seed(seed, task.name, k, method, "bootstrap")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kept = oob_rows(task, split["train"], shared, oob_score, threshold=options.threshold)
            reference, ref_info = fold_reference(
                task, split["train"], shared, oob_score, method, rows=kept, source=how,
                threshold=options.threshold,
            )  # fmt: skip
            where = Path(f"{task.source}/{task.name} (test fold)")
            y, posteriors = task.y[split["test"]], shared["posteriors"]
            table = PredictionTable(where, y, score, None, shared["test_subconcept"], posteriors)
            settings = fold_settings(options, seed=boot_seed)
            ev = evaluate(table, shared["utilities"], reference=reference, settings=settings)
        if save_predictions is not None:
            fold = (save_predictions, task, split, k, method, shared, score)
            save_fold(*fold, reference=kept if reference is not None else None, settings=settings)
        timing = {
            "fit_s": t_fit,
            "shared_s": shared["fit_s"] / len(methods),
            "metrics_s": time.perf_counter() - tm + shared["metrics_s"] / len(methods),
        }
        results = _results(ev, shared["scores"], ref_info)
        notes = [str(w.message) for w in caught]
        run = {"results": results, "notes": notes, "timing": timing}
        records.append(
            fold_record(task, split, k, method, seed=seed, n_estimators=n_estimators, **run)
        )
    return records


def _results(ev: Evaluation, subconcept_model: dict, reference: dict) -> dict[str, Any]:
    """The ``results`` of :func:`fold_record` from one method's evaluation on the fold."""
    return {
        "scores": {s: ev.scores.get(s, math.nan) for s in ALL_SCORES},
        "intervals": {s: list(ev.intervals[s]) for s in ALL_SCORES if s in ev.intervals},
        "confidence": ev.confidence,
        "n_bootstrap": ev.bootstrap["n"],
        "subsets": ev.subsets,
        "per_subconcept": ev.per_subconcept,
        "subconcept_model": subconcept_model,
        "within_class": ev.subconcept_model,
        "recommended": ev.recommended,
        "reference": reference,
        "worst_subconcepts": ev.worst_subconcepts,
    }


def fold_start(
    task: BinaryTask, split: Split, methods: Sequence[str], split_index: int | None
) -> tuple[list[str], int]:
    """A fold's checked methods and its position 0..9 (default ``2·repeat + fold``)."""
    methods = check_methods(methods)
    if task.data.X is None:
        raise ValueError(f"{task.source}/{task.name}: the forest protocol needs tabular features")
    return methods, split_index if split_index is not None else 2 * split.repeat + split.fold


def oob_rows(
    task: BinaryTask,
    train: np.ndarray,
    shared: dict[str, Any],
    oob_score: np.ndarray,
    *,
    threshold: float = THRESHOLD,
) -> OobRows:
    """The training rows that both forests scored out of bag (``oob_score``: ``(N_train,)``
    class-1 scores of the binary forest, NaN = none), labelled with the evaluation's
    ``threshold``."""
    return reference_rows(
        task.y[train],
        oob_score,
        shared["train_names"],
        shared["oob_posteriors"],
        list(task.subconcept_names),
        threshold=threshold,
    )


def fold_reference(
    task: BinaryTask,
    train: np.ndarray,
    shared: dict[str, Any],
    oob_score: np.ndarray,
    method: str,
    rows: OobRows | None = None,
    source: str = REFERENCE_SOURCE,
    threshold: float = THRESHOLD,
) -> tuple[ReferenceRows | None, dict[str, Any]]:
    """The fold's reference rows for one method, checked against the training utilities, and
    the record's ``"reference"`` entry (``"unavailable"`` with the reason where the rows cannot
    be used: the rectified scores are then null).

    Args:
        oob_score: ``(N_train,)`` out-of-bag or cross-fitted class-1 scores (NaN = none).
        rows: :func:`oob_rows` of these, where the caller has them already.
        source: :data:`REFERENCE_SOURCE` or :data:`CROSS_FIT_SOURCE`.
    """
    if rows is None:
        rows = oob_rows(task, train, shared, oob_score, threshold=threshold)
    info: dict[str, Any] = {
        "source": source,
        "n": len(rows.rows),
        "n_dropped": dict(rows.n_dropped),
        "dropped_by_subconcept": dict(rows.dropped_by_subconcept),
        "out_of_bag": CROSS_FITTED if source == CROSS_FIT_SOURCE else OUT_OF_BAG[method],
    }
    try:
        ref = ReferenceRows.from_arrays(
            shared["utilities"],
            y_true=rows.y_true,
            subconcept=rows.subconcept,
            posteriors=rows.posteriors,
            posterior_columns=rows.names,
            y_pred=rows.y_pred,
            y_score=rows.y_score,
            threshold=threshold,
            source=source,
        )
    except ReferenceDataError as e:
        info["n"] = 0
        info["unavailable"] = str(e)
        return None, info
    if absent := absent_minority(ref, shared["utilities"]):  # the record's rectified scores
        info["n"] = 0
        info["unavailable"] = absent
        return None, info
    return ref, info


def _shared_fold(
    task: BinaryTask, split: Split, k: int, *, seed: int, n_estimators: int
) -> dict[str, Any]:
    """What every method of a fold shares: utilities, subconcept posteriors, scores, timings."""
    train, test = split["train"], split["test"]
    t0 = time.perf_counter()
    names = task.subconcept_names
    u = train_utilities(task, train)
    X, n_codes = task.data.X, len(task.subconcepts)
    rf = subconcept_forest(n_estimators, derive_seed(seed, task.name, k, "subconcept"))
    rf.fit(X[train], task.subconcept[train])
    out = forest_oob(rf, X[train], X_test=X[test])
    proba = full_posteriors(out.test_proba, rf.classes_, n_codes)
    oob_proba = full_posteriors(out.proba, rf.classes_, n_codes)
    fit_s = time.perf_counter() - t0
    tm = time.perf_counter()
    scores = subconcept_model_scores(task.subconcept[test], proba)
    return {
        "utilities": u,
        "posteriors": pd.DataFrame(proba, columns=names),
        "test_names": np.asarray(names, dtype=object)[task.subconcept[test]],
        "test_subconcept": fold_subconcepts(task.subconcept[test], names),
        "oob_posteriors": oob_proba,
        "train_names": np.asarray(names, dtype=object)[task.subconcept[train]],
        "scores": scores,
        "fit_s": fit_s,
        "metrics_s": time.perf_counter() - tm,
    }


def fold_subconcepts(codes: np.ndarray, names: Sequence[str]) -> pd.Categorical:
    """``(N,)`` subconcept codes as the table's categorical, made once per fold."""
    return pd.Categorical.from_codes(codes, categories=pd.Index(list(names), dtype=object))


def fold_record(
    task: BinaryTask,
    split: Split,
    k: int,
    method: str,
    *,
    seed: int,
    n_estimators: int,
    results: dict[str, Any],
    notes: list[str],
    timing: dict[str, float],
    discovery: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON-ready record of one method on one fold, for true and discovered subconcepts.

    Args:
        k: position of the split (0..9).
        results: ``scores``, ``intervals``, ``confidence``, ``n_bootstrap``, the ``subsets``
            and ``per_subconcept`` DataFrames, ``subconcept_model`` and ``within_class``;
            optionally ``recommended`` (default :data:`~medeval.scores.RECOMMENDED`),
            ``reference`` and ``worst_subconcepts``.
        notes: the warnings of the evaluation, as text.
        discovery: the discovered path's clustering description and quality.
    """
    head: dict[str, Any] = {"dataset": task.name, "source": task.source, "method": method}
    if discovery is not None:
        head["subconcepts"] = "discovered"
    head |= {
        "split": int(k),
        "repeat": int(split.repeat),
        "fold": int(split.fold),
        "seed": int(seed),
        "task_seed": int(task.seed),
        "split_seed": int(split.seed),
        "n_estimators": int(n_estimators),
        "n_train": len(split["train"]),
        "n_test": len(split["test"]),
        "scores": results["scores"],
        "intervals": results["intervals"],
        "confidence": results["confidence"],
        "n_bootstrap": int(results["n_bootstrap"]),
        "recommended": dict(results.get("recommended") or RECOMMENDED),
    }
    within = {"subconcept_model_within_class": results["within_class"]}
    tables = {
        "subsets": results["subsets"][list(SUBSET_FIELDS)].to_dict(orient="records"),
        "per_subconcept": results["per_subconcept"][list(PER_SUBCONCEPT_COLUMNS)].to_dict(
            orient="records"
        ),
        "subconcept_model": results["subconcept_model"],
    }
    # each kind keeps its records' key order
    if discovery is None:
        body = {**within, **tables}
    else:
        body = {**tables, **within, "discovery": discovery}
    if results.get("reference") is not None:
        body["reference"] = results["reference"]
    if results.get("worst_subconcepts") is not None:
        body["worst_subconcepts"] = results["worst_subconcepts"]
    return json_ready({**head, **body, "notes": notes, "timing": timing})
