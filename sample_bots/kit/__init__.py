"""The Gin Arena bot kit: write ``decide(request) -> Action`` (or a :class:`Bot`), then
``run_bot(...)`` connects it to the referee.

    from sample_bots.kit import run_bot, cards, actions

    def decide(request):
        return request.legal_actions[0]

    if __name__ == "__main__":
        raise SystemExit(run_bot(decide, name="first-legal"))

The kit's own modules name no game: :mod:`.session` (connecting, reconnecting, the command
line), :mod:`.games` (each game's action texts, by name), :mod:`.deck` (the 52 cards as texts).
Each game's helpers are a package of their own: for Gin, :mod:`.gin` — :mod:`.gin.cards` (melds,
deadwood), :mod:`.gin.masks` (the same on bit masks, fast), :mod:`.gin.actions` (action texts,
request helpers), also under their old names :mod:`.cards`, :mod:`.masks`, :mod:`.actions`; for
rummy (2–6 players) :mod:`.rummy`
(melds with the ace low or high, layoffs, plans, going out, the request as a ``View``) and
:class:`RummyBot` (a bot from one function ``choose(view) -> action text``)::

    from sample_bots.kit import RummyBot, run_bot

    def choose(view):
        return view.legal[0]

    if __name__ == "__main__":
        raise SystemExit(run_bot(RummyBot(choose), name="first-legal-rummy"))
"""

from . import actions as actions
from . import cards as cards
from . import games as games
from . import gin as gin
from . import masks as masks
from . import rummy as rummy
from .actions import Decision as Decision
from .actions import action_text as action_text
from .actions import legal_texts as legal_texts
from .actions import parse_action as parse_action
from .rummy.bot import RummyBot as RummyBot
from .session import Bot as Bot
from .session import BotCodeError as BotCodeError
from .session import BotConfig as BotConfig
from .session import BotLike as BotLike
from .session import SessionAbort as SessionAbort
from .session import SessionResult as SessionResult
from .session import make_parser as make_parser
from .session import parse_config as parse_config
from .session import play as play
from .session import run_bot as run_bot
from .session import run_until_signal as run_until_signal
from .session import setup_logging as setup_logging
