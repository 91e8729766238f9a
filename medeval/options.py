"""What each tool can be told, declared once: the settings of every tool, their defaults and
their allowed values.

:class:`EvaluationOptions` (threshold, bootstrap replicates, level, strata, seed) is a base of
the settings of ``evaluate``, ``subconcepts`` and ``discover``, the evaluation fields of
:class:`BenchmarkSettings` and the ``evaluation`` section of a training config;
:class:`DiscoveryOptions` are the discovery's, :class:`EmbedSettings` ``embed``'s. Each tool's
options are made from these declarations (:func:`medeval.cli.options.add_options`). Only the
standard library is imported here, so a tool's ``--help`` stays fast.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path
from typing import Any

from medeval._validation import Interval, StrOptions, TypeOf, declared

__all__ = [
    "BACKENDS",
    "CONFIDENCE",
    "CORRECTIONS",
    "DISCOVERY_METHODS",
    "FEATURES",
    "MEMORY_BUDGET",
    "N_BOOTSTRAP",
    "N_SPLITS",
    "PROTOCOL_OPTIONS",
    "REDUCERS",
    "SCHEMES",
    "SEED",
    "STRATIFY",
    "SUBCONCEPT_MODES",
    "THRESHOLD",
    "BenchmarkSettings",
    "DiscoveryOptions",
    "DiscoverySettings",
    "EmbedSettings",
    "EvaluationOptions",
    "SubconceptSettings",
]

#: Named bootstrap strata of the evaluation and the rectification (besides per-row codes).
STRATIFY = ("class", "subconcept", "none")
#: A memory budget of the bootstrap's work buffers, in bytes (its own choice by default: an
#: expert's setting of :class:`~medeval.metrics.bootstrap.BatchedBootstrap`, not a user's).
MEMORY_BUDGET = Interval(Real, 0, None, closed="neither", desc="a positive number of bytes")
#: A decision threshold on ``y_score``: any finite number (the score's own scale).
THRESHOLD = Interval(Real, -math.inf, math.inf, closed="neither", desc="a finite number")
#: An interval level.
CONFIDENCE = Interval(Real, 0, 1, closed="neither")
#: Bootstrap replicates (0 = no intervals).
N_BOOTSTRAP = Interval(Integral, 0, None)
#: Every seed a user gives (the bootstrap's, a tool's, a config's): the range NumPy's legacy
#: generators and scikit-learn's ``random_state`` take.
SEED = Interval(Integral, 0, 2**32 - 1)
#: A count of at least one (trees, dimensions, clusters, workers, ...).
COUNT = Interval(Integral, 1, None)
_BOOL = TypeOf(bool, desc="a bool")
_TEXT = TypeOf(str, desc="a str")
_PATH = TypeOf(str, Path, desc="a path")

#: How ``discover`` clusters each class, and how it reduces the features first.
DISCOVERY_METHODS = ("gmm", "kmeans")
REDUCERS = ("pca", "umap")
#: The image features ``embed`` (and a training config's ``model.features``) take.
FEATURES = ("head", "conv")
#: The benchmark's corrections of class imbalance, its splits (5 repeats × 2 folds), its
#: parallel backends and where its subconcepts come from.
CORRECTIONS = ("none", "ros", "rus", "smote", "weight")
N_SPLITS = 10
BACKENDS = ("loky", "dask")
SUBCONCEPT_MODES = ("true", "discovered")
#: How ``tasks split`` splits a data set.
SCHEMES = ("auto", "patient", "cv5x2", "presplit")


@declared(
    {
        "threshold": [THRESHOLD],
        "n_bootstrap": [N_BOOTSTRAP],
        "confidence": [CONFIDENCE],
        "stratify": [StrOptions(STRATIFY)],
        "seed": [SEED],
    }
)
@dataclass(frozen=True, kw_only=True)
class EvaluationOptions:
    """What a user sets about an evaluation (see :func:`medeval.evaluation.evaluate`).

    Attributes:
        n_bootstrap: bootstrap replicates for the intervals (0 = none).
        threshold: predicted label = ``y_score >= threshold`` where there is no ``y_pred``.
        seed: bootstrap seed.
        confidence: interval level in (0, 1).
        stratify: strata the bootstrap resamples within: ``"class"``, ``"subconcept"`` or
            ``"none"``.

    The bootstrap sizes its work from the data and the machine's free memory by itself
    (:func:`medeval.metrics.bootstrap.default_memory_budget`).
    """

    # in the order a training run's config.yaml has always listed the first three
    n_bootstrap: int = 1000
    threshold: float = 0.5
    seed: int = 0
    confidence: float = 0.95
    stratify: str = "class"

    def evaluation_options(self) -> dict[str, Any]:
        """These fields by name (of a settings object that extends this one, too)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(EvaluationOptions)}


