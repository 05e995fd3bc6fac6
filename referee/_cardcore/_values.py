"""The base of the games' frozen values."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any


class Value:
    """Base of a game's frozen dataclasses: a value pickles (for another process, e.g. a Dask
    worker) as its class and the fields its constructor takes, on both builds. Compiled by
    mypyc, a class's own pickling sets the fields one by one, which a frozen class refuses."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        me: Any = self
        return (type(self), tuple([getattr(self, f.name) for f in dataclasses.fields(me) if f.init]))
