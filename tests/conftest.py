"""Shared test fixtures. Real data is read from ``$MEDEVAL_DATA`` (default ``../shared/data``)."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder with the real public data sets (KEEL, PMLB, NIH metadata); never copied here."""
    path = Path(os.environ.get("MEDEVAL_DATA", REPO.parent / "shared" / "data"))
    if not (path / "keel").is_dir():
        pytest.fail(
            f"real data not found at {path}: set MEDEVAL_DATA to the shared data folder "
            "(the one holding keel/, pmlb/ and nih/)"
        )
    return path
