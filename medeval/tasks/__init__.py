"""Data set → binary task with subconcepts (docs/method.md,
"Binary tasks from multiclass data"). CLI: ``python -m medeval.tasks``."""

from importlib import import_module
from typing import Any

__all__ = [
    "BinaryTask",
    "Subconcept",
    "TaskSpec",
    "make_binary_task",
    "make_task",
    "make_user_task",
    "order_classes",
]
_USER = ("TaskSpec", "make_task", "make_user_task")


def __getattr__(name: str) -> Any:  # lazy: `python -m medeval.tasks --help` stays fast
    if name in __all__:
        module = "medeval.tasks.user" if name in _USER else "medeval.tasks.binary"
        return getattr(import_module(module), name)
    raise AttributeError(f"module 'medeval.tasks' has no attribute {name!r}")
