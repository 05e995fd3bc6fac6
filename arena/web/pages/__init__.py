"""The live web's pages, rendered on the server from Jinja2 templates (``arena/web/templates``)
with autoescaping on: every value a template shows is escaped unless it is markup made here
(``Markup``), so a name a bot or a person chose is never HTML. One module per family of pages
(:mod:`.ladder`: home, standings, matches, a bot; :mod:`.people`: the doors and the people's
standings; :mod:`.rules`: the games' rules and help); this one holds what they share: the
template environment (Starlette's ``Jinja2Templates``), the frame every page has (one menu, the
language switch, who is signed in, the scripts with their strings) and the site's addresses.

No inline script or style anywhere (the strict Content-Security-Policy holds): the pages load
``/static/site.css`` and their family's style sheet and script; the scripts fill in what changes
(standings, matches, the spectator's view) with ``textContent`` only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, urlencode

import jinja2
from jinja2.ext import extract_from_ast
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.templating import Jinja2Templates

from arena.web import i18n
from arena.web.i18n import N_, Lang, script_block, switch

TEMPLATES = Path(__file__).parent.parent / "templates"
"""The templates' folder (package data)."""
SITE_STYLE = "/static/site.css"
"""The style sheet of every page (the menu, the frame, focus and contrast): the table pages' too."""
STYLE = "/static/web.css"
"""The style sheet of the site's own pages (standings, matches, a bot, the doors, the rules)."""
SCRIPT = "/static/web.js"
"""The site's pages' script."""
ICON = "/static/favicon.svg"
"""The site's icon (``/favicon.ico`` answers it too)."""
MENU: tuple[tuple[str, str], ...] = (
    ("/standings", N_("standings")),
    ("/matches", N_("matches")),
    ("/play", N_("play")),
    ("/tables/new", N_("tables")),
    ("/lobby", N_("lobby")),
    ("/rules", N_("rules")),
)
"""The site's one menu, on every page (the door to sign in, or who is signed in, follows it)."""
SOURCE_KINDS = {"ladder": N_("ladder"), "tournament": N_("tournament")}
"""The first word of a web's title (``WebSource.title``: ``ladder NAME``, ``tournament NAME``)
in the page's language; the rest is the name, shown as it is."""


def environment() -> jinja2.Environment:
    """The templates' environment: autoescaping on for every template (not by file name), an
    undefined name an error (never an empty string on a page), blocks trimmed."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["fill"] = fill
    env.globals.update(bot_href=bot_href, match_href=match_href, person_href=person_href)
    return env


def fill(text: str, **parts: Any) -> Markup:
    """A translated ``text`` escaped, its ``{name}`` fields replaced by ``parts`` (markup: a link
    made in the template, or a value, escaped)."""
    out = str(escape(text))
    for name, part in parts.items():
        out = out.replace("{" + name + "}", str(escape(part)))
    return Markup(out)


def bot_href(name: str) -> str:
    """A bot's page."""
    return "/bots/" + quote(name, safe="")


def match_href(match_id: str) -> str:
    """A match's page (live while it runs, its replay once it is over)."""
    return "/matches/" + quote(match_id, safe="")


def person_href(name: str) -> str:
    """A person's page (their people's games)."""
    return "/people/" + quote(name, safe="")


TEMPLATING = Jinja2Templates(env=environment())
"""The pages' templates (Starlette's ``Jinja2Templates`` over :func:`environment`)."""


class Site(Protocol):
    """What the frame asks the web about a request (``arena.web.server.Web``)."""

    def who(self, request: Request) -> tuple[str | None, bool]:
        """The signed-in person's name (or ``None``) and whether the request is the operator's."""

    def title(self) -> str:
        """What the pages are about (``WebSource.title``)."""


@dataclass(frozen=True, slots=True)
class Frame:
    """What every page shows around its body: the menu, the doors, the language switch."""

    tr: Lang
    """The page's language."""
    path: str
    """The page's address (its menu entry is marked current)."""
    person: str | None = None
    """Who is signed in (``None``: nobody)."""
    operator: bool = False
    """Whether the operator is signed in."""
    source: str = ""
    """What the pages are about, in the corner."""
    query: Sequence[tuple[str, str]] = field(default_factory=tuple)
    """The page's query (kept by the language switch)."""

    def menu(self) -> list[dict[str, Any]]:
        """The menu's entries: address, words, whether it is this page's."""
        return [{"href": href, "text": self.tr._(text), "current": _under(self.path, href)} for href, text in MENU]

    def languages(self) -> list[dict[str, Any]]:
        """The language switch: each language's code, name, address (``None``: the page's)."""
        kept = [(k, v) for k, v in self.query if k != "lang"]
        return [{"code": code, "name": name, "href": None if current else "?" + urlencode([*kept, ("lang", code)])}
                for code, name, current in switch(self.tr.code)]

    def corner(self) -> str:
        """What the pages are about, the first word in the page's language."""
        kind, _, name = self.source.partition(" ")
        if kind in SOURCE_KINDS:
            return f"{self.tr._(SOURCE_KINDS[kind])} {name}".strip()
        return self.source


