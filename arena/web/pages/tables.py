"""The tables' pages (a person plays the computer or friends): the choices of play-the-computer,
the forms to open and to join a table, a table's invitation, a seat's table (the script draws it
from the seat's stream), the lobby and the tables' refusals. Each is a :class:`~arena.web.pages.Page`
of the site's frame (``table_frame.html``: the one menu, the tables' style sheet and scripts);
``arena.web.table_views`` answers the requests with them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from arena.web.i18n import N_, Lang
from arena.web.limits import WebLimits
from arena.web.pages import Page
from arena.web.table_model import LOBBY, PREFIX, TABLES, Choice, Table, target_of
from referee import games

STYLE = "/static/table.css"
"""The tables' style sheet (after the site's)."""
SCRIPTS = ("/static/people.js", "/static/table.js")
"""The tables' scripts (the waiting room and the lobby; the table)."""
NO_GAME = N_("No game with sample bots is installed.")
"""The table forms' page when no game can be played."""
FIRST_PRESET = "short"
"""The rules chosen first on the forms, when a game has them (a short game for a first try)."""
LEVEL_WORDS = {"easy": N_("easy"), "medium": N_("medium"), "hard": N_("hard")}
"""The words of the difficulty levels (``referee.games.LEVELS``) on "play the computer"."""


def _page(template: str, title: str, page: str, values: Mapping[str, Any] | None = None,
          data: Mapping[str, str] | None = None) -> Page:
    return Page(template, title, page, {"table_style": STYLE, "table_scripts": SCRIPTS, "play_href": PREFIX,
                                        "tables_href": TABLES, "no_game_text": NO_GAME, **(values or {})},
                data or {})


def _names(tr: Lang, found: Sequence[Choice]) -> dict[str, str]:
    """Each game's display name in ``tr``'s language, by its registry key."""
    return {c.game: tr.game_name(c.game) for c in found}


def _presets(found: Sequence[Choice]) -> dict[str, str]:
    return {c.game: FIRST_PRESET if FIRST_PRESET in c.presets else c.presets[0] for c in found}


def choose(tr: Lang, found: Sequence[Choice], problem: str = "") -> Page:
    """``/play``: one form per game (the computer's player, the rules, the seats); ``problem``:
    why the last try was refused (in ``tr``'s language)."""
    return _page("play.html", tr._("Play the computer"), "table",
                 {"found": found, "problem": problem, "presets": _presets(found), "names": _names(tr, found),
                  "level_words": {k: tr._(v) for k, v in LEVEL_WORDS.items()}})


def new(tr: Lang, found: Sequence[Choice], limits: WebLimits, problem: str = "") -> Page:
    """``/tables/new``: one form per game (the rules, the seats, the game's target, the time a
    move, who may join)."""
    presets = _presets(found)
    targets = {c.game: target_of(games.get(c.game).game.rules_preset(presets[c.game])) for c in found}
    return _page("table_new.html", tr._("Open a table"), "new",
                 {"found": found, "problem": problem, "presets": presets, "targets": targets,
                  "move_s": f"{limits.table_move_s:g}", "names": _names(tr, found)})


def join(tr: Lang, code: str = "", problem: str = "") -> Page:
    """``/tables/join``: the table-code form."""
    return _page("table_join.html", tr._("Join a table"), "join", {"code": code, "problem": problem})


def invite(tr: Lang, table: Table) -> Page:
    """``/tables/j/CODE``: the table's invitation (its game, its seats, who sits) with a button to
    sit down."""
    st = table.settings
    who = ", ".join(p.name for p in table.places if p.kind != "empty") or tr._("nobody")
    return _page("table_invite.html", tr._("A {game} table", game=tr.game_name(st.game)), "join",
                 {"game": tr.game_name(st.game), "preset": st.preset, "seats": st.seats, "who": who,
                  "sit_href": f"{TABLES}/j/{table.code}"})


def said(title: str, text: str, link: tuple[str, str] | None = None) -> Page:
    """A table page that only says something (refused, gone, not found), ``title`` and ``text``
    already translated; ``link``: an address and its words to go on."""
    return _page("table_message.html", title, "message",
                 {"text": text, "link": {"href": link[0], "text": link[1]} if link else None})


def seat(tr: Lang, table: Table, secret: str, index: int, signed: bool) -> Page:
    """A seat's table (and its waiting room): the addresses and words its scripts need."""
    base = f"{PREFIX}/t/{secret}"
    st = table.settings
    title = f"{tr.game_name(st.game)}: {tr._(' vs ').join(p.name or '…' for p in table.places)}"
    return _page("table.html", title, "table", data={
        "events": f"{base}/events", "move": f"{base}/move", "seat": str(index), "game": st.game,
        "fields": json.dumps(result_words(st.game)), "fill": f"{base}/fill", "start": f"{base}/start",
        "rematch": f"{base}/rematch", "leave": f"{base}/leave", "join": f"{TABLES}/j/{table.code}",
        "bots": json.dumps(list(st.bots)), "levels": json.dumps(levels(tr, st.game)), "signed": "yes" if signed else "",
        "players": json.dumps(list(table.names()))})


def levels(tr: Lang, game: str) -> dict[str, str]:
    """The difficulty of each of the game's sample bots that has one, in ``tr``'s words (the
    host's choice of a bot for an empty seat shows it)."""
    try:
        bots = games.get(game).bots
    except ValueError:
        return {}
    return {b.name: tr._(LEVEL_WORDS[b.level]) for b in bots if b.level in LEVEL_WORDS}


def result_words(game: str) -> list[str]:
    """The game's words for its result fields (``games.Capabilities.result_words``), for the
    table's script; none for a game that is not installed here."""
    try:
        return list(games.get(game).capabilities.result_words)
    except ValueError:
        return []


def lobby(tr: Lang, initial: Mapping[str, Any], refresh_s: float) -> Page:
    """``/lobby``: the open public tables and the running ones (``initial``; the script refreshes
    them every ``refresh_s``)."""
    return _page("lobby.html", tr._("Tables"), "lobby",
                 data={"lobby": f"{LOBBY}.json", "refresh": f"{refresh_s:g}", "initial": json.dumps(initial)})
