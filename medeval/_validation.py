"""Public options validated once, by declaration (scikit-learn's ``validate_params``): on
functions and on settings dataclasses; standard library only, so ``--help`` stays fast."""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from numbers import Integral, Real
from typing import Any, TypeVar

from .errors import UserError

__all__ = [
    "SETTINGS",
    "VALIDATED",
    "ArrayLike",
    "Interval",
    "InvalidParameterError",
    "StrOptions",
    "TypeOf",
    "accepts",
    "check_params",
    "declared",
    "describe",
    "refusal",
    "validate_params",
]

F = TypeVar("F", bound=Callable[..., Any])


class InvalidParameterError(UserError):
    """An option outside its allowed values; the message names the parameter."""


class Constraint:
    """One allowed kind of value: ``accepts(value)``, and ``str()``: the allowed values in words
    (for the error message)."""


class Interval(Constraint):
    """A number of ``kind`` (:class:`numbers.Integral` or :class:`numbers.Real`; never a bool
    or NaN) in ``[left, right]``; ``None`` leaves a side unbounded, ``closed`` says which
    ends belong (``"both"``, ``"left"``, ``"right"``, ``"neither"``)."""

    def __init__(
        self,
        kind: type,
        left: float | None,
        right: float | None,
        *,
        closed: str = "both",
        desc: str | None = None,
    ) -> None:
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be 'both', 'left', 'right' or 'neither'; got {closed}")
        self.kind, self.left, self.right, self.closed, self.desc = kind, left, right, closed, desc
        self.low_ok, self.high_ok = closed in ("both", "left"), closed in ("both", "right")

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.kind):
            return False
        if isinstance(value, Real) and math.isnan(value):
            return False
        if self.left is not None and not (value >= self.left if self.low_ok else value > self.left):
            return False
        return self.right is None or (value <= self.right if self.high_ok else value < self.right)

    def __str__(self) -> str:
        if self.desc:
            return self.desc
        kind = "an int" if issubclass(self.kind, Integral) else "a number"
        if self.left is None and self.right is None:
            return kind
        if self.right is None:  # one bound reads as a comparison: "an int >= 0"
            return f"{kind} {'>=' if self.low_ok else '>'} {self.left}"
        if self.left is None:
            return f"{kind} {'<=' if self.high_ok else '<'} {self.right}"
        left, right = "[" if self.low_ok else "(", "]" if self.high_ok else ")"
        return f"{kind} in {left}{self.left}, {self.right}{right}"


class StrOptions(Constraint):
    """One of a fixed set of strings (kept in the given order in messages; ``desc`` names them)."""

    def __init__(self, options: Iterable[str], *, desc: str | None = None) -> None:
        self.options, self.desc = tuple(options), desc

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.options

    def __str__(self) -> str:
        return self.desc or "one of " + ", ".join(repr(o) for o in self.options)


class TypeOf(Constraint):
    """An instance of one of ``types``."""

    def __init__(self, *types: type, desc: str | None = None) -> None:
        self.types, self.desc = types, desc

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.types)

    def __str__(self) -> str:
        return self.desc or "a " + " or ".join(t.__name__ for t in self.types)


class ArrayLike(Constraint):
    """An array, tensor, pandas object or sequence (not a string)."""

    def accepts(self, value: Any) -> bool:
        return not isinstance(value, str | bytes) and (
            hasattr(value, "__array__") or hasattr(value, "__len__")
        )

    def __str__(self) -> str:
        return "an array of one value per instance"


class _NoneConstraint(Constraint):
    def accepts(self, value: Any) -> bool:
        return value is None

    def __str__(self) -> str:
        return "None"


def _as_constraint(c: Any) -> Constraint:
    if c is None:
        return _NoneConstraint()
    if isinstance(c, Constraint):
        return c
    if isinstance(c, type):
        return TypeOf(c)
    raise TypeError(f"not a parameter constraint: {c!r}")


def describe(allowed: list[Any]) -> str:
    """The allowed values of a parameter in words: ``"an int >= 0 or None"``."""
    return " or ".join(str(_as_constraint(c)) for c in allowed)


