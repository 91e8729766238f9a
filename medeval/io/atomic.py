"""Files a user reads are complete or absent (a temporary file, then ``os.replace``);
:func:`json_ready` is the one JSON cleaner (NaN/inf → null)."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["json_ready", "json_text", "write_bytes", "write_files", "write_json", "write_text"]

_UMASK = os.umask(0)
os.umask(_UMASK)


def json_ready(value: Any) -> Any:
    """A copy of ``value`` that ``json.dumps(..., allow_nan=False)`` accepts.

    Non-finite floats become ``None``; numpy scalars and arrays become Python numbers and
    lists; dict keys become strings; tuples become lists.
    """
    if isinstance(value, Mapping):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if hasattr(value, "tolist") and type(value).__module__ == "numpy":
        return json_ready(value.tolist())  # numpy scalar or array, without importing numpy
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder + ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; results are meant to be shared
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text(path: str | os.PathLike, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


def json_text(obj: Any) -> str:
    """Indented JSON of ``json_ready(obj)`` (strict: no NaN literals), with a final newline."""
    return json.dumps(json_ready(obj), indent=2, allow_nan=False) + "\n"


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    """``obj`` as JSON (see :func:`json_text`), atomically."""
    return write_text(path, json_text(obj))


def write_files(folder: str | os.PathLike, files: Mapping[str, bytes]) -> list[Path]:
    """Write several files into ``folder``, each atomically, only after all are prepared."""
    return [write_bytes(Path(folder) / name, data) for name, data in files.items()]
