"""The stdio bridge: play a program that speaks JSON lines on stdin/stdout.

For programs written where no gRPC library is at hand. The bridge connects to the referee as
an ordinary gRPC bot (same options as every kit bot), starts the program, and talks to it
with one JSON object per line::

    python -m sample_bots.stdio_bridge --referee HOST:PORT --token T [--name N] -- <command...>
    python -m sample_bots.stdio_bridge --token T -- node sample_bots/stdio/bot.js

The stdio protocol (version 1)
------------------------------
Bridge → program (stdin). Every line is a JSON object with a ``type``:

``request`` — the program must answer with exactly one line::

    {"type": "request", "match_id": "m-1", "request_id": 7, "time_ms": 950,
     "legal": ["draw_stock", "draw_discard"],
     "clocks": [{"seat": 0, "remaining_ms": 59000, "running": true}, ...],
     "state": {...}}

``state`` is the seat's complete information state (it is enough to decide; the program
may be stateless): ``seat``, ``num_seats``, ``dealer``, ``to_move``, ``phase``
(``upcard_offer`` | ``draw`` | ``discard`` | ``over``), ``hand``, ``my_melds`` (list of
card lists), ``my_deadwood_cards``, ``my_deadwood``, ``discard_pile`` (bottom first; the
last card is the top), ``stock_size``, ``hand_sizes``, ``known_cards`` (by seat: cards
taken from the discard pile and still held), ``first_upcard``, ``knock_limit`` (-1 = gin
only), ``forbidden_discard`` (card or null), ``upcard_passes``, ``events`` (the deal so far:
``{"seat": 1, "kind": "discard", "card": "Ts", "stock_size": 20}``; ``card`` is null for
the opponent's stock draws and knock; ``{"kind": "reshuffle", ...}`` when the pile became the
stock), ``game_number``, ``deal_number``, ``scores``, ``deals_won``, ``match_scores``,
``spade_double``, ``reshuffled``.

Notifications — no answer:
``{"type": "match_started", "match_id", "seat", "player_names", "rules": {...},
"time_control": "..."}``, ``{"type": "deal_started", "match_id", "game_number",
"deal_number", "dealer", "state": {...}}``, ``{"type": "action_rejected", "match_id",
"request_id", "action", "reason"}``, ``{"type": "deal_finished", "match_id", "result": {...}}``,
``{"type": "game_finished", "match_id", "result": {...}}``, ``{"type": "match_finished",
"match_id", "result": {...}}``. ``rules`` and ``result`` carry the protobuf messages' fields
by name (enums by name, bytes in hex). A program must ignore types and fields it does not
know: more may come.

Rummy (a match whose game is ``rummy``, 2–6 seats; start the bridge with ``--games rummy``,
or ``--games gin,rummy``, or set ``GIN_GAMES``): ``match_started`` says ``"game": "rummy"`` and its ``rules`` are the
``RummyRuleSet`` fields (``ace``, ``discard_draw``, ``stop``, ``rummy_doubles``,
``out_needs_discard``, ``scoring``, ``face_values``, ``next_dealer``, ``stock_exhausted``,
``target``, …). A request line carries ``"game": "rummy"``, rummy action texts in ``legal``
(``draw_stock``, ``take_discard 7h``, ``meld 5s 6s 7s``, ``lay_off 8s 0 high``, ``discard Kd``,
``call_stop``, ``decline_stop``) and a rummy ``state``: ``seat``, ``num_seats``, ``dealer``,
``turn``, ``to_move`` (-1 when over), ``phase`` (``draw`` | ``play`` | ``stop`` | ``lay_back``
| ``over``), ``hand``, ``hand_sizes``, ``stock_size``, ``discard_pile`` (bottom first),
``table`` (``{"number", "owner", "kind": "set"|"run", "cards", "placed": [{"card", "seat",
"end", "layoff"}]}``), ``must_use`` and ``stopped`` (card or null), ``events`` (``{"seat",
"kind", "card", "cards", "meld", "end"}`` as the kind has them; ``card`` null for another
seat's stock draw; ``{"kind": "reshuffle", "card": upcard, "number"}``), ``scores``,
``game_number``, ``deal_number``, ``match_points``, ``reshuffles``. ``deal_finished`` and
``game_finished`` results carry their ``rummy`` part. Answer with a rummy action text.

Program → bridge (stdout): one line per request: ``{"action": "discard Ts"}``. The action
text is ``pass``, ``take_upcard``, ``draw_stock``, ``draw_discard``, ``discard <card>``,
``knock <card>`` or ``big_gin``; it should be one of ``legal``. An optional
``"request_id"`` must then match the request's. Blank lines are skipped. The program's
stderr passes through to the bridge's stderr (use it for logs; never log to stdout).

Faults: an answer that is not JSON, not an object, without an ``action`` string, or whose
action text cannot be parsed — or the program closing stdout or exiting — is reported on
stderr (what was expected, what came, and the line); the bridge resigns the match with that
reason (the referee records a ``bot_error`` fault whose detail says it and applies its fault
policy) and ends the session with exit code 1. With ``--on-error fallback`` an unreadable
answer is replaced by the first legal action instead, marked as a fallback for the referee to
count; a program that exits still ends the session. An action that parses but is not legal is passed
on: the referee judges it. The program is stopped (stdin closed, then terminated) when the
session ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import subprocess
import sys
import time
from typing import Any

from gin_arena.v1 import bot_pb2, game_pb2

from .kit import Bot, BotCodeError, BotConfig, SessionResult, make_parser, parse_config
from .kit import rummy as kr
from .kit.actions import KIND_NAMES, action_text, legal_texts, parse_action
from .kit.session import EXIT_FAILED, open_session, run_until_signal, setup_logging

log = logging.getLogger("gin_bot.stdio")

PROTOCOL = 1
"""The stdio protocol's version."""

