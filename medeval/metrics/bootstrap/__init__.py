"""Batched bootstrap of balanced accuracy, F1 and ROC AUC under several weightings.

All B replicates are one tensor computation, processed in row chunks to bound memory:

* A replicate is a vector of integer counts ``c (N,)``: multinomial resampling of the units
  (instances, or clusters such as patients) within each stratum (class by default). The
  draws are exact multinomial, not a Poisson approximation.
* Every count statistic (weighted class totals and hits, per subset and weighting; per
  subconcept hits) is one matrix product ``C (b, N) @ V (N, k)``.
* AUC: instances are laid out once as [negatives sorted by score | positives sorted by score].
  Per replicate, the cumulative weighted negative count is one ``cumsum``; each positive reads
  it at two static positions (below its tie group, and through it), so ties count ½; a second
  product with the positive weights per subset gives all AUC numerators. The evaluation
  subsets of docs/method.md, "Evaluation subsets and analyses" share the negatives (all majority
  instances), so one cumsum serves all.

Counts are drawn with numpy on the CPU (the same seed gives the same counts whatever the chunks
and threads) and with ``torch.randint`` elsewhere; chunks of replicates and every scratch buffer
are sized by a memory budget (:func:`default_memory_budget`): docs/performance.md.

Modules: docs/layout.md.
"""

from .batched import BatchedBootstrap
from .budget import (
    MIN_REPLICATE_BYTES,
    ReplicateBudgetError,
    check_replicates,
    default_memory_budget,
    format_bytes,
)
from .replicates import Replicates, percentile_interval

__all__ = [
    "MIN_REPLICATE_BYTES",
    "BatchedBootstrap",
    "ReplicateBudgetError",
    "Replicates",
    "check_replicates",
    "default_memory_budget",
    "format_bytes",
    "percentile_interval",
]
