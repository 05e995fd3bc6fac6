"""The continuous ladder of a hosted server (``arena serve``): it pairs the registered bots that
are online all the time, stores every game in ``serve.sqlite`` with its duplicate pair, rates
them (:mod:`arena.results.standings`) and suspends a bot that crashes or loses on time too often.

At start it takes up the games the duplicate groups of earlier server runs still owe (a server
killed mid-group: :mod:`arena.hosted.owed`), to be played first, on the group's deals.

It wakes on the referee's presence changes (a bot came, went, took or left a seat), never by
polling them; the registry (changed by ``arena bots`` from another process) is read again every
:data:`REGISTRY_CHECK_S` so that a bot disabled meanwhile is disconnected. Docs: docs/hosted.md.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import re
import secrets
import time
from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
import trio

import referee
import referee.lowlevel
from arena.competition.formats import get_continuous
from arena.competition.matchmaking import Seeker, met_at
from arena.competition.ratings import SkillBoard
from arena.competition.seating import rotations
from arena.hosted.bosses import Bosses, bosses_of
from arena.hosted.ladder_file import LadderConfig, LadderPlay, SuspendRules
from arena.hosted.owed import INTERRUPTED, OwedGame, owed_games, record_run
from arena.hosted.registry import BotRegistry
from arena.model.records import from_report
from arena.model.schedule import GameJob
from arena.store import outcome_from_row, play_columns, seats_by_game, set_live_raters
from referee import DEFAULT_GAME

log = structlog.get_logger("arena")

REGISTRY_CHECK_S = 1.0
"""How often the registry is read again for the bots online (one indexed row each)."""
CRASHES = ("crashed", "disconnected", "bot_error")
"""The terminations that count as a bot's crash when it is the faulting seat."""
MATCH_ID = re.compile(r"^(?P<run>hosted-[0-9a-f]{6})-p(?P<pair>\d+)-l(?P<leg>\d+)(?:-r[0-9a-f]{6})?$")
"""A hosted ladder match's id: the server run that started the group, the duplicate group, the
game within it, and (``-rXXXXXX``) the later server run that plays a game the group still owed."""


@dataclass(frozen=True, slots=True)
class HostedLimits:
    """Per-bot bounds of the continuous ladder (``arena serve --limit KEY=VALUE``, beside the referee's)."""

    bot_matches_per_minute: int = 60
    """Default 60. Matches the ladder starts for one bot in any 60 seconds."""
    bot_concurrent_matches: int = 8
    """Default 8. Matches one bot plays at once, whatever its hellos' ``max_concurrent_matches`` say."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"limit {f.name} must be a positive integer; got {value!r}")


def split_limits(items: Iterable[str]) -> tuple[list[str], HostedLimits]:
    """``--limit`` words: those of the referee (returned as they are) and the ladder's own
    (:class:`HostedLimits`; ``ValueError`` names a bad one)."""
    own = {f.name for f in dataclasses.fields(HostedLimits)}
    rest, values = [], {}
    for item in items:
        key, _, text = item.partition("=")
        key = key.strip().replace("-", "_")
        if key not in own:
            rest.append(item)
            continue
        try:
            values[key] = int(text.replace("_", ""))
        except ValueError:
            raise ValueError(f"{item!r}: {text!r} is not an integer") from None
    return rest, HostedLimits(**values)


_Leg = tuple[LadderPlay, GameJob]
"""A game of a duplicate group: what it plays, and the game as the arena schedules one (its
bots by seat, the group's seed, the table, the group's number, the leg, the pair key)."""


def _match_id(job: GameJob, run_id: str) -> str:
    """A hosted game's match id (:data:`MATCH_ID`), from which its row's pair columns come back;
    server run ``run_id`` playing a game an earlier run's group owes adds ``-r`` and its own hex."""
    base = f"{job.pair_key}-l{job.leg}"
    return base if job.pair_key.startswith(run_id + "-") else f"{base}-r{run_id.removeprefix('hosted-')}"


