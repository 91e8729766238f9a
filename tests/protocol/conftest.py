"""Small real tasks for the protocol tests (KEEL vehicle and segment)."""

from pathlib import Path

import pytest

from medeval.datasets import load
from medeval.splits import cv_5x2
from medeval.tasks import make_binary_task


@pytest.fixture(scope="session")
def vehicle_task(shared_data: Path):
    return make_binary_task(load("keel", shared_data / "keel", name="vehicle"), seed=0)


@pytest.fixture(scope="session")
def vehicle_splits(vehicle_task):
    return cv_5x2(vehicle_task, 0)
