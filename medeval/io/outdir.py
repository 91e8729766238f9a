"""Output folders are replaced whole, or resumed, only when they are medeval's own.

* :func:`replace_folder` — a whole output folder: results go into a temporary folder beside the
  target, which is moved into place only when everything is written. The target then holds one
  complete run, or the previous one if anything failed, never a mix.
* :func:`check_out` — an output path checked before any computation.
* :func:`claim_folder` — a folder written file by file (a resumable run) gets the marker.

Output folders and what may be replaced
----------------------------------------
Every folder medeval writes carries a marker file, :data:`MARKER` (the tool, medeval's version,
the time, whether the folder is complete and, for a replaced folder, the files written). A folder
is replaced, or resumed, only when it is absent, empty, or the tool's own:

* it carries the marker of the same tool; a replaced folder must then also hold no file its tool
  did not write (those the marker lists; for a marker of an earlier version, which lists none,
  the files the tool writes, :data:`WRITES`), which replacing it would delete;
* or it has no marker (written by an earlier version) but holds that tool's files
  (:data:`LEGACY`) and nothing else: every file in it is one the tool writes (:data:`WRITES`).
  One file of another program (the user's ``notes.txt``, a ``model.pt``) makes it the user's.

A file of a tool's signature that another program wrote (a ``run.json`` that is not a
benchmark's settings, :data:`SIGNATURE_KEYS`) makes the folder the user's too. File-browser
litter is nobody's (:func:`is_litter`: ``.DS_Store``, ``Thumbs.db``, ``desktop.ini`` and an
AppleDouble ``._name`` beside an existing ``name``; a ``._draft.txt`` alone is the user's).
Anything else — a folder of the user's files, a folder holding an input, the current folder or
one above it, ``.``, ``..``, a symbolic link, a name too long for the temporary names beside it —
is refused before any work.

Replacing a folder ``out`` takes these steps, each a single rename or removal::

    1. write into .out.new-<id>/, the marker (complete) last
    2. rename out -> .out.old-<id>     (only if out exists)
    3. rename .out.new-<id> -> out
    4. remove .out.old-<id>

A run killed between two steps leaves ``out`` in place (then the leftovers are removed by the next
run) or missing with a complete ``.new`` or ``.old`` beside it, which the next run puts back with
a warning; a ``.new`` without the complete marker is half-written and is never promoted. A lock
file ``.out.lock`` beside the target (``fcntl.flock``) is held from the check to the end of the
run, so a second run on the same folder is refused, naming the first one's pid.

The file lists are :mod:`medeval.io.tool_files`', the lock :mod:`medeval.io.locks`', one file
written atomically :mod:`medeval.io.atomic`'s.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import secrets
import shutil
import stat
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from medeval.errors import OutputPathError
from medeval.io.atomic import write_json
from medeval.io.locks import _HELD, lock_output, unlock_output
from medeval.io.tool_files import BROWSER_LITTER, LEGACY, MARKER, SIGNATURE_KEYS, WRITES

__all__ = [
    "OutputRecoveredWarning",
    "check_out",
    "check_outside",
    "check_replaceable",
    "claim_folder",
    "is_litter",
    "read_marker",
    "recover",
    "replace_folder",
]

#: A temporary file of :func:`write_bytes` that a killed run left (``.<name>.<random>.tmp``).
_TEMPORARY = ".*.tmp"
# ".<name>.new-<8 chars>": 6 bytes around the name, 5 for the kind, 8 random (mkdtemp's
# alphabet, which earlier versions used, includes "_").
_SIBLING = re.compile(r"(new|old)-[a-z0-9_]{8}")
_SIBLING_EXTRA = len("..new-") + 8


class OutputRecoveredWarning(UserWarning):
    """An output folder was put back from what an interrupted run left beside it."""


def _lexists(path: Path) -> bool:
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:  # e.g. a name too long to look up: not there either
        return False
    return True


def _is_link(path: Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:  # missing, or a name too long to look up
        return False


def _existing_ancestor(path: Path) -> Path:
    for parent in [path, *path.parents]:
        if _lexists(parent):
            return parent
    return Path(".")


def _probe_writable(folder: Path, what: str) -> None:
    """Create and remove a file in ``folder``: the only test that is right for every user."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=_PROBE, dir=folder)
    except OSError as exc:
        raise OutputPathError(f"{what}: cannot write into {folder}: {exc.strerror}") from exc
    os.close(fd)
    _remove_probe(Path(tmp))


