"""``arena play``: a person plays Gin Rummy against a bot in the terminal.

The human is an ordinary gRPC bot client of an embedded referee (same protocol, same checks,
same replay as any bot); the opponent bot runs as a subprocess. Plain text in and out, so it
works without a TTY: every decision shows the hand (melds grouped), the discard pile, the stock,
the opponent's known cards, the scores and the numbered legal moves; answer with a number or the
move's text (``stock``, ``pile``, ``d Kh``, ``k 2c``, ``gin``, ``pass``, ``take``). ``q`` or end
of input resigns (the referee scores the disconnect by its policy: the bot wins).

Run: ``arena play --bot greedy`` (its command line is in ``arena.cli.play_cmd``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import grpc
import trio

import referee
from arena.exit_codes import EXIT_FAILED, EXIT_OK
from gin_arena.v2 import bot_pb2, bot_pb2_grpc, common_pb2
from gin_arena.v2.games import gin_pb2
from referee.gin import deadwood_after_each_discard, parse_card, parse_cards

BOTS = ("greedy", "expert", "random", "js")

K = gin_pb2
LABEL: dict[int, str] = {
    K.ACTION_KIND_PASS: "pass",
    K.ACTION_KIND_TAKE_UPCARD: "take",
    K.ACTION_KIND_DRAW_STOCK: "draw_stock",
    K.ACTION_KIND_DRAW_DISCARD: "draw_discard",
    K.ACTION_KIND_DISCARD: "discard",
    K.ACTION_KIND_KNOCK: "knock",
    K.ACTION_KIND_BIG_GIN: "big_gin",
}
OUTCOME: dict[int, str] = {
    K.DEAL_OUTCOME_KNOCK: "knock",
    K.DEAL_OUTCOME_UNDERCUT: "undercut",
    K.DEAL_OUTCOME_GIN: "gin",
    K.DEAL_OUTCOME_BIG_GIN: "big gin",
    K.DEAL_OUTCOME_DEAD_HAND: "dead hand",
}
ALIASES: dict[str, tuple[int, ...]] = {
    "pass": (K.ACTION_KIND_PASS,), "p": (K.ACTION_KIND_PASS,),
    "take": (K.ACTION_KIND_TAKE_UPCARD, K.ACTION_KIND_DRAW_DISCARD),
    "t": (K.ACTION_KIND_TAKE_UPCARD, K.ACTION_KIND_DRAW_DISCARD),
    "upcard": (K.ACTION_KIND_TAKE_UPCARD,), "take_upcard": (K.ACTION_KIND_TAKE_UPCARD,),
    "stock": (K.ACTION_KIND_DRAW_STOCK,), "s": (K.ACTION_KIND_DRAW_STOCK,),
    "draw": (K.ACTION_KIND_DRAW_STOCK,), "draw_stock": (K.ACTION_KIND_DRAW_STOCK,),
    "pile": (K.ACTION_KIND_DRAW_DISCARD, K.ACTION_KIND_TAKE_UPCARD),
    "draw_discard": (K.ACTION_KIND_DRAW_DISCARD,),
    "d": (K.ACTION_KIND_DISCARD,), "discard": (K.ACTION_KIND_DISCARD,),
    "k": (K.ACTION_KIND_KNOCK,), "knock": (K.ACTION_KIND_KNOCK,),
    "big_gin": (K.ACTION_KIND_BIG_GIN,), "biggin": (K.ACTION_KIND_BIG_GIN,),
}
_EOF = grpc.aio.EOF  # type: ignore[attr-defined]
HELP = ("type a move's number, or its text: stock, pile, pass, take, d Kh (discard), k 2c (knock), "
        "gin; q resigns")


# ----- text of cards, melds and actions -----
def _melds(melds: Sequence[gin_pb2.Meld]) -> str:
    return " ".join("[" + " ".join(m.cards) + "]" for m in melds) or "-"


def action_text(a: common_pb2.Action) -> str:
    """The canonical text of an action: ``draw_stock``, ``discard Kh``, ``knock 2c``…"""
    label = LABEL.get(a.gin.kind, "?")
    return f"{label} {a.gin.card}" if a.gin.card else label


def parse_answer(text: str, legal: Sequence[common_pb2.Action], after: dict[str, int]) -> common_pb2.Action | str:
    """The legal action meant by ``text`` (a number or a move's text), or why none is."""
    t = text.strip().lower().replace("-", "_")
    n = len(legal)
    if not t:
        return f"nothing typed: {HELP}"
    if t.isdigit():
        i = int(t)
        return legal[i - 1] if 1 <= i <= n else f"{t} is not a legal move number: choose 1-{n}"
    words = t.split()
    word, card = words[0], " ".join(words[1:])
    if len(words) > 2:
        return f"{text.strip()!r} is not a move: {HELP}"
    if len(words) == 1 and word not in ALIASES and word != "gin":  # a bare card: discard it
        try:
            parse_card(word)
        except ValueError:
            return f"{text.strip()!r} is not a move: {HELP}"
        word, card = "discard", word
    if card:
        try:
            card = str(parse_card(card))
        except ValueError:
            return f"{card!r} is not a card (write rank then suit, e.g. Kh, Td, 10d, 2c)"
    if word == "gin":
        bg = [a for a in legal if a.gin.kind == K.ACTION_KIND_BIG_GIN]
        gins = [a for a in legal if a.gin.kind == K.ACTION_KIND_KNOCK and after.get(a.gin.card) == 0
                and (not card or a.gin.card == card)]
        if bg and not card:
            return bg[0]
        if len(gins) == 1 or (gins and card):
            return gins[0]
        if gins:
            return "several gin knocks are legal: say which card to discard, e.g. 'gin " + gins[0].gin.card + "'"
        return "gin is not possible now"
    kinds = ALIASES.get(word)
    if kinds is None:
        return f"{text.strip()!r} is not a move: {HELP}"
    needs_card = kinds[0] in (K.ACTION_KIND_DISCARD, K.ACTION_KIND_KNOCK)
    if needs_card and not card:
        return f"'{word}' needs a card, e.g. '{word} {legal[-1].gin.card or 'Kh'}'"
    for a in legal:
        if a.gin.kind in kinds and (not needs_card or a.gin.card == card):
            return a
    wanted = f"{LABEL[kinds[0]]} {card}".strip()
    return f"{wanted} is not legal now: choose one of the moves listed (1-{n})"


class Screen:
    """What the human sees: everything is printed as plain lines to ``out``."""

    def __init__(self, out: TextIO, seat: int) -> None:
        self.out = out
        self.seat = seat
        self.names: list[str] = ["seat 0", "seat 1"]

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def who(self, seat: int) -> str:
        return "You" if seat == self.seat else self.names[seat] if seat < len(self.names) else f"seat {seat}"

    def scores(self, scores: Sequence[int]) -> str:
        return ", ".join(f"{self.who(s)} {v}" for s, v in enumerate(scores))

    def match_started(self, m: bot_pb2.MatchStarted) -> None:
        self.names = list(m.player_names)
        r = m.gin
        self.say(f"Match {m.match_id}: {' vs '.join(self.names)} — you are seat {m.seat} ({self.names[m.seat]}).")
        self.say(f"Rules: {r.name}, game to {r.target}, time control {m.time_control.text or '-'}.")

    def deal_started(self, d: bot_pb2.DealStarted) -> None:
        s = d.gin
        self.say()
        self.say(f"=== Game {d.game_number}, deal {d.deal_number} — dealer: {self.who(d.dealer)}; "
                 f"upcard {s.first_upcard}; scores: {self.scores(s.scores)} ===")

    def event(self, e: common_pb2.Event) -> None:
        who = self.who(e.seat)
        k = e.gin.kind
        text = {
            K.ACTION_KIND_PASS: f"passed on the upcard {e.gin.card}",
            K.ACTION_KIND_TAKE_UPCARD: f"took the upcard {e.gin.card}",
            K.ACTION_KIND_DRAW_STOCK: f"drew {e.gin.card} from the stock" if e.gin.card else "drew from the stock",
            K.ACTION_KIND_DRAW_DISCARD: f"drew {e.gin.card} from the discard pile",
            K.ACTION_KIND_DISCARD: f"discarded {e.gin.card}",
            K.ACTION_KIND_KNOCK: "knocked" + (f" discarding {e.gin.card}" if e.gin.card else " (discarding face down)"),
            K.ACTION_KIND_BIG_GIN: "declared big gin",
        }.get(k, "did something")
        note = " (the discard pile was shuffled into a new stock)" if e.gin.reshuffled else ""
        self.say(f"  {who} {text}.{note}")

    def request(self, req: bot_pb2.ActionRequest, after: dict[str, int]) -> None:
        s = req.gin
        opp = 1 - self.seat
        self.say()
        self.say(f"--- Game {s.game_number}, deal {s.deal_number} | scores: {self.scores(s.scores)} | "
                 f"time for this move: {req.time_for_move_ms // 1000} s ---")
        self.say(f"Your hand ({len(s.hand)} cards, deadwood {s.my_deadwood}):")
        self.say(f"  melds:    {_melds(s.my_melds)}")
        self.say(f"  deadwood: {' '.join(s.my_deadwood_cards) or '-'}")
        pile = list(s.discard_pile)
        self.say(f"Discard pile (top last): {' '.join(pile) or '(empty)'}"
                 + (f"  -> top card: {pile[-1]}" if pile else ""))
        self.say(f"Stock: {s.stock_size} cards")
        known = next((list(k.cards) for k in s.known_cards if k.seat == opp), [])
        self.say(f"{self.who(opp)} is known to hold: {' '.join(known) or '-'}")
        if s.forbidden_discard:
            self.say(f"(you took {s.forbidden_discard} from the pile: you may not discard it this turn)")
        top = pile[-1] if pile else ""
        parts: list[str] = []
        for i, a in enumerate(req.legal_actions, 1):
            text = action_text(a)
            if a.gin.kind in (K.ACTION_KIND_DRAW_DISCARD, K.ACTION_KIND_TAKE_UPCARD) and top:
                text += f" ({top})"
            elif a.gin.kind == K.ACTION_KIND_DISCARD and a.gin.card in after:
                text += f" (dw {after[a.gin.card]})"
            elif a.gin.kind == K.ACTION_KIND_KNOCK:
                dw = after.get(a.gin.card, -1)
                text = f"KNOCK {a.gin.card} ({'GIN' if dw == 0 else f'deadwood {dw}'})"
            elif a.gin.kind == K.ACTION_KIND_BIG_GIN:
                text = "BIG GIN"
            parts.append(f"{i}) {text}")
        self.say("Legal moves:")
        line = " "
        for p in parts:
            if len(line) + len(p) > 100:
                self.say(line)
                line = " "
            line += " " + p
        self.say(line)

    def deal_finished(self, r: common_pb2.DealResult) -> None:
        kind = OUTCOME.get(r.gin.outcome, "?")
        self.say()
        if r.gin.outcome == K.DEAL_OUTCOME_DEAD_HAND:
            self.say(f"*** Deal over: dead hand (the stock ran out) — nobody scores; "
                     f"scores: {self.scores(r.scores_after)} ***")
            return
        self.say(f"*** Deal over: {kind.upper()} — {self.who(r.gin.knocker)} "
                 f"{'declared big gin' if r.gin.outcome == K.DEAL_OUTCOME_BIG_GIN else 'knocked'}"
                 + (f" (face-down discard {r.gin.knock_discard})" if r.gin.knock_discard else "") + " ***")
        for h in r.gin.hands:
            role = "knocker " if h.seat == r.gin.knocker else "defender"
            self.say(f"  {self.who(h.seat):<10} {role}  melds {_melds(h.melds)}")
            if h.laid_off:
                self.say(f"  {'':<10}           laid off {' '.join(h.laid_off)}")
            self.say(f"  {'':<10}           deadwood {' '.join(h.deadwood_cards) or '-'} = {h.deadwood}")
        if r.winner >= 0:
            self.say(f"  {self.who(r.winner)} scored {r.gin.points} points" + (" (doubled)" if r.gin.doubled else "")
                     + (" — undercut!" if r.gin.outcome == K.DEAL_OUTCOME_UNDERCUT else "") + ".")
        self.say(f"  Scores: {self.scores(r.scores_after)}" + ("  (game over)" if r.game_over else ""))

    def game_finished(self, g: common_pb2.GameResult) -> None:
        self.say()
        self.say(f"### Game {g.game_number} over: {self.who(g.winner)} won"
                 + (" (shutout)" if g.gin.shutout else "") + " ###")
        for s, total in enumerate(g.final_totals):
            pts = g.gin.deal_points[s] if s < len(g.gin.deal_points) else 0
            won = g.gin.deals_won[s] if s < len(g.gin.deals_won) else 0
            self.say(f"  {self.who(s):<10} {pts} deal points + {total - pts} bonuses = {total} "
                     f"({won} deals won)")

    def match_finished(self, m: common_pb2.MatchResult) -> None:
        self.say()
        term = common_pb2.Termination.Name(m.termination).removeprefix("TERMINATION_").lower()
        winner = "a draw / no winner" if m.winner < 0 else f"{self.who(m.winner)} won" + (
            "" if m.winner != self.seat else " — congratulations!")
        self.say(f"##### Match over ({term}): {winner} #####")
        if m.detail:
            self.say(f"  {m.detail}")
        for s in range(len(m.games_won)):
            self.say(f"  {self.who(s):<10} games won {m.games_won[s]}, total points {m.total_points[s]}")


# ----- the session -----
def bot_command(args: argparse.Namespace, address: str, token: str, name: str) -> list[str]:
    """The opponent's command line."""
    if args.command:
        cmd = [part.replace("{referee}", address).replace("{token}", token) for part in shlex.split(args.command)]
        if not any("{token}" in part for part in shlex.split(args.command)):
            cmd += ["--referee", address, "--token", token, "--name", name]
        return cmd
    if args.bot == "js":
        root = Path(__file__).resolve().parent.parent / "sample_bots" / "js" / "bot.js"
        return ["node", str(root), "--referee", address, "--token", token, "--name", name]
    return [sys.executable, "-m", f"sample_bots.{args.bot}_bot", "--referee", address, "--token", token,
            "--name", name]


async def read_line() -> str | None:
    """One line of stdin (without blocking the event loop); ``None`` at end of input."""
    line: str = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
    return line if line else None


async def play(args: argparse.Namespace, spec: referee.MatchSpec, screen: Screen) -> int:
    """Run the referee, the bot and the human's session; returns the exit code."""
    seat = args.seat
    replay_dir = Path(args.replay_dir)
    replay_dir.mkdir(parents=True, exist_ok=True)
    opp_name = spec.players[1 - seat]
    async with referee.open_referee(replay_dir=replay_dir) as ref:
        table = ref.create_match(spec)
        tokens = [link.token for link in table.links]
        cmd = bot_command(args, ref.address, tokens[1 - seat], opp_name)
        log_path = replay_dir / f"{table.match_id}-{opp_name}.log"
        env = {**os.environ, "GIN_LOG_LEVEL": "WARNING", "GIN_REFEREE": ref.address, "GIN_TOKEN": tokens[1 - seat]}
        with open(log_path, "wb") as log:
            try:
                proc = await trio.lowlevel.open_process(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
            except OSError as e:
                screen.say(f"arena play: cannot start the bot {shlex.join(cmd)}: {e}")
                return EXIT_FAILED
            try:
                code = await _session(ref.address, tokens[seat], args.name, screen, table)
            finally:
                with trio.CancelScope(shield=True), trio.move_on_after(3):
                    await proc.wait()
                if proc.returncode is None:
                    proc.kill()
                    with trio.CancelScope(shield=True):
                        await proc.wait()
        if table.report is not None and table.report.replay_path:
            screen.say(f"Replay: {table.report.replay_path}  (view it: arena replay {table.report.replay_path})")
        if proc.returncode not in (0, None, -9) and table.report is not None and table.report.termination == "crashed":
            screen.say(f"The bot exited with code {proc.returncode}; its log: {log_path}")
        return code


async def _session(address: str, token: str, name: str, screen: Screen, table: referee.Table) -> int:
    channel = grpc.aio.insecure_channel(address)
    stub: Any = bot_pb2_grpc.BotServiceStub(channel)
    call: Any = stub.Play()
    resigned = False
    try:
        await referee.aio(call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(
            bot_name=name, token=token, protocol_version=2, client_info="arena play (human)"))))
        while True:
            msg = await referee.aio(call.read())
            if msg is _EOF:
                break
            kind = msg.WhichOneof("kind")
            if kind == "match_started":
                screen.match_started(msg.match_started)
            elif kind == "deal_started":
                screen.deal_started(msg.deal_started)
            elif kind == "event":
                screen.event(msg.event)
            elif kind == "action_request":
                action = await _ask(msg.action_request, screen)
                if action is None:
                    resigned = True
                    screen.say("You resign: closing the session (the referee scores the disconnect).")
                    call.cancel()
                    break
                await referee.aio(call.write(bot_pb2.BotMessage(action=bot_pb2.ActionResponse(
                    match_id=msg.match_id, request_id=msg.action_request.request_id, action=action))))
            elif kind == "action_rejected":
                screen.say(f"The referee refused {action_text(msg.action_rejected.action)}: "
                           f"{msg.action_rejected.reason}")
            elif kind == "deal_finished":
                screen.deal_finished(msg.deal_finished.result)
            elif kind == "game_finished":
                screen.game_finished(msg.game_finished.result)
            elif kind == "match_finished":
                screen.match_finished(msg.match_finished.result)
                await referee.aio(call.done_writing())
                break
            elif kind == "error":
                e = msg.error
                screen.say(f"Referee error: {bot_pb2.ErrorCode.Name(e.code)}: {e.message}")
    except grpc.aio.AioRpcError as e:
        if not resigned and e.code() != grpc.StatusCode.CANCELLED:
            screen.say(f"arena play: the session failed: {e.code().name}: {e.details()}")
            return EXIT_FAILED
    finally:
        with trio.CancelScope(shield=True):
            await referee.aio(channel.close(None))
    with trio.move_on_after(15):
        await table.finished.wait()
    if resigned and table.report is not None:
        r = table.report
        winner = "no winner" if r.winner is None else f"{screen.who(r.winner)} won"
        screen.say(f"##### Match over ({r.termination}): {winner} #####")
        if r.detail:
            screen.say(f"  {r.detail}")
    return EXIT_OK


async def _ask(req: bot_pb2.ActionRequest, screen: Screen) -> common_pb2.Action | None:
    """Show the decision and read answers until one is legal; ``None`` to resign."""
    legal = list(req.legal_actions)
    after: dict[str, int] = {}
    if len(req.gin.hand) % 3 == 2:  # 11 cards: deadwood after each discard
        after = {str(c): v for c, v in deadwood_after_each_discard(parse_cards(list(req.gin.hand))).items()}
    screen.request(req, after)
    while True:
        screen.out.write(f"Your move [1-{len(legal)}, text, or q to resign]: ")
        screen.out.flush()
        line = await read_line()
        if line is None:
            screen.say()
            screen.say("(end of input)")
            return None
        if line.strip().lower() in ("q", "quit", "resign"):
            return None
        got = parse_answer(line, legal, after)
        if isinstance(got, str):
            screen.say(f"  ! {got}")
            continue
        screen.say(f"  -> {action_text(got)}")
        return got
