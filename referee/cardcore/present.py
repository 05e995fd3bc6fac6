"""The words of a game's presentation, made translatable (pure, standard library only).

A presentation's description (``referee.games.GamePresentation``) writes its texts in English, so
every renderer can show them as they are. A renderer that speaks another language (the live
web's pages) translates them with the game's own gettext catalogs (``Registered.catalogs``):

- a fixed text is its own msgid: mark it with :func:`T` (for the catalogs' check);
- a text made from a template is made with a :class:`Words` (``say("discards {card}",
  card="Kh")``), which remembers its template and fields; the description carries them as its
  ``texts`` (``{text: [template, {field: value}]}``), and the renderer translates the template,
  then fills each field, itself translated when it is a text of either kind.

A seat is named in a text as ``{N}`` (the renderer writes the player's name there): pass it as a
field made by :func:`seat`, so a template names its fields only (``"{who} knocks"``).
"""

from __future__ import annotations


def T(text: str) -> str:
    """``text``, a msgid of the game's catalogs (a fixed text of the description)."""
    return text


def seat(number: int | None) -> str:
    """The ``{N}`` that names seat ``number`` in a description's text (``""`` for ``None``)."""
    return "" if number is None else f"{{{number}}}"


class Words:
    """The texts of one description made from templates, for its ``texts``."""

    __slots__ = ("texts",)

    def __init__(self) -> None:
        self.texts: dict[str, list[object]] = {}
        """Each text made here: its template (a msgid) and its fields (strings)."""

    def __call__(self, template: str, **fields: object) -> str:
        """``template`` (a msgid of the game's catalogs) with its ``{field}``s filled."""
        values = {k: str(v) for k, v in fields.items()}
        text = template.format(**values)
        if values:
            self.texts[text] = [template, values]
        return text


_RANK_WORDS = {"A": T("ace"), "2": T("two"), "3": T("three"), "4": T("four"), "5": T("five"), "6": T("six"),
               "7": T("seven"), "8": T("eight"), "9": T("nine"), "T": T("ten"), "J": T("jack"), "Q": T("queen"),
               "K": T("king")}
"""Each rank's name (a card's accessible name: ``seven of hearts``)."""
_SUIT_WORDS = {"s": T("spades"), "h": T("hearts"), "d": T("diamonds"), "c": T("clubs")}
"""Each suit's name."""
_SUIT_SYMBOLS = {"s": "\u2660", "h": "\u2665", "d": "\u2666", "c": "\u2663"}
"""Each suit's symbol, as a card's face shows it."""
_INKS = {"s": 0, "h": 1, "d": 2, "c": 3}
"""Each suit's ink in a four-colour deck (0 black, 1 red, 2 blue, 3 green); two-colour: 1 and 2 are red."""
CARD_KEYS = frozenset({"cards", "groups", "loose", "laid_off"})
"""The keys of a description whose values (lists, lists of lists) are cards."""


def face(card: str, say: Words) -> dict[str, object]:
    """How one card of the 52-card deck looks (``"Th"``): its rank as printed (``"10"``), its
    suit's symbol, its ink (0–3: black, red, blue, green in a four-colour deck; 1 and 2 are red
    in a two-colour one) and its name in words (``ten of hearts``, a text of ``say``)."""
    rank, suit = card[:-1], card[-1:]
    return {"rank": "10" if rank == "T" else rank, "suit": _SUIT_SYMBOLS[suit], "ink": _INKS[suit],
            "name": say("{rank} of {suit}", rank=_RANK_WORDS[rank], suit=_SUIT_WORDS[suit])}


def with_faces(description: dict[str, object], say: Words) -> dict[str, object]:
    """``description`` with its ``faces``: each card it shows (under :data:`CARD_KEYS`, at any
    depth) mapped to its :func:`face`, so every renderer draws a card the one way the game says
    (the table's page, the live view and the replay) and names it for a screen reader. Only the
    cards the description already shows: the faces tell nothing more."""
    found: dict[str, None] = {}

    def walk(value: object, cards: bool) -> None:
        if isinstance(value, str):
            if cards and len(value) == 2 and value[0] in _RANK_WORDS and value[1] in _SUIT_WORDS:
                found.setdefault(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                if k != "texts":
                    walk(v, cards or k in CARD_KEYS)
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v, cards)
    walk(description, False)
    description["faces"] = {c: face(c, say) for c in found}
    description["texts"] = say.texts
    return description
