"""The random-forest benchmark protocol (docs/method.md, "Protocols"): fold fitting, results store,
task grid.

Data flow: data set → binary task → 5×2 splits → :func:`~medeval.protocol.forest.run_fold`
(one subconcept forest + one binary forest per correction) → records in a
:class:`~medeval.protocol.store.ResultsStore` → :mod:`medeval.analyses`; with
``save_predictions`` each record's fold is also written for ``python -m medeval.evaluate``
(:mod:`medeval.protocol.saved`).
"""

from medeval.protocol.forest import METHODS, derive_seed, run_fold

__all__ = ["METHODS", "derive_seed", "run_fold"]
