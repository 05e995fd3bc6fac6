"""Registered bots: the directory that tells a bot's token from nothing (its owner's, e.g. a
server's registry) and what the referee says of each registered bot that is online.

The referee knows no registry, no ladder and no rating: it asks its :class:`BotDirectory` who a
hello's token is, keeps that bot's sessions open without a match, seats it where a
``MatchSpec.seat_bots`` names it, and tells its owner who is online (:class:`BotPresence`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class BotDirectory(Protocol):
    """Who a token belongs to: the owner's registry of bots."""

    def identify(self, token: str) -> str | None:
        """The name of the enabled registered bot whose token this is; ``None`` for any other
        token (unknown, or a bot disabled, suspended, removed or whose token was rotated)."""

    def refusal(self, token: str) -> str:
        """Why a token :meth:`identify` refuses is refused, in one line for the bot's author
        (its bot is disabled or suspended, and why); "" when the directory knows no such token."""


@dataclass(frozen=True, slots=True)
class BotPresence:
    """One registered bot that has at least one live session, as its hellos declared it."""

    bot: str
    """The bot's registered name (the directory's, not the hello's ``bot_name``)."""
    sessions: int
    """Its live sessions."""
    games: tuple[str, ...]
    """The games its sessions declared (``Hello.games``; empty: the default game only)."""
    presets: tuple[str, ...]
    """The presets its sessions declared (``Hello.presets``, each ``GAME/PRESET``; empty: every
    preset of its games)."""
    max_concurrent: int
    """Matches it plays at once: the sum of its sessions' ``Hello.max_concurrent_matches``
    (0 counted as 1)."""
    playing: int
    """Seats it holds in matches that are not over (running, or waiting for it)."""
    hello_name: str
    """The ``bot_name`` of its latest session's hello (the bot's own text: escape it where shown)."""

    @property
    def free(self) -> int:
        """More matches it may be seated in now."""
        return max(0, self.max_concurrent - self.playing)
