"""The hosted ladder's file (``arena serve --ladder LADDER.toml``): what the continuous ladder
plays and how it pairs, read once and checked with errors that name the key (docs/hosted.md).

```toml
pairing = "least-met"      # or "random" (arena.competition.matchmaking)
pairing_wave_ms = 100      # the matchmaking's settings (Matchmaking: pairing_slack, pairing_patience,
                           # pairing_patience_ms, pairing_band)
duplicate = true           # each table plays its seats rotated on one deal
raters = ["openskill"]     # the live standings' raters (arena.competition.ratings.RATERS), the
                           # first orders them; default: openskill alone

[[play]]                   # one or more; the ladder balances its games over them
game = "…"                 # default: the referee's default game
preset = "short"           # default: the game's default preset
seats = 2                  # default: the game's fewest
tc = "st=1 timemargin=50"  # default: the arena's default time control
fault_policy = "forfeit"   # or "substitute"
reconnect_grace_ms = 5000
connect_timeout_ms = 30000
bosses = ["…"]             # sample bots of the game (`arena games`) the server starts and keeps
                           # online as always-on participants (arena.hosted.bosses); default none

[suspend]
crashes = 3                # suspended with more than this many crashes …
time_loss_share = 0.10     # … or more than this share of time losses …
window = 50                # … in its last this many games
min_games = 10             # the time-loss share counts from this many games
```

And at the top, ``boss_memory_mb = 1024``: the data memory (MiB) each boss process may use.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from arena.competition.matchmaking import FORMER_RULES, Matchmaking
from arena.competition.ratings import get_raters
from arena.model.schedule import PlayConfig
from referee import DEFAULT_GAME, TimeControl, TimeControlError, games


class LadderFileError(ValueError):
    """A ladder file that cannot be used; the message names the file and the key."""


LADDER_CONNECT_TIMEOUT_MS = 30_000
"""A ladder's default ``connect_timeout_ms``: its bots are online when a match is made."""
BOSS_MEMORY_MB = 1024
"""A boss process's default data memory limit (MiB; the ladder file's ``boss_memory_mb``)."""


@dataclass(frozen=True, slots=True)
class LadderPlay:
    """One kind of match the ladder pairs bots for: a preset of a game at a number of seats, played
    as its :class:`PlayConfig` says (which checks it, as it checks a tournament's)."""

    play: PlayConfig
    """How its matches are played (its game, its preset's rules, time control, fault policy, …)."""
    preset: str
    """The game's rules preset (its ``play.rules``)."""
    seats: int = 0
    """Seats at a table (0: the game's fewest)."""
    bosses: tuple[str, ...] = ()
    """Sample bots of the game (``Registered.bots``, by name) the server starts and keeps online
    as always-on participants (:mod:`arena.hosted.bosses`)."""

    def __post_init__(self) -> None:
        registered = [b.name for b in games.get(self.play.game).bots]
        unknown = [b for b in self.bosses if b not in registered]
        if unknown:
            raise ValueError(f"bosses: {self.play.game} registers no sample bot {', '.join(map(repr, unknown))} "
                             f"(it registers: {', '.join(registered) or 'none'})")
        engine = games.get(self.play.game).game
        counts = engine.seat_counts()
        if not self.seats:
            object.__setattr__(self, "seats", counts.start)
        if self.seats not in counts:
            raise ValueError(f"seats {self.seats}: {self.play.game} is played by {counts.start} to {counts.stop - 1} "
                             "seats")

    @classmethod
    def of(cls, game: str = DEFAULT_GAME, preset: str = "", seats: int = 0, bosses: Any = (),
           **play: Any) -> LadderPlay:
        """A ``[[play]]`` table's kind of match: ``play`` are :class:`PlayConfig`'s settings (its
        ``connect_timeout_ms`` :data:`LADDER_CONNECT_TIMEOUT_MS` unless given)."""
        engine = games.get(game).game  # ValueError naming the known games
        preset = preset or engine.preset_names()[0]
        config = PlayConfig(game=game, rules=engine.rules_preset(preset),
                            **{"connect_timeout_ms": LADDER_CONNECT_TIMEOUT_MS, **play})
        if not isinstance(bosses, list | tuple) or not all(isinstance(b, str) for b in bosses):
            raise ValueError('bosses must be an array of sample bot names, e.g. bosses = ["expert"]')
        return cls(config, preset, seats, tuple(dict.fromkeys(bosses)))

    @property
    def key(self) -> str:
        """``GAME/PRESET``, as a bot's ``Hello.presets`` names it."""
        return f"{self.play.game}/{self.preset}"


