"""The Gin Arena referee: runs matches between bots over gRPC and owns the truth.

This module names the referee's public API once: the names below (``__all__``), and beside them
the public modules ``referee.games`` (the game seam and its registry), ``referee.conformance``
(the checks a game plugin passes), ``referee.replays`` (typed replays), ``referee.cli`` (the
``referee`` command and the options ``arena serve`` shares), the pure games ``referee.gin`` and
``referee.rummy`` and their shared core ``referee.cardcore``. The arena imports nothing else
of the referee (tests/test_structure.py checks it).

The rest is the plumbing, which names no game, grouped by job into subpackages whose arrows point
down: ``play`` (one call per match, bot processes, hosts) → ``transport`` (the gRPC service and
server, auth, TLS, the runtime) → ``table`` (the match flow, seats, clocks, faults, recording,
journals, digests, spectators, the re-simulation) → ``wire`` (protobuf conversion: the envelope
and one module per game) → ``model`` (the values: match spec and report, time controls, limits,
the replay's records). Their modules are reachable for the referee's own unit tests and the
benches; nothing outside the referee imports a ``referee._…`` name.

The names below are loaded lazily so that ``import referee.gin`` stays free of grpc, trio and
structlog.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model.events import MatchEvent as MatchEvent
    from .model.events import MatchEventsDropped as MatchEventsDropped
    from .model.limits import LimitExceeded as LimitExceeded
    from .model.limits import Limits as Limits
    from .model.presence import BotDirectory as BotDirectory
    from .model.presence import BotPresence as BotPresence
    from .model.replay import write_atomic as write_atomic
    from .model.spec import DEFAULT_GAME as DEFAULT_GAME
    from .model.spec import TERMINATIONS as TERMINATIONS
    from .model.spec import FaultPolicy as FaultPolicy
    from .model.spec import MatchReport as MatchReport
    from .model.spec import MatchSpec as MatchSpec
    from .model.spec import Termination as Termination
    from .model.timecontrol import TimeControl as TimeControl
    from .model.timecontrol import TimeControlError as TimeControlError
    from .play.launch import RESTART_HELP as RESTART_HELP
    from .play.launch import BotLaunch as BotLaunch
    from .play.launch import ProcessLimits as ProcessLimits
    from .play.launch import restart_after as restart_after
    from .play.matches import SEAT_CLOCKS as SEAT_CLOCKS
    from .play.matches import MatchContext as MatchContext
    from .play.matches import MatchObserver as MatchObserver
    from .play.matches import PlayedMatch as PlayedMatch
    from .play.matches import open_match_context as open_match_context
    from .play.matches import play_match as play_match
    from .play.matches import play_match_async as play_match_async
    from .play.pool import MAX_CRASHES as MAX_CRASHES
    from .play.pool import BotFailed as BotFailed
    from .play.pool import BotPool as BotPool
    from .play.spawn import run_bot as run_bot
    from .replays import Replay as Replay
    from .replays import ReplayFormatError as ReplayFormatError
    from .replays import ReplayVisitor as ReplayVisitor
    from .replays import read_replay as read_replay
    from .table.events import MatchEvents as MatchEvents
    from .table.faults import GOODBYE as GOODBYE
    from .table.faults import is_goodbye as is_goodbye
    from .table.finished import FinishedMatch as FinishedMatch
    from .table.finished import HeldMatch as HeldMatch
    from .table.flow import Table as Table
    from .table.resim import ReplayError as ReplayError
    from .table.resim import Resimulation as Resimulation
    from .table.resim import resimulate as resimulate
    from .transport.auth import DEFAULT_TOKEN_FILE as DEFAULT_TOKEN_FILE
    from .transport.auth import OPERATOR_TOKEN_ENV as OPERATOR_TOKEN_ENV
    from .transport.auth import TokenFileError as TokenFileError
    from .transport.auth import client_operator_token as client_operator_token
    from .transport.auth import operator_metadata as operator_metadata
    from .transport.auth import resolve_operator_token as resolve_operator_token
    from .transport.logs import configure_logging as configure_logging
    from .transport.runtime import aio as aio
    from .transport.runtime import run as run
    from .transport.server import Referee as Referee
    from .transport.server import open_referee as open_referee
    from .transport.server import serve_referee as serve_referee
    from .transport.server import tune_gc_for_server as tune_gc_for_server
    from .transport.service import LIST_AFTER_KEY as LIST_AFTER_KEY
    from .transport.service import LIST_LEFT_OFF_KEY as LIST_LEFT_OFF_KEY
    from .transport.tls import ClientConfigError as ClientConfigError
    from .transport.tls import ClientTLS as ClientTLS
    from .transport.tls import ListenError as ListenError
    from .transport.tls import ServerTLS as ServerTLS
    from .transport.tls import TLSConfigError as TLSConfigError
    from .transport.tls import add_server_tls_options as add_server_tls_options
    from .transport.tls import check_can_listen as check_can_listen
    from .transport.tls import client_tls as client_tls
    from .transport.tls import server_tls_from_args as server_tls_from_args
    from .wire.envelope import FAULT_POLICY_FROM_PB as FAULT_POLICY_FROM_PB
    from .wire.envelope import FAULT_POLICY_TO_PB as FAULT_POLICY_TO_PB
    from .wire.envelope import create_match_request as create_match_request
    from .wire.envelope import match_report_from_proto as match_report_from_proto

    ENCODERS_COMPILED: bool
    """Whether the byte encoders run compiled by mypyc (``referee.wire.envelope.COMPILED``)."""

_LAZY = {
    "MatchEvent": "model.events", "MatchEventsDropped": "model.events",
    "LimitExceeded": "model.limits", "Limits": "model.limits",
    "BotDirectory": "model.presence", "BotPresence": "model.presence",
    "write_atomic": "model.replay",
    "DEFAULT_GAME": "model.spec", "FaultPolicy": "model.spec", "MatchReport": "model.spec", "MatchSpec": "model.spec",
    "TERMINATIONS": "model.spec", "Termination": "model.spec",
    "TimeControl": "model.timecontrol", "TimeControlError": "model.timecontrol",
    "BotLaunch": "play.launch", "ProcessLimits": "play.launch", "RESTART_HELP": "play.launch",
    "restart_after": "play.launch",
    "MatchContext": "play.matches", "MatchObserver": "play.matches", "SEAT_CLOCKS": "play.matches",
    "PlayedMatch": "play.matches",
    "open_match_context": "play.matches", "play_match": "play.matches", "play_match_async": "play.matches",
    "BotFailed": "play.pool", "BotPool": "play.pool", "MAX_CRASHES": "play.pool", "run_bot": "play.spawn",
    "Replay": "replays", "ReplayFormatError": "replays", "ReplayVisitor": "replays", "read_replay": "replays",
    "MatchEvents": "table.events", "GOODBYE": "table.faults", "is_goodbye": "table.faults",
    "FinishedMatch": "table.finished", "HeldMatch": "table.finished",
    "Table": "table.flow",
    "ReplayError": "table.resim", "Resimulation": "table.resim", "resimulate": "table.resim",
    "DEFAULT_TOKEN_FILE": "transport.auth", "OPERATOR_TOKEN_ENV": "transport.auth",
    "TokenFileError": "transport.auth", "client_operator_token": "transport.auth",
    "operator_metadata": "transport.auth", "resolve_operator_token": "transport.auth",
    "configure_logging": "transport.logs",
    "aio": "transport.runtime", "run": "transport.runtime",
    "Referee": "transport.server", "open_referee": "transport.server", "serve_referee": "transport.server",
    "tune_gc_for_server": "transport.server",
    "LIST_AFTER_KEY": "transport.service", "LIST_LEFT_OFF_KEY": "transport.service",
    "ClientConfigError": "transport.tls", "ClientTLS": "transport.tls", "ListenError": "transport.tls",
    "ServerTLS": "transport.tls",
    "TLSConfigError": "transport.tls", "add_server_tls_options": "transport.tls", "check_can_listen": "transport.tls",
    "client_tls": "transport.tls", "server_tls_from_args": "transport.tls",
    "ENCODERS_COMPILED": "wire.envelope:COMPILED", "FAULT_POLICY_FROM_PB": "wire.envelope",
    "FAULT_POLICY_TO_PB": "wire.envelope", "create_match_request": "wire.envelope",
    "match_report_from_proto": "wire.envelope",
}
"""Each public name: the module that defines it (``module:attribute`` where the name differs)."""
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'referee' has no attribute {name!r}")
    module, _, attribute = module.partition(":")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attribute or name)
    globals()[name] = value
    return value
