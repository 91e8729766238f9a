"""One fold of the random-forest protocol with *discovered* subconcepts: :func:`label_free_fold`
never receives the true subconcepts; :func:`run_fold_discovered` reads them afterwards only to
score the result. Records: :func:`medeval.protocol.forest.run_fold`'s plus ``"discovery"``."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medeval.discovery import Discovery, discover_subconcepts, discovery_quality
from medeval.evaluation import evaluate
from medeval.evaluation.core import STATED
from medeval.evaluation.quality import within_class_balanced_accuracy
from medeval.io.predictions import PredictionTable
from medeval.options import EvaluationOptions
from medeval.protocol.forest import (
    PROTOCOL_OPTIONS,
    SUBSET_FIELDS,
    _fit_binary,
    derive_seed,
    fold_record,
    fold_settings,
    fold_start,
    fold_subconcepts,
    subconcept_model_scores,
)
from medeval.scores import (
    LABEL_FREE_SCORES,
    REFERENCE_SCORES,
    TRUE_ONLY_SCORES,
    labels_from_scores,
)
from medeval.splits import Split
from medeval.tasks import BinaryTask
from medeval.weights import predicted_weights, train_utilities, utilities_from_train_sizes

__all__ = ["LabelFreeFold", "label_free_fold", "label_free_scores", "run_fold_discovered"]

#: The label-free scores of this path: the rectified ones are not computed here.
DISCOVERED_SCORES = tuple(s for s in LABEL_FREE_SCORES if s not in REFERENCE_SCORES)
#: Why the records of this path carry no rectified scores (their ``"reference"`` entry).
NO_RECTIFIED = (
    "discovered subconcepts: out-of-bag reference rows would carry discovered clusters, not true "
    "subconcepts, so their correction would target the discovered-utility score, not the "
    "true-weight one; the rectified scores are not computed on this path"
)


@dataclass
class LabelFreeFold:
    """What the discovered pipeline computes without the true subconcepts.

    Attributes:
        discovery: the per-class clusterings and the subconcept forest (training fold).
        posteriors: ``(N_test, S)`` subconcept-forest posteriors over the discovered clusters.
        scores: ``{method: (N_test,)}`` class-1 scores of each correction's binary forest.
        fit_s: ``{method: seconds}``; ``discovery_s`` the discovery and forest time.
    """

    discovery: Discovery
    posteriors: pd.DataFrame
    scores: dict[str, np.ndarray]
    fit_s: dict[str, float]
    discovery_s: float


def label_free_fold(
    task: BinaryTask,
    train: np.ndarray,
    test: np.ndarray,
    methods: list[str] | tuple[str, ...],
    *,
    seed: int,
    k: int,
    n_estimators: int,
    discovery: dict[str, Any] | None = None,
) -> LabelFreeFold:
    """Discovery, subconcept forest and binary forests of one fold; reads only X and y.

    ``discovery`` holds options for :func:`~medeval.discovery.discover_subconcepts` (method,
    reducer, n_components, k_max, min_cluster_size).
    """
    X, y = task.data.X, task.y
    t0 = time.perf_counter()
    disc = discover_subconcepts(
        X[train],
        y[train],
        n_estimators=n_estimators,
        seed=derive_seed(seed, task.name, k, "discovery"),
        **(discovery or {}),
    )
    posteriors = disc.predict_proba(X[test])
    t_disc = time.perf_counter() - t0
    scores, fit_s = {}, {}
    for method in methods:
        tf = time.perf_counter()
        scores[method], _, _ = _fit_binary(
            task,
            train,
            test,
            method,
            seed=derive_seed(seed, task.name, k, method),
            n_estimators=n_estimators,
            oob=False,
        )
        fit_s[method] = time.perf_counter() - tf
    return LabelFreeFold(disc, posteriors, scores, fit_s, t_disc)


def label_free_scores(
    y: np.ndarray,
    score: np.ndarray,
    posteriors: pd.DataFrame,
    train_sizes: dict,
    *,
    n_bootstrap: int = 0,
    seed: int = 0,
    options: EvaluationOptions = PROTOCOL_OPTIONS,
) -> tuple[dict[str, float], dict[str, list[float | None]]]:
    """Every label-free score (and its interval) from discovered posteriors and sizes.

    Args:
        y: ``(N,)`` test classes; score: ``(N,)`` class-1 scores (label = score >=
            ``options.threshold``).
        posteriors: ``(N, S)`` over the discovered subconcepts; train_sizes: their sizes.
        options: the evaluation's other options (level, strata, memory budget).

    Returns:
        ``{score: value}`` and ``{score: [low, high]}`` (empty without bootstrap) for
        :data:`DISCOVERED_SCORES`.
    """
    settings = fold_settings(options, seed=seed, n_bootstrap=n_bootstrap)
    table = PredictionTable(
        Path("test fold (discovered subconcepts)"),
        y,
        score,
        labels_from_scores(score, settings.threshold),
        None,
        posteriors,
    )
    u = utilities_from_train_sizes(train_sizes)
    ev = evaluate(table, u, settings=settings)
    scores = {s: ev.scores[s] for s in DISCOVERED_SCORES}
    intervals = {s: list(ev.intervals[s]) for s in DISCOVERED_SCORES if s in ev.intervals}
    return scores, intervals


def run_fold_discovered(
    task: BinaryTask,
    split: Split,
    methods: list[str] | tuple[str, ...],
    *,
    seed: int,
    n_estimators: int = 100,
    split_index: int | None = None,
    discovery: dict[str, Any] | None = None,
    options: EvaluationOptions = PROTOCOL_OPTIONS,
) -> list[dict[str, Any]]:
    """One 5×2 fold with discovered subconcepts; one JSON-ready record per method.

    Arguments as :func:`medeval.protocol.forest.run_fold`; ``discovery`` holds options for
    :func:`~medeval.discovery.discover_subconcepts`; ``options.n_bootstrap`` replicates give the
    ``options.confidence`` intervals of the full-test scores (``"intervals": {score: [low,
    high]}``; 0 = none).
    """
    methods, k = fold_start(task, split, methods, split_index)
    train, test = split["train"], split["test"]
    free = label_free_fold(
        task, train, test, methods, seed=seed, k=k, n_estimators=n_estimators, discovery=discovery
    )
    # From here on the true subconcepts are read, only to score what was computed above.
    tm = time.perf_counter()
    truth = _truth_of_fold(task, train, test, free)
    t_shared = time.perf_counter() - tm
    records = []
    for method in methods:
        tm = time.perf_counter()
        boot_seed = derive_seed(seed, task.name, k, method, "bootstrap")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = _score_method(
                task.y[test], free.scores[method], free, truth, options, boot_seed
            )
        timing = {
            "fit_s": free.fit_s[method],
            "shared_s": (free.discovery_s + t_shared) / len(methods),
            "metrics_s": time.perf_counter() - tm,
        }
        stated_last = sorted(caught, key=lambda w: issubclass(w.category, STATED))
        notes = [str(w.message) for w in stated_last]  # a record's notes
        disc = {**free.discovery.describe(), "quality": truth["quality"]}
        run = {"seed": seed, "n_estimators": n_estimators, "discovery": disc, "notes": notes}
        records.append(fold_record(task, split, k, method, results=results, timing=timing, **run))
    return records


def _truth_of_fold(
    task: BinaryTask, train: np.ndarray, test: np.ndarray, free: LabelFreeFold
) -> dict[str, Any]:
    """What every method of the fold is scored against (truth, discovery quality, weights)."""
    disc = free.discovery
    names = np.asarray(task.subconcept_names, dtype=object)
    quality = discovery_quality(task.y[train], names[task.subconcept[train]], disc.labels)
    found_test = disc.assign(task.data.X[test], task.y[test])
    sc_scores = subconcept_model_scores(
        np.array([disc.names.index(s) for s in found_test]), free.posteriors.to_numpy()
    )
    disc_u = utilities_from_train_sizes(disc.train_sizes)
    # Against the discovered clusters of the test fold, as the subconcept_model scores above.
    within = within_class_balanced_accuracy(task.y[test], found_test, free.posteriors, disc_u)
    return {
        "utilities": train_utilities(task, train),
        "test_names": names[task.subconcept[test]],
        "test_subconcept": fold_subconcepts(task.subconcept[test], task.subconcept_names),
        "quality": quality,
        "subconcept_model": sc_scores,
        "within_class": within,
        "predicted_weights": predicted_weights(free.posteriors, disc_u).numpy(),
    }


def _score_method(
    y_te: np.ndarray,
    score: np.ndarray,
    free: LabelFreeFold,
    truth: dict[str, Any],
    options: EvaluationOptions,
    seed: int,
) -> dict[str, Any]:
    """One method's scores, intervals and tables (true-weight ones from the truth)."""
    settings = fold_settings(options, seed=seed)
    test_names = truth["test_names"]
    y_pred = labels_from_scores(score, settings.threshold)
    n_bootstrap = settings.n_bootstrap
    where = Path("test fold (true subconcepts)")
    table = PredictionTable(where, y_te, score, y_pred, truth["test_subconcept"], None)
    ev_true = evaluate(table, truth["utilities"], settings=settings)
    # the full test fold, then majority ∪ each true minority subconcept (docs/method.md)
    masks: dict[str | None, np.ndarray] = {None: np.ones(len(y_te), dtype=bool)}
    for sc in ev_true.subsets.subconcept.dropna().unique():
        masks[sc] = (y_te == 0) | (test_names == sc)
    free_scores: dict[str | None, dict[str, float]] = {}
    for key, m in masks.items():
        full = key is None
        free_scores[key], iv = label_free_scores(
            y_te[m],
            score[m],
            free.posteriors[m].reset_index(drop=True),
            free.discovery.train_sizes,
            n_bootstrap=n_bootstrap if full else 0,
            seed=seed,
            options=options,
        )
        if full:  # without replicates (--bootstrap 0) there are no intervals
            true_iv = {s: list(ev_true.intervals[s]) for s in TRUE_ONLY_SCORES if n_bootstrap}
            intervals = {**true_iv, **iv} if n_bootstrap else {}
    # long subset table: true-weight rows from the truth, every other score label-free
    cols = list(SUBSET_FIELDS)
    keep = ev_true.subsets.loc[ev_true.subsets.score.isin(TRUE_ONLY_SCORES), cols]
    aliases = ev_true.subsets.drop_duplicates("subset")[["subset", "subconcept"]]
    rows = [
        (alias, sc, name, value)
        for alias, sc in aliases.itertuples(index=False)
        for name, value in free_scores[None if pd.isna(sc) else sc].items()
    ]
    per_sc = ev_true.per_subconcept.copy()
    a = truth["predicted_weights"]
    per_sc["predicted_weight_sum"] = [float(a[test_names == s].sum()) for s in per_sc.subconcept]
    return {
        "scores": {
            **{s: ev_true.scores[s] for s in TRUE_ONLY_SCORES},
            **free_scores[None],
            **dict.fromkeys(REFERENCE_SCORES, float("nan")),
        },
        "intervals": intervals,
        "confidence": ev_true.confidence,
        "n_bootstrap": n_bootstrap,
        "subsets": pd.concat([keep, pd.DataFrame(rows, columns=cols)], ignore_index=True),
        "per_subconcept": per_sc,
        "subconcept_model": truth["subconcept_model"],
        "within_class": truth["within_class"],
        "reference": {"source": None, "n": 0, "unavailable": NO_RECTIFIED},
    }
