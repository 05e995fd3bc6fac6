"""The plumbing of a game's rule set, a frozen dataclass of options: each option's type and
choices are checked before the value is built, and it goes to and from plain data.

Checking before the fields are set matters compiled: mypyc checks a field's type when it is
set, and would refuse a bad value with its own ``TypeError`` before the class's
``__post_init__`` could name the option (a class decorated with :func:`rule_set` is built by
mypyc as a regular Python class, so the checks here are the only ones).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")

_KINDS: dict[object, str] = {"int": "int", int: "int", "bool": "bool", bool: "bool", "str": "str", str: "str"}
"""A field's annotation (text in pure Python, the class compiled) → the check it gets."""


def _check(name: str, kind: str | None, allowed: tuple[str, ...] | None, value: object) -> str | None:
    """Why ``value`` may not be option ``name``, or ``None``."""
    if kind == "int" and (not isinstance(value, int) or isinstance(value, bool)):
        return f"{name} must be an integer; got {value!r}"
    if kind == "bool" and not isinstance(value, bool):
        return f"{name} must be true or false; got {value!r}"
    if allowed is not None and value not in allowed:
        return f"{name} must be one of {', '.join(allowed)}; got {value!r}"
    if kind == "str" and (not isinstance(value, str) or not value.strip()):
        return f"{name} must be a non-empty text; got {value!r}"
    return None


def rule_set(error: type[ValueError], choices: Mapping[str, tuple[str, ...]]) -> Callable[[type[T]], type[T]]:
    """Class decorator for a rule-set dataclass: its constructor first checks every option it
    is given (integers, true/false, non-empty texts, and the options in ``choices`` against
    their allowed texts), raising ``error`` that names the option; ``__post_init__`` is then
    left with the checks of combinations. An unknown option is the constructor's ``TypeError``."""

    def decorate(cls: type[T]) -> type[T]:
        fields = [f for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]
        names = [f.name for f in fields]
        kinds = {f.name: _KINDS.get(f.type) for f in fields}
        built = cls.__init__

        def __init__(self: T, *args: object, **options: object) -> None:
            for name, value in [*zip(names, args, strict=False), *options.items()]:
                if name in kinds:
                    why = _check(name, kinds[name], choices.get(name), value)
                    if why is not None:
                        raise error(why)
            built(self, *args, **options)

        __init__.__doc__ = built.__doc__
        setattr(cls, "__init__", __init__)  # noqa: B010 (mypy refuses assigning a method)
        return cls

    return decorate


def rules_to_dict(rules: Any) -> dict[str, Any]:
    """Every field of a rule set as plain JSON-able data."""
    return {f.name: getattr(rules, f.name) for f in dataclasses.fields(rules)}


def rules_from_dict(cls: type[T], data: Mapping[str, Any], error: type[ValueError]) -> T:
    """A rule set of class ``cls`` from plain data, refusing unknown options with ``error``."""
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - known)
    if unknown:
        raise error(f"unknown rule option(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    make: Callable[..., T] = cls
    return make(**data)
