"""The bases of the games' frozen values and of their mutable states."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

S = TypeVar("S", bound="State")


class Value:
    """Base of a game's frozen dataclasses: a value pickles (for another process, e.g. a Dask
    worker) as its class and the fields its constructor takes, on both builds. Compiled by
    mypyc, a class's own pickling sets the fields one by one, which a frozen class refuses."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        me: Any = self
        return (type(self), tuple([getattr(self, f.name) for f in dataclasses.fields(me) if f.init]))


class State:
    """Base of a game's mutable states (a deal, a game, a match): a bare instance can be made
    without ``__init__`` (a state's ``copy()``, ``copy.deepcopy``, pickling), on both builds.
    Compiled by mypyc, a class's own ``__new__`` would run ``__init__``."""

    __slots__ = ()

    def __new__(cls: type[S], *args: object, **kwargs: object) -> S:
        return object.__new__(cls)
