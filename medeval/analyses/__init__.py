"""Analyses of a benchmark results folder: records → tables and figures, one module per question
(RQ1 :mod:`.correlation_gap`, RQ2 :mod:`.weight_error`, RQ3 :mod:`.recall_panels`, RQ4
:mod:`.agreement`; docs/method.md); :mod:`medeval.flows.analyze` writes them to disk."""

from medeval.analyses.common import dataset_means, pearson, subset_frame

__all__ = ["dataset_means", "pearson", "subset_frame"]
