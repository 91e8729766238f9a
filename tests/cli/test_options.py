"""Command-line options made from their declarations: the type, range, choices and default of
each come from the settings that declare it, and a bad value is refused in Python's words."""

from __future__ import annotations

import argparse

import pytest

from medeval._validation import InvalidParameterError
from medeval.cli.options import add_options, given_options, option_type
from medeval.options import DiscoverySettings, EvaluationOptions

FLAGS = {"--k-max": "largest k per class", "--method": "how each class is clustered"}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tool", exit_on_error=False)
    add_options(p, DiscoverySettings, FLAGS)
    return p


def _python_words(cls, field: str, value) -> str:
    with pytest.raises(InvalidParameterError) as err:
        cls(**{field: value})
    return str(err.value).split(f"{field} ", 1)[1]


@pytest.mark.parametrize(
    ("field", "text", "value"),
    [("n_bootstrap", "-5", -5), ("n_bootstrap", "1.5", 1.5), ("n_bootstrap", "x", "x"),
     ("confidence", "1", 1), ("confidence", "nan", float("nan")), ("stratify", "bogus", "bogus")],
)  # fmt: skip
def test_a_refused_value_gets_the_words_python_gives_it(field, text, value):
    kind = option_type(EvaluationOptions.constraints[field])
    with pytest.raises(argparse.ArgumentTypeError) as err:
        kind(text)
    assert str(err.value) == _python_words(EvaluationOptions, field, value)


def test_a_whole_number_for_a_real_field_is_kept_as_a_float():
    kind = option_type(EvaluationOptions.constraints["threshold"])
    assert kind("1") == 1.0 and isinstance(kind("1"), float)
    assert option_type(EvaluationOptions.constraints["n_bootstrap"])("20") == 20


def test_options_take_their_defaults_and_choices_from_the_declaration():
    p = _parser()
    text = p.format_help()
    assert "largest k per class (default 8)" in text
    assert "{gmm,kmeans}" in text and "(default gmm)" in text
    args = p.parse_args(["--k-max", "3"])
    assert args.method is None  # left out: the settings' default applies
    assert given_options(args, FLAGS) == {"k_max": 3}
    assert DiscoverySettings(**given_options(args, FLAGS)).method == "gmm"


def test_an_option_records_the_declaration_it_was_made_from():
    action = next(a for a in _parser()._actions if "--k-max" in a.option_strings)
    assert action.declared == (DiscoverySettings, "k_max")
    assert action.type.allowed == DiscoverySettings.constraints["k_max"]