_PROBE = ".medeval-probe."


def _remove_probe(path: Path) -> None:
    # Missing is fine: recover() removes probes a killed run left, possibly a running one's.
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _remove_stale_probes(folder: Path) -> None:
    """Probe files of :func:`_probe_writable` left by a run killed between its two steps."""
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(_PROBE)]
    except OSError:
        return
    for entry in entries:
        if entry.is_file(follow_symlinks=False):
            _remove_probe(Path(entry.path))


def _pathconf(folder: Path, name: str, default: int) -> int:
    try:
        return os.pathconf(folder, name)
    except (OSError, ValueError, AttributeError):
        return default


def _check_name(path: Path, what: str, *, symlink_ok: bool) -> None:
    """Refuse names that cannot be renamed into place: ``.``, ``..``, ``""``, ``/``, and a
    symbolic link (the rename would replace the link, not the folder it points to)."""
    if path.name in ("", ".", ".."):
        raise OutputPathError(
            f"{what} {str(path) or '(empty)'}: not a folder name that can be replaced; "
            "name the output folder itself, e.g. runs/my-run"
        )
    if not symlink_ok and _is_link(path):
        raise OutputPathError(
            f"{what} {path}: is a symbolic link (to {os.readlink(path)}); give the folder itself"
        )


def _check_length(path: Path, what: str) -> None:
    """Refuse a path whose temporary siblings (``.<name>.new-<id>``, ``.<name>.lock``, a
    temporary file) would not fit the file system's limits, before anything is looked up."""
    base = _existing_ancestor(path.parent)
    name_max = _pathconf(base, "PC_NAME_MAX", 255)
    path_max = _pathconf(base, "PC_PATH_MAX", 4096)
    longest = os.fsencode(str(path.parent / f".{path.name}.new-12345678"))
    if len(os.fsencode(path.name)) + _SIBLING_EXTRA > name_max or len(longest) >= path_max:
        raise OutputPathError(
            f"{what} {path}: name too long; the temporary folder beside it would "
            f"exceed the file system's limits ({name_max} bytes a name, {path_max} a path)"
        )


def _inside(folder: Path, path: Path) -> bool:
    return path == folder or folder in path.parents


def check_outside(path: str | os.PathLike, folders: Iterable[Any], *, what: str = "--out") -> None:
    """Refuse an output folder inside one of the input ``folders`` (a data set read by
    walking it): the run's files would become part of the data the next time it is read.

    Raises:
        OutputPathError: naming both.
    """
    target = Path(os.path.realpath(path))
    for folder in folders:
        if folder is None or not os.path.isdir(folder):
            continue
        if _inside(Path(os.path.realpath(folder)), target):
            raise OutputPathError(
                f"{what} {path}: is inside the data folder {folder}; the run's files would "
                f"become part of the data the next time it is read; choose another {what}"
            )


def _check_inputs(path: Path, inputs: Iterable[Any], what: str) -> None:
    """Refuse a folder whose replacement would delete an input or the current folder."""
    target = Path(os.path.realpath(path))
    for given in inputs:
        if given is not None and _inside(target, Path(os.path.realpath(given))):
            raise OutputPathError(
                f"{what} {path}: holds the input {given}; replacing it would delete it; "
                f"choose another {what}"
            )
    if _inside(target, Path.cwd()):
        raise OutputPathError(
            f"{what} {path}: holds the current folder; replacing it would delete it; "
            f"choose another {what}"
        )


