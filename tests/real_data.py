"""Where the tests find the real public data sets, and the one rule for a test that needs them:
it is skipped, naming the folder it looked for, when that folder is absent (never a failure
deep inside a loader).

The folder is ``$MEDEVAL_DATA``, by default ``../shared/data`` beside the repository (it holds
``keel/``, ``pmlb/``, ``nih/``, ``isic_skin/``); it is read in place, never copied here.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("MEDEVAL_DATA", REPO.parent / "shared" / "data"))


def missing(*parts: str) -> str | None:
    """Why ``SHARED_DATA / parts`` cannot be used (a skip reason), or ``None`` if it is there."""
    path = SHARED_DATA.joinpath(*parts)
    if path.exists():
        return None
    return (
        f"needs the shared real data {path}, which is absent: set MEDEVAL_DATA to the folder "
        "holding keel/, pmlb/, nih/ and isic_skin/ (default ../shared/data beside the repository)"
    )


def shared_path(*parts: str) -> Path:
    """``SHARED_DATA / parts``; skips the calling test (or fixture) when it is absent."""
    reason = missing(*parts)
    if reason:
        pytest.skip(reason)
    return SHARED_DATA.joinpath(*parts)
