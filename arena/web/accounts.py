"""People's accounts on the live web (docs/web.md#accounts): a name and a password (argon2id,
argon2-cffi's RFC 9106 defaults), sessions in an HTTP-only cookie whose token the store keeps
only as a SHA-256 digest, sign-in attempts limited per client address and per name, and the
people's games stored and rated apart from the bots' ladder (``people_games``/``people_seats``
of the arena's one schema; the bots' ``games`` never hold them).

Everything that touches the disk runs on a worker thread (the web shares its trio loop with the
referee, which timestamps the bots' answers), and a password is hashed by a bounded pool of
worker processes below the referee in priority (:mod:`arena.web.hashing`: past its bound a try
is refused at once, 503 or 429); :meth:`Accounts.signed_in`
reads the sessions kept in memory (written through to the store, loaded again when opened), and
:meth:`Accounts.record_game` queues its write on the accounts' own writer thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import sqlite3
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import argon2
import structlog
import trio
from starlette.requests import Request

import referee
from arena.competition.ratings import Z95, SkillBoard
from arena.model.lookalike import skeleton
from arena.model.records import Outcome, from_report
from arena.results.standings import PROVISIONAL_GAMES
from arena.store import open_db, transaction
from arena.web.hashing import RETRY_AFTER_S, Hashers, HashingRefused
from arena.web.i18n import N_, NP_, Lang
from arena.web.limits import WebLimits

log = structlog.get_logger("arena")

SESSION_COOKIE = "gin_arena_session"
"""A person's session cookie (a random token; the store keeps its SHA-256 digest)."""
NAME_CHARS = (3, 32)
"""The shortest and longest name (characters, after NFC normalisation)."""
NAME_PUNCTUATION = frozenset(" _-.")
"""What a name may hold besides letters and digits (never first or last)."""
PASSWORD_CHARS = (8, 256)
"""The shortest and longest password (characters)."""
WRONG = N_("wrong name or password")
"""The one answer to a wrong password and to an unknown name."""
WINDOW_S = 60.0
"""The sign-in limit's window (``signin_tries_per_minute``)."""
TRIES_BY_ADDRESS = NP_("this address ({client}) tried to sign in {n} time in the last minute (limit {limit}); "
                       "try again in {wait} s", "this address ({client}) tried to sign in {n} times in the last "
                       "minute (limit {limit}); try again in {wait} s")
"""The refusal of a sign-in past its limit (a person's: ``signin_tries_per_minute``; the
operator's form: ``operator_tries_per_minute``)."""
SIGNUP_WINDOW_S = 3600.0
"""The sign-up limit's window (``signups_per_hour``)."""


@dataclass(frozen=True, slots=True)
class Person:
    """Someone with an account."""

    id: int
    """Their row in ``people`` (stable; names are unique case-insensitively)."""
    name: str
    """Their name as they wrote it (NFC-normalised)."""


class AccountError(Exception):
    """A refused sign-up or sign-in: its HTTP status, its message (in English; :meth:`say` in a
    person's language: the msgid ``text``, or its singular and plural for ``count``, its
    ``{fields}`` from ``values``) and (429) when to try again."""

    def __init__(self, status: int, text: str | tuple[str, str], retry_after: int | None = None, *, count: int = 1,
                 **values: Any) -> None:
        self.status = status
        self.text: str = text if isinstance(text, str) else text[0]
        """The msgid (English)."""
        self.plural: str | None = None if isinstance(text, str) else text[1]
        """Its plural (``None``: no plural form)."""
        self.count, self.values = count, values
        english = self.plural if self.plural is not None and count != 1 else self.text
        self.message = english.format(n=count, **values)
        self.retry_after = retry_after
        super().__init__(self.message)

    def say(self, tr: Lang) -> str:
        """The message in ``tr``'s language."""
        if self.plural is not None:
            return tr.ngettext(self.text, self.plural, self.count, **self.values)
        return tr._(self.text, **self.values)


def busy(refused: HashingRefused) -> AccountError:
    """A try the password hashers had no place for (:mod:`arena.web.hashing`): 503 or 429, with ``Retry-After``."""
    return AccountError(refused.status, refused.text, RETRY_AFTER_S, limit=refused.limit, wait=RETRY_AFTER_S)


