"""What each tool can be told, declared once: every tool's settings, each field's default and
allowed values (in its metadata), from which the tools' options are made
(:func:`medeval.cli.options.add_options`). Only the standard library is imported here."""

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


def _allows(*allowed: Any) -> dict[str, list[Any]]:
    """A field's metadata: the values it allows (:func:`_declared` checks them)."""
    return {"allowed": list(allowed)}


def _declared(cls: type) -> type:
    """``cls`` with each field checked against its allowed values when an instance is made."""
    fields = dataclasses.fields(cls)
    return declared({f.name: f.metadata["allowed"] for f in fields if "allowed" in f.metadata})(cls)


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


@_declared
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
    n_bootstrap: int = field(default=1000, metadata=_allows(N_BOOTSTRAP))
    threshold: float = field(default=0.5, metadata=_allows(THRESHOLD))
    seed: int = field(default=0, metadata=_allows(SEED))
    confidence: float = field(default=0.95, metadata=_allows(CONFIDENCE))
    stratify: str = field(default="class", metadata=_allows(StrOptions(STRATIFY)))

    def evaluation_options(self) -> dict[str, Any]:
        """These fields by name (of a settings object that extends this one, too)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(EvaluationOptions)}


#: The benchmark protocol's evaluation options (``python -m medeval.benchmark``'s defaults); their
#: ``seed`` is not used: each fold's is derived (:func:`medeval.splits.derive_seed`).
PROTOCOL_OPTIONS = EvaluationOptions(n_bootstrap=200)


@_declared
@dataclass(frozen=True, kw_only=True)
class DiscoveryOptions:
    """How each class is clustered (:func:`medeval.discovery.discover_subconcepts`, seeded with
    the evaluation's ``seed``): ``"gmm"`` (k by BIC) or ``"kmeans"`` (k by silhouette) after a
    ``"pca"`` or ``"umap"`` reduction to ``n_components`` dimensions, at most ``k_max``
    clusters of at least ``min_cluster_size`` training rows, and the ``n_estimators`` trees of
    the subconcept forest."""

    method: str = field(default="gmm", metadata=_allows(StrOptions(DISCOVERY_METHODS)))
    reducer: str = field(default="pca", metadata=_allows(StrOptions(REDUCERS)))
    n_components: int = field(default=8, metadata=_allows(COUNT))
    k_max: int = field(default=8, metadata=_allows(COUNT))
    min_cluster_size: int = field(default=5, metadata=_allows(COUNT))
    n_estimators: int = field(default=100, metadata=_allows(COUNT))

    def discovery_options(self) -> dict[str, Any]:
        """These fields by name (of a settings object that extends this one, too)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(DiscoveryOptions)}


@_declared
@dataclass(frozen=True, kw_only=True)
class DiscoverySettings(EvaluationOptions, DiscoveryOptions):
    """``discover``: the label of class 1 in a ``label`` column (``positive``; ``None``: the
    tables have a 0/1 ``y`` column), how to discover subconcepts (:class:`DiscoveryOptions`),
    the examples per cluster in its sheet, and the evaluation (``seed`` seeds both).
    """

    positive: str | None = field(default=None, metadata=_allows(_TEXT, None))
    n_examples: int = field(default=6, metadata=_allows(COUNT))


@_declared
@dataclass(frozen=True, kw_only=True)
class SubconceptSettings(EvaluationOptions, DiscoveryOptions):
    """``subconcepts``: the feature columns (``None``: every ``f0000…`` column), whether to
    discover TRAIN's subconcepts (:class:`DiscoveryOptions`, used with ``discover`` only;
    ``n_estimators`` and ``seed`` also set the default subconcept forest), where the bootstrap
    runs, and the evaluation.
    """

    features: tuple[str, ...] | None = field(
        default=None, metadata=_allows(TypeOf(tuple, desc="a tuple of column names"), None)
    )
    discover: bool = field(default=False, metadata=_allows(_BOOL))
    device: str = field(default="cpu", metadata=_allows(TypeOf(str, desc="a device name")))
    subconcept_model: str = field(
        default="auto", metadata=_allows(StrOptions(("auto", "forest", "logistic")))
    )


