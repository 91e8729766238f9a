"""medeval._memory: imports with the collector paused and their objects frozen."""

import gc

import pytest

from medeval._memory import frozen_imports


@pytest.fixture(autouse=True)
def _collector_restored():
    enabled = gc.isenabled()
    yield
    gc.unfreeze()  # the frozen objects go back to the oldest generation, as before the test
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_frozen_imports_pauses_the_collector_and_freezes_what_was_made():
    gc.enable()
    before = gc.get_freeze_count()
    with frozen_imports():
        assert not gc.isenabled()
        made = [[i] for i in range(1000)]  # containers the collector tracks
    assert gc.isenabled()
    assert gc.get_freeze_count() >= before + len(made)


def test_frozen_imports_restores_the_collector_when_an_import_fails():
    gc.enable()
    with pytest.raises(ModuleNotFoundError), frozen_imports():
        import medeval_no_such_module  # noqa: F401
    assert gc.isenabled()


def test_frozen_imports_leaves_a_paused_collector_paused():
    gc.disable()
    with frozen_imports():
        pass
    assert not gc.isenabled()