def accepts(allowed: list[Any], value: Any) -> bool:
    """Whether ``value`` satisfies one of a parameter's constraints."""
    return any(_as_constraint(c).accepts(value) for c in allowed)


def refusal(allowed: list[Any], value: Any) -> str | None:
    """Why ``value`` is refused, ``"must be <allowed>; got <value>"``, or ``None`` when one of
    the constraints accepts it: the words of every refusal, in Python, in a config and on the
    command line."""
    if accepts(allowed, value):
        return None
    return f"must be {describe(allowed)}; got {value!r}"


def check_params(
    where: str, values: Mapping[str, Any], constraints: Mapping[str, list[Any]]
) -> None:
    """Check each declared parameter of ``values`` against its constraints.

    Raises:
        InvalidParameterError: ``"<where>: <name> must be <allowed>; got <value>"``.
    """
    for name, allowed in constraints.items():
        if name in values and (message := refusal(allowed, values[name])):
            raise InvalidParameterError(f"{where}: {name} {message}")


_VALIDATING = contextvars.ContextVar("medeval_validating", default=False)

#: Every function decorated with :func:`validate_params`, with its constraints (for the test
#: that feeds each declared parameter invalid values).
VALIDATED: list[tuple[Callable[..., Any], Mapping[str, list[Any]]]] = []
#: Every settings class decorated with :func:`declared`.
SETTINGS: list[type] = []


def validate_params(constraints: Mapping[str, list[Any]]) -> Callable[[F], F]:
    """Decorate a function (or ``__init__``) so that its declared options are checked on every
    outside call; calls from inside another validated call skip the check."""

    def decorate(func: F) -> F:
        signature = inspect.signature(func)
        unknown = set(constraints) - set(signature.parameters)
        if unknown:
            raise TypeError(f"{func.__qualname__}: constraints for unknown {sorted(unknown)}")
        where = func.__qualname__.removesuffix(".__init__")

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if _VALIDATING.get():
                return func(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            check_params(where, bound.arguments, constraints)
            token = _VALIDATING.set(True)
            try:
                return func(*args, **kwargs)
            finally:
                _VALIDATING.reset(token)

        wrapper.__signature__ = signature  # type: ignore[attr-defined]
        wrapper.constraints = constraints  # type: ignore[attr-defined]
        VALIDATED.append((wrapper, constraints))
        return wrapper  # type: ignore[return-value]

    return decorate


def declared(constraints: Mapping[str, list[Any]]) -> Callable[[type], type]:
    """Decorate a dataclass so that each declared field is checked when an instance is made
    (:class:`InvalidParameterError` ``"<Class>: <field> must be ..."``). A subclass adds its own
    fields' constraints to those it inherits (from every base); ``cls.constraints`` holds them
    all."""

    def decorate(cls: type) -> type:
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(constraints) - fields
        if unknown:
            raise TypeError(f"{cls.__qualname__}: constraints for unknown {sorted(unknown)}")
        inherited = [vars(base).get("constraints", {}) for base in reversed(cls.__mro__[1:])]
        cls.constraints = {k: v for c in [*inherited, constraints] for k, v in c.items()}  # type: ignore[attr-defined]
        own_post_init = cls.__dict__.get("__post_init__")
        called = hasattr(cls, "__post_init__")  # else the dataclass's __init__ does not call it

        def __post_init__(self: Any) -> None:
            if not _VALIDATING.get():  # inside a validated call: made of checked values
                check_params(type(self).__qualname__, vars(self), type(self).constraints)
            if own_post_init is not None:  # checks across fields come after each field's own
                own_post_init(self)

        cls.__post_init__ = __post_init__  # type: ignore[attr-defined]
        if not called:
            init = cls.__init__

            @functools.wraps(init)
            def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
                init(self, *args, **kwargs)
                self.__post_init__()

            cls.__init__ = __init__  # type: ignore[misc]
        SETTINGS.append(cls)
        return cls

    return decorate
