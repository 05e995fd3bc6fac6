"""The environment's renderings of a game's presentation (``referee.games.GamePresentation.present``'s
game-neutral description): plain text, and an image with one cell per card."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import numpy.typing as npt

CELL = (12, 8)
"""A card's cell in the image: height, width (pixels)."""
ROWS_MAX = 24
"""Rows of cards the image has room for (seats, piles and melds beyond them are left out)."""
_SUIT_INK = {"s": (30, 30, 30), "c": (30, 90, 30), "h": (200, 30, 30), "d": (30, 60, 200)}
_RANKS = "A23456789TJQK"


def _seat_names(text: str) -> str:
    return re.sub(r"\{(\d+)\}", lambda m: f"player_{m.group(1)}", text)


def text_of(described: dict[str, Any] | None) -> str:
    """The description in a few lines of text (``"(no presentation)"`` for a game without one)."""
    if described is None:
        return "(no presentation)"
    lines = [f"phase: {described.get('phase', '')}  to move: player_{described.get('to_move')}"
             f"  scores: {described.get('scores', [])}"]
    for s in described.get("seats", []):
        hand = s.get("hand")
        shown = "hidden" if hand is None else " ".join(
            ["[" + " ".join(g) + "]" for g in hand.get("groups", [])] + list(hand.get("loose", [])))
        lines.append(f"player_{s['seat']}{' (dealer)' if s.get('dealer') else ''}: {s.get('count', 0)} cards: {shown}")
    for pile in described.get("piles", []):
        cards = pile.get("cards")
        lines.append(f"{pile.get('name', '')}: {pile.get('count', 0)} "
                     f"{'face down' if cards is None else ' '.join(cards)}")
    for meld in described.get("table") or []:
        lines.append(f"table {meld.get('label', '')}: {' '.join(meld.get('cards', []))}")
    last = described.get("last")
    if last:
        lines.append(f"last: player_{last['seat']} {last.get('text', '')}")
    end = described.get("end")
    if end:
        lines.append(f"end: {end.get('text', '')} points {end.get('points', [])}")
    return _seat_names("\n".join(lines))


def _rows(described: dict[str, Any]) -> list[list[str] | None]:
    rows: list[list[str] | None] = []
    for s in described.get("seats", []):
        hand = s.get("hand")
        cards = None if hand is None else [c for g in hand.get("groups", []) for c in g] + list(hand.get("loose", []))
        rows.append(cards)
    for pile in described.get("piles", []):
        rows.append(pile.get("cards"))
    rows.extend(list(meld.get("cards", [])) for meld in described.get("table") or [])
    return rows[:ROWS_MAX]


def rgb_image(described: dict[str, Any] | None) -> npt.NDArray[np.uint8]:
    """An RGB image (height, width, 3) of the description's cards: a row per seat's hand (grey cells
    for a hidden one), per pile (face-down piles grey) and per meld on the table; each card a cell
    coloured by its suit, lighter for a higher rank."""
    rows = _rows(described) if described is not None else []
    width = max([13] + [len(r) if r is not None else 1 for r in rows])
    h, w = CELL
    image = np.full(((len(rows) or 1) * h, width * w, 3), 240, dtype=np.uint8)
    for y, row in enumerate(rows):
        if row is None:
            image[y * h + 1:(y + 1) * h - 1, 1:w * 4 - 1] = 160
            continue
        for x, card in enumerate(row):
            ink = np.array(_SUIT_INK.get(card[-1:], (128, 0, 128)), dtype=np.int32)
            lift = (_RANKS.index(card[0]) if card[:1] in _RANKS else 0) * 4
            image[y * h + 1:(y + 1) * h - 1, x * w + 1:(x + 1) * w - 1] = np.clip(ink + lift, 0, 255)
    return image