_PHASES = {
    game_pb2.PHASE_UPCARD_OFFER: "upcard_offer",
    game_pb2.PHASE_DRAW: "draw",
    game_pb2.PHASE_DISCARD: "discard",
    game_pb2.PHASE_OVER: "over",
}


# ----- JSON encoding -----
def message_json(msg: Any) -> dict[str, Any]:
    """A protobuf message as a JSON-ready dict: every field by name, enums by name, bytes in hex."""
    out: dict[str, Any] = {}
    for field in msg.DESCRIPTOR.fields:
        out[field.name] = _field_json(field, getattr(msg, field.name))
    return out


def _field_json(field: Any, value: Any) -> Any:
    if field.is_repeated:
        return [_scalar_json(field, v) for v in value]
    return _scalar_json(field, value)


def _scalar_json(field: Any, value: Any) -> Any:
    if field.type == field.TYPE_MESSAGE:
        return message_json(value)
    if field.type == field.TYPE_ENUM:
        enum_value = field.enum_type.values_by_number.get(value)
        return enum_value.name if enum_value is not None else int(value)
    if field.type == field.TYPE_BYTES:
        return bytes(value).hex()
    return value


def event_json(event: game_pb2.PublicEvent) -> dict[str, Any]:
    """One event of the deal."""
    if event.reshuffled and event.kind == game_pb2.ACTION_KIND_UNSPECIFIED:
        return {"kind": "reshuffle", "stock_size": event.stock_size_after}
    return {
        "seat": event.seat,
        "kind": KIND_NAMES.get(event.kind, str(event.kind)),
        "card": event.card or None,
        "stock_size": event.stock_size_after,
    }