def normal_name(text: str) -> str:
    """The name as stored (NFC, surrounding spaces dropped), or ``AccountError`` (400) saying
    what is wrong with it."""
    name = unicodedata.normalize("NFC", text).strip()
    low, high = NAME_CHARS
    if not low <= len(name) <= high:
        raise AccountError(400, N_("a name has {low} to {high} characters (this one has {length})"), low=low, high=high,
                           length=len(name))
    bad = sorted({c for c in name if not (c.isalnum() or c in NAME_PUNCTUATION)})
    if bad:
        raise AccountError(400, N_("a name holds letters, digits and {punctuation} or spaces; not {bad}"),
                           punctuation=" ".join(sorted(NAME_PUNCTUATION - {" "})), bad=" ".join(repr(c) for c in bad))
    if not (name[0].isalnum() and name[-1].isalnum()):
        raise AccountError(400, N_("a name starts and ends with a letter or a digit"))
    return name


def name_key(name: str) -> str:
    """What two names that are the same name share (case-insensitive, NFC)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).strip().casefold())


LOOKS_TAKEN = N_("the name {name} looks like {other}, which is taken (letters of other scripts or widths and "
                 "spaces that look alike count as the same)")
"""The refusal of a name drawn like one that is taken (:func:`refuse_lookalike`)."""


def refuse_lookalike(conn: sqlite3.Connection, name: str) -> None:
    """``AccountError`` (409) if a person's name other than ``name`` itself (whatever its case)
    has its look-alike skeleton (``arena.model.lookalike``); names stored before the skeleton
    existed keep working, a new one may not look like them."""
    row = conn.execute("SELECT name FROM people WHERE name_skeleton = ? AND name_key != ? LIMIT 1",
                       (skeleton(name), name_key(name))).fetchone()
    if row is not None:
        raise AccountError(409, LOOKS_TAKEN, name=repr(name), other=repr(str(row["name"])))


def fill_skeletons(conn: sqlite3.Connection) -> None:
    """Write the look-alike skeleton of every person's name stored without one (an older store),
    and index them."""
    rows = conn.execute("SELECT id, name FROM people WHERE name_skeleton = ''").fetchall()
    with transaction(conn):
        conn.executemany("UPDATE people SET name_skeleton = ? WHERE id = ?",
                         [(skeleton(str(r["name"])), int(r["id"])) for r in rows])
        conn.execute("CREATE INDEX IF NOT EXISTS people_skeleton ON people (name_skeleton)")


def check_password(password: str) -> None:
    """``AccountError`` (400) unless the password's length is allowed."""
    low, high = PASSWORD_CHARS
    if not low <= len(password) <= high:
        raise AccountError(400, N_("a password has {low} to {high} characters"), low=low, high=high)


def digest(token: str) -> str:
    """What the store keeps of a session token."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(slots=True)
class Window:
    """At most ``limit`` events per key in any ``seconds``: the times of each key's recent ones."""

    limit: int
    """Events allowed in the window."""
    seconds: float
    """The window."""
    name: str
    """The limit's name (said in the refusal)."""
    seen: dict[str, deque[float]] = field(default_factory=dict)
    """Each key's events still in the window."""

    def take(self, key: str, now: float) -> int | None:
        """Count one event for ``key``, or (over the limit: not counted) the whole seconds until one is allowed."""
        times = self.seen.setdefault(key, deque())
        while times and times[0] <= now - self.seconds:
            times.popleft()
        if len(times) >= self.limit:
            return max(1, int(times[0] + self.seconds - now + 0.999))
        times.append(now)
        if len(self.seen) > 4 * 1024:  # forget the keys whose window is empty
            for k in [k for k, t in self.seen.items() if not t or t[-1] <= now - self.seconds]:
                del self.seen[k]
        return None


@dataclass(frozen=True, slots=True)
class PersonStanding:
    """One person's line of the people's standings."""

    name: str
    """The person's name."""
    games: int
    """People's games they sat at."""
    rating: float
    """Their Plackett–Luce ``mu`` over people's games only."""
    uncertainty: float
    """Its ``sigma``."""
    rated_games: int
    """Games that moved it."""
    provisional: bool
    """Fewer than ``PROVISIONAL_GAMES`` rated games."""


def _person_key(person_id: int) -> str:
    return f"@{person_id}"


def _other_key(name: str) -> str:
    return f"~{name}"


