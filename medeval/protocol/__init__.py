"""The random-forest benchmark protocol (docs/method.md, "Protocols"): data set → binary task →
5×2 splits → :func:`~medeval.protocol.forest.run_fold` → records in a
:class:`~medeval.protocol.store.ResultsStore` → :mod:`medeval.analyses`."""

from medeval.protocol.forest import METHODS, derive_seed, run_fold

__all__ = ["METHODS", "derive_seed", "run_fold"]
