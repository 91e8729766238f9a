"""RQ1–RQ3 analyses of a benchmark results folder (docs/method.md,
"Evaluation subsets and analyses").

Each module turns the store's records into tables (pandas) and figures (matplotlib ``Figure``)
and is named for what it computes: :mod:`.correlation_gap` (RQ1: does the full-test score track
the largest subconcept), :mod:`.weight_error` (RQ2: predicted against true weights and the
subconcept model's quality), :mod:`.recall_panels` (RQ3: per-subconcept recall panels),
:mod:`.agreement` (RQ4: the label-free scores against the true-weight ones), :mod:`.coverage`,
:mod:`.quality`, :mod:`.subconcepts`, :mod:`.discovery` and :mod:`.scores`;
:mod:`medeval.flows.analyze` writes them to disk (``python -m medeval.analyze``).
"""

from medeval.analyses.common import dataset_means, pearson, subset_frame

__all__ = ["dataset_means", "pearson", "subset_frame"]
