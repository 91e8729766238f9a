"""The evaluation's options, declared once: their defaults and allowed values.

:class:`EvaluationOptions` is the part of every evaluation's settings that a user sets: the
threshold, the bootstrap's replicates, level, strata and seed, and the memory budget. The same
declaration is

- the fields of :class:`medeval.evaluation.EvaluateSettings` (which adds the device and the
  progress bar) and of the settings of ``subconcepts`` and ``discover``, and the evaluation
  fields of :class:`medeval.flows.benchmark.BenchmarkSettings` (defaults
  :data:`PROTOCOL_OPTIONS`);
- the ``evaluation`` section of a training config (:class:`medeval.training.config.Config`);
- the options ``--threshold``, ``--bootstrap``, ``--confidence``, ``--stratify`` and
  ``--memory-budget`` of every tool that evaluates (:func:`medeval.cli.common.
  add_evaluation_options`), with their types, defaults and ranges.

A value outside its constraints raises :class:`~medeval._validation.InvalidParameterError`
naming the field (exit code 2 in the tools). Only the standard library is imported here, so a
tool's ``--help`` stays fast.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

from medeval._validation import Interval, StrOptions, declared

__all__ = [
    "CONFIDENCE",
    "MEMORY_BUDGET",
    "N_BOOTSTRAP",
    "PROTOCOL_OPTIONS",
    "SEED",
    "STRATIFY",
    "THRESHOLD",
    "EvaluationOptions",
]

#: Named bootstrap strata of the evaluation and the rectification (besides per-row codes).
STRATIFY = ("class", "subconcept", "none")
#: A memory budget of the bootstrap's work buffers, in bytes.
MEMORY_BUDGET = Interval(Real, 0, None, closed="neither", desc="a positive number of bytes")
#: A decision threshold on ``y_score``: any finite number (the score's own scale).
THRESHOLD = Interval(Real, -math.inf, math.inf, closed="neither", desc="a finite number")
#: An interval level.
CONFIDENCE = Interval(Real, 0, 1, closed="neither")
#: Bootstrap replicates (0 = no intervals).
N_BOOTSTRAP = Interval(Integral, 0, None)
#: A seed of the bootstrap (and of what else a tool seeds with it).
SEED = Interval(Integral, 0, None)


@declared(
    {
        "threshold": [THRESHOLD],
        "n_bootstrap": [N_BOOTSTRAP],
        "confidence": [CONFIDENCE],
        "stratify": [StrOptions(STRATIFY)],
        "seed": [SEED],
        "memory_budget": [MEMORY_BUDGET, None],
    }
)
@dataclass(frozen=True, kw_only=True)
class EvaluationOptions:
    """What a user sets about an evaluation (see
    :func:`medeval.evaluation.evaluate_predictions`).

    Attributes:
        n_bootstrap: bootstrap replicates for the intervals (0 = none).
        threshold: predicted label = ``y_score >= threshold`` where there is no ``y_pred``.
        seed: bootstrap seed.
        confidence: interval level in (0, 1).
        stratify: strata the bootstrap resamples within: ``"class"``, ``"subconcept"`` or
            ``"none"``.
        memory_budget: bytes the work buffers may take (``None``: from the machine's free
            memory); changes speed and memory only, never the numbers.

    Raises:
        InvalidParameterError: a value outside its constraints, naming the field.
    """

    # in the order a training run's config.yaml has always listed the first three
    n_bootstrap: int = 1000
    threshold: float = 0.5
    seed: int = 0
    confidence: float = 0.95
    stratify: str = "class"
    memory_budget: int | None = None

    def evaluation_options(self) -> dict[str, Any]:
        """These fields by name (of a settings object that extends this one, too)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(EvaluationOptions)}


#: The benchmark protocol's evaluation options (``python -m medeval.benchmark``'s defaults):
#: 200 replicates per fold and method at 95 %, within class, threshold 0.5. Their ``seed`` is
#: not used: each fold's bootstrap seed is derived from the protocol's
#: (:func:`medeval.splits.derive_seed`).
PROTOCOL_OPTIONS = EvaluationOptions(n_bootstrap=200)
