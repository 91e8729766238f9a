"""A classifier that is not medeval's on a real KEEL set, for the own-model tests: the example
of ``python -m medeval.subconcepts --example`` (:mod:`medeval.examples.vehicle`), so that the
tests and the example share their data."""

from __future__ import annotations

from medeval.examples.vehicle import OwnModelData, vehicle

__all__ = ["OwnModelData", "vehicle"]