#: The benchmark protocol's evaluation options (``python -m medeval.benchmark``'s defaults):
#: 200 replicates per fold and method at 95 %, within class, threshold 0.5. Their ``seed`` is
#: not used: each fold's bootstrap seed is derived from the protocol's
#: (:func:`medeval.splits.derive_seed`).
PROTOCOL_OPTIONS = EvaluationOptions(n_bootstrap=200)


@declared(
    {
        "method": [StrOptions(DISCOVERY_METHODS)],
        "reducer": [StrOptions(REDUCERS)],
        "n_components": [COUNT],
        "k_max": [COUNT],
        "min_cluster_size": [COUNT],
        "n_estimators": [COUNT],
    }
)
@dataclass(frozen=True, kw_only=True)
class DiscoveryOptions:
    """How each class is clustered (:func:`medeval.discovery.discover_subconcepts`, seeded with
    the evaluation's ``seed``): ``"gmm"`` (k by BIC) or ``"kmeans"`` (k by silhouette) after a
    ``"pca"`` or ``"umap"`` reduction to ``n_components`` dimensions, at most ``k_max``
    clusters of at least ``min_cluster_size`` training rows, and the ``n_estimators`` trees of
    the subconcept forest."""

    method: str = "gmm"
    reducer: str = "pca"
    n_components: int = 8
    k_max: int = 8
    min_cluster_size: int = 5
    n_estimators: int = 100

    def discovery_options(self) -> dict[str, Any]:
        """These fields by name (of a settings object that extends this one, too)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(DiscoveryOptions)}


@declared({"positive": [_TEXT, None], "n_examples": [COUNT]})
@dataclass(frozen=True, kw_only=True)
class DiscoverySettings(EvaluationOptions, DiscoveryOptions):
    """``discover``: the label of class 1 in a ``label`` column (``positive``; ``None``: the
    tables have a 0/1 ``y`` column), how to discover subconcepts (:class:`DiscoveryOptions`),
    the examples per cluster in its sheet, and the evaluation (``seed`` seeds both).
    """

    positive: str | None = None
    n_examples: int = 6


@declared(
    {
        "features": [TypeOf(tuple, desc="a tuple of column names"), None],
        "discover": [_BOOL],
        "device": [TypeOf(str, desc="a device name")],
    }
)
@dataclass(frozen=True, kw_only=True)
class SubconceptSettings(EvaluationOptions, DiscoveryOptions):
    """``subconcepts``: the feature columns (``None``: every ``f0000…`` column), whether to
    discover TRAIN's subconcepts (:class:`DiscoveryOptions`, used with ``discover`` only;
    ``n_estimators`` and ``seed`` also set the default subconcept forest), where the bootstrap
    runs, and the evaluation.
    """

    features: tuple[str, ...] | None = None
    discover: bool = False
    device: str = "cpu"


@declared(
    {
        "model": [TypeOf(str, desc="a backbone name")],
        "pretrained": [_BOOL],
        "weights": [_PATH, None],
        "features": [StrOptions(FEATURES)],
        "size": [COUNT],
        "batch_size": [COUNT],
        "workers": [Interval(Integral, 0, None)],
        "cache": [_PATH, None],
        "image_cache": [_PATH, None],
        "text_model": [_TEXT],
        "svd_components": [COUNT],
        "seed": [SEED],
    }
)
@dataclass(frozen=True)
class EmbedSettings:
    """``embed``: images through a frozen timm backbone (``model``, ImageNet weights unless
    ``pretrained`` is false or ``weights`` names a local file; ``features``: ``"head"``, its
    pooled output, or ``"conv"``, the pooled conv map; images of ``size`` pixels, ``batch_size``
    at a time, ``workers`` loader processes; the features cached under ``cache``, the decoded
    images under ``image_cache``); text through ``text_model`` (a sentence-transformers model,
    or ``"tfidf"``: TF-IDF and an SVD to ``svd_components`` dimensions); ``seed`` seeds a
    random-init backbone and the SVD.
    """

    model: str = "vgg16"
    pretrained: bool = True
    weights: str | None = None
    features: str = "head"
    size: int = 224
    batch_size: int = 32
    workers: int = 0
    cache: str | Path | None = ".medeval-cache/features"
    image_cache: str | Path | None = ".medeval-cache/images"  # decoded image files, once
    text_model: str = "all-MiniLM-L6-v2"
    svd_components: int = 256
    seed: int = 0


@declared(
    {
        "collection": [_TEXT],
        "out": [_PATH],
        "data": [_PATH, None],
        "datasets": [TypeOf(tuple, desc="a tuple of data-set names"), None],
        "methods": [TypeOf(tuple, desc="a tuple of corrections")],
        "n_estimators": [COUNT],
        "max_splits": [Interval(Integral, 1, N_SPLITS)],
        "jobs": [COUNT],
        "backend": [StrOptions(BACKENDS)],
        "scheduler": [_TEXT, None],
        "force": [_BOOL],
        "loader_options": [TypeOf(dict, desc="a dict of loader options")],
        "subconcepts": [StrOptions(SUBCONCEPT_MODES)],
        "save_predictions": [_BOOL],
        "task": [TypeOf(dict, desc="a dict (TaskSpec.to_dict())"), None],
    }
)
@dataclass(frozen=True, kw_only=True)
class BenchmarkSettings(EvaluationOptions):
    """``benchmark``: the ``collection`` (``keel``, ``pmlb`` or a folder of tables; the data
    under ``data``) and its ``datasets`` (``None``: all), the corrections ``methods`` of
    :data:`CORRECTIONS`, the forests' ``n_estimators``, the first ``max_splits`` of the
    :data:`N_SPLITS` splits, ``jobs`` workers on ``backend``, ``force`` to recompute existing
    records, the subconcepts (``"true"`` or ``"discovered"``), ``save_predictions`` for
    ``evaluate``, the user's ``task`` for every data set, and the evaluation, with the
    protocol's defaults (:data:`PROTOCOL_OPTIONS`: 200 replicates; each fold's bootstrap seed
    is derived from ``seed``, which also seeds the tasks, splits and forests).
    """

    collection: str
    out: str | Path
    data: str | Path | None = None
    datasets: tuple[str, ...] | None = None
    methods: tuple[str, ...] = CORRECTIONS
    n_estimators: int = 100
    max_splits: int = N_SPLITS
    jobs: int = 1
    backend: str = "loky"
    scheduler: str | None = None
    force: bool = False
    loader_options: dict = field(default_factory=dict)
    subconcepts: str = "true"  # or "discovered" (medeval.protocol.discovered)
    save_predictions: bool = False  # each fold's files for evaluate (medeval.protocol.saved)
    task: dict | None = None  # the user's task for every data set (TaskSpec.to_dict())
    n_bootstrap: int = PROTOCOL_OPTIONS.n_bootstrap

    def evaluation(self) -> EvaluationOptions:
        """The evaluation's options of every fold (the seed: derived per fold)."""
        return EvaluationOptions(
            **{k: v for k, v in self.evaluation_options().items() if k != "seed"}
        )


@declared(
    {
        "budget": [COUNT],
        "seed": [SEED],
        "confidence": [CONFIDENCE],
        "threshold": [THRESHOLD],
    }
)
@dataclass(frozen=True, kw_only=True)
class LabelSettings:
    """``label``: the size of the next batch of test rows to label (``budget``), the ``seed``
    of its draw (the batch number is mixed in), the level of the verdicts it aims at and the
    decision ``threshold`` on ``y_score``.
    """

    budget: int = 20
    seed: int = 0
    confidence: float = 0.95
    threshold: float = 0.5
