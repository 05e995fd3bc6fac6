"""The training environment (docs/training.md): every registered game with an observation encoding
as a PettingZoo AEC environment, a Gymnasium single-agent wrapper and a batch of games stepped
together — on the referee's own engines, each seat observing exactly what the referee tells it.

Needs the ``train`` extra (``pip install -e '.[train]'``: NumPy, Gymnasium, PettingZoo); the
referee, the arena and the sample bots' own modules never import it.

    from train_env import env
    e = env("gin", preset="classic")
    e.reset(seed=1)
"""

from .aec import GameEnv as GameEnv
from .aec import env as env
from .aec import raw_env as raw_env
from .batch import BatchEnv as BatchEnv
from .batch import BatchStep as BatchStep
from .remote import BotProcess as BotProcess
from .remote import BotProcessError as BotProcessError
from .single import PolicyOpponent as PolicyOpponent
from .single import SingleAgentEnv as SingleAgentEnv
from .table import TERMINATIONS as TERMINATIONS
from .table import Termination as Termination