class Accounts:
    """The people's accounts, sessions and games of one writable store (``arena serve``'s
    ``serve.sqlite``). Open it with :meth:`open`; :meth:`close` it."""

    def __init__(self, conn: sqlite3.Connection, limits: WebLimits, *, behind_tls: bool = False,
                 clock: Callable[[], float] = time.time) -> None:
        self._conn = conn
        self.limits = limits
        self.behind_tls = behind_tls
        """The site is served over TLS by a proxy in front (session cookies are ``Secure`` always)."""
        self._clock = clock
        self._lock = threading.Lock()
        self._hasher = Hashers(limits.password_hashers, limits.password_queue, limits.password_hashes_per_client)
        self._dummy: str | None = None
        self._sessions: dict[str, tuple[Person, float]] = {}
        self._tries_by_client = Window(limits.signin_tries_per_minute, WINDOW_S, "signin_tries_per_minute")
        self._signups = Window(limits.signups_per_hour, SIGNUP_WINDOW_S, "signups_per_hour")
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="people-games")
        self._pending: list[Future[None]] = []
        self._board = SkillBoard()
        self._games: dict[int, int] = {}
        self._last = -1
        now = clock()
        with self._lock:
            conn.execute("DELETE FROM person_sessions WHERE expires_at <= ?", (now,))
            for r in conn.execute("SELECT s.digest, s.expires_at, p.id, p.name FROM person_sessions s "
                                  "JOIN people p ON p.id = s.person"):
                self._sessions[str(r["digest"])] = (Person(int(r["id"]), str(r["name"])), float(r["expires_at"]))
            fill_skeletons(conn)

    @classmethod
    def open(cls, db: Path, limits: WebLimits, *, behind_tls: bool = False) -> Accounts:
        """The accounts of the store ``db`` (a ``serve`` database; made or upgraded if needed)."""
        return cls(open_db(db, "serve", any_thread=True), limits, behind_tls=behind_tls)

    def close(self) -> None:
        """Finish the queued game records and close the store."""
        self._writer.shutdown(wait=True)
        self._hasher.close()
        with self._lock:
            self._conn.close()

    # ----- sessions -----
    def signed_in(self, request: Request) -> Person | None:
        """Who the request's session cookie says it is (``None``: nobody, or the session ended)."""
        token = request.cookies.get(SESSION_COOKIE)
        if not token:
            return None
        found = self._sessions.get(digest(token))
        if found is None or found[1] <= self._clock():
            return None
        return found[0]

    def secure(self, request: Request) -> bool:
        """Whether the session cookie is ``Secure`` (the request came over https, or behind TLS)."""
        return self.behind_tls or request.url.scheme == "https"

    async def sign_up(self, name: str, password: str, client: str) -> tuple[Person, str]:
        """Make an account and sign it in: the person and the session token (for the cookie)."""
        shown = normal_name(name)
        check_password(password)
        wait = self._signups.take(client, self._clock())
        if wait is not None:
            raise AccountError(429, NP_("this address made {n} account in the last hour (limit {limit}); try again in "
                                        "{wait} s", "this address made {n} accounts in the last hour (limit {limit}); "
                                        "try again in {wait} s"), wait, count=self._signups.limit,
                               limit=self._signups.name, wait=wait)
        try:
            with self._hasher.admit(client):
                return await trio.to_thread.run_sync(self._sign_up, shown, password, limiter=self._hasher.threads)
        except HashingRefused as e:
            raise busy(e) from None

    def _sign_up(self, name: str, password: str) -> tuple[Person, str]:
        hashed = self._hasher.hash(password)
        with self._lock:
            try:
                with transaction(self._conn):
                    refuse_lookalike(self._conn, name)
                    cur = self._conn.execute(
                        "INSERT INTO people (name, name_key, name_skeleton, password_hash, created_at) "
                        "VALUES (?, ?, ?, ?, ?)", (name, name_key(name), skeleton(name), hashed, self._clock()))
            except sqlite3.IntegrityError:
                raise AccountError(409, N_("the name {name} is taken (names are the same whatever their case)"),
                                   name=repr(name)) from None
            person = Person(int(cur.lastrowid or 0), name)
            log.info("person_signed_up", person=person.id)
            return person, self._new_session(person)

    async def sign_in(self, name: str, password: str, client: str) -> tuple[Person, str]:
        """Check a name and password (a wrong password and an unknown name get the same answer,
        after the same work): the person and a new session token."""
        now = self._clock()
        key = name_key(name)
        window = self._tries_by_client  # (the address, never the name: a stranger's tries lock out nobody else)
        wait = window.take(client, now)
        if wait is not None:
            raise AccountError(429, TRIES_BY_ADDRESS, wait, count=window.limit, client=client, limit=window.name,
                               wait=wait)
        if not PASSWORD_CHARS[0] <= len(password) <= PASSWORD_CHARS[1]:
            raise AccountError(403, WRONG)
        try:
            with self._hasher.admit(client):
                return await trio.to_thread.run_sync(self._sign_in, key, password, limiter=self._hasher.threads)
        except HashingRefused as e:
            raise busy(e) from None

    def _sign_in(self, key: str, password: str) -> tuple[Person, str]:
        with self._lock:
            row = self._conn.execute("SELECT id, name, password_hash FROM people WHERE name_key = ?",
                                     (key,)).fetchone()
        if row is None:
            if self._dummy is None:
                self._dummy = self._hasher.hash(secrets.token_hex(16))
            with contextlib.suppress(argon2.exceptions.VerificationError):
                self._hasher.verify(self._dummy, password)  # the same work as a wrong password
            raise AccountError(403, WRONG)
        try:
            self._hasher.verify(str(row["password_hash"]), password)
        except (argon2.exceptions.VerificationError, argon2.exceptions.InvalidHashError):
            raise AccountError(403, WRONG) from None
        person = Person(int(row["id"]), str(row["name"]))
        with self._lock:
            if self._hasher.check_needs_rehash(str(row["password_hash"])):
                with transaction(self._conn):
                    self._conn.execute("UPDATE people SET password_hash = ? WHERE id = ?",
                                       (self._hasher.hash(password), person.id))
            return person, self._new_session(person)

    def _new_session(self, person: Person) -> str:
        """A new session for ``person`` (call it holding the lock): its token."""
        token = secrets.token_urlsafe(32)
        now = self._clock()
        expires = now + self.limits.person_session_days * 86400.0
        with transaction(self._conn):
            self._conn.execute("DELETE FROM person_sessions WHERE expires_at <= ?", (now,))
            self._conn.execute("INSERT INTO person_sessions (digest, person, created_at, expires_at) "
                               "VALUES (?, ?, ?, ?)", (digest(token), person.id, now, expires))
        self._sessions = {k: v for k, v in self._sessions.items() if v[1] > now}
        self._sessions[digest(token)] = (person, expires)
        return token

    async def sign_out(self, request: Request) -> None:
        """End the request's session, here and in the store."""
        token = request.cookies.get(SESSION_COOKIE)
        if token:
            await trio.to_thread.run_sync(self._sign_out, digest(token))

    def _sign_out(self, key: str) -> None:
        with self._lock:
            self._sessions.pop(key, None)
            with transaction(self._conn):
                self._conn.execute("DELETE FROM person_sessions WHERE digest = ?", (key,))

    # ----- people's games -----
    def record_game(self, *, match_id: str, game: str, preset: str, seats: Sequence[Person | str],
                    report: referee.MatchReport, started_at: float | None = None) -> None:
        """Store a finished people's table, to be rated among people's games only (queued on the
        accounts' writer thread: :meth:`flush` waits for it; :meth:`standings` rates what is
        stored). ``str`` seats are sample bots or guests: stored by name, rated in the people's
        pool under that name, never listed as people. ``started_at`` (epoch seconds) gives the
        game's duration."""
        now = self._clock()
        outcome = from_report(report, now - started_at if started_at is not None else 0.0)
        future = self._writer.submit(self._record, match_id, game, preset, tuple(seats), outcome, started_at, now)
        self._pending = [f for f in self._pending if not f.done()] + [future]

    def flush(self) -> None:
        """Wait for the game records queued so far (their errors are logged, not raised)."""
        for f in list(self._pending):
            f.result()

    def _record(self, match_id: str, game: str, preset: str, seats: tuple[Person | str, ...], outcome: Outcome,
                started_at: float | None, finished_at: float) -> None:
        try:
            with self._lock, transaction(self._conn):
                cur = self._conn.execute(
                    "INSERT INTO people_games (match_id, game, preset, started_at, finished_at, duration, winner, "
                    "termination, detail, replay_path, replay_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (match_id, game, preset, started_at, finished_at, outcome.duration_s, outcome.winner,
                     outcome.termination, outcome.detail, outcome.replay_path, outcome.replay_hash))
                idx = int(cur.lastrowid or 0)
                self._conn.executemany(
                    "INSERT INTO people_seats (game, seat, person, name, place, points) VALUES (?, ?, ?, ?, ?, ?)",
                    [(idx, i, s.id if isinstance(s, Person) else None, s.name if isinstance(s, Person) else s,
                      outcome.places[i] if outcome.places else None,
                      outcome.points[i] if i < len(outcome.points) else None) for i, s in enumerate(seats)])
        except Exception as e:  # (logged: the table is over for its players either way)
            log.error("people_game_not_recorded", match_id=match_id, reason=repr(e))

    def _refresh(self) -> None:
        """Rate the people's games stored since the last look, in stored order (holding the lock):
        the ratings follow the store, whoever wrote it."""
        rows = self._conn.execute("SELECT * FROM people_games WHERE idx > ? ORDER BY idx", (self._last,)).fetchall()
        if not rows:
            return
        seats: dict[int, list[sqlite3.Row]] = {}
        for s in self._conn.execute("SELECT * FROM people_seats WHERE game > ? ORDER BY game, seat", (self._last,)):
            seats.setdefault(int(s["game"]), []).append(s)
        for r in rows:
            at = seats.get(int(r["idx"]), [])
            keys = tuple(_person_key(int(s["person"])) if s["person"] is not None else _other_key(str(s["name"]))
                         for s in at)
            places = tuple(int(s["place"]) for s in at) if all(s["place"] is not None for s in at) else ()
            self._board.add(Outcome(
                match_id=str(r["match_id"]), players=keys, winner=r["winner"], termination=str(r["termination"]),
                faulting_seat=None, detail="", points=tuple(int(s["points"] or 0) for s in at),
                games_won=(0,) * len(at), deals=None, decisions=0, think_ms=(0,) * len(at), substituted=(),
                replay_path="", replay_hash="", seed_hex="", duration_s=0.0, places=places))
            for pid in {int(s["person"]) for s in at if s["person"] is not None}:
                self._games[pid] = self._games.get(pid, 0) + 1
        self._last = int(rows[-1]["idx"])

    def _read(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        with self._lock:
            return fn(self._conn)

    def standings(self) -> list[PersonStanding]:
        """Every person, best people's rating first (then name): people's games only."""
        with self._lock:
            self._refresh()
            people = self._conn.execute("SELECT id, name FROM people").fetchall()
            out = []
            for r in people:
                rating = self._board.rating(_person_key(int(r["id"])))
                out.append(PersonStanding(str(r["name"]), self._games.get(int(r["id"]), 0), rating.mu, rating.sigma,
                                          rating.games, rating.games < PROVISIONAL_GAMES))
        out.sort(key=lambda s: (-s.rating, name_key(s.name)))
        return out

    def person(self, name: str) -> Person | None:
        """The person of that name (any case), or ``None``."""
        row = self._read(lambda c: c.execute("SELECT id, name FROM people WHERE name_key = ?",
                                             (name_key(name),)).fetchone())
        return Person(int(row["id"]), str(row["name"])) if row is not None else None

    def person_games(self, person: Person, limit: int) -> list[dict[str, Any]]:
        """``person``'s most recent people's games, newest first: each with its seats."""
        def read(c: sqlite3.Connection) -> list[dict[str, Any]]:
            games = c.execute("SELECT g.* FROM people_games g WHERE g.idx IN "
                              "(SELECT game FROM people_seats WHERE person = ?) ORDER BY g.idx DESC LIMIT ?",
                              (person.id, limit)).fetchall()
            out = []
            for g in games:
                seats = c.execute("SELECT * FROM people_seats WHERE game = ? ORDER BY seat", (g["idx"],)).fetchall()
                out.append({"match_id": g["match_id"], "game": g["game"], "preset": g["preset"],
                            "finished_at": g["finished_at"], "duration": g["duration"],
                            "termination": g["termination"], "winner": g["winner"],
                            "seats": [{"name": s["name"], "person": s["person"] is not None, "place": s["place"],
                                       "points": s["points"]} for s in seats]})
            return out
        result: list[dict[str, Any]] = self._read(read)
        return result

    def replay_path(self, match_id: str) -> str | None:
        """A people's game's stored replay path (``None``: no such game here)."""
        row = self._read(lambda c: c.execute("SELECT replay_path FROM people_games WHERE match_id = ?",
                                             (match_id,)).fetchone())
        return str(row["replay_path"]) if row is not None else None


def standing_row(rank: int, s: PersonStanding) -> dict[str, Any]:
    """A people's standing as the API and the page show it."""
    return {"rank": rank, "name": s.name, "games": s.games, "rating": s.rating, "uncertainty": s.uncertainty,
            "low": s.rating - Z95 * s.uncertainty, "high": s.rating + Z95 * s.uncertainty,
            "rated_games": s.rated_games, "provisional": s.provisional}
