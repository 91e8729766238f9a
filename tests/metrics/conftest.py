"""Random inputs for the metric tests: ties, zero weights, missing classes, batches (the
strategies live with the registry of score entry points, ``tests/score_entry_points.py``)."""

from score_entry_points import binary_problems

ALLOW_UNDEFINED = "ignore::medeval.metrics.UndefinedMetricWarning"

__all__ = ["ALLOW_UNDEFINED", "binary_problems"]
