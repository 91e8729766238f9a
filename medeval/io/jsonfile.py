"""One rule for reading a JSON file a user gives (train sizes, records): UTF-8, valid JSON,
and no key twice in one object (Python's reader would silently keep the last value)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from medeval.errors import InputError

__all__ = ["read_json"]


def read_json(path: str | Path) -> Any:
    """The JSON value in ``path``.

    Raises:
        InputError: the file is missing, not UTF-8, not valid JSON, or an object holds a key
            twice (naming the key).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise InputError(
                    path, f"key {key!r} is given twice (JSON keeps only the last): give it once"
                )
            out[key] = value
        return out

    try:
        return json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=unique)
    except UnicodeDecodeError as err:
        raise InputError(path, f"not UTF-8 JSON text ({err.reason} at byte {err.start})") from err
    except json.JSONDecodeError as err:
        raise InputError(path, f"not valid JSON: {err}") from err
