"""The rummy side of the session: a bot written as one function of a :class:`~.rummy.View`."""

from __future__ import annotations

from collections.abc import Callable

from gin_arena.v2 import bot_pb2, common_pb2

from ..games import Decision
from ..session import Bot
from . import Rules, View, answer, rules_of, view_of


class RummyBot(Bot):
    """A rummy bot from one function ``choose(view) -> action text``; declares ``rummy`` in
    Hello. It keeps each match's rules (from ``MatchStarted``) until that match ends, nothing
    else. Subclass and override :meth:`choose`, or pass the function::

        run_bot(RummyBot(choose), name="my-rummy-bot")
    """

    name = "rummy"
    games: tuple[str, ...] = ("rummy",)

    def __init__(self, choose: Callable[[View], str] | None = None, name: str | None = None) -> None:
        self._choose = choose
        self._rules: dict[str, Rules] = {}
        if name or choose is not None:
            self.name = name or str(getattr(choose, "__name__", self.name))

    def choose(self, view: View) -> str:
        """One of ``view.legal``."""
        if self._choose is None:
            raise NotImplementedError("pass choose= or override choose()")
        return self._choose(view)

    def on_match_started(self, match_id: str, info: bot_pb2.MatchStarted) -> None:
        self._rules[match_id] = rules_of(info.rummy)

    def on_match_finished(self, match_id: str, result: common_pb2.MatchResult) -> None:
        self._rules.pop(match_id, None)

    def decide_in_match(self, match_id: str, request: bot_pb2.ActionRequest) -> Decision:
        view = view_of(request, self._rules.get(match_id, Rules()))
        return answer(request, self.choose(view))