def suspension(db: Any, bot: str, rules: SuspendRules) -> str | None:
    """Why ``bot`` is to be suspended after its latest games, or ``None``. Only the bot's own
    faults count: a goodbye (a ``Resign`` of ``referee.lowlevel.GOODBYE`` or a clean close of its stream —
    its operator stopped it) is no crash, and the server's faults (its loop's stalls) are never
    charged to a seat's clock in the first place (``referee.table.seat_clock``)."""
    rows = db.execute(
        "SELECT g.termination, g.faulting_seat, s.seat, g.detail FROM game_seats s JOIN games g ON g.idx = s.game "
        "WHERE s.bot = ? AND g.status = 'done' ORDER BY g.idx DESC LIMIT ?", (bot, rules.window)).fetchall()
    own = [str(r[0]) for r in rows
           if r[1] is not None and r[1] == r[2] and not referee.lowlevel.is_goodbye(str(r[3] or ""))]
    crashes = sum(t in CRASHES for t in own)
    if crashes > rules.crashes:
        return (f"{crashes} crashes (crashed, disconnected or gave up) in its last {len(rows)} games: more than "
                f"{rules.crashes}")
    losses = sum(t == "time_forfeit" for t in own)
    if len(rows) >= rules.min_games and losses > rules.time_loss_share * len(rows):
        return f"{losses} time losses in its last {len(rows)} games: over {rules.time_loss_share:.0%}"
    return None


def _declares(presence: referee.lowlevel.BotPresence, play: LadderPlay) -> bool:
    """Whether a bot's hellos say it plays ``play`` (no games: the default game; no presets: all)."""
    return (play.play.game in (presence.games or (DEFAULT_GAME,))
            and (not presence.presets or play.key in presence.presets))


class _Directory:
    """The registry as the referee's bot directory: who a token is, and why one is refused."""

    def __init__(self, registry: BotRegistry) -> None:
        self._registry = registry

    def identify(self, token: str) -> str | None:
        return self._registry.identify(token)

    def refusal(self, token: str) -> str:
        bot = self._registry.lookup(token)
        if bot is None or bot.state == "enabled":
            return ""
        why = f": {bot.reason}" if bot.reason else ""
        return f"bot {bot.name!r} is {bot.state}{why}; the server's operator re-enables it (arena bots enable)"


