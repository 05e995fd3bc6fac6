"""The rules and help pages: ``/rules`` lists the installed games that ship a rules page, and
``/rules/GAME`` shows one in the page's language. The text is the game's own (its registration's
``help`` folder: ``LANG.md``, CommonMark), so a plugin game brings its rules as Gin and Rummy do;
the arena only renders it, with raw HTML off (a game's text cannot put markup or script on the
site) and its headings numbered for links."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import structlog
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup, escape

from arena.web.i18n import DEFAULT, LANGUAGES, Lang
from arena.web.pages import Page
from referee import games

log = structlog.get_logger("arena")

HELP_BYTES = 256 * 1024
"""The largest rules page read from a game (a bigger one is refused and logged)."""
ANCHOR = re.compile(r"[^\w]+")
"""What a heading's anchor drops (its words are kept, joined by ``-``)."""


@dataclass(frozen=True, slots=True)
class Rules:
    """A game's rules page in one language."""

    game: str
    """The game's registry name."""
    lang: str
    """The language it is written in (the page's, or English when the game has none in it)."""
    title: str
    """Its first line's title."""
    html: Markup
    """The rest, rendered (raw HTML off)."""
    sections: tuple[tuple[str, str], ...]
    """Its second-level headings: anchor and text (the page's contents)."""


def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


def anchor(text: str) -> str:
    """A heading's anchor: its words in lower case joined by ``-``."""
    return ANCHOR.sub("-", text.lower()).strip("-") or "section"


def help_file(game: str, code: str) -> Path | None:
    """The game's rules page for language ``code``, else its English one, else ``None``."""
    folder = games.get(game).help
    if folder is None:
        return None
    for lang in (code, DEFAULT):
        path = folder / f"{lang}.md"
        if path.is_file():
            return path
    return None


def rules(game: str, code: str) -> Rules | None:
    """A game's rules page in language ``code`` (English if the game has none in it), read and
    rendered once; ``None``: no such game, it has none, or it cannot be read (logged)."""
    if game not in games.names() or code not in LANGUAGES:  # (only known names are kept)
        return None
    try:
        return _rules(game, code)
    except games.GamePluginError as e:  # (a broken plugin: its page is missing, the others show)
        log.warning("game_help_unavailable", game=game, error=str(e))
        return None


@cache
def _rules(game: str, code: str) -> Rules | None:
    path = help_file(game, code)
    return read(game, path) if path is not None else None


def read(game: str, path: Path) -> Rules | None:
    """A game's rules page from its file (``None``: it cannot be read, or is bigger than
    ``HELP_BYTES``: logged). Raw HTML in it is shown as text, never as markup."""
    try:
        if path.stat().st_size > HELP_BYTES:
            raise ValueError(f"{path.stat().st_size} bytes, more than {HELP_BYTES} (HELP_BYTES)")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError) as e:
        log.warning("game_help_unreadable", game=game, path=str(path), error=str(e))
        return None
    first, _, rest = text.partition("\n")
    title = first.removeprefix("#").strip() if first.startswith("# ") else game
    body = rest if first.startswith("# ") else text
    md = _markdown()
    tokens: list[Token] = []
    sections = []
    heading = title
    parsed = md.parse(body)
    for i, token in enumerate(parsed):
        if token.type == "heading_open":  # (each heading an anchor; the second level's the contents)
            heading = parsed[i + 1].content
            token.attrSet("id", anchor(heading))
            if token.tag == "h2":
                sections.append((anchor(heading), heading))
        if token.type == "table_open":  # (a wide table scrolls in its own box, named by its heading)
            tokens.append(_markup(f'<div class="scroll" tabindex="0" role="region" aria-label="{escape(heading)}">'))
        tokens.append(token)
        if token.type == "table_close":
            tokens.append(_markup("</div>"))
    return Rules(game, path.stem, title, Markup(md.renderer.render(tokens, md.options, {})), tuple(sections))


def _markup(html: str) -> Token:
    """A piece of markup of the arena's own among a rendered text's tokens."""
    token = Token("html_block", "", 0)
    token.content = html
    return token


def games_with_rules(code: str) -> list[Rules]:
    """Every installed game's rules page in language ``code``, in the registry's order (a game
    that cannot be loaded, or has none, is left out)."""
    return [found for name in games.names() if (found := rules(name, code)) is not None]


def index(tr: Lang) -> Page:
    """``/rules``: the games with a rules page."""
    return Page("rules_index.html", tr._("Rules"), "rules", {"games": games_with_rules(tr.code)})


def page(tr: Lang, found: Rules) -> Page:
    """``/rules/GAME``: one game's rules, tips and questions answered."""
    return Page("rules.html", found.title, "rules", {"rules": found})
