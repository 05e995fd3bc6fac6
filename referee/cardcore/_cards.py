"""What the games' cards share: their canonical text."""

from __future__ import annotations

from collections.abc import Callable, Mapping


def canonical_card(text: str, canon: Mapping[str, str], parse: Callable[[str], object]) -> str | None:
    """The canonical text of a card of a game (``canon``: its cards' texts; ``parse``: its card
    parser, raising ``ValueError``), or ``None`` if ``text`` is not one of its cards."""
    hit = canon.get(text)
    if hit is not None:
        return hit
    try:
        return str(parse(text))
    except ValueError:
        return None
