"""The live web's limits: every bound on what its visitors may hold, named (``--web-limit KEY=VALUE``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WebLimits:
    """Bounds on the live web's connections and pages (docs/web.md#limits)."""

    sse_connections: int = 1000
    """Live-update streams (``/api/events``, a match's ``/api/matches/{id}/events``) open at once,
    for every visitor together; one more gets 503 naming this limit."""
    sse_per_client: int = 8
    """Live-update streams one client address may hold at once; one more gets 429 naming this limit."""
    sse_queue: int = 64
    """Events waiting to be sent to one live-update stream: a reader that lets more pile up is
    dropped (its stream ends), and never slows the server or the other readers."""
    sse_backlog: int = 256
    """Past events kept for a reconnecting stream's ``Last-Event-ID`` (older ones: it gets the
    standings afresh)."""
    sse_keepalive_s: float = 15.0
    """Seconds between keep-alive comments on a quiet stream (so proxies keep it open)."""
    page_size: int = 100
    """The most matches one ``/api/matches`` page holds (``limit`` above it is cut to it)."""
    recent_matches: int = 20
    """Finished matches listed on the front page (and an API page without ``limit``)."""
    bot_games: int = 50
    """The most recent games listed on a bot's page."""
    store_check_s: float = 0.5
    """Seconds between looks at the store for finished games when no referee event wakes the web
    (games played on other machines); a finished-match event makes it look at once."""
    view_stale_s: float = 1.0
    """Seconds a store read (the recent matches, a bot's page) may still be served once the store
    has changed since: served at once and read again in the background (``arena.web.views``);
    an older one is read before answering."""
    cached_views: int = 256
    """Store reads kept in memory for the next request (the least recently asked forgotten first)."""

    live_first_view_s: float = 1.0
    """``arena serve --web``: seconds the first request for a running match's live view waits for
    the web's own process to get it from the parent (then it is forwarded there, as before;
    docs/web.md#the-webs-own-process)."""
    live_idle_s: float = 5.0
    """``arena serve --web``: seconds the web's own process keeps a running match's live view
    from the parent once nobody watches or asks for it (then it lets the subscription go)."""
    web_restart_s: float = 1.0
    """``arena serve --web``: seconds before the web's own process is started again once it
    ended unasked (a crash, a kill; docs/web.md#the-webs-own-process)."""

    hsts_max_age_s: int = 31_536_000
    """Over TLS: the ``max-age`` of every response's ``Strict-Transport-Security`` (seconds a
    browser that saw it reaches this host by HTTPS only; default a year)."""

    computer_players: int = 8
    """Tables where a person plays the computer, running at once (each runs a sample bot's
    process); one more table gets 503 naming this limit."""
    open_tables: int = 200
    """Tables waiting for their people or their host's start, at once; one more gets 503 naming
    this limit."""
    open_table_s: float = 3600.0
    """Seconds a table may wait for its people and its host's start; an older one is dropped
    when the next table opens (its links then answer 404)."""
    tables_kept: int = 100
    """Finished tables whose seat pages still answer (the oldest beyond are forgotten)."""
    table_move_s: float = 300.0
    """Seconds a person (and the computer) has for each decision at a table: the default, and the
    most a table's host may choose."""
    table_target_max: int = 1000
    """The highest game target a table's host may set (for rules that have one)."""
    table_code_tries_per_minute: int = 10
    """Wrong table codes one client address may try in a minute; the next try gets 429 naming
    this limit (a table code cannot be guessed)."""
    person_grace_s: float = 60.0
    """Seconds a person whose page closed may take to come back through their seat's link; after
    it the computer plays their seat to the end of the game (the referee's ``substitute`` policy)."""
    person_away_s: float = 3.0
    """Seconds a person's page may be gone (a reload) before the web closes their seat's session,
    so the referee sees the disconnect (counted in ``person_grace_s``, which must be longer)."""
    lobby_refresh_s: float = 3.0
    """Seconds between the lobby page's looks at the open and running tables."""

    person_session_days: float = 30.0
    """Days a person's sign-in lasts (the session cookie and its stored digest expire then)."""
    signin_tries_per_minute: int = 10
    """A person's sign-in attempts in any minute from one client address (whatever the names
    tried: a stranger's tries lock out their address, never the person whose name they try); one
    more gets 429 with ``Retry-After`` naming this limit."""
    signups_per_hour: int = 20
    """Accounts one client address may make in any hour; one more gets 429 naming this limit."""
    operator_session_hours: float = 12.0
    """Hours the operator's sign-in through the form lasts (its cookie and the web's session end
    then; sign-out ends it at once)."""
    operator_sessions: int = 100
    """The operator's web sessions kept at once (one per sign-in; past it the oldest ends)."""
    operator_tries_per_minute: int = 10
    """Tries of the operator's sign-in form in any minute from one client address; one more gets
    429 with ``Retry-After`` naming this limit."""

    password_hashers: int = 2
    """Passwords hashed at once (sign-ins and sign-ups), each by a worker process of its own
    (argon2id: 64 MiB and four threads while it hashes), below the referee in priority."""
    password_queue: int = 16
    """Sign-ins and sign-ups waiting for a hasher; one more is refused at once: 503 naming
    ``password_hashers + password_queue``, with ``Retry-After``."""
    password_hashes_per_client: int = 2
    """Sign-ins and sign-ups one client address may have hashing or waiting at once; one more
    gets 429 naming this limit."""

    body_read_s: float = 10.0
    """Seconds a request's body may take to arrive whole once its headers have; a slower one
    (a body trickled a byte at a time) gets 408 and its connection is closed."""
    bodies_per_client: int = 4
    """Request bodies one client address may be sending at once; one more gets 429 naming this
    limit and its connection is closed."""
    request_body_bytes: int = 65_536
    """The largest request body (the doors' forms and a table's moves are a few hundred bytes);
    a larger one gets 413 and its connection is closed."""
    connections_per_address: int = 64
    """Connections one client address may hold open at once (a browser opens about six, people
    behind one NAT share an address; the live-update streams are bounded lower, by
    ``sse_per_client``); one more is closed as soon as it is accepted, before it is read. Not
    applied behind proxies of the operator's own (``--web-proxy-hops``): they are the address."""
    connections: int = 4096
    """Connections open at once over every address; one more is closed as soon as it is accepted."""
    idle_connection_s: float = 5.0
    """Seconds a connection may stay open without a request under way: idle between requests, or
    still sending a request's headers (Hypercorn's ``keep_alive_timeout``); then it is closed."""

    @classmethod
    def parse(cls, items: Sequence[str]) -> WebLimits:
        """``KEY=VALUE`` items over the defaults (``ValueError`` naming the keys otherwise)."""
        values: dict[str, int | float] = {}
        known = {f.name: f for f in dataclasses.fields(cls)}
        for item in items:
            key, sep, text = item.partition("=")
            field = known.get(key.strip())
            if not sep or field is None:
                raise ValueError(f"{item!r}: expected KEY=VALUE with KEY one of {', '.join(known)}")
            try:
                value = float(text) if field.type == "float" else int(text)
            except ValueError:
                raise ValueError(f"{key}={text!r}: not a number") from None
            if value <= 0:
                raise ValueError(f"{key}={text!r}: must be above 0")
            values[key.strip()] = value
        limits = cls(**values)  # type: ignore[arg-type]
        if limits.person_away_s >= limits.person_grace_s:
            raise ValueError(f"person_away_s={limits.person_away_s:g} must be below person_grace_s="
                             f"{limits.person_grace_s:g} (the grace counts from the moment the page left)")
        return limits
