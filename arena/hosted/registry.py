"""The bots registered on a hosted server, in its ``serve.sqlite`` (the arena's one schema,
``bots`` table: :mod:`arena.store`).

A bot's token is 256 random bits (64 hex digits), shown once when the bot is added or its token
rotated; the database keeps only its SHA-256 digest (``token_digest``), which is enough for a
random secret: no dictionary or brute force reaches 256 bits, so no slow hash is needed.
:meth:`BotRegistry.identify` reads the database on every call (one indexed row, microseconds), so
a token rotated, or a bot disabled, by another process on the same database (``arena bots`` beside
the running server) stops working at once.
"""

from __future__ import annotations

import builtins
import hashlib
import hmac
import json
import secrets
import sqlite3
import time
from dataclasses import dataclass
from typing import Literal

from arena.model.lookalike import skeleton
from arena.model.manifest import BotSpec, check_name
from arena.store import transaction

BOT_STATES = ("enabled", "disabled", "suspended")
"""A registered bot's states: ``enabled`` plays; ``disabled`` (by the operator) and ``suspended``
(by the ladder, with a reason, or the operator) are refused until enabled again."""
TOKEN_BYTES = 32
"""A bot token's random bytes (256 bits), written as twice as many hex digits."""
TOKEN_LENGTH_MAX = 256
"""The longest token :meth:`BotRegistry.identify` looks up (a longer one is refused unread)."""
REASON_LENGTH = 256
"""The longest stored reason of a suspension, in characters (a longer one is cut, with ``…``)."""

LOOKUP_SQL = ("SELECT name, state, reason, added_at, token_set_at, token_digest FROM bots "
              "WHERE token_digest = ? AND token_digest != ''")
"""A bot by its token's digest. The ``!= ''`` lets SQLite use the partial index ``bots_token``
(it cannot prove that of a parameter): one index search, ~20 µs, instead of a scan of every bot."""

ErrorKind = Literal["invalid", "unknown", "taken"]


class RegistryError(ValueError):
    """A registration refused: a bad name (``invalid``), no such bot (``unknown``), a name in use
    (``taken``). The message is one line for the user."""

    def __init__(self, message: str, kind: ErrorKind) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        """Why, for a caller that maps it (an exit status, a gRPC status)."""


@dataclass(frozen=True, slots=True)
class RegisteredBot:
    """A bot registered on the server (never its token)."""

    name: str
    """Its name: what it plays under in every game and table."""
    state: str
    """One of :data:`BOT_STATES`."""
    reason: str
    """Why it is suspended (empty otherwise)."""
    added_at: float
    """When it was added (seconds since the epoch)."""
    token_set_at: float
    """When its current token was made (added, or last rotated; seconds since the epoch)."""


