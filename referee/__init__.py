"""The Gin Arena referee: runs matches between bots over gRPC and owns the truth.

The referee's public surface has two layers, the way trio's has ``trio`` and ``trio.lowlevel``
(docs/referee-api.md lists both and says what each name is for):

- **``referee``**, the stable layer: what a game author, a bot author or the arena relies on. The
  names below (``__all__``: a match's spec, report and time control, playing a match, the
  referee's gRPC server and its TLS, replays and their re-simulation, the runtime every gRPC
  user runs inside) and the public modules ``referee.games`` (the game seam and its registry),
  ``referee.conformance`` (the checks a game plugin passes), ``referee.replays`` (typed replays),
  ``referee.cardcore.present`` (the words and helpers a game's presentation uses) and the pure
  games ``referee.gin`` and ``referee.rummy`` (a bot author's helpers).
- **``referee.lowlevel``**, the plumbing the arena shares with the referee: command-line option
  helpers, the operator token, GC tuning, logging set-up, the protobuf enum maps, the people's
  table's match flow, atomic writes. It may change with the arena that uses it.

``referee.cli`` is the ``referee`` command. The arena imports nothing of the referee but these
(tests/test_structure.py checks it; tests/test_referee_exports.py pins both lists of names).

The rest is the plumbing behind them, which names no game, grouped by job into subpackages whose
arrows point down: ``play`` (one call per match, bot processes, hosts) → ``transport`` (the gRPC
service and server, auth, TLS, the runtime) → ``table`` (the match flow, seats, clocks, faults,
recording, journals, digests, spectators, the re-simulation) → ``wire`` (protobuf conversion: the
envelope and one module per game) → ``model`` (the values: match spec and report, time controls,
limits, the replay's records). Their modules are reachable for the referee's own unit tests and
the benches; nothing outside the referee imports a ``referee._…`` name.

The names below are loaded lazily so that ``import referee`` and ``import referee.gin`` stay free
of grpc, trio and structlog.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model.events import MatchEvent as MatchEvent
    from .model.events import MatchEventsDropped as MatchEventsDropped
    from .model.limits import LimitExceeded as LimitExceeded
    from .model.limits import Limits as Limits
    from .model.spec import DEFAULT_GAME as DEFAULT_GAME
    from .model.spec import TERMINATIONS as TERMINATIONS
    from .model.spec import FaultPolicy as FaultPolicy
    from .model.spec import MatchReport as MatchReport
    from .model.spec import MatchSpec as MatchSpec
    from .model.spec import Termination as Termination
    from .model.timecontrol import TimeControl as TimeControl
    from .model.timecontrol import TimeControlError as TimeControlError
    from .play.launch import BotLaunch as BotLaunch
    from .play.launch import ProcessLimits as ProcessLimits
    from .play.matches import SEAT_CLOCKS as SEAT_CLOCKS
    from .play.matches import MatchContext as MatchContext
    from .play.matches import MatchObserver as MatchObserver
    from .play.matches import PlayedMatch as PlayedMatch
    from .play.matches import open_match_context as open_match_context
    from .play.matches import play_match as play_match
    from .play.matches import play_match_async as play_match_async
    from .play.pool import BotFailed as BotFailed
    from .play.spawn import run_bot as run_bot
    from .replays import Replay as Replay
    from .replays import ReplayFormatError as ReplayFormatError
    from .replays import ReplayVisitor as ReplayVisitor
    from .replays import read_replay as read_replay
    from .table.resim import ReplayError as ReplayError
    from .table.resim import Resimulation as Resimulation
    from .table.resim import resimulate as resimulate
    from .transport.runtime import aio as aio
    from .transport.runtime import run as run
    from .transport.server import Referee as Referee
    from .transport.server import open_referee as open_referee
    from .transport.server import serve_referee as serve_referee
    from .transport.tls import ClientConfigError as ClientConfigError
    from .transport.tls import ClientTLS as ClientTLS
    from .transport.tls import ListenError as ListenError
    from .transport.tls import ServerTLS as ServerTLS
    from .transport.tls import TLSConfigError as TLSConfigError

_LAZY = {
    "MatchEvent": "model.events", "MatchEventsDropped": "model.events",
    "LimitExceeded": "model.limits", "Limits": "model.limits",
    "DEFAULT_GAME": "model.spec", "FaultPolicy": "model.spec", "MatchReport": "model.spec", "MatchSpec": "model.spec",
    "TERMINATIONS": "model.spec", "Termination": "model.spec",
    "TimeControl": "model.timecontrol", "TimeControlError": "model.timecontrol",
    "BotLaunch": "play.launch", "ProcessLimits": "play.launch",
    "MatchContext": "play.matches", "MatchObserver": "play.matches", "PlayedMatch": "play.matches",
    "SEAT_CLOCKS": "play.matches", "open_match_context": "play.matches", "play_match": "play.matches",
    "play_match_async": "play.matches",
    "BotFailed": "play.pool", "run_bot": "play.spawn",
    "Replay": "replays", "ReplayFormatError": "replays", "ReplayVisitor": "replays", "read_replay": "replays",
    "ReplayError": "table.resim", "Resimulation": "table.resim", "resimulate": "table.resim",
    "aio": "transport.runtime", "run": "transport.runtime",
    "Referee": "transport.server", "open_referee": "transport.server", "serve_referee": "transport.server",
    "ClientConfigError": "transport.tls", "ClientTLS": "transport.tls", "ListenError": "transport.tls",
    "ServerTLS": "transport.tls", "TLSConfigError": "transport.tls",
}
"""Each public name: the module that defines it."""
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'referee' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
