"""Seed → deck: the project's shuffle procedure (``referee.cardcore``, the one every game
uses, so that audits work the same way):

* a deal's deck is ``shuffle(DECK, deal_key(seed, game, deal))``;
* RULES-RUMMY R3: the first dealer is ``uniform(n)`` on ``SHA-256(label("dealer") || seed ||
  u32be(game))``; R6: the k-th reshuffle of a deal's discard pile uses the key
  ``SHA-256(label("reshuffle") || deal_key || u32be(k))``.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

from referee.cardcore import commitment, deal_key, first_dealer, label, mix_seed, shuffle

from ._cards import DECK, Card

__all__ = [
    "commitment", "deal_key", "deck_for_deal", "deck_key", "first_dealer", "mix_seed", "reshuffle_key", "shuffle",
]


def deck_for_deal(seed: bytes, game: int, deal: int) -> list[Card]:
    """The deck order of one deal of a match (R3's convention deals it)."""
    return shuffle(DECK, deal_key(seed, game, deal))


def deck_key(deck: Sequence[Card]) -> bytes:
    """The ``deal_key`` of a deal rebuilt from a deck order without a key: the 52 bytes of
    its card indexes (R6)."""
    return bytes(c.index for c in deck)


def reshuffle_key(key: bytes, k: int) -> bytes:
    """The key of the ``k``-th reshuffle (from 1) of a deal's discard pile (R6)."""
    return hashlib.sha256(label("reshuffle") + key + struct.pack(">I", k)).digest()
