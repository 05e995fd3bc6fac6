"""What the continuous ladder's pairing speaks in: its settings (:class:`Matchmaking`, the hosted
ladder file's ``pairing…`` keys), the bots it pairs (:class:`Seeker`), what a wave decides
(:class:`Wave`) and the head-to-head counts (:func:`met_at`). The pairing itself is the ``ladder``
format (:mod:`arena.competition.formats.ladder`), which the hosted and the local ladder reach
through the format registry (:func:`arena.competition.formats.get_continuous`). Pure."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

PairingRule = Literal["least-met", "random"]
PAIRING_RULES: tuple[PairingRule, ...] = get_args(PairingRule)
FORMER_RULES: Mapping[str, PairingRule] = {"fewest-games": "least-met"}
"""Rule names of earlier versions, read as today's rule (a ladder file written before keeps working)."""

HeadToHead = Mapping[frozenset[str], int]
"""Games two bots played at one table, by the pair (a missing pair: none)."""


@dataclass(frozen=True, slots=True)
class Matchmaking:
    """How a ladder pairs (the hosted ladder file's ``pairing…`` keys; the local ladder's defaults)."""

    rule: PairingRule = "least-met"
    """``least-met``: as the ladder format (:mod:`arena.competition.formats.ladder`) says;
    ``random``: any free bots at once, no waiting."""
    wave_ms: int = 100
    """``pairing_wave_ms``: a bot that becomes free waits this long for others to become free too;
    then the bots free are paired together (0: a wave on every change)."""
    slack: float = 0.25
    """``pairing_slack``: a table is made at once when each bot's head-to-head with the others
    exceeds the least it could have by at most this share of that least (0 while it has not met
    every bot yet: a bot that has never met some bot online waits for one)."""
    patience: int = 2
    """``pairing_patience``: each time a table's longest-waiting bot has sat out this many rounds
    of waves in which other bots became free (a round: as many waves as the bots online for the
    play fill tables — every table playing may have ended once), its bots accept one table's
    games more of head-to-head: a bot waits for partners to be freed, not for a clock."""
    patience_ms: int = 60_000
    """``pairing_patience_ms``: … and each time it has waited this long (when nothing frees a bot)."""
    band: float = 0.5
    """``pairing_band``: a table's bots stand at most this share of the standings apart (of the
    bots online for the play: 0.5, the nearer half); as wide again for each wave its
    longest-waiting bot sat out."""

    def __post_init__(self) -> None:
        if self.rule not in PAIRING_RULES:
            raise ValueError(f"pairing must be one of {', '.join(PAIRING_RULES)}; got {self.rule!r}")
        if not isinstance(self.wave_ms, int) or isinstance(self.wave_ms, bool) or self.wave_ms < 0:
            raise ValueError(f"pairing_wave_ms must be an integer >= 0; got {self.wave_ms!r}")
        if isinstance(self.slack, bool) or not isinstance(self.slack, (int, float)) or self.slack < 0:
            raise ValueError(f"pairing_slack must be a number >= 0; got {self.slack!r}")
        for name in ("patience", "patience_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"pairing_{name} must be an integer >= 1; got {value!r}")
        if isinstance(self.band, bool) or not isinstance(self.band, (int, float)) or not 0 < self.band <= 1:
            raise ValueError(f"pairing_band must be a number above 0 and at most 1; got {self.band!r}")

    def level(self, seeker: Seeker, tables: int) -> int:
        """How far a table of ``seeker`` (its longest-waiting bot) widens the head-to-head it
        accepts, with ``tables`` tables in a round: 1, then one more per patience (of rounds or of
        time) waited."""
        rounds = seeker.waves // (self.patience * max(1, tables))
        return 1 + max(rounds, int(max(0.0, seeker.waited_ms) // self.patience_ms))

    def band_for(self, seeker: Seeker) -> float:
        """The band of a table of ``seeker``: :attr:`band`, as wide again for each wave it sat
        out (the standings give way before the head-to-head does)."""
        return self.band * (1 + seeker.waves + int(max(0.0, seeker.waited_ms) // self.patience_ms)) + 1e-9


@dataclass(frozen=True, slots=True)
class Seeker:
    """A bot online for the play being paired."""

    bot: str
    """Its name."""
    rating: float
    """Its rating now (any scale: only its place in the standings counts)."""
    free: bool = True
    """It may be seated now (it has room for a new table); else it is playing: a partner to wait
    for, not one to seat."""
    waited_ms: float = 0.0
    """How long it has been free without a table."""
    waves: int = 0
    """The waves in which other bots became free that it has sat out since it became free."""


@dataclass(frozen=True, slots=True)
class Wave:
    """What one wave decided."""

    tables: tuple[tuple[str, ...], ...]
    """The tables to start now (each a duplicate group's bots; no bot in two)."""
    retry_ms: float | None
    """After how long the tolerances of a free bot left waiting widen (pair again then, or on a
    change before); ``None``: no free bot waits for that."""


def met_at(tables: Iterable[Sequence[str]], met: Counter[frozenset[str]] | None = None,
           games: int = 1) -> Counter[frozenset[str]]:
    """``met`` (a new count if ``None``) with ``games`` games added for every pair of each of
    ``tables`` (a table's bots, by seat; a bot's second seat adds nothing)."""
    out = met if met is not None else Counter()
    for table in tables:
        for a, b in itertools.combinations(sorted(set(table)), 2):
            out[frozenset((a, b))] += games
    return out


