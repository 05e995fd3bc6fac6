"""Where the live web's data comes from (:class:`WebSource`): the arena's one store (a run's
``run.sqlite`` or ``arena serve``'s ``serve.sqlite``, read through a short-lived read-only
connection: another task or process writes it) and, when the matches are played in this
process, the live referee (its running tables, read on its own trio thread).

Everything shown of a running match comes from its game's presentation of the **spectator's**
view (``referee.games.SPECTATOR``): public information only. The store's queries are plain
functions of a connection, so the server runs them on a worker thread and the referee's loop,
which timestamps the bots' answers, never waits for the disk.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from google.protobuf import json_format

import referee
import referee.lowlevel
from arena.competition.ratings import RatingRow, SkillBoard, get_raters
from arena.competition.seating import base_name
from arena.hosted.owed import group_open
from arena.model.records import Outcome
from arena.replays.steps import named
from arena.results.standings import PROVISIONAL_GAMES, RatedGames
from arena.results.standings import standings as shared_standings
from arena.store import live_raters, outcome_from_row, resolve_replay, seats_by_game
from gin_arena.v2 import referee_pb2

LOG_TAIL_BYTES = 256 * 1024
"""How much of the end of a bot's log the operator's fault view searches for the match's last line."""
RUNNING_STATES = ("waiting", "running")
"""The referee's table states of a match not over yet."""


class WebSource(Protocol):
    """What the web reads: a store, the folder its replays and logs are in, and (when the
    matches run in this process) the referee."""

    @property
    def title(self) -> str:
        """What the pages are about (``arena serve DIR``, ``tournament RUN``)."""

    @property
    def folder(self) -> Path:
        """The folder the store's replay paths and the bots' logs (``logs/``) are relative to."""

    @property
    def live(self) -> referee.Referee | None:
        """The referee playing the matches in this process, or ``None`` (games played elsewhere:
        no live spectating, the standings follow the store)."""

    def read(self) -> sqlite3.Connection:
        """A new read-only connection to the store (the caller closes it)."""


@dataclass(frozen=True, slots=True)
class StoreSource:
    """A :class:`WebSource` over a store file and, optionally, the referee of this process."""

    db: Path
    """The store (``serve.sqlite``, ``run.sqlite``)."""
    folder: Path
    """The folder of its replays and logs."""
    title: str
    """What the pages are about."""
    live: referee.Referee | None = None
    """The referee playing in this process, if any."""

    def read(self) -> sqlite3.Connection:
        conn = sqlite3.connect(f"{self.db.resolve().as_uri()}?mode=ro", uri=True, timeout=10.0,
                               check_same_thread=False)
        conn.row_factory = sqlite3.Row
        return conn


@contextmanager
def reading(source: WebSource) -> Iterator[sqlite3.Connection]:
    """A read-only connection for one request (closed after it)."""
    with closing(source.read()) as conn:
        yield conn


# ----- the store -----
def _number(value: float, digits: int = 3) -> float | None:
    """A rating for JSON: rounded, or ``None`` where it is unbounded (a perfect or a nil score)."""
    return round(value, digits) if math.isfinite(value) else None


def _rating(row: RatingRow | None) -> dict[str, Any]:
    """One rater's row for a bot, as the API gives it (``rating`` ``None``: no row yet)."""
    if row is None:
        return {"rating": None, "low": None, "high": None, "count": 0}
    return {"rating": _number(row.rating), "low": _number(row.low), "high": _number(row.high), "count": row.count,
            **{k: _number(v) for k, v in row.extra}}


def standings(conn: sqlite3.Connection, rated: RatedGames | None = None) -> list[dict[str, Any]]:
    """The standings, best first, from the arena's one standings engine
    (:func:`arena.results.standings.standings`), rated by the store's live raters
    (:func:`arena.store.live_raters`; none: the live rater): per bot its games, its state and
    reason, ``ratings`` (each rater's ``rater``, ``title``, ``rating``, ``low``, ``high``, ``count``
    and its own extras) and, from the first rater, which orders them, ``rater``, ``rater_title``,
    ``rating``, ``uncertainty``, ``low``, ``high``, ``rated_games`` and ``provisional`` (under its
    ``PROVISIONAL_GAMES``); ``rated`` keeps the ratings between calls (only new games are read)."""
    raters = get_raters(live_raters(conn))
    out = []
    for rank, s in enumerate(shared_standings(conn, rated, raters), start=1):
        ratings = [{"rater": r.name, "title": r.title, **_rating(row)} for r, row in s.ratings]
        first = ratings[0]
        out.append({"rank": rank, "bot": s.bot, "games": s.games, "rater": first["rater"],
                    "rater_title": first["title"], "rating": first["rating"], "uncertainty": _number(s.uncertainty),
                    "low": first["low"], "high": first["high"], "rated_games": s.rated_games,
                    "provisional": s.provisional, "state": s.state, "reason": s.reason, "ratings": ratings})
    return out


