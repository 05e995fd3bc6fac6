"""Cards (RULES §1): the 52-card deck, text forms and the bitmask representation — the card
games' shared cards (``referee.cardcore``); a card's ``value`` is its deadwood value (ace 1, pips
at face value, faces 10)."""

from __future__ import annotations

from referee.cardcore import DECK as DECK
from referee.cardcore import FULL_MASK as FULL_MASK
from referee.cardcore import RANKS as RANKS
from referee.cardcore import SUITS as SUITS
from referee.cardcore import Card as Card
from referee.cardcore import format_cards as format_cards
from referee.cardcore import from_mask as from_mask
from referee.cardcore import mask_indices as mask_indices
from referee.cardcore import parse_card as parse_card
from referee.cardcore import parse_cards as parse_cards
from referee.cardcore import to_mask as to_mask