def token_digest(token: str) -> str:
    """The stored form of a token: its SHA-256 digest, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def _one_line(text: str) -> str:
    """One printable line (a reason may come from what a bot did: no terminal escapes)."""
    flat = "".join(c if c.isprintable() else "\ufffd" for c in " ".join(text.split()))
    return flat if len(flat) <= REASON_LENGTH else flat[: REASON_LENGTH - 1] + "…"


class BotRegistry:
    """The registered bots of one server database (``arena.store.open_db(…, "serve")``)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def add(self, name: str) -> str:
        """Register ``name`` (enabled); returns its new token, which is stored only as its digest."""
        why = check_name(name)
        if why is not None:
            raise RegistryError(f"bot name {why}", "invalid")
        token = secrets.token_hex(TOKEN_BYTES)
        now = time.time()
        spec = json.dumps(BotSpec(name=name, remote=True).to_dict())
        with transaction(self.db):
            if self.db.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone() is not None:
                raise RegistryError(f"a bot named {name!r} is already registered", "taken")
            self._refuse_lookalike(name)
            self.db.execute(
                "INSERT INTO bots (name, spec, added_at, token_digest, state, reason, token_set_at) "
                "VALUES (?, ?, ?, ?, 'enabled', '', ?)",
                (name, spec, now, token_digest(token), now),
            )
        return token

    def boss_token(self, name: str, spec: BotSpec) -> str:
        """A new token for the server's own boss ``name`` (a sample bot it starts: the ladder file's
        ``bosses``), registering it (enabled, its ``spec`` stored marked as a boss) the first time;
        ``RegistryError`` (``taken``) if a bot someone registered has the name (or one like it)."""
        row = self.db.execute("SELECT spec FROM bots WHERE name = ? AND token_digest != ''", (name,)).fetchone()
        if row is None:
            token = self.add(name)
        elif not json.loads(str(row[0])).get("boss"):
            raise RegistryError(f"a bot named {name!r} is registered, not the server's boss: the boss is not "
                                "started (rename or remove that bot: arena bots remove)", "taken")
        else:
            token = self.rotate_token(name)
        with transaction(self.db):
            self.db.execute("UPDATE bots SET spec = ? WHERE name = ?", (json.dumps({**spec.to_dict(), "boss": True}),
                                                                         name))
        return token

    def _refuse_lookalike(self, name: str) -> None:
        """``RegistryError`` (taken) if a bot already known here has a name drawn like ``name``
        (the same look-alike skeleton: ``ALICE`` or ``Alice`` beside ``alice``); the bots
        registered before this check keep their names."""
        key = skeleton(name)
        other = next((str(r[0]) for r in self.db.execute("SELECT name FROM bots") if skeleton(str(r[0])) == key), None)
        if other is not None:
            raise RegistryError(f"a bot named {other!r} is already registered, and {name!r} looks like it "
                                "(names that differ only in case or in look-alike letters are one name)", "taken")

    def get(self, name: str) -> RegisteredBot | None:
        """The registered bot ``name``, or ``None``."""
        row = self.db.execute(
            "SELECT name, state, reason, added_at, token_set_at FROM bots WHERE name = ? AND token_digest != ''",
            (name,),
        ).fetchone()
        return None if row is None else RegisteredBot(*row)

    def enable(self, name: str) -> None:
        """Let the bot play again (also lifts a suspension)."""
        self._set(name, "enabled", "")

    def disable(self, name: str) -> None:
        """Refuse the bot's token until it is enabled again."""
        self._set(name, "disabled", "")

    def suspend(self, name: str, reason: str) -> None:
        """Refuse the bot's token, saying why (one line, at most :data:`REASON_LENGTH` characters)."""
        self._set(name, "suspended", _one_line(reason))

    def remove(self, name: str) -> None:
        """Forget the bot and its token; the games it played stay in the database."""
        with transaction(self.db):
            cur = self.db.execute("DELETE FROM bots WHERE name = ? AND token_digest != ''", (name,))
        if cur.rowcount != 1:
            raise self._unknown(name)

    def rotate_token(self, name: str) -> str:
        """A new token for the bot; the old one stops working at once."""
        token = secrets.token_hex(TOKEN_BYTES)
        with transaction(self.db):
            cur = self.db.execute(
                "UPDATE bots SET token_digest = ?, token_set_at = ? WHERE name = ? AND token_digest != ''",
                (token_digest(token), time.time(), name),
            )
        if cur.rowcount != 1:
            raise self._unknown(name)
        return token

    def lookup(self, token: str) -> RegisteredBot | None:
        """The registered bot whose token this is, in any state (``None``: no such token), so
        that a server can tell a disabled or suspended bot why it is refused. Read from the
        database each time: another process's changes count at once."""
        if not token or len(token) > TOKEN_LENGTH_MAX:
            return None
        digest = token_digest(token)
        row = self.db.execute(LOOKUP_SQL, (digest,)).fetchone()
        if row is None or not hmac.compare_digest(str(row[5]), digest):
            return None
        return RegisteredBot(*tuple(row)[:5])

    def identify(self, token: str) -> str | None:
        """The name of the *enabled* bot whose token this is, else ``None``."""
        bot = self.lookup(token)
        return bot.name if bot is not None and bot.state == "enabled" else None

    def games_played(self) -> dict[str, int]:
        """How many games each bot has a seat in (every bot that played, registered or not)."""
        return {str(bot): int(n) for bot, n in self.db.execute("SELECT bot, COUNT(*) FROM game_seats GROUP BY bot")}

    def list(self) -> builtins.list[RegisteredBot]:
        """Every registered bot, oldest first."""
        rows = self.db.execute(
            "SELECT name, state, reason, added_at, token_set_at FROM bots WHERE token_digest != '' "
            "ORDER BY added_at, name"
        )
        return [RegisteredBot(*r) for r in rows]

    def _set(self, name: str, state: str, reason: str) -> None:
        with transaction(self.db):
            cur = self.db.execute(
                "UPDATE bots SET state = ?, reason = ? WHERE name = ? AND token_digest != ''", (state, reason, name)
            )
        if cur.rowcount != 1:
            raise self._unknown(name)

    @staticmethod
    def _unknown(name: str) -> RegistryError:
        return RegistryError(f"no bot named {name!r} is registered", "unknown")
