"""Deterministic shuffles: every deck order comes from a seed by the procedure of
``referee.cardcore`` (README "The shuffle"), the same for every game:

* A deal's deck is ``shuffle(the 52 cards in index order As..Ks Ah..Kh Ad..Kd Ac..Kc,
  deal_key(seed, game, deal))``.
* The discard pile becomes a new stock (``stock_exhausted=reshuffle``) by
  ``shuffle(pile, SHA-256(label("reshuffle") || deal_key))``.
"""

from __future__ import annotations

import hashlib

from referee.cardcore import commitment, deal_key, first_dealer, label, mix_seed, shuffle

from ._cards import DECK, Card

__all__ = ["commitment", "deal_key", "deck_for_deal", "first_dealer", "mix_seed", "reshuffle_key", "shuffle"]


def deck_for_deal(seed: bytes, game: int, deal: int) -> list[Card]:
    """The deck order of one deal of a match (RULES §3 convention applies to it)."""
    return shuffle(DECK, deal_key(seed, game, deal))


def reshuffle_key(deal_key_: bytes) -> bytes:
    """The key that shuffles the discard pile into a new stock (stock_exhausted=reshuffle)."""
    return hashlib.sha256(label("reshuffle") + deal_key_).digest()