def read_marker(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The marker of ``folder`` (see :data:`MARKER`), or ``None`` if it has none or a bad one."""
    try:
        data = json.loads((Path(folder) / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("tool"), str) else None


def _marker_record(
    tool: str | None, *, complete: bool, files: list[str] | None = None
) -> dict[str, Any]:
    from medeval import __version__

    record = {
        "tool": tool or "medeval",
        "version": __version__,
        "written_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "complete": complete,
    }
    if files is not None:
        record["files"] = files
    return record


def _files_in(folder: Path) -> list[str]:
    """Every file below ``folder`` (links included, not followed) but the marker, as sorted
    POSIX paths relative to it."""
    found = []
    for root, dirs, names in os.walk(folder):
        here = Path(root)
        names += [d for d in dirs if (here / d).is_symlink()]  # os.walk does not enter them
        found += [(here / n).relative_to(folder).as_posix() for n in names]
    return sorted(f for f in found if f != MARKER)


def is_litter(folder: Path, rel: str) -> bool:
    """Whether ``rel`` (a path relative to ``folder``) is file-browser litter: one of
    :data:`BROWSER_LITTER`, or a macOS AppleDouble companion ``._name`` beside an existing
    ``name``. Any other ``._*`` file (``._draft.txt`` alone) is the user's."""
    path = Path(rel)
    if path.name in BROWSER_LITTER:
        return True
    return path.name.startswith("._") and _lexists(folder / path.parent / path.name[2:])


def _tool_writes(tool: str | None, rel: str) -> bool:
    """Whether ``rel`` is a file ``tool`` writes (:data:`WRITES`), or a temporary file of one."""
    name = Path(rel).name
    if fnmatch.fnmatchcase(name, _TEMPORARY) or name.startswith(_PROBE):
        return True
    return any(fnmatch.fnmatchcase(rel, p) for p in WRITES.get(tool or "", ()))


def _foreign_files(path: Path, mark: dict[str, Any] | None, tool: str | None) -> list[str]:
    """Files in ``path`` that ``tool`` did not write, file-browser litter (:func:`is_litter`)
    excepted: those not in the marker's list of written files or, for a folder whose marker
    (an earlier version's) lists none or that has no marker, those not of :data:`WRITES`."""
    written = mark.get("files") if mark is not None else None
    files = [f for f in _files_in(path) if not is_litter(path, f)]
    if isinstance(written, list):
        return sorted(set(files) - set(written))
    return sorted(f for f in files if not _tool_writes(tool, f))


def _not_signed(path: Path, tool: str | None) -> str | None:
    """The first file of ``tool``'s signature (:data:`SIGNATURE_KEYS`) in ``path`` that is
    another program's (not a JSON object with the keys), as a reason; ``None`` if none."""
    for name, keys in SIGNATURE_KEYS.get(tool or "", {}).items():
        file = path / name
        if not file.is_file():
            continue
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict) or not all(k in data for k in keys):
            want = ", ".join(repr(k) for k in keys)
            return f"{name} is not one medeval {tool} wrote (no {want})"
    return None


def _named(files: list[str]) -> str:
    return ", ".join(files[:5]) + (f", … ({len(files)} in all)" * (len(files) > 5))


def _check_content(path: Path, tool: str | None, what: str, *, resumable: bool = False) -> None:
    """``path`` is absent, empty, or an earlier output of ``tool`` (any tool when ``None``):
    marked by it, or written by an earlier version (its :data:`LEGACY` files, every file one
    it writes). A folder that is replaced must hold no file its tool did not write; one written
    in place (``resumable``) may, once it carries the marker."""
    if not path.is_dir() or next(path.iterdir(), None) is None:
        return
    mark = read_marker(path)
    if mark is not None and tool is not None and mark["tool"] != tool:
        raise OutputPathError(
            f"{what} {path}: holds the output of medeval {mark['tool']}, not {tool}; "
            f"choose another {what}"
        )
    owner = tool or (mark["tool"] if mark is not None else None)
    not_signed = _not_signed(path, owner)
    if not_signed:
        raise OutputPathError(
            f"{what} {path}: {not_signed}; the folder holds another program's files: "
            f"choose another {what}"
        )
    if mark is not None:
        foreign = [] if resumable else _foreign_files(path, mark, owner)
        if foreign:
            raise OutputPathError(
                f"{what} {path}: holds files medeval {mark['tool']} did not write "
                f"({_named(foreign)}); replacing the folder would delete them: move them out "
                f"or choose another {what}"
            )
        return
    if tool in LEGACY and all(any(path.glob(pattern)) for pattern in LEGACY[tool]):
        foreign = _foreign_files(path, None, tool)
        if not foreign:
            return  # written by an earlier version, before the marker
        raise OutputPathError(
            f"{what} {path}: has no {MARKER} and holds files medeval {tool} does not write "
            f"({_named(foreign)}): it is taken for a folder of yours, not an earlier output; "
            f"move them out or choose another {what}"
        )
    raise OutputPathError(
        f"{what} {path}: is not empty and was not written by medeval {tool or ''} "
        f"(no {MARKER}); choose an empty or new folder".replace("  ", " ")
    )


