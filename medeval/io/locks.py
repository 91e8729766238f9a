"""The lock of an output folder: a file ``.<name>.lock`` beside it (``fcntl.flock``), held from
the check of the folder to the end of the run, so that a second run on the same folder is
refused, naming the first one's pid (:func:`lock_output`, :func:`unlock_output`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from medeval.errors import OutputPathError

try:  # POSIX; elsewhere runs on one folder are not locked
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

__all__ = ["held_outputs", "lock_holder", "lock_output", "unlock_output"]

#: Held output locks of this process: absolute target -> (fd, lock file, tool that checked it,
#: the folders created for the lock file, deepest first).
_HELD: dict[str, tuple[int, Path, str | None, list[Path]]] = {}


def _lock_file(target: Path) -> Path:
    return target.parent / f".{target.name}.lock"


#: How long a lock is tried again before it counts as held: :func:`lock_holder` of another
#: process may hold it for a moment to look.
_LOCK_RETRY_S = 0.25


def lock_output(
    target: str | os.PathLike,
    *,
    what: str = "--out",
    tool: str | None = None,
    wait_s: float = 0.0,
    log: Callable[[str], None] | None = None,
) -> bool:
    """Take the lock of output folder ``target`` (``.<name>.lock`` beside it).

    Ranks of one distributed launch (``WORLD_SIZE`` > 1) share their folder by design and take
    no lock.

    Args:
        wait_s: how long to wait for another process holding it to finish (``log`` is told
            once that it waits); by default it is refused at once.

    Returns:
        ``True`` if taken now, ``False`` if this process already holds it (or takes none).

    Raises:
        OutputPathError: another process holds it (the message names its pid).
    """
    target = Path(target)
    key = os.path.abspath(target)
    if fcntl is None or key in _HELD or os.environ.get("WORLD_SIZE", "1") != "1":
        return False
    path = _lock_file(target)
    created = [p for p in [path.parent, *path.parent.parents] if not p.exists()]
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline, told = time.monotonic() + max(wait_s, _LOCK_RETRY_S), False
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder_pid(fd)
            os.close(fd)
            if time.monotonic() < deadline:
                if wait_s > _LOCK_RETRY_S and log is not None and not told:
                    log(f"{what} {target}: waiting for the run writing it (pid {pid}) to end")
                    told = True
                time.sleep(0.05)
                continue
            _remove_empty(created)
            raise OutputPathError(
                f"{what} {target}: another run (pid {pid}) is writing it; wait for it to "
                f"finish or choose another {what}"
            ) from None
        # The holder removes the file before releasing it, so a lock taken on a file that is
        # no longer at ``path`` guards nothing: try again on the new one.
        try:
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    _HELD[key] = (fd, path, tool, created)
    return True


def lock_holder(target: str | os.PathLike) -> str | None:
    """The pid of the run that holds the lock of output folder ``target`` (this process's own
    when it holds it), or ``None`` when no run writes it. Creates nothing: it tries a shared
    lock on an existing lock file and releases it at once (:data:`_LOCK_RETRY_S`)."""
    if os.path.abspath(target) in _HELD:
        return str(os.getpid())
    if fcntl is None:  # pragma: no cover
        return None
    try:
        fd = os.open(_lock_file(Path(target)), os.O_RDONLY)
    except OSError:  # no lock file: nobody writes it
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _holder_pid(fd)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _holder_pid(fd: int, wait_s: float = 1.0) -> str:
    """The pid the holder of a lock wrote into it; it writes it just after taking the lock,
    so an empty file is read again for up to ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while True:
        pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
        if pid or time.monotonic() > deadline:
            return pid or "unknown"
        time.sleep(0.02)


def unlock_output(target: str | os.PathLike) -> None:
    """Release the lock of ``target`` if this process holds it (and remove the lock file)."""
    held = _HELD.pop(os.path.abspath(target), None)
    if held is not None:
        fd, path, _tool, created = held
        path.unlink(missing_ok=True)  # while still holding it: see lock_output
        os.close(fd)
        _remove_empty(created)


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders made for a lock file if a refused or failed run left them empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:  # not empty (the results are there) or already gone
            return


def held_outputs() -> set[str]:
    """The output folders whose lock this process holds (absolute paths)."""
    return set(_HELD)
