"""medeval/cli/logs.py: a tool prints its library loggers' INFO records as plain lines."""

import logging

import pytest

from medeval.cli.logs import show_progress

NAME = "medeval.tests.logs_probe"


def test_info_records_print_as_bare_messages_and_debug_ones_do_not(capsys):
    log = logging.getLogger(NAME)
    with show_progress([NAME]):
        log.info("step %d of %d", 1, 3)
        log.debug("hidden")
    assert capsys.readouterr().out == "step 1 of 3\n"


def test_nothing_prints_when_not_enabled(capsys):
    with show_progress([NAME], enabled=False):
        logging.getLogger(NAME).info("quiet")
    assert capsys.readouterr().out == ""


def test_levels_and_handlers_are_restored_even_after_an_error(capsys):
    log = logging.getLogger(NAME)
    log.setLevel(logging.WARNING)
    handlers = list(log.handlers)
    try:
        with pytest.raises(RuntimeError), show_progress([NAME]):
            raise RuntimeError("stop")
        assert log.level == logging.WARNING and log.handlers == handlers
        log.info("after")
        assert capsys.readouterr().out == ""
    finally:
        log.setLevel(logging.NOTSET)
