"""``arena operator``: the referee's operator calls (``RefereeService``) from the command line.

``arena operator [--referee HOST:PORT] [--operator-token-file F] [--tls|--ca F] ACTION …`` with
the actions ``list``, ``show ID``, ``watch ID``, ``events``, ``cancel ID``, ``create``,
``replay ID`` and, on a hosted server's ``ArenaService``, ``bots add|list|disable|enable|suspend|remove|rotate-token``
(:mod:`arena.cli.bots_cmd`).
Tables and lines for people, ``--json`` for scripts (protobuf's JSON mapping, as grpcurl prints
it). A refused or failed call is one line naming why (no token, a token without operator
rights, an unknown match, an unreachable referee), exit status 1; a bad command line, 2.

The family grows by :data:`ACTIONS`: each action adds its parser and a function that gets the
connected :class:`Operator` (``arena operator bots …`` joins the same way).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

import referee
import referee.lowlevel
from arena.cli.bots_cmd import BOT_ACTIONS, add_action_options, bots_request, show_reply
from arena.cli.options import UsageError, address, check_client_tls_files, game_rules_from_args, tc_from_args
from arena.exit_codes import EXIT_FAILED, EXIT_OK
from arena.model.schedule import FAULT_POLICIES, PlayConfig
from gin_arena.v2 import arena_pb2_grpc, referee_pb2, referee_pb2_grpc
from referee import TLSConfigError
from referee.lowlevel import LIST_AFTER_KEY as LIST_AFTER
from referee.lowlevel import LIST_LEFT_OFF_KEY as LIST_LEFT_OFF
from referee.lowlevel import TokenFileError, client_operator_token, client_tls

REFEREE_ENV = "GIN_ARENA_REFEREE"
"""The environment variable that may name the referee (``HOST:PORT``) instead of ``--referee``."""
DEFAULT_REFEREE = "127.0.0.1:50051"
"""The referee ``arena operator`` calls by default (``arena serve``'s default address)."""
CALL_TIMEOUT_S = 10.0
"""How long one call (not ``watch``) may take by default, in seconds (``--timeout``)."""
STATE_NAMES = {v: k.removeprefix("MATCH_STATE_").lower()
               for k, v in referee_pb2.MatchState.items() if v != referee_pb2.MATCH_STATE_UNSPECIFIED}
"""A match's state as ``list --state`` and the tables write it (``waiting_for_players``, …)."""


class OperatorCallError(Exception):
    """A call the referee refused or could not take (exit 1); the text says why in one line."""


def _enum_name(field: Any, number: int) -> str:
    """An enum value without its type's prefix, lower case (``TERMINATION_NORMAL`` → ``normal``)."""
    value = field.enum_type.values_by_number.get(number)
    if value is None:
        return str(number)
    prefix = field.enum_type.name
    snake = "".join("_" + c if c.isupper() else c.upper() for c in prefix).lstrip("_") + "_"
    return str(value.name).removeprefix(snake).lower()


def _repeated(field: Any) -> bool:
    return bool(field.is_repeated)


def one_line(msg: Message, names: Sequence[str] = ()) -> str:
    """A message's set fields as ``key=value`` words (enums by their short name, seats by the
    player's name when ``names`` are known), nested messages in braces: any game's events."""
    words = []
    fields: list[tuple[Any, Any]] = list(msg.ListFields())
    seat = msg.DESCRIPTOR.fields_by_name.get("seat")
    if seat is not None and not _repeated(seat) and all(f.name != "seat" for f, _ in fields):
        fields.insert(0, (seat, 0))  # seat 0 is proto3's default, left out of ListFields
    for field, value in fields:
        if field.type == field.TYPE_MESSAGE:
            items = list(value) if _repeated(field) else [value]
            text = ", ".join("{" + one_line(v, names) + "}" for v in items)
        elif field.type == field.TYPE_ENUM:
            items = list(value) if _repeated(field) else [value]
            text = ",".join(_enum_name(field, v) for v in items)
        elif field.type == field.TYPE_BYTES:
            text = value.hex()
        elif _repeated(field):
            text = ",".join(map(str, value))
        else:
            text = str(value)
        if field.name in ("seat", "winner", "dealer") and isinstance(value, int) and 0 <= value < len(names):
            text = names[value]
        words.append(f"{field.name}={text}")
    return " ".join(words)


def as_json(msg: Message) -> str:
    """A message in protobuf's JSON mapping (lowerCamelCase names, as grpcurl prints it)."""
    return json.dumps(json_format.MessageToDict(msg), indent=2, ensure_ascii=False)


# ----------------------------------------------------------------------------------------------
# the connection
# ----------------------------------------------------------------------------------------------
WHY = {
    grpc.StatusCode.UNAUTHENTICATED: "the referee wants the operator token: give --operator-token-file FILE (the "
    "token file its server printed at start) or set $" + referee.lowlevel.OPERATOR_TOKEN_ENV,
    grpc.StatusCode.PERMISSION_DENIED: "this token carries no operator rights (a seat or bot token, or another "
    "referee's): use the operator token file of the server you call",
    grpc.StatusCode.UNAVAILABLE: "cannot reach the referee at {target}: is it running there (arena serve), and "
    "does it speak TLS (--tls, --ca FILE) or plaintext as you call it?",
    grpc.StatusCode.DEADLINE_EXCEEDED: "the referee at {target} gave no answer within {timeout:g} s (--timeout)",
}
"""What a failed call's status means, in words (others print the referee's own detail)."""


@dataclass(frozen=True, slots=True)
class Operator:
    """A connected operator: the referee's stub and what every call carries."""

    stub: referee_pb2_grpc.RefereeServiceStub
    """The operator service."""
    target: str
    """The referee's address, for messages."""
    metadata: tuple[tuple[str, str], ...]
    """The operator token (none: the call is sent without, e.g. a public watch)."""
    timeout: float
    """Seconds a unary call may take."""
    arena: arena_pb2_grpc.ArenaServiceStub
    """A hosted server's service of registered bots (``arena operator bots``)."""

    def failed(self, e: grpc.RpcError, what: str) -> OperatorCallError:
        """The one-line error of a failed call (``what``: the call, e.g. ``show m1``)."""
        code: grpc.StatusCode = e.code()
        detail = str(e.details() or "").strip()
        if code == grpc.StatusCode.NOT_FOUND:
            lister = "bots list shows its bots" if what.startswith("bots ") else "list shows its matches"
            return OperatorCallError(f"{what}: {detail or 'not found'} on the referee at {self.target} "
                                     f"(arena operator {lister})")
        if code == grpc.StatusCode.UNIMPLEMENTED and what.startswith("bots "):
            return OperatorCallError(f"{what}: the referee at {self.target} registers no bots (referee serve): "
                                     "call an arena serve")
        why = WHY.get(code, "").format(target=self.target, timeout=self.timeout)
        if code == grpc.StatusCode.UNAVAILABLE and detail:
            why += f" ({detail.splitlines()[0]})"
        return OperatorCallError(f"{what}: {why or f'the referee answered {code.name}: {detail}'}")

    def call(self, method: str, request: Message, what: str, extra: Sequence[tuple[str, str]] = (), *,
             stub: Any = None) -> Any:
        """A unary call (of ``stub``, default the referee's); its (response, call) pair
        (:class:`OperatorCallError` if it fails)."""
        try:
            return getattr(stub or self.stub, method).with_call(request, metadata=(*self.metadata, *extra),
                                                                timeout=self.timeout)
        except grpc.RpcError as e:
            raise self.failed(e, what) from None

    def stream(self, method: str, request: Message, what: str) -> Iterator[Any]:
        """A server stream's messages (no deadline: a match may run for hours)."""
        try:
            yield from getattr(self.stub, method)(request, metadata=self.metadata)
        except grpc.RpcError as e:
            raise self.failed(e, what) from None


def add_connection_options(p: argparse.ArgumentParser, *, top: bool) -> None:
    """``--referee``, the token, TLS, ``--timeout`` and ``--json``: on ``arena operator`` itself
    (``top``) and again on each action, so that they may stand before or after it."""
    default: Any = argparse.SUPPRESS if not top else None
    g = p.add_argument_group("the referee")
    g.add_argument("--referee", default=default, metavar="HOST:PORT",
                   help=f"the referee to call (default ${REFEREE_ENV} if set, else {DEFAULT_REFEREE})")
    g.add_argument("--operator-token-file", type=Path, default=default, metavar="FILE",
                   help=f"the server's operator token file (default ${referee.lowlevel.OPERATOR_TOKEN_ENV})")
    g.add_argument("--tls", action="store_true", default=default if not top else False,
                   help="call the referee over TLS (the system's root certificates)")
    g.add_argument("--ca", default=default if not top else "", metavar="FILE",
                   help="trust the CA certificates in FILE (implies --tls; e.g. arena certs' ca.pem)")
    g.add_argument("--tls-cert", default=default if not top else "", metavar="FILE",
                   help="mutual TLS: the client certificate to show (PEM; implies --tls)")
    g.add_argument("--tls-key", default=default if not top else "", metavar="FILE", help="its private key (PEM)")
    g.add_argument("--timeout", type=float, default=default if not top else CALL_TIMEOUT_S, metavar="S",
                   help=f"seconds a call may take (default {CALL_TIMEOUT_S:g}; watch: no limit)")
    g.add_argument("--json", action="store_true", default=default if not top else False,
                   help="print the referee's answer in protobuf's JSON mapping (watch: one event a line)")


def connect(args: argparse.Namespace) -> tuple[grpc.Channel, Operator]:
    """The channel and the operator of the command line (``UsageError`` for a bad option)."""
    target = address(args.referee or os.environ.get(REFEREE_ENV, "") or DEFAULT_REFEREE, "--referee")
    check_client_tls_files(args)
    if args.timeout <= 0:
        raise UsageError("--timeout must be more than 0 seconds")
    try:
        token = client_operator_token(args.operator_token_file)
        tls = client_tls(args.tls, args.ca, args.tls_cert, args.tls_key)
        channel = (grpc.secure_channel(target, tls.credentials()) if tls is not None
                   else grpc.insecure_channel(target))
    except (TokenFileError, TLSConfigError) as e:
        raise UsageError(str(e)) from None
    metadata = referee.lowlevel.operator_metadata(token) if token else ()
    return channel, Operator(referee_pb2_grpc.RefereeServiceStub(channel), target, metadata, args.timeout,
                             arena_pb2_grpc.ArenaServiceStub(channel))


# ----------------------------------------------------------------------------------------------
# the actions
# ----------------------------------------------------------------------------------------------
def _termination(result: Any) -> str:
    field = result.DESCRIPTOR.fields_by_name["termination"]
    return _enum_name(field, result.termination)


def result_text(status: referee_pb2.MatchStatus) -> str:
    """A match's result in a few words (empty while it plays)."""
    if not status.HasField("result"):
        return ""
    r = status.result
    names = list(status.player_names)
    who = names[r.winner] if 0 <= r.winner < len(names) else "no winner"
    return f"{who} ({_termination(r)})"


def status_table(matches: Sequence[referee_pb2.MatchStatus]) -> str:
    """Matches as a table: id, state, game.deal, players (``*`` connected), scores, games won,
    result."""
    head = ("MATCH", "STATE", "GAME.DEAL", "PLAYERS", "SCORES", "WON", "RESULT")
    rows = [head]
    for m in matches:
        players = " ".join(n + ("*" if i < len(m.connected) and m.connected[i] else "")
                           for i, n in enumerate(m.player_names))
        rows.append((m.match_id, STATE_NAMES.get(m.state, str(m.state)), f"{m.game_number}.{m.deal_number}",
                     players, "-".join(map(str, m.scores)), "-".join(map(str, m.games_won)), result_text(m)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def status_text(m: referee_pb2.MatchStatus) -> str:
    """One match, a line per fact."""
    lines = [f"match      {m.match_id}", f"state      {STATE_NAMES.get(m.state, str(m.state))}",
             f"game.deal  {m.game_number}.{m.deal_number}"]
    for seat, name in enumerate(m.player_names):
        on = "connected" if seat < len(m.connected) and m.connected[seat] else "not connected"
        score = m.scores[seat] if seat < len(m.scores) else 0
        won = m.games_won[seat] if seat < len(m.games_won) else 0
        lines.append(f"seat {seat}     {name}: {score} points, {won} game(s) won, {on}")
    if m.HasField("result"):
        lines.append(f"result     {result_text(m)}: {m.result.detail}")
    if m.replay_path:
        lines.append(f"replay     {m.replay_path} (on the referee's machine; arena operator replay {m.match_id})")
    return "\n".join(lines)


def _list(op: Operator, args: argparse.Namespace) -> int:
    state = 0
    if args.state:
        state = next(k for k, v in STATE_NAMES.items() if v == args.state)
    reply = referee_pb2.ListMatchesResponse()
    after: tuple[tuple[str, str], ...] = ()
    left = 0
    while True:  # page through the referee's replies (each under its list_bytes)
        want = args.limit - len(reply.matches) if args.limit else 0
        request = referee_pb2.ListMatchesRequest(state_filter=state, limit=want)  # type: ignore[arg-type]
        page, call = op.call("ListMatches", request,
                             "list", after)
        reply.matches.extend(page.matches)
        left = int(dict(call.trailing_metadata() or ()).get(LIST_LEFT_OFF, "0") or 0)
        done = not page.matches or (args.limit and len(reply.matches) >= args.limit)
        if left == 0 or done:
            break
        after = ((LIST_AFTER, page.matches[-1].match_id),)
    if args.json:
        print(as_json(reply))
    elif reply.matches:
        print(status_table(reply.matches))
    else:
        print("no matches" + (f" in state {args.state}" if args.state else ""))
    if left and not args.json:
        print(f"({left} more not listed: --limit N, 0 for all)", file=sys.stderr)
    return EXIT_OK


def _show(op: Operator, args: argparse.Namespace) -> int:
    reply, _ = op.call("GetMatch", referee_pb2.GetMatchRequest(match_id=args.match_id), f"show {args.match_id}")
    print(as_json(reply) if args.json else status_text(reply.match))
    return EXIT_OK


def event_text(event: referee_pb2.SpectatorEvent, names: Sequence[str]) -> str:
    """One spectator event as a line (any game: the event's fields as words)."""
    kind = event.WhichOneof("kind") or "event"
    body = getattr(event, kind) if event.WhichOneof("kind") else event
    if kind == "match_finished":
        r = event.match_finished
        who = names[r.winner] if 0 <= r.winner < len(names) else "no winner"
        return f"match_finished: {who} ({_termination(r)}): {r.detail}"
    return f"{kind}: {one_line(body, names)}"


def _watch(op: Operator, args: argparse.Namespace) -> int:
    names: list[str] = []
    status, _ = op.call("GetMatch", referee_pb2.GetMatchRequest(match_id=args.match_id), f"watch {args.match_id}")
    if status.match.state == referee_pb2.MATCH_STATE_WAITING_FOR_PLAYERS and not args.json:
        print(f"match {args.match_id} waits for its players ({' '.join(status.match.player_names)}); "
              "its events follow once they are seated", file=sys.stderr, flush=True)
    request = referee_pb2.WatchMatchRequest(match_id=args.match_id, from_start=args.from_start)
    for event in op.stream("WatchMatch", request, f"watch {args.match_id}"):
        if event.HasField("header"):
            names = list(event.header.player_names)
        if args.json:
            print(json.dumps(json_format.MessageToDict(event), ensure_ascii=False), flush=True)
        elif not event.HasField("turn") or args.turns:
            print(event_text(event, names), flush=True)
    return EXIT_OK


def match_event_text(event: referee_pb2.MatchEvent) -> str:
    """One ``WatchMatches`` message in a line: ``#SEQ started|finished MATCH (game; players)``,
    the result of a finished one; ``watching`` and ``lost`` say where the stream stands."""
    kind = event.WhichOneof("kind")
    if kind == "watching":
        how = "resumed after" if event.watching.resumed else "live after"
        return f"watching: referee instance {event.referee_instance}, {how} event {event.sequence}"
    if kind == "lost":
        return f"lost: {event.lost.reason}"
    if kind not in ("started", "finished"):
        return f"{kind}: {one_line(event)}"
    m: referee_pb2.MatchSummary = getattr(event, kind)
    line = f"#{event.sequence} {kind} {m.match_id} ({m.game_name}; {' '.join(m.player_names)})"
    if kind == "finished":
        names = list(m.player_names)
        who = names[m.result.winner] if 0 <= m.result.winner < len(names) else "no winner"
        line += f": {STATE_NAMES.get(m.state, str(m.state))}, {who} ({_termination(m.result)})"
        if m.result.detail:
            line += f": {m.result.detail}"
    return line


def _events(op: Operator, args: argparse.Namespace) -> int:
    request = referee_pb2.WatchMatchesRequest(game_names=args.game, after_sequence=args.after,
                                              referee_instance=args.instance)
    seen = 0
    while True:
        try:
            for event in op.stub.WatchMatches(request, metadata=op.metadata):
                print(json.dumps(json_format.MessageToDict(event), ensure_ascii=False) if args.json
                      else match_event_text(event), flush=True)
                if event.WhichOneof("kind") in ("started", "finished"):
                    request.after_sequence, request.referee_instance = event.sequence, event.referee_instance
                    seen += 1
                    if args.count and seen >= args.count:
                        return EXIT_OK
            return EXIT_OK  # the referee stopped
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.RESOURCE_EXHAUSTED or not request.after_sequence:
                raise op.failed(e, "events") from None
            # Dropped for reading too slowly: resume after the last event (or be told what was lost).
            print(f"events: {e.details()}; resuming after event {request.after_sequence}", file=sys.stderr, flush=True)


def _cancel(op: Operator, args: argparse.Namespace) -> int:
    request = referee_pb2.CancelMatchRequest(match_id=args.match_id, reason=args.reason)
    reply, _ = op.call("CancelMatch", request, f"cancel {args.match_id}")
    print(as_json(reply) if args.json else status_text(reply.match))
    return EXIT_OK


def create_request(args: argparse.Namespace) -> referee_pb2.CreateMatchRequest:
    """The ``CreateMatch`` request of ``arena operator create``'s options (checked here)."""
    if len(args.player) < 2:
        raise UsageError("create: give at least two --player NAME (one per seat, in seat order)")
    try:
        seed = bytes.fromhex(args.seed) if args.seed else None
    except ValueError:
        raise UsageError(f"--seed {args.seed!r}: expected hex digits") from None
    rules = game_rules_from_args(args.game, args.rules, args.rule)
    try:
        play = PlayConfig(game=args.game, rules=rules, time_control=tc_from_args(args.tc),
                          fault_policy=args.fault_policy, connect_timeout_ms=int(args.connect_timeout * 1000))
        spec = play.spec(args.player, seed=seed, match_id=args.match_id, seat_tokens=args.token)
    except ValueError as e:
        raise UsageError(f"create: {e}") from None
    return referee.lowlevel.create_match_request(spec)


def _create(op: Operator, args: argparse.Namespace) -> int:
    reply, _ = op.call("CreateMatch", create_request(args), "create")
    if args.json:
        print(as_json(reply))
        return EXIT_OK
    print(f"created match {reply.match_id} (seed commitment {reply.seed_commitment.hex()})")
    for t in reply.seat_tokens:
        print(f"seat {t.seat} {args.player[t.seat]}: --referee {op.target} --token {t.token}")
    print("Start a bot on each seat with its token (these tokens open the seats: keep them from others).")
    return EXIT_OK


def _replay(op: Operator, args: argparse.Namespace) -> int:
    reply, _ = op.call("GetReplay", referee_pb2.GetReplayRequest(match_id=args.match_id), f"replay {args.match_id}")
    out: Path = args.out or Path(f"{reply.match_id or args.match_id}.jsonl")
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise UsageError(f"replay: {out} exists; choose another --out") from None
    except OSError as e:
        raise UsageError(f"replay: cannot write {out}: {e.strerror or e}") from None
    with os.fdopen(fd, "wb") as f:
        f.write(reply.replay)
    if args.json:
        print(json.dumps({"matchId": reply.match_id, "replayHash": reply.replay_hash, "path": str(out)}))
    else:
        print(f"wrote {out} ({len(reply.replay)} bytes, final hash {reply.replay_hash}); check it with: "
              f"arena audit {out} --expect-hash {reply.replay_hash}")
    return EXIT_OK


def _bots(op: Operator, args: argparse.Namespace) -> int:
    method, request = bots_request(args)
    name = getattr(args, "name", "")
    reply, _ = op.call(method, request, f"bots {args.bots_action}" + (f" {name}" if name else ""), stub=op.arena)
    return show_reply(args, reply, op.target)


def _add_bots(p: argparse.ArgumentParser) -> None:
    actions = p.add_subparsers(dest="bots_action", required=True, metavar="ACTION")
    for name, text in BOT_ACTIONS.items():
        a = actions.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        add_action_options(a, name, json=False)
        add_connection_options(a, top=False)


def _add_list(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state", choices=sorted(STATE_NAMES.values()), default="", help="only matches in this state")
    p.add_argument("--limit", type=int, default=100, metavar="N", help="at most N matches, newest first "
                   "(default 100; 0: all)")


def _add_id(p: argparse.ArgumentParser) -> None:
    p.add_argument("match_id", metavar="MATCH_ID", help="the match (see arena operator list)")


def _add_watch(p: argparse.ArgumentParser) -> None:
    _add_id(p)
    p.add_argument("--from-start", action="store_true", help="replay the public events from the match's start first")
    p.add_argument("--turns", action="store_true", help="also print whose turn it is before each decision")


def _add_events(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", action="append", default=[], metavar="NAME",
                   help="only the matches of this game (repeatable; default every game)")
    p.add_argument("--count", type=int, default=0, metavar="N",
                   help="stop after N started/finished events (default 0: until the referee stops)")
    p.add_argument("--after", type=int, default=0, metavar="SEQ",
                   help="resume after this event (its #SEQ) of --instance; the referee says lost if it cannot")
    p.add_argument("--instance", default="", metavar="ID",
                   help="the referee instance --after's event came from (its 'watching' line says it)")


def _add_cancel(p: argparse.ArgumentParser) -> None:
    _add_id(p)
    p.add_argument("--reason", default="cancelled by the operator", help="why (recorded in the result's detail)")


def _add_create(p: argparse.ArgumentParser) -> None:
    p.add_argument("--player", action="append", default=[], metavar="NAME", required=True,
                   help="a seat's player, in seat order (repeatable; at least two)")
    p.add_argument("--token", action="append", default=[], metavar="TOKEN",
                   help="the seats' tokens, in seat order (default: the referee makes them)")
    p.add_argument("--game", default=referee.DEFAULT_GAME, metavar="NAME",
                   help=f"the game (default {referee.DEFAULT_GAME})")
    p.add_argument("--rules", default="", metavar="PRESET", help="the game's rules preset (default: the game's own)")
    p.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="override one option of the game's rules, e.g. --rule target=50 (repeatable)")
    p.add_argument("--tc", default="st=10", metavar="TC", help='time control (default "st=10")')
    p.add_argument("--fault-policy", choices=FAULT_POLICIES, default="forfeit")
    p.add_argument("--seed", default="", metavar="HEX", help="a fixed secret seed (default: the referee draws one)")
    p.add_argument("--match-id", default="", metavar="ID", help="the match's id (default: the referee makes one)")
    p.add_argument("--connect-timeout", type=float, default=600.0, metavar="S",
                   help="seconds the match waits for its bots (default 600)")


def _add_replay(p: argparse.ArgumentParser) -> None:
    _add_id(p)
    p.add_argument("-o", "--out", type=Path, default=None, metavar="FILE", help="where (default MATCH_ID.jsonl)")


ACTIONS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[Operator, argparse.Namespace], int]]]
ACTIONS = {
    "list": ("the referee's matches, newest first (a table)", _add_list, _list),
    "show": ("one match's status", _add_id, _show),
    "watch": ("follow a match's public events as they happen (ends with the match)", _add_watch, _watch),
    "events": ("follow the referee's matches as they start and finish (WatchMatches)", _add_events, _events),
    "cancel": ("stop a match (it ends aborted, a no-result)", _add_cancel, _cancel),
    "create": ("create a match and print its seat tokens", _add_create, _create),
    "replay": ("fetch a finished match's replay file", _add_replay, _replay),
    "bots": ("a hosted server's registered bots: add, list, disable, enable, suspend, remove, rotate-token",
             _add_bots, _bots),
}
"""Each action: its help, what it adds to its parser, and what it does with the operator."""


