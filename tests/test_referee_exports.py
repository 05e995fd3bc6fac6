"""The referee's public surface, pinned: the names of its two layers (``referee``, the stable
one; ``referee.lowlevel``, the plumbing the arena shares), each with a docstring where it is
defined. A change to either list is a deliberate edit here and in docs/referee-api.md."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

STABLE = frozenset({
    # a match: what to play, how it ended, its clocks and limits
    "DEFAULT_GAME", "MatchSpec", "MatchReport", "Termination", "TERMINATIONS", "FaultPolicy",
    "TimeControl", "TimeControlError", "Limits", "LimitExceeded",
    # playing matches: the bots, one call per match, many in one context, what happens meanwhile
    "BotLaunch", "ProcessLimits", "BotFailed", "run_bot", "PlayedMatch", "play_match", "play_match_async",
    "MatchContext", "open_match_context", "SEAT_CLOCKS", "MatchObserver", "MatchEvent", "MatchEventsDropped",
    # the referee's gRPC server and its TLS
    "Referee", "open_referee", "serve_referee", "ServerTLS", "ClientTLS", "TLSConfigError",
    "ClientConfigError", "ListenError",
    # replays and their re-simulation
    "Replay", "ReplayFormatError", "ReplayVisitor", "read_replay", "ReplayError", "Resimulation", "resimulate",
    # the runtime every gRPC user runs inside
    "run", "aio",
})
"""``referee.__all__``: what a game author, a bot author or the arena relies on."""

LOWLEVEL = frozenset({
    # command-line options the arena's commands share with ``referee serve``
    "add_limit_option", "add_operator_options", "add_server_tls_options", "server_tls_from_args",
    "check_can_listen", "RESTART_HELP", "restart_after",
    # the operator token
    "DEFAULT_TOKEN_FILE", "OPERATOR_TOKEN_ENV", "TokenFileError", "client_operator_token",
    "operator_metadata", "resolve_operator_token", "client_tls",
    # a server process: GC, logs, list paging
    "tune_gc_for_server", "configure_logging", "LIST_AFTER_KEY", "LIST_LEFT_OFF_KEY",
    # protobuf conversion of the envelope
    "ENCODERS_COMPILED", "FAULT_POLICY_FROM_PB", "FAULT_POLICY_TO_PB", "create_match_request",
    "match_report_from_proto",
    # the tables the referee holds, driven seat by seat (the people's tables), and what they say
    "Table", "HeldMatch", "FinishedMatch", "MatchEvents", "GOODBYE", "is_goodbye",
    # hosted bots and bot processes
    "BotDirectory", "BotPresence", "BotPool", "MAX_CRASHES",
    # files
    "write_atomic",
})
"""``referee.lowlevel.__all__``: the plumbing the arena shares with the referee."""

LAYERS = {"referee": STABLE, "referee.lowlevel": LOWLEVEL}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_each_layer_exports_exactly_its_pinned_names(layer: str) -> None:
    exported = set(importlib.import_module(layer).__all__)
    pinned = LAYERS[layer]
    assert exported == pinned, (f"{layer}: added {sorted(exported - pinned)}, removed {sorted(pinned - exported)} "
                                "(a change to the surface is deliberate: edit this test and docs/referee-api.md)")


def test_the_two_layers_share_no_name() -> None:
    assert not STABLE & LOWLEVEL


def _where(layer: str, name: str) -> tuple[Path, ast.Module, str]:
    """The source file that defines ``name`` of ``layer``, its tree and its name there (following
    a module's ``from .x import name``: ``referee.replays`` re-exports the replay's records)."""
    table: dict[str, str] = importlib.import_module(layer)._LAZY
    module, _, defined = table[name].partition(":")
    found = importlib.import_module(f"referee.{module}")
    defined = defined or name
    while True:
        assert found.__file__ is not None
        path = Path(found.__file__)
        tree = ast.parse(path.read_text())
        source = next((node for node in tree.body if isinstance(node, ast.ImportFrom) and node.level
                       and any((a.asname or a.name) == defined for a in node.names)), None)
        if source is None:
            return path, tree, defined
        defined = next(a.name for a in source.names if (a.asname or a.name) == defined)
        found = importlib.import_module("." * source.level + (source.module or ""), found.__package__)


def docstring_of(tree: ast.Module, name: str) -> str | None:
    """The docstring of a top-level ``def``/``class`` called ``name``, or the string literal right
    after a top-level assignment to it (an attribute docstring); ``None`` if it has none."""
    body = tree.body
    for i, node in enumerate(body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return ast.get_docstring(node)
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            after = body[i + 1] if i + 1 < len(body) else None
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) and isinstance(
                    after.value.value, str):
                return after.value.value
            return None
    return None


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_every_exported_name_has_a_docstring_where_it_is_defined(layer: str) -> None:
    missing = []
    for name in sorted(LAYERS[layer]):
        path, tree, defined = _where(layer, name)
        doc = docstring_of(tree, defined)
        if not (doc and doc.strip()):
            missing.append(f"{layer}.{name} ({path.relative_to(ROOT)}: {defined})")
    assert not missing, "exported without a docstring:\n  " + "\n  ".join(missing)


def test_the_docstring_finder_sees_a_missing_one() -> None:
    tree = ast.parse('A = 1\n"""A doc."""\nB = 2\nC: int = 3\n"""C doc."""\n'
                     'def f() -> None:\n    pass\nclass K:\n    """K doc."""\n')
    assert [docstring_of(tree, n) for n in ("A", "B", "C", "f", "K", "Nope")] == [
        "A doc.", None, "C doc.", None, "K doc.", None]


def test_the_api_page_names_every_exported_name_in_its_layer() -> None:
    page = (ROOT / "docs" / "referee-api.md").read_text()
    sections = dict(re.findall(r"^## `(referee(?:\.lowlevel)?)`.*?\n(.*?)(?=^## |\Z)", page, re.M | re.S))
    for layer, names in LAYERS.items():
        listed = set(re.findall(r"^\| `([A-Za-z_]+)`", sections.get(layer, ""), re.M))
        assert listed == names, f"docs/referee-api.md, {layer}: missing {sorted(names - listed)}, " \
                                f"extra {sorted(listed - names)}"


def test_importing_both_layers_stays_cheap() -> None:
    code = ("import sys, referee, referee.lowlevel\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('trio', 'grpc', 'structlog'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "", f"import referee pulled in: {out.stdout.strip()}"
