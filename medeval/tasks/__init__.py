"""Data set → binary task with subconcepts (SPEC §4). CLI: ``python -m medeval.tasks``."""

from medeval.tasks.binary import BinaryTask, Subconcept, make_binary_task, order_classes

__all__ = ["BinaryTask", "Subconcept", "make_binary_task", "order_classes"]