class HostedLadder:
    """The continuous ladder: implements ``arena.run.serve.Hosting``."""

    def __init__(self, registry: BotRegistry, config: LadderConfig, limits: HostedLimits | None = None,
                 *, rng: random.Random | None = None, boss_logs: Path | None = None) -> None:
        self.registry = registry
        self.bosses = Bosses(registry, bosses_of(config), config.boss_memory_mb, boss_logs)
        """The ladder file's bosses, started with the ladder (``boss_logs``: their log files' folder)."""
        self.config = config
        self.limits = limits or HostedLimits()
        self.run_id = f"hosted-{secrets.token_hex(3)}"
        """This server run's prefix of its match ids (a restarted server never reuses one)."""
        self._rng = rng or random.Random()
        self._ladder = get_continuous()
        """The ladder format (the registry's): who plays whom, a wave at a time."""
        self._groups = 0
        self._games_started = 0
        self._pending: list[_Leg] = []
        self._starts: dict[str, deque[float]] = {}
        self._games: dict[str, int] = dict(registry.games_played())
        self._play_games: dict[str, int] = {}
        self._board = SkillBoard()
        self._ref: referee.Referee | None = None
        seats = seats_by_game(registry.db)
        self._met: Counter[frozenset[str]] = Counter()
        """Games each pair of bots played at one table on this server (started, in this run)."""
        for r in registry.db.execute("SELECT * FROM games WHERE status = 'done' ORDER BY idx"):
            self._board.add(outcome_from_row(r, seats.get(int(r["idx"]), [])))
            met_at([[str(s["bot"]) for s in seats.get(int(r["idx"]), [])]], self._met)
        self._free_since: dict[str, float] = {}
        """The bots free for a new table, and since when (``time.monotonic``)."""
        self._waves: Counter[str] = Counter()
        """The waves with newly freed bots each free bot has sat out."""
        self._wave_at: float | None = None
        """When the next wave pairs (``time.monotonic``; ``None``: on the next bot freed)."""
        self._fresh = False
        """Whether a bot became free since the last wave."""
        self._owed: set[tuple[str, int]] = set()
        """The games of earlier runs' groups taken up by this run (group, leg): each is played once."""
        record_run(registry.db, self.run_id, config.duplicate)
        set_live_raters(registry.db, config.raters)  # (what the web's standings rate by)
        self._take_up(None)

    # ----- the games earlier runs' groups owe -----
    def _take_up(self, pair_key: str | None) -> None:
        """Queue, first, the games earlier server runs' duplicate groups (or group ``pair_key``)
        still owe, on their deals; a group whose play the ladder file no longer has is left."""
        plays = {tuple(play_columns(p.play.game, p.play.rules, p.play.time_control).values()): p
                 for p in self.config.plays}
        owed = owed_games(self.registry.db, before_run=self.run_id, duplicate_default=self.config.duplicate,
                          pair_key=pair_key)
        taken: list[_Leg] = []
        for game in owed:
            play = plays.get((game.game, game.rules, game.time_control))
            if (game.pair_key, game.leg) in self._owed:
                continue
            self._owed.add((game.pair_key, game.leg))
            if play is None:
                log.warning("group_left", group=game.pair_key, leg=game.leg,
                            reason="the ladder file no longer plays its game, rules and time control")
                continue
            taken.append((play, _owed_job(game)))
        if taken:
            log.info("group_taken_up", groups=sorted({j.pair_key for _, j in taken}),
                     games=[_match_id(j, self.run_id) for _, j in taken])
        self._pending[:0] = taken

    @property
    def directory(self) -> referee.lowlevel.BotDirectory:
        return _Directory(self.registry)

    # ----- the store -----
    def columns(self, event: referee.MatchEvent) -> Mapping[str, Any]:
        m = MATCH_ID.match(event.match_id)
        if m is None:
            return {}
        spec = event.spec
        return {"run": m["run"], "pair": int(m["pair"]), "leg": int(m["leg"]), "pair_key": f"{m['run']}-p{m['pair']}",
                "pairing": "|".join(sorted(spec.players)), "seed": spec.seed.hex() if spec.seed else ""}

    def recorded(self, event: referee.MatchEvent) -> None:
        report = event.report
        assert report is not None
        m = MATCH_ID.match(event.match_id)
        if report.termination == INTERRUPTED and m is not None and m["run"] != self.run_id:
            self._take_up(f"{m['run']}-p{m['pair']}")  # a game a killed server cut: its group owes it
        self._board.add(from_report(report, 0.0))
        log.info("match_finished", match_id=event.match_id, players=list(report.players),
                 termination=report.termination, places=list(report.places), detail=report.detail)
        for bot in dict.fromkeys(event.spec.seat_bots):
            if bot:
                self._check(bot)

    def _check(self, bot: str) -> None:
        registered = self.registry.get(bot)
        if registered is None or registered.state != "enabled":
            return
        reason = suspension(self.registry.db, bot, self.config.suspend)
        if reason is None:
            return
        self.registry.suspend(bot, reason)
        log.warning("bot_suspended", bot=bot, reason=reason)
        if self._ref is not None:
            self._ref.disconnect_bot(bot, f"suspended: {reason} (the operator re-enables it: arena bots enable)")

    # ----- pairing -----
    async def run(self, ref: referee.Referee) -> None:
        self._ref = ref
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._recheck, ref)
            nursery.start_soon(self.bosses.run, ref)
            while True:
                seen = ref.presence_version
                wake = self.pair(ref)
                with trio.move_on_at(wake):
                    await ref.wait_presence(seen)

    async def _recheck(self, ref: referee.Referee) -> None:
        while True:
            await trio.sleep(REGISTRY_CHECK_S)
            for bot in ref.recheck_bots():
                log.info("bot_refused", bot=bot, reason="its token is no longer accepted by the registry")

    def _room(self, online: Mapping[str, referee.lowlevel.BotPresence], now: float) -> dict[str, int]:
        """Matches each enabled online bot may start now (its capacity and its rate limit)."""
        room = {}
        limits = self.limits
        for bot, p in online.items():
            starts = self._starts.setdefault(bot, deque())
            while starts and starts[0] <= now - 60.0:
                starts.popleft()
            free = min(p.max_concurrent, limits.bot_concurrent_matches) - p.playing
            free = min(free, limits.bot_matches_per_minute - len(starts))
            if free > 0:
                room[bot] = free
        return room

    def pair(self, ref: referee.Referee) -> float:
        """Start every match it is time for: the waiting games of duplicate groups at once, then,
        when a wave is due, the new tables the ladder format makes of the bots free
        (:func:`arena.competition.formats.get_continuous`). Returns when to look again at the
        latest (the next wave, a rate limit's end; ``inf``: only when the presence changes)."""
        now = time.monotonic()
        online = {b: p for b, p in ref.presence().items() if (r := self.registry.get(b)) and r.state == "enabled"}
        room = self._room(online, now)
        self._pending = [leg for leg in self._pending if self._still_playable(leg)]
        for leg in list(self._pending):
            if all(room.get(b, 0) > 0 for b in leg[1].players):
                self._pending.remove(leg)
                if not self._start(ref, leg, room, now):
                    break
        else:
            self._wave(ref, online, room, now)
        waiting = [s[0] + 60.0 for b, s in self._starts.items() if b in online and s
                   and len(s) >= self.limits.bot_matches_per_minute]
        if self._wave_at is not None and self._wave_at > now:  # (one due but not run: a game refused; on a change)
            waiting.append(self._wave_at)
        return trio.current_time() + max(0.0, min(waiting) - now) if waiting else math.inf

    def _still_playable(self, leg: _Leg) -> bool:
        return all((r := self.registry.get(b)) is not None and r.state == "enabled" for b in leg[1].players)

    def _wave(self, ref: referee.Referee, online: Mapping[str, referee.lowlevel.BotPresence], room: dict[str, int],
              now: float) -> None:
        """Note the bots free for a new table (with room after the games their groups owe); when the wave
        is due (``pairing_wave_ms`` after a bot became free), start the tables it makes."""
        free = {b for b in online if room.get(b, 0) > 0}
        for bot in [b for b in self._free_since if b not in free]:
            del self._free_since[bot]
            self._waves.pop(bot, None)
        for bot in free - self._free_since.keys():
            self._free_since[bot] = now
            self._fresh = True
            due = now + self.config.pairing.wave_ms / 1000
            self._wave_at = due if self._wave_at is None else min(self._wave_at, due)
        if self._wave_at is None or now < self._wave_at:
            return
        self._wave_at = None
        seated: set[str] = set()
        retry: list[float] = []
        for play in sorted(self.config.plays, key=lambda p: self._play_games.get(p.key, 0)):
            pool = [Seeker(b, self._board.rating(b).mu, b in self._free_since and b not in seated,
                           (now - self._free_since.get(b, now)) * 1000, self._waves[b])
                    for b, p in online.items() if _declares(p, play)]
            wave = self._ladder.wave(pool, self._met, play.seats, self.config.pairing, self._rng,
                                     play.seats if self.config.duplicate else 1)
            if wave.retry_ms is not None:
                retry.append(wave.retry_ms)
            for table in wave.tables:
                seated.update(table)
                if not self._new_table(ref, play, table, online, room, now):
                    self._wave_at = now + self.config.pairing.patience_ms / 1000  # (refused: try later)
                    return
        for bot in self._free_since.keys() - seated:
            self._waves[bot] += self._fresh
        self._fresh = False
        if retry:
            self._wave_at = now + min(retry) / 1000

    def _new_table(self, ref: referee.Referee, play: LadderPlay, table: tuple[str, ...],
                   online: Mapping[str, referee.lowlevel.BotPresence], room: dict[str, int], now: float) -> bool:
        """Start a new duplicate group of ``table``'s bots (its first game now; the others when
        its bots have room again); ``False``: the referee refused its first game for now."""
        for bot in table:
            self._free_since.pop(bot, None)
            self._waves.pop(bot, None)
        self._groups += 1
        group = f"{self.run_id}-p{self._groups:05d}"
        seatings = rotations(table) if self.config.duplicate else [table]
        seed = secrets.token_bytes(32)
        log.info("pairing", group=group, bots=list(table), hello_names=[online[b].hello_name for b in table],
                 game=play.play.game, preset=play.preset, games=[self._games.get(b, 0) for b in table],
                 met=[self._met.get(frozenset(p), 0) for p in itertools.combinations(table, 2)], legs=len(seatings))
        legs: list[_Leg] = [(play, GameJob(self._games_started + i, players, seed, "|".join(table), self._groups,
                                           i, group)) for i, players in enumerate(seatings)]
        started = True
        for leg in legs:
            if started and all(room.get(b, 0) > 0 for b in leg[1].players):
                started = self._start(ref, leg, room, now)
            else:
                self._pending.append(leg)
        return started

    def _start(self, ref: referee.Referee, leg: _Leg, room: dict[str, int], now: float) -> bool:
        """Create the leg's match (``False``: the referee refused it for now; it waits)."""
        play, job = leg
        own = job.pair_key.startswith(self.run_id + "-")  # (else a game an earlier run's group owes)
        spec = play.play.spec(  # a lone game (no duplicate deals) reveals its seed; a group's games keep it
            job.players, seed=job.seed, reveal_seed=not self.config.duplicate and own,
            match_id=_match_id(job, self.run_id), seat_bots=job.players)
        try:
            ref.create_match(spec)
        except referee.LimitExceeded as e:
            log.warning("pairing_refused", match_id=spec.match_id, reason=str(e))
            self._pending.append(leg)
            return False
        self._games_started += 1
        self._play_games[play.key] = self._play_games.get(play.key, 0) + 1
        met_at([job.players], self._met)
        for b in job.players:
            room[b] -= 1
            self._games[b] = self._games.get(b, 0) + 1
            self._starts.setdefault(b, deque()).append(now)
        return True


def _owed_job(game: OwedGame) -> GameJob:
    """An owed game as the ladder schedules one (in its group, with the group's seed)."""
    return GameJob(-1, game.players, game.seed, "|".join(game.players), game.pair, game.leg, game.pair_key)