def state_json(state: game_pb2.InformationState) -> dict[str, Any]:
    """The information state as the stdio protocol sends it."""
    known: list[list[str]] = [[] for _ in range(max(state.num_seats, 2))]
    for entry in state.known_cards:
        if entry.seat < len(known):
            known[entry.seat] = list(entry.cards)
    return {
        "seat": state.seat,
        "num_seats": state.num_seats,
        "dealer": state.dealer,
        "to_move": state.to_move,
        "phase": _PHASES.get(state.phase, "unknown"),
        "hand": list(state.hand),
        "my_melds": [list(m.cards) for m in state.my_melds],
        "my_deadwood_cards": list(state.my_deadwood_cards),
        "my_deadwood": state.my_deadwood,
        "discard_pile": list(state.discard_pile),
        "stock_size": state.stock_size,
        "hand_sizes": list(state.hand_sizes),
        "known_cards": known,
        "first_upcard": state.first_upcard,
        "knock_limit": state.knock_limit,
        "forbidden_discard": state.forbidden_discard or None,
        "upcard_passes": state.upcard_passes,
        "events": [event_json(e) for e in state.events],
        "game_number": state.game_number,
        "deal_number": state.deal_number,
        "scores": list(state.scores),
        "deals_won": list(state.deals_won),
        "match_scores": list(state.match_scores),
        "spade_double": state.spade_double,
        "reshuffled": state.reshuffled,
    }


def rummy_event_json(event: game_pb2.PublicEvent) -> dict[str, Any]:
    """One event of a rummy deal: ``seat``, ``kind`` (an action kind, ``meld`` for a laid meld,
    or ``reshuffle``), and per kind ``card`` (null: another seat's stock draw), ``cards``
    (a meld; every card a take moved), ``meld`` and ``end`` (a layoff)."""
    ev = event.rummy
    if ev.WhichOneof("kind") == "reshuffle":
        return {"seat": None, "kind": "reshuffle", "card": ev.reshuffle.upcard, "number": ev.reshuffle.number}
    text = kr.action_text(ev.action)
    out: dict[str, Any] = {"seat": event.seat, "kind": kr.kind_of(text)}
    a = ev.action
    which = a.WhichOneof("kind")
    if which == "draw_stock":
        out["card"] = ev.drawn_card or None
    elif which == "take_discard":
        out.update(card=a.take_discard.card, cards=list(ev.taken_cards))
    elif which == "lay_meld":
        out["cards"] = text.split()[1:]
    elif which == "lay_off":
        out.update(card=a.lay_off.card, meld=a.lay_off.meld, end=text.split()[3])
    elif which == "discard":
        out["card"] = a.discard.card
    return out


def rummy_state_json(state: game_pb2.RummyState) -> dict[str, Any]:
    """A rummy seat's information state as the stdio protocol sends it."""
    return {
        "seat": state.seat, "num_seats": state.num_seats, "dealer": state.dealer, "turn": state.turn,
        "to_move": state.to_move, "phase": kr.PHASES.get(state.phase, "unknown"), "hand": list(state.hand),
        "hand_sizes": list(state.hand_sizes), "stock_size": state.stock_size,
        "discard_pile": list(state.discard_pile),
        "table": [
            {"number": m.number, "owner": m.owner, "kind": "set" if m.kind == game_pb2.MELD_KIND_SET else "run",
             "cards": list(m.cards),
             "placed": [{"card": p.card, "seat": p.seat, "end": kr.ENDS.get(p.end, "?"), "layoff": p.layoff}
                        for p in m.placed]}
            for m in state.table
        ],
        "must_use": state.must_use or None, "stopped": state.stopped or None,
        "events": [rummy_event_json(e) for e in state.events],
        "scores": list(state.scores), "game_number": state.game_number, "deal_number": state.deal_number,
        "match_points": list(state.match_points), "reshuffles": state.reshuffles,
    }


def request_json(match_id: str, request: bot_pb2.ActionRequest) -> dict[str, Any]:
    """The ``request`` line for an ActionRequest (a rummy one says ``"game": "rummy"``)."""
    rummy = request.HasField("rummy_state")
    out: dict[str, Any] = {
        "type": "request",
        "match_id": match_id,
        "request_id": request.request_id,
        "legal": legal_texts(request),
        "time_ms": request.time_for_move_ms,
        "clocks": [
            {"seat": c.seat, "remaining_ms": c.remaining_ms, "running": c.running} for c in request.clocks
        ],
        "state": rummy_state_json(request.rummy_state) if rummy else state_json(request.state),
    }
    if rummy:
        out["game"] = "rummy"
    return out


