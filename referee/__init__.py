"""The Gin Arena referee: runs matches between bots over gRPC and owns the truth.

``referee.gin`` is the pure Gin engine, reached through the game seam ``referee.games``; the
rest of this package is the plumbing, which names no game: matches, seats, clocks, faults,
replays and the gRPC service. The names below are loaded lazily so that
``import referee.gin`` stays free of grpc, trio and structlog.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._auth import OPERATOR_TOKEN_ENV as OPERATOR_TOKEN_ENV
    from ._auth import operator_metadata as operator_metadata
    from ._launch import RESTART_HELP as RESTART_HELP
    from ._launch import BotLaunch as BotLaunch
    from ._launch import ProcessLimits as ProcessLimits
    from ._launch import restart_after as restart_after
    from ._limits import Limits as Limits
    from ._play import MatchContext as MatchContext
    from ._play import MatchObserver as MatchObserver
    from ._play import PlayedMatch as PlayedMatch
    from ._play import open_match_context as open_match_context
    from ._play import play_match as play_match
    from ._play import play_match_async as play_match_async
    from ._pool import MAX_CRASHES as MAX_CRASHES
    from ._pool import BotFailed as BotFailed
    from ._pool import BotPool as BotPool
    from ._replay import write_atomic as write_atomic
    from ._runtime import aio as aio
    from ._runtime import run as run
    from ._server import Referee as Referee
    from ._server import open_referee as open_referee
    from ._server import serve_referee as serve_referee
    from ._server import tune_gc_for_server as tune_gc_for_server
    from ._spec import DEFAULT_GAME as DEFAULT_GAME
    from ._spec import TERMINATIONS as TERMINATIONS
    from ._spec import FaultPolicy as FaultPolicy
    from ._spec import MatchReport as MatchReport
    from ._spec import MatchSpec as MatchSpec
    from ._spec import Termination as Termination
    from ._table import Table as Table
    from ._timecontrol import TimeControl as TimeControl
    from ._timecontrol import TimeControlError as TimeControlError
    from ._tls import ClientTLS as ClientTLS
    from ._tls import ListenError as ListenError
    from ._tls import ServerTLS as ServerTLS
    from ._wire import FAULT_POLICY_FROM_PB as FAULT_POLICY_FROM_PB
    from ._wire import FAULT_POLICY_TO_PB as FAULT_POLICY_TO_PB
    from ._wire import create_match_request as create_match_request
    from ._wire import match_report_from_proto as match_report_from_proto
    from .replays import Replay as Replay
    from .replays import ReplayFormatError as ReplayFormatError
    from .replays import ReplayVisitor as ReplayVisitor
    from .replays import read_replay as read_replay

_LAZY = {
    "OPERATOR_TOKEN_ENV": "_auth", "operator_metadata": "_auth",
    "ClientTLS": "_tls", "ListenError": "_tls", "ServerTLS": "_tls", "Limits": "_limits",
    "aio": "_runtime", "run": "_runtime",
    "Referee": "_server", "open_referee": "_server", "serve_referee": "_server", "tune_gc_for_server": "_server",
    "BotLaunch": "_launch", "ProcessLimits": "_launch", "restart_after": "_launch", "RESTART_HELP": "_launch",
    "BotFailed": "_pool", "BotPool": "_pool",
    "MAX_CRASHES": "_pool", "MatchContext": "_play", "MatchObserver": "_play", "PlayedMatch": "_play",
    "open_match_context": "_play", "play_match": "_play", "play_match_async": "_play",
    "DEFAULT_GAME": "_spec", "TERMINATIONS": "_spec", "FaultPolicy": "_spec", "MatchReport": "_spec",
    "MatchSpec": "_spec",
    "Termination": "_spec", "Table": "_table", "TimeControl": "_timecontrol", "TimeControlError": "_timecontrol",
    "create_match_request": "_wire", "FAULT_POLICY_TO_PB": "_wire", "FAULT_POLICY_FROM_PB": "_wire",
    "match_report_from_proto": "_wire",
    "write_atomic": "_replay",
    "Replay": "replays", "ReplayFormatError": "replays", "ReplayVisitor": "replays", "read_replay": "replays",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'referee' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
