"""A game's words in a language, and in the second person (pure but for reading the catalogs).

A game's presentation writes its texts in English, third person, naming a seat ``{N}``
(``referee.cardcore.present``). Its catalogs (``Registered.catalogs``:
``LANG/LC_MESSAGES/game.po``) translate them, and carry, under the msgctxt :data:`YOU`, each
text's form for when its subject is the reader: a template whose ``{who}`` is the reader's seat
(``"{who} knocks"`` → ``"you knock"``, ``"вы стучите"``), or a move's words when the reader made
it (``"draws {card} from the stock"`` → ``"you draw {card} from the stock"``). English has a
catalog of those forms only (its texts are the msgids). The live web's pages (``arena.web.i18n``,
``static/i18n.js``'s ``t.game``) and ``arena play`` both say a text through :func:`game_text`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import structlog
from babel.messages.pofile import read_po

from referee import games

log = structlog.get_logger("arena")

GAME_DOMAIN = "game"
"""A game's catalogs' gettext domain (``game.po`` in ``Registered.catalogs``)."""
YOU = "you"
"""The msgctxt of a text's form whose subject is the reader (``"you knock"``)."""
SUBJECT = "who"
"""The field of a template that names its subject (a seat's ``{N}``)."""
DEPTH = 8
"""The deepest a text's fields nest (a malformed ``texts`` cannot loop)."""


def you_key(msgid: str) -> str:
    """The key of ``msgid``'s :data:`YOU` form in a game's words (gettext's context separator)."""
    return f"{YOU}\x04{msgid}"


def catalog_path(folder: Path, code: str) -> Path:
    """A game's catalog for a language, in its ``Registered.catalogs`` folder."""
    return folder / code / "LC_MESSAGES" / f"{GAME_DOMAIN}.po"


def game_words(code: str) -> dict[str, dict[str, str]]:
    """Each installed game's words in language ``code``, by game name: each msgid of its catalog
    translated there (the ones with a translation), a :data:`YOU` form under :func:`you_key`; a
    game without a catalog for the language has none (its words stay as the game wrote them). A
    catalog that does not parse, or a game that does not load, is logged and passed over: a
    plugin's broken file leaves its words in English, never a page broken."""
    out: dict[str, dict[str, str]] = {}
    for name in games.names():
        try:
            folder = games.get(name).catalogs
        except games.GamePluginError as e:  # a broken game: `arena games --check` names it; the others' words stay
            log.warning("game_unloadable", game=name, error=str(e))
            continue
        path = catalog_path(folder, code) if folder is not None else None
        if path is None or not path.is_file():
            continue
        try:
            with path.open("rb") as f:
                catalog = read_po(f, locale=code, domain=GAME_DOMAIN, abort_invalid=True)
        except Exception as e:  # (Babel's parse errors, an unreadable file)
            log.warning("game_catalog_unreadable", game=name, path=str(path), error=str(e))
            continue
        out[name] = {(you_key(m.id) if m.context == YOU else str(m.id)): str(m.string) for m in catalog
                     if m.id and isinstance(m.id, str) and isinstance(m.string, str) and m.string and not m.fuzzy
                     and m.context in (None, YOU)}
    return out


def game_text(text: str, texts: Mapping[str, Any], words: Mapping[str, str], names: Sequence[str] = (),
              me: str | None = None, subject: bool = False, depth: int = 0) -> str:
    """One text of a description in the language of ``words`` (a game's words, as
    :func:`game_words` gives them): a text of ``texts`` is its template translated with its
    fields filled, each said the same way unless it is one of ``names``; any other text is its
    own msgid. ``me``: the reader's seat as the description names it (``"{0}"``): a template
    whose :data:`SUBJECT` is the reader is said in its :data:`YOU` form where the words have one;
    ``subject``: the reader is this text's subject (their own move's words)."""
    if depth > DEPTH or (depth and text in names):
        return text
    made = texts.get(text)
    if isinstance(made, list) and len(made) == 2 and isinstance(made[1], Mapping):
        template = str(made[0])
        yours = subject or (me is not None and str(made[1].get(SUBJECT, "")) == me)
        said = words.get(you_key(template)) if yours else None
        said = said if said is not None else words.get(template, template)
        values = {str(k): game_text(str(v), texts, words, names, me, False, depth + 1) for k, v in made[1].items()}
        return re.sub(r"\{(\w+)\}", lambda m: values.get(m[1], m[0]), said)
    found = words.get(you_key(text)) if subject else None
    return found if found is not None else words.get(text, text)
