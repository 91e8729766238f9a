"""Data set → binary task with subconcepts (SPEC §4). CLI: ``python -m medeval.tasks``."""

from importlib import import_module
from typing import Any

__all__ = ["BinaryTask", "Subconcept", "make_binary_task", "order_classes"]


def __getattr__(name: str) -> Any:  # lazy: `python -m medeval.tasks --help` stays fast
    if name in __all__:
        return getattr(import_module("medeval.tasks.binary"), name)
    raise AttributeError(f"module 'medeval.tasks' has no attribute {name!r}")