class AnswerError(ValueError):
    """An answer line that does not follow the protocol; the text says how."""


def parse_answer(line: str, request_id: int, request: bot_pb2.ActionRequest | None = None) -> game_pb2.Action:
    """The action of an answer line, or :class:`AnswerError` saying precisely what is wrong.
    For a rummy ``request`` the text is a rummy action."""
    shown = line.rstrip("\n")
    shown = shown if len(shown) <= 200 else shown[:200] + "…"
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise AnswerError(f"the answer to request {request_id} is not JSON ({e}): {shown!r}") from None
    if not isinstance(obj, dict):
        raise AnswerError(
            f'the answer to request {request_id} must be a JSON object like {{"action": "draw_stock"}}; '
            f"got {shown!r}"
        )
    if "request_id" in obj and obj["request_id"] != request_id:
        raise AnswerError(
            f"the answer names request_id {obj['request_id']!r} but request {request_id} was asked: {shown!r}"
        )
    text = obj.get("action")
    if not isinstance(text, str):
        raise AnswerError(
            f'the answer to request {request_id} has no "action" string (e.g. {{"action": "draw_stock"}}): '
            f"{shown!r}"
        )
    try:
        if request is not None and request.HasField("rummy_state"):
            return kr.answer(request, text)
        return parse_action(text)
    except ValueError as e:
        raise AnswerError(f"the answer to request {request_id} has a malformed action: {e}: {shown!r}") from None