def check_replaceable(path: str | os.PathLike, *, tool: str, what: str = "--out") -> None:
    """The content rule of :func:`check_out` alone (no lock, nothing written): ``path`` is
    absent, empty or an earlier output of ``tool`` holding only its own files, for a folder
    that a later step of the same run replaces (``benchmark``'s ``analysis/``).

    Raises:
        OutputPathError: naming ``path`` and why.
    """
    _check_content(Path(path), tool, what)


def check_out(
    path: str | os.PathLike,
    *,
    kind: str = "folder",
    what: str = "--out",
    tool: str | None = None,
    inputs: Iterable[Any] = (),
    resumable: bool = False,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Check before computing that ``path`` can receive the results.

    Args:
        path: the output folder (``kind="folder"``) or file (``kind="file"``); it need not exist.
        kind: ``"folder"`` or ``"file"``.
        what: how the message names the path (the option that gave it).
        tool: the tool that writes the folder. Given, the folder must be absent, empty or an
            earlier output of that tool (see the module docstring), any leftovers of an
            interrupted replacement are recovered first, and the folder's lock is taken (released
            by :func:`replace_folder` or :func:`unlock_output`).
        inputs: the run's input files and folders; a folder holding one of them (or the
            current folder) is refused, and a file output may not be one of them.
        resumable: the folder is written file by file and resumed in place (not replaced): a
            symbolic link to it is accepted and it may hold the inputs.
        log: where the warning about a recovered folder goes (default: ``warnings.warn``).

    Raises:
        OutputPathError: the path cannot or must not receive the results (one line naming it
            and why), or another run holds its lock.
    """
    path = Path(path)
    if kind not in ("folder", "file"):
        raise ValueError(f"kind must be 'folder' or 'file'; got {kind!r}")
    if kind == "folder":  # first: "." or a link is refused before anything is written
        _check_name(path, what, symlink_ok=resumable)
    if path.name not in ("", ".", ".."):
        _check_length(path, what)
    if kind == "folder" and path.exists() and not path.is_dir():
        raise OutputPathError(f"{what} {path}: is a file, not a folder")
    if kind == "file" and path.is_dir():
        raise OutputPathError(f"{what} {path}: is a folder, not a file")
    start = path if kind == "folder" else path.parent
    base = _existing_ancestor(start)
    if not base.is_dir():
        raise OutputPathError(f"{what} {path}: {base} is a file, not a folder")
    _probe_writable(base, f"{what} {path}")
    if kind == "file":
        for given in inputs:
            if given is not None and os.path.realpath(given) == os.path.realpath(path):
                raise OutputPathError(f"{what} {path}: is the input {given}; choose another {what}")
        return path
    if not resumable:
        _check_inputs(path, inputs, what)
    if tool is not None:
        taken = lock_output(path, what=what, tool=tool)
        try:
            recover(path, what=what, log=log)
            _check_content(path, tool, what, resumable=resumable)
        except BaseException:
            if taken:
                unlock_output(path)
            raise
    return path


def _siblings(target: Path) -> list[tuple[str, Path]]:
    """What replacements of ``target`` left beside it: ``("new"|"old", folder)``."""
    prefix = f".{target.name}."
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.name.startswith(prefix) and entry.is_dir(follow_symlinks=False):
            m = _SIBLING.fullmatch(entry.name[len(prefix) :])
            if m:
                found.append((m.group(1), Path(entry.path)))
    return found


def _previous_run(old: Path, name: str) -> Path:
    # Earlier versions moved the target into a fresh folder: .<name>.old-<id>/<name>.
    inner = old / name
    if read_marker(old) is None and inner.is_dir() and [p.name for p in old.iterdir()] == [name]:
        return inner
    return old


def recover(
    target: str | os.PathLike, *, what: str = "--out", log: Callable[[str], None] | None = None
) -> Path | None:
    """Finish what an interrupted replacement of ``target`` left (call it holding the lock).

    Probe files a killed check left in ``target`` or beside it are removed. If ``target`` is
    missing, the complete new folder (marker with ``complete: true``) or else
    the previous one is renamed back into place, with a warning naming it. The other leftovers
    (the previous run once ``target`` is in place, half-written new folders) are removed.

    Returns:
        The folder put back, or ``None``.
    """
    target = Path(target)
    for folder in (target, target.parent):
        _remove_stale_probes(folder)
    leftovers = _siblings(target)
    restored = None
    if leftovers and not (target.exists() or target.is_symlink()):
        complete = [(p, p) for kind, p in leftovers if kind == "new" and _complete(p)]
        previous = [(p, _previous_run(p, target.name)) for kind, p in leftovers if kind == "old"]
        for group, which in ((complete, "its new results"), (previous, "the previous results")):
            if group:
                left, restored = max(group, key=lambda pair: pair[1].stat().st_mtime_ns)
                os.replace(restored, target)
                _fsync_dir(target.parent)
                text = (
                    f"{what} {target}: was missing after an interrupted run; "
                    f"put back {which} from {left}"
                )
                (log or (lambda m: warnings.warn(m, OutputRecoveredWarning, stacklevel=3)))(text)
                break
    for _kind, p in leftovers:
        if p.exists():
            shutil.rmtree(p, ignore_errors=True)
    return restored


def _complete(folder: Path) -> bool:
    mark = read_marker(folder)
    return mark is not None and mark.get("complete") is True


def _fsync_dir(folder: Path) -> None:
    """Make the renames in ``folder`` durable (a crash then finds them done or not done)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _sibling(target: Path, kind: str) -> Path:
    return target.parent / f".{target.name}.{kind}-{secrets.token_hex(4)}"


