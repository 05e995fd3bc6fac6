"""Run configuration and the deterministic schedule of a tournament.

Every pairing plays its games in pairs: the two games of a pair have the seats swapped. With
duplicate deals both games of a pair are played on the same shuffle seed (same decks, same
first-dealer *seat*), so each bot gets the cards the other had. Without duplicate deals the two
games have different seeds, the second chosen so that the first dealer is again the same seat —
that is, the other bot. Every seed comes from the run seed by SHA-256, so the schedule is a
function of the stored configuration (what ``--resume`` relies on).
"""

from __future__ import annotations

import hashlib
import itertools
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from referee import FaultPolicy, TimeControl
from referee.gin import RuleSet, first_dealer

Format = Literal["round-robin", "gauntlet"]
FORMATS: tuple[Format, ...] = ("round-robin", "gauntlet")


FAULT_POLICIES: tuple[FaultPolicy, ...] = get_args(FaultPolicy)
DEFAULT_TC = TimeControl.parse("st=1 timemargin=50")


@dataclass(frozen=True, slots=True)
class PlayConfig:
    """How every game of a run (a tournament or a ladder run) is played: parsed once from the
    command line, stored with the run, reloaded as this same value."""

    rules: RuleSet = field(default_factory=RuleSet.classic)
    """The rule set; ``rules.games`` is the number of games per match."""
    time_control: TimeControl = DEFAULT_TC
    """Every seat's time control, unless its bot has its own (``BotSpec.time_control``)."""
    fault_policy: FaultPolicy = "forfeit"
    """What a seat's fault costs: the game (``forfeit``) or nothing (a built-in bot plays on)."""
    concurrency: int = 2
    """Games played at once."""
    connect_timeout_ms: int = 60_000
    """How long a game waits for its bots to connect."""

    def __post_init__(self) -> None:
        if self.fault_policy not in FAULT_POLICIES:
            raise ValueError(f"fault policy must be one of {', '.join(FAULT_POLICIES)}; got {self.fault_policy!r}")
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.connect_timeout_ms < 1000:
            raise ValueError("the connect timeout must be at least 1 s")

    def to_dict(self) -> dict[str, Any]:
        """The stored form (the rule set as a table, the time control as its text)."""
        return {
            "rules": self.rules.to_dict(),
            "time_control": str(self.time_control),
            "fault_policy": self.fault_policy,
            "concurrency": self.concurrency,
            "connect_timeout_ms": self.connect_timeout_ms,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlayConfig:
        """Back from :meth:`to_dict` (missing keys take their defaults)."""
        return cls(
            rules=RuleSet.from_dict(dict(data["rules"])) if "rules" in data else RuleSet.classic(),
            time_control=TimeControl.parse(str(data["time_control"])) if "time_control" in data else DEFAULT_TC,
            fault_policy=data.get("fault_policy", "forfeit"),
            concurrency=int(data.get("concurrency", 2)),
            connect_timeout_ms=int(data.get("connect_timeout_ms", 60_000)),
        )


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Everything that determines a run (stored in the run's database)."""

    run_id: str
    """Prefix of every match id (unique per run)."""
    bots: tuple[str, ...]
    """The bots' names, in manifest order."""
    format: Format = "round-robin"
    """``round-robin`` (everyone plays everyone) or ``gauntlet`` (the challenger plays the rest)."""
    games: int = 2
    """Games per pairing (even)."""
    duplicate: bool = True
    """Both games of a pair are played on the same cards, seats swapped."""
    seed: str = ""
    """The run seed (any text); every game's shuffle seed derives from it."""
    play: PlayConfig = field(default_factory=PlayConfig)
    """How the games are played (rules, time control, fault policy, concurrency)."""
    challenger: str = ""
    """Gauntlet: the bot that plays everyone else (default: the first bot)."""
    sprt: str = ""
    """SPRT parameters (two bots only), e.g. ``elo0=0,elo1=10,alpha=0.05,beta=0.05``; empty: none."""
    referee: str = ""
    """Address of a remote referee; empty: an embedded referee."""
    listen: str = "127.0.0.1:0"
    """Where the embedded referee listens."""

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}; got {self.format!r}")
        if self.games < 2 or self.games % 2:
            raise ValueError(f"games per pairing must be even and at least 2; got {self.games}")
        if len(self.bots) < 2:
            raise ValueError("a tournament needs at least two bots")
        if len(set(self.bots)) != len(self.bots):
            raise ValueError("bot names must be unique")
        if self.challenger and self.challenger not in self.bots:
            raise ValueError(f"the gauntlet's challenger {self.challenger!r} is not one of the bots")

    def to_dict(self) -> dict[str, Any]:
        """The stored form: one flat table (the same keys as the runs of gin-arena 0.1)."""
        d = {f: getattr(self, f) for f in _RUN_FIELDS}
        d["bots"] = list(self.bots)
        return {**d, **self.play.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunConfig:
        """Back from :meth:`to_dict`."""
        fields = {f: data[f] for f in _RUN_FIELDS if f in data}
        return cls(**{**fields, "bots": tuple(data["bots"]), "play": PlayConfig.from_dict(data)})


_RUN_FIELDS = ("run_id", "bots", "format", "games", "duplicate", "seed", "challenger", "sprt", "referee", "listen")


@dataclass(frozen=True, slots=True)
class GameJob:
    """One scheduled game (one referee match)."""

    idx: int
    """Position in the schedule, from 0."""
    players: tuple[str, ...]
    """The bots by seat."""
    seed: bytes
    """The match's shuffle seed."""
    pairing: str
    """``"a|b"``: the pairing this game belongs to."""
    pair: int
    """The pair's number within its pairing."""
    leg: int
    """The game within its pair (0 or 1: the seats are swapped)."""
    pair_key: str
    """Duplicate pairs share this key; ``""`` if the games are not duplicates."""

    def match_id(self, run_id: str, attempt: int = 0) -> str:
        """The referee match id of an attempt to play this game (re-plays get ``-rN``)."""
        base = f"{run_id}-g{self.idx:04d}"
        return f"{base}-r{attempt}" if attempt else base


def _h(*parts: bytes) -> bytes:
    return hashlib.sha256(b"".join(parts)).digest()


def pair_seeds(run_seed: str, pairing: str, pair: int, duplicate: bool) -> tuple[bytes, bytes]:
    """The two games' seeds of pair ``pair`` of ``pairing``.

    ``base = SHA-256("gin-arena/arena-pair/v1\\0" || seed || "\\0" || pairing || u32be(pair))``;
    duplicate: both games use ``base``. Otherwise game 0 uses ``SHA-256(base || "A")`` and game
    1 the first ``SHA-256(base || "B" || u32be(k))``, k = 0, 1, …, whose first dealer (seat) is the
    same as game 0's — so the other bot deals first."""
    base = _h(
        b"gin-arena/arena-pair/v1\x00", run_seed.encode(), b"\x00", pairing.encode(), struct.pack(">I", pair)
    )
    if duplicate:
        return base, base
    first = _h(base, b"A")
    dealer = first_dealer(first, 1)
    for k in itertools.count():
        second = _h(base, b"B", struct.pack(">I", k))
        if first_dealer(second, 1) == dealer:
            return first, second
    raise AssertionError("unreachable")  # pragma: no cover


def pairings(config: RunConfig) -> list[tuple[str, str]]:
    """The pairings, in schedule order."""
    bots = list(config.bots)
    if config.format == "gauntlet":
        challenger = config.challenger or bots[0]
        return [(challenger, b) for b in bots if b != challenger]
    return list(itertools.combinations(bots, 2))


def build_schedule(config: RunConfig) -> list[GameJob]:
    """Every game of the run, interleaved so that a partial run is balanced: pair 0 of every
    pairing, then pair 1 of every pairing, …; the first seat of a pair's first game alternates
    from pair to pair."""
    jobs: list[GameJob] = []
    pairs_per_pairing = config.games // 2
    plist = pairings(config)
    for pair in range(pairs_per_pairing):
        for a, b in plist:
            key = f"{a}|{b}"
            seeds = pair_seeds(config.seed, key, pair, config.duplicate)
            first: tuple[str, str] = (a, b) if pair % 2 == 0 else (b, a)
            second: tuple[str, str] = (first[1], first[0])
            pair_key = f"{key}#{pair}" if config.duplicate else ""
            for leg, players in enumerate((first, second)):
                jobs.append(GameJob(len(jobs), players, seeds[leg], key, pair, leg, pair_key))
    return jobs


def schedule_fingerprint(jobs: Sequence[GameJob]) -> str:
    """A hash of a schedule (stored, and compared on resume)."""
    h = hashlib.sha256()
    for j in jobs:
        h.update(f"{j.idx}|{'|'.join(j.players)}|{j.seed.hex()}|{j.pair_key}\n".encode())
    return h.hexdigest()