@_declared
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

    model: str = field(default="vgg16", metadata=_allows(TypeOf(str, desc="a backbone name")))
    pretrained: bool = field(default=True, metadata=_allows(_BOOL))
    weights: str | None = field(default=None, metadata=_allows(_PATH, None))
    features: str = field(default="head", metadata=_allows(StrOptions(FEATURES)))
    size: int = field(default=224, metadata=_allows(COUNT))
    batch_size: int = field(default=32, metadata=_allows(COUNT))
    workers: int = field(default=0, metadata=_allows(Interval(Integral, 0, None)))
    cache: str | Path | None = field(
        default=".medeval-cache/features", metadata=_allows(_PATH, None)
    )
    image_cache: str | Path | None = field(
        default=".medeval-cache/images", metadata=_allows(_PATH, None)
    )
    text_model: str = field(default="all-MiniLM-L6-v2", metadata=_allows(_TEXT))
    svd_components: int = field(default=256, metadata=_allows(COUNT))
    seed: int = field(default=0, metadata=_allows(SEED))


@_declared
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

    collection: str = field(metadata=_allows(_TEXT))
    out: str | Path = field(metadata=_allows(_PATH))
    data: str | Path | None = field(default=None, metadata=_allows(_PATH, None))
    datasets: tuple[str, ...] | None = field(
        default=None, metadata=_allows(TypeOf(tuple, desc="a tuple of data-set names"), None)
    )
    methods: tuple[str, ...] = field(
        default=CORRECTIONS, metadata=_allows(TypeOf(tuple, desc="a tuple of corrections"))
    )
    n_estimators: int = field(default=100, metadata=_allows(COUNT))
    max_splits: int = field(default=N_SPLITS, metadata=_allows(Interval(Integral, 1, N_SPLITS)))
    jobs: int = field(default=1, metadata=_allows(COUNT))
    backend: str = field(default="loky", metadata=_allows(StrOptions(BACKENDS)))
    scheduler: str | None = field(default=None, metadata=_allows(_TEXT, None))
    force: bool = field(default=False, metadata=_allows(_BOOL))
    loader_options: dict = field(
        default_factory=dict, metadata=_allows(TypeOf(dict, desc="a dict of loader options"))
    )
    subconcepts: str = field(default="true", metadata=_allows(StrOptions(SUBCONCEPT_MODES)))
    save_predictions: bool = field(default=False, metadata=_allows(_BOOL))
    task: dict | None = field(
        default=None, metadata=_allows(TypeOf(dict, desc="a dict (TaskSpec.to_dict())"), None)
    )
    n_bootstrap: int = PROTOCOL_OPTIONS.n_bootstrap

    def evaluation(self) -> EvaluationOptions:
        """The evaluation's options of every fold (the seed: derived per fold)."""
        return EvaluationOptions(
            **{k: v for k, v in self.evaluation_options().items() if k != "seed"}
        )


@_declared
@dataclass(frozen=True, kw_only=True)
class LabelSettings:
    """``label``: the size of the next batch of test rows to label (``budget``), the ``seed``
    of its draw (the batch number is mixed in), the level of the verdicts it aims at, the
    decision ``threshold`` on ``y_score``, an optional ``focus`` subconcept whose question
    ("is it below its class?") the whole aimed part of the batch serves, the loop's whole
    labelling budget ``max_labels`` and the worlds of the forecast of labels still needed.
    """

    budget: int = field(default=20, metadata=_allows(COUNT))
    seed: int = field(default=0, metadata=_allows(SEED))
    confidence: float = field(default=0.95, metadata=_allows(CONFIDENCE))
    threshold: float = field(default=0.5, metadata=_allows(THRESHOLD))
    focus: str | None = field(default=None, metadata=_allows(_TEXT, None))
    #: the labelling budget of the whole loop (labels over every batch); None: no limit
    max_labels: int | None = field(default=None, metadata=_allows(COUNT, None))
    #: worlds the forecast of labels still needed simulates (0: none); it runs on up to
    #: :data:`medeval.flows.label.FORECAST_MAX_ROWS` test rows unless asked for
    forecast: int | None = field(default=None, metadata=_allows(N_BOOTSTRAP, None))
    #: the looks planned (batches whose verdicts are read); the error is spent over them
    #: (:mod:`medeval.evaluation.looks`). None: ``max_labels / budget``, else 3; fixed by the
    #: first batch (later batches keep the plan written in the labels files)
    looks: int | None = field(default=None, metadata=_allows(COUNT, None))
