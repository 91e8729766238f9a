"""Files a user reads are complete or absent: atomic writes, whole-folder replacement, JSON.

* :func:`write_bytes` / :func:`write_text` / :func:`write_json` — one file through a temporary
  file in the same folder and ``os.replace``: a reader sees the old file or the new one.
* :func:`replace_folder` — a whole output folder: results go into a temporary folder beside the
  target, which is moved into place only when everything is written. The target then holds one
  complete run, or the previous one if anything failed, never a mix.
* :func:`check_out` — an output path checked before any computation.
* :func:`json_ready` — the one JSON cleaner (NaN/inf → null, numpy scalars → Python).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from medeval.errors import OutputPathError

__all__ = [
    "check_out",
    "json_ready",
    "replace_folder",
    "write_bytes",
    "write_files",
    "write_json",
    "write_text",
]

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


def _existing_ancestor(path: Path) -> Path:
    for parent in [path, *path.parents]:
        if parent.exists() or parent.is_symlink():
            return parent
    return Path(".")


def _probe_writable(folder: Path, what: str) -> None:
    """Create and remove a file in ``folder``: the only test that is right for every user."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".medeval-probe.", dir=folder)
    except OSError as exc:
        raise OutputPathError(f"{what}: cannot write into {folder}: {exc.strerror}") from exc
    os.close(fd)
    os.unlink(tmp)


def check_out(path: str | os.PathLike, *, kind: str = "folder", what: str = "--out") -> Path:
    """Check before computing that ``path`` can receive the results.

    Args:
        path: the output folder (``kind="folder"``) or file (``kind="file"``); it need not exist.
        kind: ``"folder"`` or ``"file"``.
        what: how the message names the path (the option that gave it).

    Raises:
        OutputPathError: ``path`` is a file where a folder is wanted (or the reverse), lies
            under a file, or its nearest existing folder is not writable.
    """
    path = Path(path)
    if kind not in ("folder", "file"):
        raise ValueError(f"kind must be 'folder' or 'file'; got {kind!r}")
    if kind == "folder" and path.exists() and not path.is_dir():
        raise OutputPathError(f"{what} {path}: is a file, not a folder")
    if kind == "file" and path.is_dir():
        raise OutputPathError(f"{what} {path}: is a folder, not a file")
    start = path if kind == "folder" else path.parent
    base = _existing_ancestor(start)
    if not base.is_dir():
        raise OutputPathError(f"{what} {path}: {base} is a file, not a folder")
    _probe_writable(base, f"{what} {path}")
    return path


@contextmanager
def replace_folder(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a fresh temporary folder beside ``target``; on success it replaces ``target``.

    Whatever was in ``target`` before is removed only after the new folder is complete, so the
    folder holds the previous run or the new one, never a mix of both. On any exception the
    temporary folder is removed and ``target`` is left as it was.
    """
    target = Path(target)
    check_out(target, what=str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
    os.chmod(tmp, 0o777 & ~_UMASK)  # mkdtemp makes 0700; results are meant to be shared
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        os.replace(target, old / target.name)
    try:
        os.replace(tmp, target)
    except BaseException:
        if old is not None:  # put the previous run back
            os.replace(old / target.name, target)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