def claim_folder(folder: str | os.PathLike, *, tool: str) -> Path:
    """Create ``folder`` (written file by file, resumed in place) with the marker of ``tool``,
    unless it has a marker already."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if read_marker(folder) is None:
        write_json(folder / MARKER, _marker_record(tool, complete=False))
    return folder


@contextmanager
def replace_folder(
    target: str | os.PathLike,
    *,
    tool: str | None = None,
    inputs: Iterable[Any] = (),
    log: Callable[[str], None] | None = None,
    what: str = "output folder",
    wait_s: float = 0.0,
) -> Iterator[Path]:
    """Yield a fresh temporary folder beside ``target``; on success it replaces ``target``.

    Whatever was in ``target`` before is removed only after the new folder is complete, so the
    folder holds the previous run or the new one, never a mix of both, also after a kill at any
    moment (see the module docstring). On any exception the temporary folder is removed and
    ``target`` is left as it was. ``target`` is checked as by :func:`check_out` with ``tool``
    (``None``: the tool given to the :func:`check_out` that locked it, else any medeval output
    may be replaced); the lock is released at the end. ``what`` names the folder in messages;
    another run holding its lock is waited for up to ``wait_s`` seconds (see
    :func:`lock_output`).
    """
    target = Path(target)
    if tool is None and os.path.abspath(target) in _HELD:
        tool = _HELD[os.path.abspath(target)][2]
    check_out(target, what=what, inputs=inputs)
    taken = lock_output(target, what=what, wait_s=wait_s, log=log)
    try:
        recover(target, what=what, log=log)
        _check_content(target, tool, what)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = _sibling(target, "new")
        os.mkdir(tmp, 0o777)  # the umask applies: results are meant to be shared
        try:
            yield tmp
            # Last, so that a .new folder with a complete marker is a complete folder.
            write_json(tmp / MARKER, _marker_record(tool, complete=True, files=_files_in(tmp)))
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        _swap(target, tmp)
    finally:
        if taken or os.path.abspath(target) in _HELD:
            unlock_output(target)


def _swap(target: Path, tmp: Path) -> None:
    """Steps 2–4 of the module docstring."""
    old = None
    if target.exists():
        old = _sibling(target, "old")
        os.replace(target, old)
    try:
        os.replace(tmp, target)
    except BaseException:
        if old is not None:  # put the previous run back; if that fails, recover() will
            os.replace(old, target)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(target.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
