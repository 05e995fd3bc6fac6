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