def _under(path: str, href: str) -> bool:
    return path == href or path.startswith(href + "/")


def frame(request: Request, tr: Lang) -> Frame:
    """The frame of ``request``'s page in ``tr``'s language (who is signed in: the web's)."""
    site: Site = request.app.state.web
    person, operator = site.who(request)
    return Frame(tr, request.url.path, person, operator, site.title(), tuple(request.query_params.multi_items()))


def context(f: Frame, title: str, page: str, data: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What every template gets: the frame, the language's calls (``_``, ``ngettext``, numbers,
    state words), the page's title, name (``data-page``) and ``data-`` attributes."""
    tr = f.tr
    return {"f": f, "tr": tr, "_": tr._, "ngettext": tr.ngettext, "num": tr.number, "dec": tr.decimal,
            "state": tr.state, "title": title, "page": page, "data": dict(data or {}),
            "scripts": Markup(script_block(tr)), "site_style": SITE_STYLE, "style": STYLE, "script": SCRIPT,
            "icon": ICON}


def menu(request: Request, tr: Lang) -> Markup:
    """The site's header (the skip link, the menu, the doors, the language switch) for a page
    drawn elsewhere (the replay page the web serves)."""
    return Markup(TEMPLATING.get_template("menu.html").render(**context(frame(request, tr), "", "")))


HEAD_LINKS = Markup(f'<link rel="stylesheet" href="{SITE_STYLE}"><link rel="icon" href="{ICON}" type="image/svg+xml">')
"""The site's style sheet and icon, for a page drawn elsewhere (the replay page the web serves)."""
NO_STORE = {"Cache-Control": "no-store"}
"""The header of a page that must not be kept (someone is signed in; a table's seat)."""


TEMPLATE_CALLS = ("_", "ngettext", "N_")
"""The calls of a template whose literal first arguments (and a plural's second) are msgids."""


def template_msgids(source: str) -> list[tuple[str, str | None]]:
    """The msgids a template's ``_``/``ngettext`` calls use: ``(msgid, None)`` or ``(singular,
    plural)`` (what the catalogs' completeness test reads, beside the Python's and the scripts')."""
    out: list[tuple[str, str | None]] = []
    for _line, _func, message in extract_from_ast(TEMPLATING.env.parse(source), TEMPLATE_CALLS):
        if isinstance(message, str):
            out.append((message, None))
        elif message is not None and len(message) > 1 and isinstance(message[0], str) and isinstance(message[1], str):
            out.append((message[0], message[1]))
    return out


@dataclass(frozen=True, slots=True)
class Page:
    """A page to draw: its template, title (in the page's language), name and values."""

    template: str
    """The template (``arena/web/templates``)."""
    title: str
    """The title (``<title>``, and the heading unless the template has its own)."""
    page: str
    """Its name (``<body data-page>``: what the script draws there)."""
    values: Mapping[str, Any] = field(default_factory=dict)
    """What the template shows."""
    data: Mapping[str, str] = field(default_factory=dict)
    """``data-`` attributes of ``<body>`` (what the script needs)."""


def message(title: str, text: str) -> Page:
    """A page that only says something (not found, refused), ``text`` already translated."""
    return Page("message.html", title, "message", {"text": text})


def draw(request: Request, drawn: Page, *, status: int = 200, keep: bool = True) -> HTMLResponse:
    """``drawn`` in the request's language (its texts already in it), from its template, in the
    site's frame; a ``?lang=`` the web does not speak gets 400 and says which it speaks. A page
    shown to someone signed in, or not to ``keep`` (a table's: its address is a seat's
    credential), is sent ``Cache-Control: no-store``."""
    choice = i18n.of_request(request)
    tr = choice.lang
    if choice.unknown is not None:
        status = 400
        drawn = message(tr._("Language"), tr._("unknown language {lang}: this site speaks {languages}",
                                               lang=repr(choice.unknown), languages=", ".join(i18n.LANGUAGES)))
    f = frame(request, tr)
    values = {**context(f, drawn.title, drawn.page, drawn.data), **drawn.values}
    response = TEMPLATING.TemplateResponse(request, drawn.template, values, status_code=status,
                                           headers=NO_STORE if f.person or not keep else None)
    return i18n.answer(response, choice, secure=request.url.scheme == "https")