def match_summary(r: sqlite3.Row, o: Outcome) -> dict[str, Any]:
    """A finished game as the API lists it."""
    return {
        "match_id": o.match_id, "game": r["game"], "state": "finished", "players": list(o.players),
        "places": list(o.places), "points": list(o.points), "winner": o.winner_name, "termination": o.termination,
        "finished_at": r["finished_at"], "deals": o.deals, "decisions": o.decisions,
    }


def recent_matches(conn: sqlite3.Connection, limit: int, before: int | None = None
                   ) -> tuple[list[dict[str, Any]], int | None]:
    """Up to ``limit`` finished games, newest first, finished before the game of index ``before``;
    and the index to ask for the next page with (``None``: no more)."""
    where, args = ("AND idx < ?", (before,)) if before is not None else ("", ())
    rows = conn.execute(f"SELECT * FROM games WHERE status = 'done' {where} ORDER BY idx DESC LIMIT ?",
                        (*args, limit + 1)).fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    if not rows:
        return [], None
    seats = seats_by_game(conn, f"WHERE game IN ({','.join('?' * len(rows))})", [int(r["idx"]) for r in rows])
    out = [match_summary(r, outcome_from_row(r, seats.get(int(r["idx"]), []))) for r in rows]
    return out, int(rows[-1]["idx"]) if more else None


WITHHELD = ("its duplicate group is still being played (its other games are dealt the same cards): its replay "
            "and seed are shown once the group is over")
"""Why a finished game's replay and seed are not shown yet."""


def finished_match(conn: sqlite3.Connection, match_id: str, folder: Path) -> tuple[dict[str, Any], str] | None:
    """A finished game's summary and its replay file, or ``None`` if the store has no such game.
    While its duplicate group still has games to play, the summary holds ``withheld`` (why)
    instead of the seed, and the replay file is ``""``: they would tell those games' deals."""
    r = conn.execute("SELECT * FROM games WHERE status = 'done' AND match_id = ?", (match_id,)).fetchone()
    if r is None:
        return None
    seats = seats_by_game(conn, "WHERE game = ?", (int(r["idx"]),)).get(int(r["idx"]), [])
    o = outcome_from_row(r, seats, folder)
    summary = {**match_summary(r, o), "detail": o.detail, "replay_hash": o.replay_hash, "seed": o.seed_hex}
    if group_open(conn, str(r["pair_key"] or "")):
        return {**summary, "seed": "", "withheld": WITHHELD}, ""
    return summary, resolve_replay(o.replay_path, folder)


def _log_line(folder: Path, bot: str, match_id: str) -> str:
    """The last line of ``bot``'s log (``logs/<bot>.log``, as a run keeps it) about ``match_id``."""
    path = folder / "logs" / f"{bot}.log"
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - LOG_TAIL_BYTES))
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    return next((line for line in reversed(lines) if match_id in line), "")


def _like(name: str) -> str:
    """A LIKE pattern for ``name``'s instances (``name#2``…), its wildcards escaped (``ESCAPE '!'``)."""
    return name.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "#%"


