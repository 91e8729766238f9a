"""Command-line options made from their declarations (:mod:`medeval.options`): type, range,
choices and default of each, and a bad value refused at parse time in Python's own words
(``argument --bootstrap: must be an int >= 0; got -5``). Only the standard library is imported."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable, Mapping, Sequence
from numbers import Integral, Real
from typing import Any, TypeVar

from medeval._validation import Interval, StrOptions, refusal

__all__ = [
    "EVALUATION_FLAGS",
    "add_evaluation_options",
    "add_options",
    "given_options",
    "option_type",
    "settings",
]

T = TypeVar("T")


def option_type(allowed: Sequence[Any]) -> Callable[[str], Any]:
    """argparse type of a declared field: the text as a number where the declaration is an
    :class:`~medeval._validation.Interval` (a whole number for a real field: a float), refused
    unless the declaration accepts it (:func:`~medeval._validation.refusal`)."""
    allowed = [c for c in allowed if c is not None]  # None = the option left out
    kinds = [c.kind for c in allowed if isinstance(c, Interval)]
    integral = any(issubclass(k, Integral) for k in kinds)
    numeric = integral or any(issubclass(k, Real) for k in kinds)

    def check(text: str) -> Any:
        value = _number(text) if numeric else text
        message = refusal(allowed, value)  # of the value as Python would hold it: "got 1"
        if message:
            raise argparse.ArgumentTypeError(message)
        return float(value) if numeric and not integral and isinstance(value, int) else value

    check.__name__ = "declared"  # argparse names the type in its own messages
    check.allowed = allowed  # type: ignore[attr-defined]
    return check


def _number(text: str) -> Any:
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            continue
    return text  # not a number: refused by the declaration, quoted as given


def add_options(
    group: argparse._ActionsContainer,
    owner: Any,
    flags: Mapping[str, str | tuple[str, ...]],
    *,
    notes: Mapping[str, str] | None = None,
    config: str | None = None,
) -> None:
    """One option per flag of ``flags`` (``{flag: help}``, the field named by the flag, or
    ``{flag: (field, help[, metavar])}``) from ``owner``'s declaration of the field. Each
    option's value is ``None`` unless given (:func:`given_options`); its help says the
    default (with ``config``: the section of a training config the option sets); ``notes``
    adds a tool's own words to an option's help."""
    constraints = owner.constraints
    shown = {p.name: p.default for p in inspect.signature(owner).parameters.values()}
    for flag, spec in flags.items():
        field, text, *metavar = _spec(flag, spec)
        allowed = [c for c in constraints[field] if c is not None]
        default = shown.get(field)
        if config:
            text += f" (= {config}.{field}; default: the config's)"
        elif default not in (None, inspect.Parameter.empty):
            text += f" (default {default})"
        if notes and flag in notes:
            text += f"; {notes[flag]}"
        metavar = metavar or [_metavar(allowed)]
        kind = option_type(allowed)
        action = group.add_argument(flag, type=kind, default=None, metavar=metavar[0], help=text)
        action.declared = (owner, field)  # type: ignore[attr-defined]


def _metavar(allowed: list[Any]) -> str | None:
    """``{a,b}`` for a choice, ``N`` for an int, ``X`` for a number."""
    for c in allowed:
        if isinstance(c, StrOptions):
            return "{" + ",".join(map(str, c.options)) + "}"
        if isinstance(c, Interval):
            return "N" if issubclass(c.kind, Integral) else "X"
    return None


def given_options(
    args: argparse.Namespace, flags: Mapping[str, str | tuple[str, ...]]
) -> dict[str, Any]:
    """The options of ``flags`` given on the command line, by field name (those left out take
    the settings' defaults)."""
    given = {
        _spec(flag, spec)[0]: getattr(args, flag[2:].replace("-", "_"), None)
        for flag, spec in flags.items()
    }
    return {field: value for field, value in given.items() if value is not None}


def settings(owner: type[T], args: argparse.Namespace, *flags: Mapping, **fixed: Any) -> T:
    """``owner`` (a settings class) of the options of each of ``flags`` and ``--seed`` given on
    the command line and of ``fixed``; the options left out take ``owner``'s defaults."""
    given = {field: v for f in flags for field, v in given_options(args, f).items()}
    if getattr(args, "seed", None) is not None:
        given["seed"] = args.seed
    return owner(**given, **fixed)


def _spec(flag: str, spec: str | tuple[str, ...]) -> tuple[str, ...]:
    """``(field, help[, metavar])`` of a flag: a bare help names the field by the flag."""
    return (flag[2:].replace("-", "_"), spec) if isinstance(spec, str) else spec


#: The evaluation's options on the command line, in every tool that evaluates: flag → (field
#: of :class:`medeval.options.EvaluationOptions`, help, metavar).
EVALUATION_FLAGS: dict[str, tuple[str, ...]] = {
    "--threshold": ("threshold", "predicted label = y_score >= T when there is no y_pred", "T"),
    "--bootstrap": ("n_bootstrap", "bootstrap replicates for the intervals (0 = none)", "B"),
    "--confidence": ("confidence", "interval level in (0, 1)", "L"),
    "--stratify": ("stratify", "resample within these strata"),
}


def add_evaluation_options(
    parser: argparse.ArgumentParser,
    *,
    owner: Any = None,
    notes: Mapping[str, str] | None = None,
    config: bool = False,
) -> None:
    """The evaluation's options (:data:`EVALUATION_FLAGS`, the same in every tool), declared by
    :class:`medeval.options.EvaluationOptions`; their defaults are ``owner``'s (a tool's
    settings class, default ``EvaluationOptions``), or with ``config`` a training config's
    ``evaluation.*`` keys, which the options set."""
    from medeval.options import EvaluationOptions

    g = parser.add_argument_group("evaluation options (the same in every tool)")
    add_options(
        g,
        owner or EvaluationOptions,
        EVALUATION_FLAGS,
        notes=notes,
        config="evaluation" if config else None,
    )