def add_parser(sub: Any) -> None:
    """Add ``operator`` to the ``arena`` command's subparsers."""
    p = sub.add_parser(
        "operator",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="operator calls on a referee: list, show, watch, cancel, create matches, fetch replays",
        description="Call a referee's operator service (arena serve, referee serve) with its operator token.\n"
        "Exit status: 0 done, 1 the call was refused or failed (one line says why), 2 a bad command line.",
        epilog="Examples:\n"
        "  arena operator --operator-token-file runs/serve/operator-token list\n"
        "  arena operator --referee host:50051 --ca certs/ca.pem --operator-token-file tok show MATCH_ID\n"
        "  arena operator watch MATCH_ID --from-start\n"
        "  arena operator events --count 10\n"
        "  arena operator cancel MATCH_ID --reason 'bot misbehaves'\n"
        "  arena operator create --player alice --player bob --rules short --tc st=1\n"
        "  arena operator list --json | jq '.matches[].matchId'\n"
        "  arena operator --referee host:50051 --ca certs/ca.pem bots add alice > alice.token\n"
        "  arena operator bots list\n",
    )
    add_connection_options(p, top=True)
    actions = p.add_subparsers(dest="operator_action", required=True, metavar="ACTION")
    for name, (text, add, _) in ACTIONS.items():
        a = actions.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        add(a)
        add_connection_options(a, top=False)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """``arena operator ACTION``."""
    channel, op = connect(args)
    try:
        return ACTIONS[args.operator_action][2](op, args)
    except OperatorCallError as e:
        print(f"arena operator {e}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        channel.close()