# ----- the bridge -----
class StdioBot(Bot):
    """A bot whose decisions come from a program over stdin/stdout."""

    name = "stdio"

    def __init__(self, command: list[str], matches: int = 1, games: tuple[str, ...] = ()) -> None:
        self.command = command
        self.games = games
        self.matches = matches
        self.finished = 0
        self.proc = subprocess.Popen(  # stderr passes through
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1,
        )
        log.info("started %s (pid %d)", " ".join(command), self.proc.pid)

    @property
    def done(self) -> bool:
        """Whether the program has been told of every match it was started for."""
        return bool(self.matches) and self.finished >= self.matches

    def _exit_text(self) -> str:
        try:
            code = self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            return "the program closed its stdout but is still running"
        return f"the program exited with code {code}"

    def send(self, obj: dict[str, Any]) -> None:
        """Write one line to the program."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(obj, separators=(",", ":")) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise BotCodeError(str(obj.get("match_id", "")),
                               f"{self._exit_text()}; could not send it a {obj.get('type')} line") from None

    def receive(self, request_id: int, match_id: str, request: bot_pb2.ActionRequest | None = None
                ) -> game_pb2.Action:
        """Read the answer line to a request."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise BotCodeError(match_id, f"{self._exit_text()} before answering request {request_id}")
            if line.strip():
                break
        try:
            return parse_answer(line, request_id, request)
        except AnswerError as e:
            raise BotCodeError(match_id, f"stdio protocol error: {e}") from None

    def decide(self, request: bot_pb2.ActionRequest) -> game_pb2.Action:
        return self.decide_in_match("", request)

    def decide_in_match(self, match_id: str, request: bot_pb2.ActionRequest) -> game_pb2.Action:
        """Send the request line and read the answer line."""
        started = time.monotonic()
        self.send(request_json(match_id, request))
        chosen = self.receive(request.request_id, match_id, request)
        log.debug("request %d answered in %.0f ms: %s", request.request_id,
                  (time.monotonic() - started) * 1000, action_text(chosen))
        return chosen

    def on_match_started(self, match_id: str, info: bot_pb2.MatchStarted) -> None:
        rummy = info.HasField("rummy_rules")
        self.send({
            "type": "match_started", "match_id": match_id, "protocol": PROTOCOL, "seat": info.seat,
            "game": info.game or "gin", "player_names": list(info.player_names),
            "rules": message_json(info.rummy_rules if rummy else info.rules), "time_control": info.time_control.text,
        })

    def on_deal_started(self, match_id: str, deal: bot_pb2.DealStarted) -> None:
        rummy = deal.HasField("rummy_state")
        self.send({
            "type": "deal_started", "match_id": match_id, "game_number": deal.game_number,
            "deal_number": deal.deal_number, "dealer": deal.dealer,
            "state": rummy_state_json(deal.rummy_state) if rummy else state_json(deal.state),
        })

    def on_action_rejected(self, match_id: str, rejected: bot_pb2.ActionRejected) -> None:
        self.send({
            "type": "action_rejected", "match_id": match_id, "request_id": rejected.request_id,
            "action": action_text(rejected.action), "reason": rejected.reason,
        })

    def on_deal_finished(self, match_id: str, result: game_pb2.DealResult) -> None:
        self.send({"type": "deal_finished", "match_id": match_id, "result": message_json(result)})

    def on_game_finished(self, match_id: str, result: game_pb2.GameResult) -> None:
        self.send({"type": "game_finished", "match_id": match_id, "result": message_json(result)})

    def on_match_finished(self, match_id: str, result: game_pb2.MatchResult) -> None:
        self.send({"type": "match_finished", "match_id": match_id, "result": message_json(result)})
        self.finished += 1

    def close(self) -> None:
        """Close the program's stdin, then stop it if it does not exit by itself."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _split_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" not in argv:
        return argv, []
    i = argv.index("--")
    return argv[:i], argv[i + 1:]


async def bridge_session(bot: StdioBot, config: BotConfig) -> SessionResult:
    """Play the session; end it if the program exits early."""
    running = open_session(bot, config)
    session = asyncio.ensure_future(running.run())
    exited = asyncio.ensure_future(asyncio.to_thread(bot.proc.wait))
    try:
        await asyncio.wait({session, exited}, return_when=asyncio.FIRST_COMPLETED)
        if not session.done():
            # Give a pending decide() the chance to report the exit precisely.
            await asyncio.wait({session}, timeout=0.5)
        if session.done():
            return session.result()
        if bot.done:
            return await session
        reason = f"the program exited with code {bot.proc.returncode} while the session was running"
        running.give_up(BotCodeError("", reason))  # resigns its matches: the referee records why
        done, _ = await asyncio.wait({session}, timeout=5.0)
        if done:
            return session.result()
        log.error("%s", reason)
        return SessionResult(EXIT_FAILED, reason)
    finally:
        if not session.done():
            session.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await session
        bot.close()
        with contextlib.suppress(asyncio.CancelledError):
            await exited


def main(argv: list[str] | None = None) -> int:
    """Run the bridge from the command line."""
    args = sys.argv[1:] if argv is None else argv
    own, command = _split_argv(args)
    parser = make_parser("stdio", "Connect a stdio (JSON lines) program to the Gin Arena referee. "
                         "Usage: ... [options] -- <command...>")
    parser.add_argument("--games", default=os.environ.get("GIN_GAMES", "gin"), metavar="LIST",
                        help="the games the program plays, comma-separated: gin, rummy "
                        "(env GIN_GAMES; default %(default)s)")
    config, ns = parse_config(parser, own)
    games = tuple(g.strip() for g in ns.games.split(",") if g.strip())
    if not command:
        parser.error("no program given: put its command after --, e.g. -- node sample_bots/stdio/bot.js")
    setup_logging(ns.log_level)
    try:
        bot = StdioBot(command, config.matches, games)
    except OSError as e:
        log.error("cannot start %s: %s", " ".join(command), e)
        return EXIT_FAILED
    result = asyncio.run(run_until_signal(bridge_session(bot, config)))
    log.log(logging.INFO if result.ok else logging.ERROR, "session over: %s", result.reason)
    return result.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
