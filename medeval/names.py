"""Names that print alike (Unicode normalisation, invisible characters) shown by their code
points, saying how they differ (:func:`lookalike`); standard library only."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

__all__ = ["lookalike", "shown", "visible_key"]


def _invisible(ch: str) -> bool:
    # format characters: zero-width space/joiners, word joiner, byte-order mark, soft hyphen
    return unicodedata.category(ch) == "Cf"


def visible_key(name: str) -> str:
    """What ``name`` looks like: NFC-normalised, without invisible characters."""
    return "".join(ch for ch in unicodedata.normalize("NFC", name) if not _invisible(ch))


def shown(name: str) -> str:
    """``repr(name)``, or its escaped code points (``'O\\u0308dem'``) where the plain form
    would hide how it is written (not NFC, or holding invisible characters)."""
    plain = unicodedata.normalize("NFC", name) == name and not any(map(_invisible, name))
    return repr(name) if plain else ascii(name)


def lookalike(name: str, known: Iterable[str]) -> str:
    """A clause for a message about ``name`` that is not among ``known``: how it differs from
    a known name it prints like, or ``""`` when it looks like none of them."""
    for other in known:
        if other != name and visible_key(other) == visible_key(name):
            how = (
                "Unicode normalisation (NFC vs NFD)"
                if unicodedata.normalize("NFC", other) == unicodedata.normalize("NFC", name)
                else "invisible characters"
            )
            return (
                f" ({shown(name)} prints like {shown(other)} but differs from it by {how}: "
                f"code points {_points(name)} vs {_points(other)})"
            )
    return ""


def _points(name: str) -> str:
    return " ".join(f"U+{ord(ch):04X}" for ch in name)
