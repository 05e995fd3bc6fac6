"""The Gin Rummy rules engine: pure, standard library only, no I/O, no clock, no randomness
except from a seed it is given. The Gin rules in ``docs/`` are the spec.

Everything public is re-exported here; the modules behind it are private. The package may be
compiled with mypyc (``GIN_ARENA_COMPILE=1 pip install .``): :data:`COMPILED` tells.
"""

from types import FunctionType as _FunctionType

from ._actions import ACTION_KINDS as ACTION_KINDS
from ._actions import Action as Action
from ._actions import ActionKind as ActionKind
from ._actions import BigGin as BigGin
from ._actions import Discard as Discard
from ._actions import DrawDiscard as DrawDiscard
from ._actions import DrawStock as DrawStock
from ._actions import IllegalActionError as IllegalActionError
from ._actions import Knock as Knock
from ._actions import Pass as Pass
from ._actions import TakeUpcard as TakeUpcard
from ._actions import make_action as make_action
from ._actions import parse_action as parse_action
from ._bot import substitute_action as substitute_action
from ._cards import DECK as DECK
from ._cards import RANKS as RANKS
from ._cards import SUITS as SUITS
from ._cards import Card as Card
from ._cards import format_cards as format_cards
from ._cards import from_mask as from_mask
from ._cards import mask_indices as mask_indices
from ._cards import parse_card as parse_card
from ._cards import parse_cards as parse_cards
from ._cards import to_mask as to_mask
from ._deal import Deal as Deal
from ._deal import Move as Move
from ._match import DealEnded as DealEnded
from ._match import DealStarted as DealStarted
from ._match import Game as Game
from ._match import GameEnded as GameEnded
from ._match import GameResult as GameResult
from ._match import Match as Match
from ._match import MatchEnded as MatchEnded
from ._match import MatchEvent as MatchEvent
from ._match import MatchOutcome as MatchOutcome
from ._match import information_state as information_state
from ._melds import Arrangement as Arrangement
from ._melds import Meld as Meld
from ._melds import all_arrangements as all_arrangements
from ._melds import arrange as arrange
from ._melds import arrange_mask as arrange_mask
from ._melds import deadwood as deadwood
from ._melds import deadwood_after_each_discard as deadwood_after_each_discard
from ._melds import deadwood_mask as deadwood_mask
from ._melds import min_deadwood_after_discard as min_deadwood_after_discard
from ._melds import min_deadwood_after_discard_mask as min_deadwood_after_discard_mask
from ._melds import value_mask as value_mask
from ._outcome import DealOutcome as DealOutcome
from ._outcome import Phase as Phase
from ._rules import PRESETS as PRESETS
from ._rules import RuleSet as RuleSet
from ._rules import RuleSetError as RuleSetError
from ._showdown import Showdown as Showdown
from ._showdown import score_showdown as score_showdown
from ._shuffle import commitment as commitment
from ._shuffle import deal_key as deal_key
from ._shuffle import deck_for_deal as deck_for_deal
from ._shuffle import first_dealer as first_dealer
from ._shuffle import mix_seed as mix_seed
from ._shuffle import shuffle as shuffle
from ._view import HIDDEN_KINDS as HIDDEN_KINDS
from ._view import InformationState as InformationState
from ._view import PublicEvent as PublicEvent
from ._view import deal_state as deal_state
from ._view import seat_event as seat_event
from ._view import visible_outcome as visible_outcome

COMPILED: bool = not isinstance(to_mask, _FunctionType)
"""Whether this package runs compiled by mypyc (its functions are then native, not Python ones)."""
