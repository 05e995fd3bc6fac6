"""What the card games share: the 52 cards (their value, text forms and bitmasks), the actions
they all have (draw from the stock, discard) and the illegal-action error, the project's
shuffle procedure (seed → deck, the same for every game so that audits work alike), the plumbing
of a game's rule-set value (validation of each field's type and choices before the value is
built, plain data in and out) and the bases of the games' frozen values and mutable states
(copying and pickling on both builds). Pure like the games: standard library only.

The package may be compiled with mypyc with the games (``GIN_ARENA_COMPILE=1 pip install .``):
:data:`COMPILED` tells.
"""

from types import FunctionType as _FunctionType

from ._actions import Discard as Discard
from ._actions import DrawStock as DrawStock
from ._actions import IllegalActionError as IllegalActionError
from ._cards import DECK as DECK
from ._cards import FULL_MASK as FULL_MASK
from ._cards import RANKS as RANKS
from ._cards import SUITS as SUITS
from ._cards import Card as Card
from ._cards import card_text as card_text
from ._cards import format_cards as format_cards
from ._cards import from_mask as from_mask
from ._cards import mask_indices as mask_indices
from ._cards import parse_card as parse_card
from ._cards import parse_cards as parse_cards
from ._cards import to_mask as to_mask
from ._results import places_with_forfeits as places_with_forfeits
from ._rules import rule_set as rule_set
from ._rules import rules_from_dict as rules_from_dict
from ._rules import rules_to_dict as rules_to_dict
from ._shuffle import Uniform as Uniform
from ._shuffle import commitment as commitment
from ._shuffle import deal_key as deal_key
from ._shuffle import first_dealer as first_dealer
from ._shuffle import label as label
from ._shuffle import mix_seed as mix_seed
from ._shuffle import shuffle as shuffle
from ._values import State as State
from ._values import Value as Value

COMPILED: bool = not isinstance(shuffle, _FunctionType)
"""Whether this package runs compiled by mypyc (its functions are then native, not Python ones)."""
