"""Output folders: a new one by default, an existing one only with ``--force`` or ``--resume``
and a matching :data:`MARKER`; a folder written whole takes its place in one rename."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medeval.errors import OutputPathError, UserError

__all__ = [
    "MARKER",
    "OutputFolder",
    "check_in_place",
    "check_outside",
    "check_writable",
    "default_out",
    "mark",
    "read_marker",
    "undone_if_refused",
]

#: The marker of a folder medeval writes: the tool, its version and, written whole, its files
#: and each one's SHA-256 (a file changed since, e.g. a ``to_label.csv`` filled in place, is the
#: user's work: ``--force`` never deletes it).
MARKER = ".medeval-output.json"


def default_out(name: str, root: str | os.PathLike | None = None) -> Path:
    """``<root>/<name>-<YYYYmmdd-HHMMSS>`` (``root``: ``$MEDEVAL_RUNS``, else ``runs``), or the
    first with ``-2``, ``-3``, ... appended that does not exist."""
    root = Path(root if root is not None else os.environ.get("MEDEVAL_RUNS", "runs"))
    return _free(root / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}")


def _free(path: Path) -> Path:
    found, n = path, 1
    while os.path.lexists(found):
        n += 1
        found = path.with_name(f"{path.name}-{n}")
    return found


#: the write probe's prefix: another run's probe, met in a shared folder, is not a user's file
_PROBE = ".medeval-probe."


def _holds_files(path: Path) -> bool:
    return path.is_dir() and any(path.iterdir())


def _inside(folder: Path, path: Path) -> bool:
    return path == folder or folder in path.parents


def check_writable(path: str | os.PathLike, *, what: str) -> Path:
    """``path`` is a folder a file can be created in, or can be made (tried in its nearest
    existing parent: permission bits do not tell for root or a read-only disk)."""
    path = Path(path)
    try:
        os.lstat(path)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise OutputPathError(f"{what} {path}: name too long") from None
    base = next(p for p in [path, *path.parents] if os.path.lexists(p))
    if not base.is_dir():
        raise OutputPathError(f"{what} {path}: {base} is a file, not a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=_PROBE, dir=base)
    except OSError as exc:
        raise OutputPathError(f"{what} {path}: cannot write into {base}: {exc.strerror}") from None
    os.close(fd)
    os.unlink(probe)
    return path


def read_marker(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The marker of ``folder``, or ``None`` if it has none or a bad one."""
    try:
        data = json.loads((Path(folder) / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("tool"), str) else None


def _marker(tool: str, **fields: Any) -> str:
    from medeval import __version__

    return json.dumps({"tool": tool, "version": __version__, **fields}, indent=2) + "\n"


def mark(folder: str | os.PathLike, tool: str, **fields: Any) -> Path:
    """Make ``folder`` (written in place) and mark it as ``tool``'s, with ``fields``; of two
    runs marking one new folder at once, one is refused."""
    from medeval.io.atomic import write_text

    folder, text = Path(folder), _marker(tool, **fields)
    folder.mkdir(parents=True, exist_ok=True)
    if read_marker(folder) is not None:
        write_text(folder / MARKER, text)
        return folder
    try:
        with open(folder / MARKER, "x") as f:
            f.write(text)
    except FileExistsError:
        raise OutputPathError(f"{folder}: another run started writing it just now") from None
    return folder


def check_in_place(
    path: str | os.PathLike, *, tool: str, resume: bool, what: str = "--out", hint: str = ""
) -> Path:
    """Before any work: ``path`` is new, empty or, with ``resume``, marked as ``tool``'s;
    ``hint`` ends the refusal of a folder that holds files."""
    path = check_writable(path, what=what)
    if not _holds_files(path):
        return path
    if not resume:
        raise OutputPathError(f"{what} {path}: is not empty; {hint}")
    marked = read_marker(path)
    if marked is None or marked["tool"] != tool:
        whose = f"holds the output of medeval {marked['tool']}" if marked else f"has no {MARKER}"
        raise OutputPathError(f"{what} {path}: {whose}, not a folder of medeval {tool}")
    return path


@contextmanager
def undone_if_refused(folder: str | os.PathLike) -> Iterator[None]:
    """A refusal (:class:`~medeval.errors.UserError`) in the block removes what it wrote into
    ``folder`` if that held no file before."""
    folder = Path(folder)
    existed, fresh = folder.is_dir(), not _holds_files(folder)
    try:
        yield
    except UserError:
        if fresh and folder.is_dir():
            shutil.rmtree(folder)
            if existed:
                folder.mkdir()
        raise


def check_outside(path: str | os.PathLike, folders: Iterable[Any], *, what: str = "--out") -> None:
    """Refuse an output folder inside one of the input ``folders`` (read by walking them)."""
    for folder in (f for f in folders if f is not None and os.path.isdir(f)):
        if _inside(Path(os.path.realpath(folder)), Path(os.path.realpath(path))):
            raise OutputPathError(
                f"{what} {path}: is inside the data folder {folder}; the run's files would "
                f"become part of the data the next time it is read; choose another {what}"
            )


def _files_in(folder: Path) -> list[str]:
    """Every file below ``folder`` but the marker and write probes (links not followed)."""
    found = []
    for root, dirs, names in os.walk(folder):
        names += [d for d in dirs if os.path.islink(os.path.join(root, d))]
        found += [Path(root, n).relative_to(folder).as_posix() for n in names]
    return sorted(f for f in found if f != MARKER and not f.startswith(_PROBE))


def _digest(path: Path) -> str | None:
    """The SHA-256 of a plain file (``None`` for a link, a folder, a file gone or unreadable)."""
    import hashlib

    if path.is_symlink() or not path.is_file():
        return None
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def _digests(folder: Path, files: list[str]) -> dict[str, str]:
    return {f: d for f in files if (d := _digest(folder / f)) is not None}


def _changed(folder: Path, marker: dict[str, Any]) -> list[str]:
    """The files of ``folder`` whose content differs from what the run of ``marker`` wrote
    (markers of versions before the digests: none can be told)."""
    recorded = marker.get("sha256")
    if not isinstance(recorded, dict):
        return []
    return sorted(
        name
        for name, digest in recorded.items()
        if os.path.lexists(folder / name) and _digest(folder / name) != digest
    )


@dataclass(frozen=True)
class OutputFolder:
    """A folder written whole by ``tool``: :meth:`check` before any work, :meth:`write` at the
    end. ``force``: replace an earlier output of medeval, holding none of ``inputs``; ``fresh``
    (a default name): never replace, take the next free name."""

    path: Path
    tool: str
    force: bool = False
    inputs: tuple[Any, ...] = ()
    fresh: bool = False
    what: str = "--out"

    def check(self) -> OutputFolder:
        check_writable(self.path, what=self.what)
        real = Path(os.path.realpath(self.path))  # a link: the folder it points to
        if _inside(real, Path.cwd()):
            self._refuse("holds the current folder; replacing it would delete it")
        if not _holds_files(real) or self.fresh:
            return self
        if not self.force:
            raise OutputPathError(
                f"{self.what} {self.path}: is not empty; give --force to replace an earlier "
                "output of medeval, or choose a new folder (by default each run gets one)"
            )
        for given in self.inputs:
            if given is not None and _inside(real, Path(os.path.realpath(given))):
                self._refuse(f"holds the input {given}; replacing it would delete it")
        marker = read_marker(real) or {}
        listed = marker.get("files")
        if not isinstance(listed, list):
            self._refuse(f"was not written whole by medeval (no {MARKER} listing its files)")
        if foreign := sorted(set(_files_in(real)) - set(listed)):
            self._refuse(
                f"holds files medeval did not write ({_names(foreign)}), which it would delete"
            )
        if changed := _changed(real, marker):
            self._refuse(
                f"{_names(changed)} changed since medeval wrote it (filled or edited in "
                "place?): replacing the folder would delete that work; move it out first"
            )
        return self

    def _refuse(self, why: str) -> None:
        raise OutputPathError(f"{self.what} {self.path}: {why}; choose another {self.what}")

    def write(self, fill: Callable[[Path], object]) -> Path:
        """``fill(tmp)`` writes the results into a new folder that then replaces the target
        whole; returns the folder written."""
        target = Path(os.path.realpath(self.path))
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{target.name[:40]}.medeval-{secrets.token_hex(4)}"
        os.mkdir(tmp)
        try:
            fill(tmp)
            files = _files_in(tmp)
            (tmp / MARKER).write_text(_marker(self.tool, files=files, sha256=_digests(tmp, files)))
            while True:  # again if another run wrote the target in the meantime
                target = _free(target) if self.fresh else target
                if _holds_files(target):
                    self.check()  # files put there during the run stop it too
                    _exchange(tmp, target)
                    break
                try:
                    os.rename(tmp, target)  # absent, or an empty folder
                    break
                except OSError as exc:
                    if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                        raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # after the exchange: the previous folder
        return target if self.fresh else Path(self.path)


def _names(files: list[str]) -> str:
    return ", ".join(files[:5]) + (f", … ({len(files)} in all)" * (len(files) > 5))


def _exchange(a: Path, b: Path) -> None:
    """Swap folders ``a`` and ``b`` (``renameat2`` on Linux, else three renames)."""
    try:
        swap = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # not Linux, or a C library without it
        swap = None
    if swap is None or swap(-100, os.fsencode(a), -100, os.fsencode(b), 2):  # AT_FDCWD, EXCHANGE
        os.rename(b, f"{a}-old")
        os.rename(a, b)
        os.rename(f"{a}-old", a)
