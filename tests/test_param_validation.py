"""Every parameter is declared, and every declared parameter refuses the values its declaration
does not allow, in the same words in Python and on the command line (in the spirit of
scikit-learn's ``sklearn/tests/test_public_functions.py``).

The declarations are walked, not listed: every callable decorated with
:func:`medeval._validation.validate_params` (:data:`~medeval._validation.VALIDATED`), every
settings class decorated with :func:`~medeval._validation.declared`
(:data:`~medeval._validation.SETTINGS`) and every option of every tool whose type is made from a
declaration (:mod:`medeval.cli.options`). Invalid values are derived from each constraint
(below and above an interval's bounds, the wrong type, NaN, an unknown string, ...) and kept
only where the whole declaration refuses them.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import math
import pkgutil
import sys
from numbers import Integral
from pathlib import Path

import pytest

import medeval
from medeval._validation import (
    SETTINGS,
    VALIDATED,
    Interval,
    InvalidParameterError,
    StrOptions,
    TypeOf,
    _as_constraint,
    accepts,
    check_params,
)

TOOLS = (
    "evaluate",
    "subconcepts",
    "discover",
    "train",
    "benchmark",
    "embed",
    "analyze",
    "tasks",
    "label",
)


def _import_every_module() -> None:
    """Declarations register themselves when their module is imported."""
    for info in pkgutil.walk_packages(medeval.__path__, "medeval."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except ModuleNotFoundError as err:  # an optional extra (its own tests say so)
            if (err.name or "").startswith("medeval"):
                raise


_import_every_module()


def _invalid_values(allowed: list) -> list:
    """Values derived from each constraint that none of ``allowed`` accepts."""
    candidates: list = [object(), None, "not-an-option", math.nan, True, [1, 2]]
    for c in map(_as_constraint, allowed):
        if isinstance(c, Interval):
            for bound in (c.left, c.right):
                if bound is not None and math.isfinite(bound):
                    candidates += [bound - 1, bound + 1, bound]
            candidates += [math.inf, -math.inf, "1", 0.5 if issubclass(c.kind, Integral) else 1j]
        elif isinstance(c, StrOptions):
            candidates += [f"{c.options[0]}-unknown" if c.options else "x", 12345]
    bad = []
    for value in candidates:
        if not accepts(allowed, value) and not any(value is b for b in bad):
            bad.append(value)
    return bad


def _bare(cls: type):
    """An instance of ``cls`` made without its constructor (a dataclass table, a settings
    object): enough for an isinstance check."""
    for make in (object.__new__, lambda c: c()):
        try:
            return make(cls)
        except TypeError:
            continue
    return None


def _valid_value(allowed: list):
    """A value the declaration accepts (for a required parameter that is not under test)."""
    for c in map(_as_constraint, allowed):
        if isinstance(c, Interval):
            value = c.left if c.left is not None and math.isfinite(c.left) else 0
            value = value + 1 if not c.accepts(value) else value
            return int(value) if issubclass(c.kind, Integral) else float(value)
        if isinstance(c, StrOptions):
            return c.options[0]
        if isinstance(c, TypeOf):
            for value in ("", False, {}, (), [], *map(_bare, c.types)):
                if c.accepts(value):
                    return value
        if c.accepts([0.5, 0.5]):  # an array of one value per instance
            return [0.5, 0.5]
    pytest.fail(f"no valid value generated for {allowed}: add a case to _valid_value")


def _parameters(func) -> list[str]:
    """The parameters of ``func`` a caller passes (not ``self``, ``*args``, ``**kwargs``)."""
    params = inspect.signature(func).parameters.values()
    skip = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [p.name for p in params if p.name != "self" and p.kind not in skip]


def _id(func, name) -> str:
    return f"{func.__module__}.{func.__qualname__}:{name}"


# --- every parameter and field is declared ------------------------------------------------


def test_the_registries_hold_the_public_declarations():
    validated = {f"{f.__module__}.{f.__qualname__}" for f, _ in VALIDATED}
    for expected in (
        "medeval.evaluation.core.evaluate",
        "medeval.evaluation.core.evaluate_predictions",
        "medeval.flows.benchmark.run_benchmark",
        "medeval.flows.tasks.write_split_manifest",
        "medeval.discovery.discover_subconcepts",
    ):
        assert expected in validated
    names = {c.__qualname__ for c in SETTINGS}
    for expected in (
        "EvaluationOptions",
        "EvaluateSettings",
        "RerunSettings",
        "DiscoverySettings",
        "SubconceptSettings",
        "EmbedSettings",
        "BenchmarkSettings",
        "TrainConfig",
    ):
        assert expected in names


@pytest.mark.parametrize("func", [f for f, _ in VALIDATED], ids=lambda f: f.__qualname__)
def test_every_parameter_of_every_validated_callable_is_declared(func):
    undeclared = [name for name in _parameters(func) if name not in func.constraints]
    assert not undeclared, f"{func.__qualname__}: declare {undeclared}"


@pytest.mark.parametrize("cls", SETTINGS, ids=lambda c: c.__qualname__)
def test_every_field_of_every_settings_class_is_declared(cls):
    undeclared = [f.name for f in dataclasses.fields(cls) if f.name not in cls.constraints]
    assert not undeclared, f"{cls.__qualname__}: declare {undeclared}"


def test_every_settings_class_is_declared():
    """A dataclass named ``*Settings`` or ``*Options`` declares its fields."""
    found = {
        obj
        for name, module in list(sys.modules.items())
        if name.startswith("medeval") and module is not None
        for obj in vars(module).values()
        if inspect.isclass(obj) and obj.__name__.endswith(("Settings", "Options"))
        and dataclasses.is_dataclass(obj) and obj.__module__.startswith("medeval")
    }  # fmt: skip
    assert len(found) >= 7, found
    assert not {c.__qualname__ for c in found if c not in SETTINGS}


def test_every_public_callable_with_options_is_validated():
    """What ``medeval`` exports and takes keyword-only options checks them by declaration."""
    validated = {f for f, _ in VALIDATED}
    for name in medeval.__all__:
        obj = getattr(medeval, name)
        if inspect.isclass(obj) or not callable(obj):
            continue
        params = inspect.signature(obj).parameters.values()
        if any(p.kind is p.KEYWORD_ONLY for p in params):
            assert obj in validated, name


# --- every declared value is refused ------------------------------------------------------


def _cases():
    for func, constraints in VALIDATED:
        for name, allowed in constraints.items():
            for bad in _invalid_values(allowed):
                yield pytest.param(func, constraints, name, bad, id=_id(func, name))


def _arguments(func, constraints: dict) -> dict:
    """Keyword arguments binding every parameter without a default: a valid value (the check
    runs before the body)."""
    kwargs = {}
    for p in inspect.signature(func).parameters.values():
        if p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        kwargs[p.name] = _valid_value(constraints[p.name]) if p.name in constraints else None
    return kwargs


@pytest.mark.parametrize(("func", "constraints", "name", "bad"), list(_cases()))
def test_a_declared_callable_refuses_each_invalid_value(func, constraints, name, bad):
    kwargs = _arguments(func, constraints)
    kwargs[name] = bad
    with pytest.raises(InvalidParameterError, match=rf"\b{name} must be .*; got "):
        func(**kwargs)


def _required(cls) -> dict:
    """Valid values of the fields of ``cls`` without a default."""
    missing = dataclasses.MISSING
    return {
        f.name: _valid_value(cls.constraints[f.name])
        for f in dataclasses.fields(cls)
        if f.default is missing and f.default_factory is missing
    }


def _settings_cases():
    for cls in SETTINGS:
        for field, allowed in cls.constraints.items():
            for bad in _invalid_values(allowed):
                yield pytest.param(cls, field, bad, id=f"{cls.__qualname__}.{field}")


@pytest.mark.parametrize(("cls", "field", "bad"), list(_settings_cases()))
def test_a_settings_object_refuses_each_invalid_value(cls, field, bad):
    with pytest.raises(InvalidParameterError, match=rf"^{cls.__qualname__}: {field} must be "):
        cls(**{**_required(cls), field: bad})


def test_settings_accept_their_own_defaults():
    for cls in SETTINGS:
        instance = cls(**_required(cls))
        for field, allowed in cls.constraints.items():
            assert accepts(allowed, getattr(instance, field)), (cls, field)


def test_one_seed_rule_everywhere():
    """Every seed a user gives takes 0..2**32-1 (NumPy's legacy generators and scikit-learn):
    in the settings, the functions, a config and on the command line."""
    from medeval.options import SEED
    from medeval.training.config import ConfigError, load_config

    assert SEED.accepts(2**32 - 1) and not SEED.accepts(2**32) and not SEED.accepts(-1)
    # BatchedBootstrap.run's seed keys its generator streams: the evaluation derives some
    # above 2**32 for the reference rows (medeval.evaluation.rectified.reference_seed)
    engine = ("BatchedBootstrap.run",)
    seeds = {
        (f.__qualname__, n): c
        for f, cs in VALIDATED
        if f.__qualname__ not in engine
        for n, c in cs.items()
        if n.endswith("seed")
    }
    seeds |= {
        (c.__qualname__, n): a
        for c in SETTINGS
        for n, a in c.constraints.items()
        if n.endswith("seed")
    }
    assert len(seeds) >= 8
    for where, allowed in seeds.items():
        assert not accepts(allowed, 2**32) and accepts(allowed, 2**32 - 1), where
    seeds_of_splits = next(c for c in SETTINGS if c.__qualname__ == "SplitsConfig")
    assert not accepts(seeds_of_splits.constraints["seeds"], [0, 2**32])
    with pytest.raises(ConfigError, match=r"^train\.seed: must be an int in \[0, 4294967295\]"):
        load_config(None, [f"train.seed={2**63}"])


# --- the command line: every declared option, in the declaration's words --------------------


def _parsers():
    for tool in TOOLS:
        parser = importlib.import_module(f"medeval.cli.{tool}").build_parser()
        if tool == "tasks":  # its options are the split subcommand's
            sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            yield tool, ["split"], sub.choices["split"]
        else:
            yield tool, [], parser


def _declared_actions():
    for tool, prefix, parser in _parsers():
        for action in parser._actions:
            allowed = getattr(action.type, "allowed", None)
            if allowed is not None and action.option_strings:
                yield tool, prefix, action, allowed


def _expressible(value, allowed: list) -> bool:
    """A value a command line can spell: for a text option any text; for a number, a number
    or text that is no number (the text ``"1"`` is the number 1 there)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return False
    if not any(isinstance(c, Interval) for c in allowed):
        return isinstance(value, str)
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return not value.startswith("-")
        return False
    return True


def _cli_cases():
    for tool, prefix, action, allowed in _declared_actions():
        flag = action.option_strings[-1]
        for bad in _invalid_values(allowed):
            if _expressible(bad, allowed):
                yield pytest.param(tool, prefix, flag, allowed, bad, id=f"{tool}{flag}={bad}")


def test_the_tools_options_are_made_from_their_declarations():
    """No hand-written argparse type and no literal choices: an option that takes a value is
    declared, free text or a path; only the data sources' own registry lists choices."""
    from medeval.datasets.sources import all_options

    sources = {f"--{flag}" for flag in all_options()} | {"--source"}
    declared = 0
    for tool, _prefix, parser in _parsers():
        for action in parser._actions:
            flag = (action.option_strings or [action.dest])[-1]
            if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
                assert flag in sources, (tool, flag)
            if action.type is not None and flag not in sources:
                assert hasattr(action.type, "allowed") or action.type in (str, Path), (tool, flag)
                declared += hasattr(action.type, "allowed")
    assert declared >= 30


def test_every_evaluating_tool_shares_every_evaluation_option():
    from medeval.cli.options import EVALUATION_FLAGS

    for tool in ("evaluate", "subconcepts", "discover", "train", "benchmark"):
        parser = importlib.import_module(f"medeval.cli.{tool}").build_parser()
        flags = {o for a in parser._actions for o in a.option_strings}
        assert set(EVALUATION_FLAGS) <= flags, tool


@pytest.mark.parametrize(("tool", "prefix", "flag", "allowed", "bad"), list(_cli_cases()))
def test_a_bad_option_is_refused_in_the_words_python_uses(tool, prefix, flag, allowed, bad, capsys):
    """The tool's one-line error ends with what Python says of the same value."""
    with pytest.raises(InvalidParameterError) as python:
        check_params("python", {"field": bad}, {"field": allowed})
    words = str(python.value).split("field ", 1)[1]  # "must be ...; got ..."
    main = importlib.import_module(f"medeval.cli.{tool}").main
    with pytest.raises(SystemExit) as exc:
        main([*prefix, f"{flag}={bad}"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(f"error: argument {flag}: {words}"), err
