"""The built-in synthetic phantoms under the name the run summaries print
(``medeval.synthetic``); they live in :mod:`medeval.datasets.synthetic`."""

from medeval.datasets.synthetic import SUBCONCEPTS, make_phantoms

__all__ = ["SUBCONCEPTS", "make_phantoms"]