@dataclass(frozen=True, slots=True)
class SuspendRules:
    """When the ladder suspends a bot (its registry state ``suspended``, with the reason)."""

    crashes: int = 3
    """Suspended with more crashes than this in its last ``window`` games (crashed, disconnected
    or gave up — its own fault, whatever the policy did next)."""
    time_loss_share: float = 0.10
    """… or more time losses than this share of its last ``window`` games."""
    window: int = 50
    """How many of its latest games count."""
    min_games: int = 10
    """The time-loss share counts once it has played this many games."""

    def __post_init__(self) -> None:
        if self.crashes < 0 or self.window < 1 or self.min_games < 1 or not 0 <= self.time_loss_share <= 1:
            raise ValueError("crashes >= 0, window >= 1, min_games >= 1 and 0 <= time_loss_share <= 1")


@dataclass(frozen=True, slots=True)
class LadderConfig:
    """The whole ladder file."""

    plays: tuple[LadderPlay, ...] = field(default_factory=lambda: (LadderPlay.of(),))
    """What it plays (default: the default game's default preset, its fewest seats)."""
    pairing: Matchmaking = field(default_factory=Matchmaking)
    """How it pairs (the keys ``pairing`` — its rule — and ``pairing_*``)."""
    duplicate: bool = True
    """Each table plays one game per seat rotation on the same deal (duplicate deals)."""
    suspend: SuspendRules = field(default_factory=SuspendRules)
    """When a bot is suspended."""
    raters: tuple[str, ...] = ()
    """The raters of the live standings, by name (:data:`arena.competition.ratings.RATERS`; several
    allowed, the first orders them); empty: the live rater alone."""
    boss_memory_mb: int = BOSS_MEMORY_MB
    """Each boss process's data memory limit in MiB (``ProcessLimits.memory_mb``; 0: none)."""

    def __post_init__(self) -> None:
        get_raters(self.raters)  # ValueError naming the known ones
        if not isinstance(self.boss_memory_mb, int) or isinstance(self.boss_memory_mb, bool) or self.boss_memory_mb < 0:
            raise ValueError(f"boss_memory_mb must be a whole number of MiB >= 0; got {self.boss_memory_mb!r}")


_PAIRING = {f"pairing_{f.name}": f.name for f in fields(Matchmaking) if f.name != "rule"} | {"pairing": "rule"}
_TOP = {"duplicate", "play", "suspend", "raters", "boss_memory_mb", *_PAIRING}
_PLAY = {"game", "preset", "seats", "tc", "fault_policy", "reconnect_grace_ms", "connect_timeout_ms", "bosses"}


def _keys(where: str, table: Any, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise ValueError(f"{where} must be a table")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown key {', '.join(unknown)} (known: {', '.join(sorted(allowed))})")
    return dict(table)


def _play(i: int, raw: Any) -> LadderPlay:
    where = f"play[{i}]"
    values = _keys(where, raw, _PLAY)
    try:
        if "tc" in values:
            values["time_control"] = TimeControl.parse(str(values.pop("tc")))
        return LadderPlay.of(**values)
    except (ValueError, TimeControlError, TypeError) as e:
        raise ValueError(f"{where}: {e}") from None


def parse_ladder(raw: dict[str, Any]) -> LadderConfig:
    """A ladder from a parsed TOML document (``ValueError`` names the key)."""
    values = _keys("the ladder", raw, _TOP)
    plays = values.pop("play", [{}])
    if not isinstance(plays, list) or not plays:
        raise ValueError("play must be an array of tables ([[play]]), at least one")
    values["plays"] = tuple(_play(i, p) for i, p in enumerate(plays))
    if "suspend" in values:
        try:
            allowed = {f.name for f in fields(SuspendRules)}
            values["suspend"] = SuspendRules(**_keys("suspend", values["suspend"], allowed))
        except TypeError as e:
            raise ValueError(f"suspend: {e}") from None
    pairing = {_PAIRING[k]: values.pop(k) for k in list(values) if k in _PAIRING}
    if isinstance(pairing.get("rule"), str):
        pairing["rule"] = FORMER_RULES.get(pairing["rule"], pairing["rule"])
    values["pairing"] = Matchmaking(**pairing)
    if not isinstance(values.get("duplicate", True), bool):
        raise ValueError("duplicate must be true or false")
    raters = values.get("raters", [])
    if not isinstance(raters, list) or not all(isinstance(r, str) for r in raters):
        raise ValueError('raters must be an array of rater names, e.g. raters = ["openskill", "elo"]')
    values["raters"] = tuple(raters)
    return LadderConfig(**values)


def load_ladder(path: Path | None) -> LadderConfig:
    """The ladder file at ``path`` (``None``: the default ladder); :class:`LadderFileError` says
    what is wrong, with the file's name."""
    if path is None:
        return LadderConfig()
    try:
        return parse_ladder(tomllib.loads(path.read_text(encoding="utf-8")))
    except OSError as e:
        raise LadderFileError(f"--ladder {path}: {e.strerror}") from None
    except (tomllib.TOMLDecodeError, ValueError) as e:
        raise LadderFileError(f"--ladder {path}: {e}") from None