def bot_page(conn: sqlite3.Connection, name: str, folder: Path, limits_games: int, operator: bool,
             rated: RatedGames | None = None) -> dict[str, Any] | None:
    """A bot's games (newest first, at most ``limits_games``), its rating after each of its rated
    games (from ``rated``, kept between calls, or rated afresh), and its faults (the termination
    for everyone; the referee's detail and the log line only for the ``operator``). ``None`` if
    the store knows no such bot. Reads only the bot's recent and faulted games (``game_seats_bot``)."""
    mine_where = "SELECT game FROM game_seats WHERE bot = ? OR bot LIKE ? ESCAPE '!'"
    args = (name, _like(name))
    mine_sql = f"FROM games WHERE status = 'done' AND idx IN ({mine_where})"
    played = int(conn.execute(f"SELECT COUNT(*) {mine_sql}", args).fetchone()[0])
    if not played and conn.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone() is None:
        return None

    def outcomes(where: str, limit: int = -1) -> list[tuple[sqlite3.Row, Outcome]]:
        rows = conn.execute(f"SELECT * {mine_sql} {where} ORDER BY idx DESC LIMIT ?", (*args, limit)).fetchall()
        if not rows:
            return []
        idxs = [int(r["idx"]) for r in rows]
        seats = seats_by_game(conn, f"WHERE game IN ({','.join('?' * len(idxs))})", idxs)
        return [(r, outcome_from_row(r, seats.get(int(r["idx"]), []))) for r in rows]

    recent = [match_summary(r, o) for r, o in outcomes("", limits_games)]
    faults: list[dict[str, Any]] = []  # newest first, like the games
    for _, o in outcomes("AND faulting_seat IS NOT NULL"):
        if o.faulting_seat is not None and base_name(o.players[o.faulting_seat]) == name:
            fault: dict[str, Any] = {"match_id": o.match_id, "seat": o.faulting_seat, "termination": o.termination}
            if operator:
                fault["detail"] = o.detail
                fault["log_line"] = _log_line(folder, o.players[o.faulting_seat], o.match_id)
            faults.append(fault)
    history = [{"game": p.game, "match_id": p.match_id, "rating": round(p.rating, 3),
                "uncertainty": round(p.uncertainty, 3)}
               for p in (rated or RatedGames()).rating_history(conn, name)]
    last = history[-1] if history else None
    prior = SkillBoard().rating(name)
    return {"bot": name, "prior": {"rating": round(prior.mu, 3), "uncertainty": round(prior.sigma, 3)},
            "games": played, "rating": last["rating"] if last else None,
            "uncertainty": last["uncertainty"] if last else None,
            "provisional": len(history) < PROVISIONAL_GAMES, "recent": recent,
            "history": history, "faults": faults}


# ----- the live referee (called on its trio thread) -----
def running(ref: referee.Referee | None) -> list[dict[str, Any]]:
    """The referee's matches not over yet, as the API lists them."""
    if ref is None:
        return []
    return [_table(t) for t in list(ref.tables.values()) if t.state in RUNNING_STATES]


def _table(table: referee.lowlevel.HeldMatch) -> dict[str, Any]:
    match = table.match
    out: dict[str, Any] = {"match_id": table.match_id, "game": table.spec.game, "state": table.state,
                           "players": list(table.spec.players)}
    if match is not None:
        out["position"] = {"game": match.game_number, "deal": match.deal_number}
    return out


def live_match(ref: referee.Referee | None, match_id: str,
               view: Callable[[referee.lowlevel.HeldMatch], Mapping[str, Any] | None] | None = None,
               ) -> dict[str, Any] | None:
    """A match the referee holds, with the spectator's view of it now (``view``: the game's
    ``present()`` of ``SPECTATOR``'s view, ``{N}`` replaced by the players' names; ``None``
    before the first deal or for a game without a presentation; drawn by ``view`` if given,
    e.g. the web's drawing kept per public event). ``None`` if the referee holds no such match."""
    table = ref.tables.get(match_id) if ref is not None else None
    if table is None:
        return None
    out = _table(table)
    out["over"] = table.over
    out["header"] = spectator_header(table)
    out["view"] = (view or spectator_view)(table)
    return out


def spectator_header(table: referee.lowlevel.HeldMatch) -> dict[str, Any] | None:
    """The match's public header as its spectators are sent it (``SpectatorHeader``, in proto3
    JSON: the players, time controls, fault policy, seed commitment and rules), or ``None``
    before it is written."""
    first = table.spectator_log.first()  # (not .events(): a long match's log is split for one event)
    if first is None:
        return None
    event = referee_pb2.SpectatorEvent.FromString(first)
    return json_format.MessageToDict(event.header) if event.WhichOneof("kind") == "header" else None


def spectator_view(table: referee.lowlevel.HeldMatch) -> Mapping[str, Any] | None:
    """What a spectator may see of the table now (public information only; a finished match
    kept by the referee: its final view, drawn at its end)."""
    view = table.spectator_presentation()
    return None if view is None else dict(named(view, table.spec.players))
