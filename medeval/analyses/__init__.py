"""RQ1–RQ3 analyses of a benchmark results folder (SPEC §6).

Each module turns the store's records into tables (pandas) and figures (matplotlib ``Figure``);
:mod:`medeval.analyses.report` writes them to disk (``python -m medeval.analyze``).
"""

from medeval.analyses.common import dataset_means, pearson, subset_frame

__all__ = ["dataset_means", "pearson", "subset_frame"]
