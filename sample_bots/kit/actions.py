"""Actions and requests: the text form of any game's actions (:mod:`.games`), and, under their
old names, Gin's action helpers (:mod:`.gin.actions`).

``action_text``, ``legal_texts``, ``to_action`` and ``is_legal`` work for every game the kit
knows; ``parse_action`` (here) reads a Gin text; ``rummy.action_message`` a rummy one.
"""

from __future__ import annotations

from .games import Decision as Decision
from .games import action_text as action_text
from .games import is_legal as is_legal
from .games import legal_texts as legal_texts
from .games import to_action as to_action
from .gin.actions import BIG_GIN as BIG_GIN
from .gin.actions import CARD_KINDS as CARD_KINDS
from .gin.actions import DISCARD as DISCARD
from .gin.actions import DRAW_DISCARD as DRAW_DISCARD
from .gin.actions import DRAW_STOCK as DRAW_STOCK
from .gin.actions import KIND_NAMES as KIND_NAMES
from .gin.actions import KINDS as KINDS
from .gin.actions import KNOCK as KNOCK
from .gin.actions import PASS as PASS
from .gin.actions import TAKE_UPCARD as TAKE_UPCARD
from .gin.actions import action as action
from .gin.actions import can as can
from .gin.actions import known_cards_of as known_cards_of
from .gin.actions import legal_of_kind as legal_of_kind
from .gin.actions import opponent as opponent
from .gin.actions import parse_action as parse_action
from .gin.actions import unseen_cards as unseen_cards
