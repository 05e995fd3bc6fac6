"""Run configuration and the deterministic schedule of a tournament.

A *table* is the bots of one game's seats (``--seats N``, 2 for Gin by default). The tables are
every combination of N bots (a gauntlet: the challenger with every combination of N - 1 others),
or ``--tables K`` tables drawn at random from those. With ``--instances K`` a bot may fill up to
K seats of one table, as separate instances (its own process and token each) named ``greedy``,
``greedy#2``, …, rated as one bot (:func:`base_name`).

Every table plays its games in *groups* of N games that rotate the seats: game ``r`` of a group
seats the table's bot ``i`` at seat ``(i - r - shift) mod N`` (``shift``: the group's number mod N,
so that the first seat alternates between groups). With duplicate deals the N games of a group
are played on the same shuffle seed (the same decks, the same first-dealer *seat*), so each bot
holds every hand once. For two seats a group is today's pair: the seats swapped; without
duplicate deals (Gin) the second game's seed is chosen so that the first dealer is again the
same seat — that is, the other bot. Every seed comes from the run seed by SHA-256, so the
schedule is a function of the stored configuration (what ``--resume`` relies on).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, get_args

from arena.competition.formats import DEFAULT_FORMAT, Field, Round, get_format
from arena.competition.ratings import get_raters
from arena.competition.seating import group_seeds, rotations
from referee import DEFAULT_GAME, SEAT_CLOCKS, FaultPolicy, MatchSpec, TimeControl, games

FAULT_POLICIES: tuple[FaultPolicy, ...] = get_args(FaultPolicy)
SUBSTITUTE_SCOPES = ("game", "move")
"""What a time loss under ``substitute`` hands the built-in bot (``MatchSpec.substitute_time_faults``)."""
DEFAULT_TC = TimeControl.parse("st=1 timemargin=50")


@dataclass(frozen=True, slots=True)
class PlayConfig:
    """How every game of a run (a tournament, a local or hosted ladder's kind of game, a person's
    table, ``arena play``, ``arena operator create``) is played: parsed once where it enters,
    stored with a run, reloaded as this same value — and the one place the arena builds a match's
    :class:`referee.MatchSpec` (:meth:`spec`), so that every match has these defaults."""

    rules: Any = None
    """The game's rule set (``None``: the game's default); Gin's ``rules.games`` is the number of
    games per match."""
    time_control: TimeControl = DEFAULT_TC
    """Every seat's time control, unless its bot has its own (``BotSpec.time_control``)."""
    fault_policy: FaultPolicy = "forfeit"
    """What a seat's fault costs: the game (``forfeit``) or nothing (a built-in bot plays on)."""
    concurrency: int = 2
    """Games played at once."""
    connect_timeout_ms: int = 60_000
    """How long a game waits for its bots to connect."""
    game: str = DEFAULT_GAME
    """Which game is played: a name in ``referee.games``' registry."""
    clock: str = "cpu"
    """How the bots the arena starts are timed: ``cpu`` — by their process tree's CPU time where
    the referee is embedded and the platform allows (Linux), else as ``wall``; ``wall`` — by the
    referee's clock without its own loop's stalls (``referee.SEAT_CLOCKS``). Remote bots are
    always timed as ``wall``."""
    reconnect_grace_ms: int = 5_000
    """How long a seat whose bot dropped its connection waits for it to come back (its clock runs)."""
    substitute_time_faults: str = "game"
    """Under ``substitute``: a time loss hands the built-in bot the seat to the game's end
    (``game``) or only the decision that timed out (``move``: a person's table)."""
    repeat_illegal: bool = False
    """An illegal action is refused and asked again instead of a fault (a person's table)."""

    def __post_init__(self) -> None:
        if self.clock not in SEAT_CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(SEAT_CLOCKS)}; got {self.clock!r}")
        if self.fault_policy not in FAULT_POLICIES:
            raise ValueError(f"fault_policy must be one of {', '.join(FAULT_POLICIES)}; got {self.fault_policy!r}")
        if self.substitute_time_faults not in SUBSTITUTE_SCOPES:
            raise ValueError(f"substitute_time_faults must be one of {', '.join(SUBSTITUTE_SCOPES)}; "
                             f"got {self.substitute_time_faults!r}")
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.connect_timeout_ms < 1000 or self.reconnect_grace_ms < 0:
            raise ValueError("the connect timeout must be at least 1 s (connect_timeout_ms >= 1000) and "
                             "reconnect_grace_ms >= 0")
        engine = games.get(self.game).game  # ValueError naming the known games
        if self.rules is None:
            object.__setattr__(self, "rules", engine.default_rules())
        else:
            engine.check_rules(self.rules)

    @property
    def rules_name(self) -> str:
        """The rule set's name (the game's name if its rules have none)."""
        return str(getattr(self.rules, "name", self.game))

    def spec(self, players: Sequence[str], *, match_id: str = "", seed: bytes | None = None, reveal_seed: bool = True,
             seat_time_controls: Sequence[TimeControl] = (), seat_bots: Sequence[str] = (),
             seat_tokens: Sequence[str] = ()) -> MatchSpec:
        """The spec of one match played this way — the arena's one builder of a match to be
        played (``tests/test_structure.py`` checks that nothing else calls ``MatchSpec``):
        ``players`` by seat; ``seed`` (``None``: the referee draws one) and whether its end
        reveals it (not while another game of its duplicate group may be played from it);
        ``seat_time_controls``: a time control by seat where the bots have their own (kept only
        if one differs from :attr:`time_control`); ``seat_bots``: the registered bot of each
        seat (hosted); ``seat_tokens``: the bot token of each seat (an operator's match)."""
        differ = any(tc != self.time_control for tc in seat_time_controls)
        return MatchSpec(
            players=tuple(players), game=self.game, rules=self.rules, time_control=self.time_control,
            seat_time_controls=tuple(seat_time_controls) if differ else (), fault_policy=self.fault_policy,
            substitute_time_faults=self.substitute_time_faults,  # type: ignore[arg-type] # (checked above)
            reconnect_grace_ms=self.reconnect_grace_ms, connect_timeout_ms=self.connect_timeout_ms,
            repeat_illegal=self.repeat_illegal, seed=seed, reveal_seed=reveal_seed, match_id=match_id,
            seat_bots=tuple(seat_bots), seat_tokens=tuple(seat_tokens),
        )

    def to_dict(self) -> dict[str, Any]:
        """The stored form (the rule set as the game writes it, the time control in its canonical
        form ``TimeControl.to_dict``; the game, the clock and the settings of a person's table
        only when they are not the defaults, so that a run keeps the keys it always had)."""
        return {
            **({"game": self.game} if self.game != DEFAULT_GAME else {}),
            "rules": games.get(self.game).game.rules_to_dict(self.rules),
            "time_control": self.time_control.to_dict(),
            "fault_policy": self.fault_policy,
            "concurrency": self.concurrency,
            "connect_timeout_ms": self.connect_timeout_ms,
            **({"clock": self.clock} if self.clock != "cpu" else {}),
            **{k: getattr(self, k) for k, default in _PLAY_OPTIONAL.items() if getattr(self, k) != default},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlayConfig:
        """Back from :meth:`to_dict` (missing keys take their defaults)."""
        game = str(data.get("game", DEFAULT_GAME))
        return cls(
            game=game,
            rules=games.get(game).game.rules_from_dict(dict(data["rules"])) if "rules" in data else None,
            time_control=TimeControl.from_dict(data["time_control"]) if "time_control" in data else DEFAULT_TC,
            fault_policy=data.get("fault_policy", "forfeit"),
            concurrency=int(data.get("concurrency", 2)),
            connect_timeout_ms=int(data.get("connect_timeout_ms", 60_000)),
            clock=str(data.get("clock", "cpu")),
            **{k: type(default)(data[k]) for k, default in _PLAY_OPTIONAL.items() if k in data},
        )


_PLAY_OPTIONAL: dict[str, Any] = {f.name: f.default for f in fields(PlayConfig)
                                  if f.name in ("reconnect_grace_ms", "substitute_time_faults", "repeat_illegal")}
"""The play settings a run stores only when they are not these defaults (a run from before they
existed has none of them)."""


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Everything that determines a run (stored in the run's database)."""

    run_id: str
    """Prefix of every match id (unique per run)."""
    bots: tuple[str, ...]
    """The bots' names, in manifest order."""
    format: str = DEFAULT_FORMAT
    """The format's name (:data:`arena.competition.formats.FORMATS`): who plays whom."""
    games: int = 2
    """Games per table (a multiple of ``seats``: whole rotations)."""
    duplicate: bool = True
    """The games of a rotation are played on the same cards, the seats rotated."""
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
    seats: int = 2
    """Seats of every table (one of the game's seat counts)."""
    tables: int = 0
    """Tables drawn at random from every combination (0: every combination is a table)."""
    instances: int = 1
    """Seats of one table that one bot may fill (as separate instances)."""
    rounds: int = 0
    """Formats of several rounds (Swiss): how many (0: the format's default)."""
    raters: tuple[str, ...] = ()
    """The raters of its results, by name (:data:`arena.competition.ratings.RATERS`; the first orders
    the standings); empty: :func:`arena.competition.ratings.default_raters`."""

    def __post_init__(self) -> None:
        get_raters(self.raters)  # ValueError naming the known ones
        counts = games.get(self.play.game).game.seat_counts()
        if self.seats not in counts:
            raise ValueError(f"{self.play.game} is played by {counts.start} to {counts.stop - 1} seats; "
                             f"got {self.seats}")
        if self.games < self.seats or self.games % self.seats:
            raise ValueError(f"games per table must be a multiple of the {self.seats} seats (each rotation "
                             f"seats every bot at every seat once); got {self.games}")
        if self.tables < 0 or self.instances < 1:
            raise ValueError("tables must be >= 0 and instances >= 1")
        if len(self.bots) < 2:
            raise ValueError("a tournament needs at least two bots")
        if len(self.bots) * self.instances < self.seats:
            raise ValueError(f"{len(self.bots)} bots cannot fill {self.seats} seats with at most {self.instances} "
                             "seat(s) each (see --instances)")
        if len(set(self.bots)) != len(self.bots):
            raise ValueError("bot names must be unique")
        if self.challenger and self.challenger not in self.bots:
            raise ValueError(f"the gauntlet's challenger {self.challenger!r} is not one of the bots")
        if self.rounds < 0:
            raise ValueError(f"rounds must be >= 0; got {self.rounds}")
        get_format(self.format).check(field_of(self))  # ValueError naming the known ones, or why not

    def to_dict(self) -> dict[str, Any]:
        """The stored form: one flat table (the same keys as the runs of gin-arena 0.1, and the
        table's settings where they are not the defaults)."""
        d = {f: getattr(self, f) for f in _RUN_FIELDS if getattr(self, f) != _TABLE_DEFAULTS.get(f)}
        d["bots"] = list(self.bots)
        if self.raters:
            d["raters"] = list(self.raters)
        return {**d, **self.play.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunConfig:
        """Back from :meth:`to_dict`."""
        fields = {f: data[f] for f in _RUN_FIELDS if f in data}
        return cls(**{**fields, "bots": tuple(data["bots"]), "raters": tuple(data.get("raters") or ()),
                      "play": PlayConfig.from_dict(data)})


_RUN_FIELDS = ("run_id", "bots", "format", "games", "duplicate", "seed", "challenger", "sprt", "referee", "listen",
               "seats", "tables", "instances", "rounds", "raters")
_TABLE_DEFAULTS: dict[str, object] = {"seats": 2, "tables": 0, "instances": 1, "rounds": 0, "raters": ()}


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
    """``"a|b"`` (``"a|a#2|b"``…): the table this game belongs to."""
    pair: int
    """The group's number within its table (a pair for two seats)."""
    leg: int
    """The game within its group (0 … seats - 1: the seats rotated)."""
    pair_key: str
    """The games of a duplicate group share this key; ``""`` if the games are not duplicates."""

    def match_id(self, run_id: str, attempt: int = 0) -> str:
        """The referee match id of an attempt to play this game (re-plays get ``-rN``)."""
        base = f"{run_id}-g{self.idx:04d}"
        return f"{base}-r{attempt}" if attempt else base


def field_of(config: RunConfig) -> Field:
    """What the run's format plans from."""
    return Field(config.bots, config.seats, config.games, config.seed, config.tables, config.instances,
                 config.challenger, config.rounds)


def round_jobs(config: RunConfig, planned: Round, first: int = 0) -> list[GameJob]:
    """The games of a planned round, numbered from ``first``: each group's seatings
    (:func:`arena.competition.seating.rotations`) on its seeds
    (:func:`arena.competition.seating.group_seeds`; a game that draws its first dealer,
    ``referee.games.DrawsFirstDealer``, gets a two-seat pair whose other bot deals first)."""
    declared = games.get(config.play.game).capabilities.first_dealer
    draws = declared.first_dealer if declared is not None else None
    jobs: list[GameJob] = []
    for group in planned.groups:
        key = group.key
        seeds = group_seeds(config.seed, key, group.number, config.seats, config.duplicate, draws)
        pair_key = f"{key}#{group.number}" if config.duplicate else ""
        for leg, players in enumerate(rotations(group.players, group.shift)):
            jobs.append(GameJob(first + len(jobs), players, seeds[leg], key, group.number, leg, pair_key))
    return jobs


def build_schedule(config: RunConfig) -> list[GameJob]:
    """The games of a run's first round — every game of a one-round format (round robin,
    gauntlet): its format's one round, interleaved
    so that a partial run is balanced — group 0 of every table, then group 1 of every table, …;
    within a group the seats rotate, the first seat of a group's first game moving on from group
    to group."""
    planned = get_format(config.format).plan(field_of(config), ())
    return [] if planned is None else round_jobs(config, planned)


def schedule_fingerprint(jobs: Sequence[GameJob]) -> str:
    """A hash of a schedule (stored, and compared on resume)."""
    h = hashlib.sha256()
    for j in jobs:
        h.update(f"{j.idx}|{'|'.join(j.players)}|{j.seed.hex()}|{j.pair_key}\n".encode())
    return h.hexdigest()
