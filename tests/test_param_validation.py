"""Every declared parameter refuses the values its declaration does not allow, by construction
(in the spirit of scikit-learn's ``sklearn/tests/test_public_functions.py``).

The declarations are walked, not listed: every callable decorated with
:func:`medeval._validation.validate_params` (:data:`~medeval._validation.VALIDATED`), every
settings class decorated with :func:`~medeval._validation.declared`
(:data:`~medeval._validation.SETTINGS`) and every tool's evaluation options
(:data:`medeval.cli.common.EVALUATION_FLAGS`). Invalid values are derived from each constraint
(below and above an interval's bounds, the wrong type, NaN, an unknown string, ...) and kept
only where the whole declaration refuses them.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pkgutil
import typing
from numbers import Integral

import pytest

import medeval
from medeval._validation import (
    SETTINGS,
    VALIDATED,
    Fields,
    Interval,
    InvalidParameterError,
    Options,
    TypeOf,
    _as_constraint,
    accepts,
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
        elif isinstance(c, Options):
            candidates += [f"{c.options[0]}-unknown" if c.options else "x", 12345]
    bad = []
    for value in candidates:
        if not accepts(allowed, value) and not any(value is b for b in bad):
            bad.append(value)
    return bad


def _valid_value(allowed: list):
    """A value the declaration accepts (for a required parameter that is not under test)."""
    for c in map(_as_constraint, allowed):
        if isinstance(c, Interval):
            value = c.left if c.left is not None and math.isfinite(c.left) else 0
            value = value + 1 if not c.accepts(value) else value
            return int(value) if issubclass(c.kind, Integral) else float(value)
        if isinstance(c, Options):
            return c.options[0]
        if isinstance(c, TypeOf):
            for value in ("", False, {}, (), *map(_bare, c.types)):
                if c.accepts(value):
                    return value
    pytest.fail(f"no valid value generated for {allowed}: add a case to _valid_value")


def _bare(cls: type):
    """An instance of ``cls`` made without its constructor (a dataclass table, a settings
    object): enough for an isinstance check."""
    try:
        return object.__new__(cls)
    except TypeError:
        return None


def _cases():
    for func, constraints in VALIDATED:
        for name, allowed in constraints.items():
            if isinstance(allowed, Fields):
                for field, inner in allowed.constraints.items():
                    for bad in _invalid_values(inner):
                        yield pytest.param(func, constraints, name, field, bad, id=_id(func, field))
            else:
                for bad in _invalid_values(allowed):
                    yield pytest.param(func, constraints, name, None, bad, id=_id(func, name))


def _id(func, name) -> str:
    return f"{func.__module__}.{func.__qualname__}:{name}"


def _arguments(func, constraints: dict) -> dict:
    """Keyword arguments binding every parameter without a default: a valid value where it is
    declared, a placeholder where not (the check runs before the body)."""
    kwargs = {}
    for p in inspect.signature(func).parameters.values():
        if p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        declared = constraints.get(p.name)
        if isinstance(declared, Fields):
            kwargs[p.name] = _settings_instance(func, p.name, declared)
        elif declared is not None:
            kwargs[p.name] = _valid_value(declared)
        else:
            kwargs[p.name] = None
    return kwargs


def _settings_instance(func, name: str, declared: Fields):
    cls = typing.get_type_hints(func)[name]
    values = {}
    for f in dataclasses.fields(cls):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            inner = declared.constraints.get(f.name)
            values[f.name] = _valid_value(inner) if inner else "placeholder"
    return cls(**values)


def test_the_registries_hold_the_public_declarations():
    validated = {f"{f.__module__}.{f.__qualname__}" for f, _ in VALIDATED}
    assert "medeval.evaluation.core.evaluate_predictions" in validated
    assert "medeval.flows.benchmark.run_benchmark" in validated
    assert len(validated) >= 8
    names = {c.__qualname__ for c in SETTINGS}
    for expected in (
        "EvaluationOptions",
        "EvaluateSettings",
        "RerunSettings",
        "DiscoverySettings",
        "SubconceptSettings",
        "TrainConfig",
    ):
        assert expected in names


def test_every_settings_class_is_declared():
    """A dataclass named ``*Settings`` either declares its fields or is checked as a whole
    by the validated callable that takes it (``Fields``)."""
    by_fields = set()
    for func, constraints in VALIDATED:
        hints = typing.get_type_hints(func)
        by_fields |= {hints[n] for n, c in constraints.items() if isinstance(c, Fields)}
    found = {
        obj
        for info in pkgutil.walk_packages(medeval.__path__, "medeval.")
        if not info.name.endswith("__main__") and info.name in _loaded()
        for obj in vars(_loaded()[info.name]).values()
        if inspect.isclass(obj) and obj.__name__.endswith("Settings")
        and dataclasses.is_dataclass(obj) and obj.__module__.startswith("medeval")
    }  # fmt: skip
    assert found, "no settings class found"
    undeclared = {c.__qualname__ for c in found if c not in SETTINGS and c not in by_fields}
    assert not undeclared


def _loaded() -> dict:
    import sys

    return sys.modules


@pytest.mark.parametrize(("func", "constraints", "name", "field", "bad"), list(_cases()))
def test_a_declared_callable_refuses_each_invalid_value(func, constraints, name, field, bad):
    kwargs = _arguments(func, constraints)
    if field is None:
        kwargs[name] = bad
        named = name
    else:
        kwargs[name] = dataclasses.replace(kwargs[name], **{field: bad})
        named = field
    with pytest.raises(InvalidParameterError, match=rf"\b{named} must be .*; got "):
        func(**kwargs)


def _settings_cases():
    for cls in SETTINGS:
        for field, allowed in cls.constraints.items():
            for bad in _invalid_values(allowed):
                yield pytest.param(cls, field, bad, id=f"{cls.__qualname__}.{field}")


@pytest.mark.parametrize(("cls", "field", "bad"), list(_settings_cases()))
def test_a_settings_object_refuses_each_invalid_value(cls, field, bad):
    with pytest.raises(InvalidParameterError, match=rf"^{cls.__qualname__}: {field} must be "):
        cls(**{field: bad})


def test_settings_accept_their_own_defaults():
    for cls in SETTINGS:
        instance = cls()
        for field, allowed in cls.constraints.items():
            assert accepts(allowed, getattr(instance, field)), (cls, field)


# --- the command line: the evaluation options of every tool --------------------------------

TOOLS = ("evaluate", "subconcepts", "discover", "train", "benchmark")
TEXTS = ("-1", "0", "1", "1.5", "2.5", "nan", "inf", "-inf", "x", "bogus", "-5M", "0.0001")


def _parsed(text: str, field: str):
    from medeval.cli.common import size_bytes

    try:
        if field == "memory_budget":
            return size_bytes(text)
        if field == "stratify":
            return text
        return int(text) if field in ("n_bootstrap", "seed") else float(text)
    except Exception:  # not even of the option's kind: refused as well
        return None


def _cli_cases():
    from medeval.cli.common import EVALUATION_FLAGS
    from medeval.options import EvaluationOptions

    for tool in TOOLS:
        parser = importlib.import_module(f"medeval.cli.{tool}").build_parser()
        flags = {o for a in parser._actions for o in a.option_strings}
        for flag, (field, _metavar, _help) in EVALUATION_FLAGS.items():
            if flag not in flags:
                continue
            allowed = [c for c in EvaluationOptions.constraints[field] if c is not None]
            for text in TEXTS:
                value = _parsed(text, field)
                if value is None or not accepts(allowed, value):
                    yield pytest.param(tool, flag, text, id=f"{tool}{flag}={text}")


def test_the_evaluating_tools_share_every_evaluation_option():
    from medeval.cli.common import EVALUATION_FLAGS

    for tool in TOOLS:
        parser = importlib.import_module(f"medeval.cli.{tool}").build_parser()
        flags = {o for a in parser._actions for o in a.option_strings}
        assert set(EVALUATION_FLAGS) <= flags, tool


@pytest.mark.parametrize(("tool", "flag", "text"), list(_cli_cases()))
def test_every_tool_refuses_an_invalid_evaluation_option_in_one_line(tool, flag, text, capsys):
    main = importlib.import_module(f"medeval.cli.{tool}").main
    with pytest.raises(SystemExit) as exc:
        main([f"{flag}={text}"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"error: argument {flag}: " in err[0], err
