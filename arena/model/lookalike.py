"""Names that look alike: a confusable skeleton in the manner of Unicode TR39 (§4, "skeleton"),
for people's names on the live web and for registered bots' names (docs/security.md#names-that-look-alike).

Two names with the same :func:`skeleton` are shown alike on a page, so the second is refused
beside the first: ``Alice Martin`` next to ``Аlice Martin`` (a Cyrillic А), ``Αlice Martin`` (a
Greek Α), ``Ａｌｉｃｅ Martin`` (fullwidth), ``𝐀lice Martin`` (mathematical bold), ``Alice  Martin``
(two spaces), ``ALICE MARTIN`` (case).

The skeleton is NFKC (compatibility forms: fullwidth, mathematical alphanumerics, ligatures,
superscripts and the like become the letters they are drawn as), every run of white space one
space and none at either end, NFD, each character of :data:`LOOKALIKES` replaced by the Latin
letter it is drawn as (case kept: a Greek ``Η`` is an ``H``, an ``η`` an ``n``), then case
folded. :data:`LOOKALIKES` is a subset of TR39's ``confusables.txt``: the Cyrillic, Greek,
Armenian and Latin-extension letters drawn as a basic Latin letter; it does not merge Latin
letters with each other or with digits (``l``, ``I`` and ``1``; ``O`` and ``0``; ``rn`` and
``m``), nor letters of scripts it does not list.
"""

from __future__ import annotations

import unicodedata

LOOKALIKES: dict[str, str] = {
    # Cyrillic capitals, then small letters
    "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K", "М": "M", "О": "O",
    "Р": "P", "Ѕ": "S", "Т": "T", "Х": "X", "Ү": "Y", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I", "Ԁ": "D",
    "а": "a", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j", "ӏ": "l", "о": "o", "р": "p",
    "ԛ": "q", "ѕ": "s", "ԝ": "w", "х": "x", "у": "y", "ү": "y",
    # Greek capitals, then small letters
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C", "Ϳ": "J",
    "α": "a", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "υ": "u", "ϲ": "c", "ϳ": "j", "γ": "y",
    "ω": "w", "χ": "x", "η": "n",
    # Armenian small letters
    "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ո": "n", "զ": "q",
    # Latin letters outside basic Latin drawn as one of it
    "ı": "i", "ɑ": "a", "ɩ": "i", "ʏ": "y", "ȷ": "j", "ɪ": "i", "ɡ": "g",
}
"""Characters drawn as a basic Latin letter (from TR39's ``confusables.txt``), and that letter."""


def skeleton(name: str) -> str:
    """What ``name`` and every name drawn like it share (see the module's docstring)."""
    text = " ".join(unicodedata.normalize("NFKC", name).split())
    mapped = "".join(LOOKALIKES.get(c, c) for c in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped.casefold())
