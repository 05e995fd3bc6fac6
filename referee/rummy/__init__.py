"""The rummy engine for 2–6 players (RULES-RUMMY.md, in ``docs/``): pure, standard library
only, no I/O, no clock, no randomness except from a seed it is given.

Everything public is re-exported here; the modules behind it are private. The package may be
compiled with mypyc (``GIN_ARENA_COMPILE=1 pip install .``): :data:`COMPILED` tells.
"""

from types import FunctionType as _FunctionType

from ._actions import ACTION_KINDS as ACTION_KINDS
from ._actions import Action as Action
from ._actions import ActionKind as ActionKind
from ._actions import CallStop as CallStop
from ._actions import DeclineStop as DeclineStop
from ._actions import Discard as Discard
from ._actions import DrawStock as DrawStock
from ._actions import End as End
from ._actions import IllegalActionError as IllegalActionError
from ._actions import LayMeld as LayMeld
from ._actions import LayOff as LayOff
from ._actions import TakeDiscard as TakeDiscard
from ._actions import parse_action as parse_action
from ._bot import substitute_action as substitute_action
from ._cards import DECK as DECK
from ._cards import RANKS as RANKS
from ._cards import SUITS as SUITS
from ._cards import Card as Card
from ._cards import card_value as card_value
from ._cards import format_cards as format_cards
from ._cards import parse_card as parse_card
from ._cards import parse_cards as parse_cards
from ._deal import MAX_RESHUFFLES as MAX_RESHUFFLES
from ._deal import Deal as Deal
from ._deal import Move as Move
from ._deal import Reshuffle as Reshuffle
from ._deal import Step as Step
from ._deal import melds_from as melds_from
from ._match import Game as Game
from ._match import GameResult as GameResult
from ._match import Match as Match
from ._match import MatchOutcome as MatchOutcome
from ._match import places as places
from ._melds import Placed as Placed
from ._melds import TableMeld as TableMeld
from ._melds import fits as fits
from ._melds import meld_shape as meld_shape
from ._melds import table_value as table_value
from ._outcome import Phase as Phase
from ._outcome import RummyOutcome as RummyOutcome
from ._rules import PRESETS as PRESETS
from ._rules import RuleSetError as RuleSetError
from ._rules import RummyRules as RummyRules
from ._rules import hand_size as hand_size
from ._shuffle import commitment as commitment
from ._shuffle import deal_key as deal_key
from ._shuffle import deck_for_deal as deck_for_deal
from ._shuffle import deck_key as deck_key
from ._shuffle import first_dealer as first_dealer
from ._shuffle import mix_seed as mix_seed
from ._shuffle import reshuffle_key as reshuffle_key
from ._shuffle import shuffle as shuffle
from ._view import InformationState as InformationState
from ._view import PublicEvent as PublicEvent
from ._view import deal_state as deal_state
from ._view import seat_event as seat_event

COMPILED: bool = not isinstance(parse_card, _FunctionType)
"""Whether this package runs compiled by mypyc (its functions are then native, not Python ones)."""
