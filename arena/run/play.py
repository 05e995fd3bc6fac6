"""``arena play``: a person plays any installed game against bots in the terminal.

The human is an ordinary gRPC bot client of an embedded referee (same protocol, same checks,
same replay as any bot); every other seat is a bot subprocess. Plain text in and out, so it
works without a TTY. Every decision is drawn from the game's own presentation
(``present(match_view(match, seat))``, :class:`referee.games.GamePresentation`) with the
terminal pieces the replay viewer uses (:mod:`arena.replays.view`): the seats (your hand
grouped as the game groups it), the table, the piles, the scores and the numbered legal moves.
Answer with a number, a move's text as listed (its id or its label; each word may be
shortened: ``d kh``) or, where only one legal move uses it, a card. The chosen move is sent as
the game's wire reads that move's id (``GameWire.action_from_text``). ``q`` or end of input
resigns (the referee scores the disconnect by its policy). What happens between decisions
(moves, deal and game ends) is written in the game's words (its wire's ``describe``).

Run: ``arena play --bot greedy`` (its command line is in ``arena.cli.play_cmd``).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import grpc
import trio

import referee
import referee.lowlevel
from arena.exit_codes import EXIT_FAILED, EXIT_OK
from arena.replays import game_words, seat_lines
from arena.replays.base import Style
from arena.replays.steps import named
from arena.replays.view import pile_line, shown_seat_lines, table_line
from arena.run.samples import JS_BOT, QUIET, js_games, launch, samples
from gin_arena.v2 import bot_pb2, bot_pb2_grpc, common_pb2
from referee import games
from referee.cardcore.present import Words

_EOF = grpc.aio.EOF  # type: ignore[attr-defined]
HELP = "type a move's number, or its text as listed (words may be shortened: 'd kh'); q resigns"


def sample_bots(game: str) -> list[str]:
    """The sample bots ``--bot`` may name for ``game``: those its registration lists, and ``js``
    if the JavaScript sample bot plays it (none for a game that cannot be used)."""
    try:
        found = [b.name for b in samples(game).bots]
    except ValueError:
        found = []
    return [*found, *([JS_BOT] if game in js_games() else [])]


def default_bot(game: str) -> str:
    """The sample bot ``arena play --game GAME`` plays by default: its registration's demo opponent
    (else its first sample bot); ``""``: none (``--bot`` or ``--command`` needed)."""
    try:
        return samples(game).opponent
    except ValueError:
        return ""


def parse_answer(text: str, legal: Sequence[Mapping[str, Any]]) -> int | str:
    """The index into ``legal`` (a description's legal moves) meant by ``text`` — a number from 1,
    a move's id or label (each word may be shortened), or a card that only one move uses — or
    why none is."""
    t = " ".join(text.split())
    n = len(legal)
    if not t:
        return f"nothing typed: {HELP}"
    if t.isdigit():
        i = int(t)
        return i - 1 if 1 <= i <= n else f"{t} is not a legal move number: choose 1-{n}"
    low = t.lower()
    words = low.split()

    def names(move: Mapping[str, Any]) -> list[str]:
        ident = str(move["id"]).lower()
        return [ident, ident.replace("_", " "), str(move["label"]).lower()]

    def fits(name: str) -> bool:
        parts = name.replace(",", " ").split()
        return len(parts) == len(words) and all(b.startswith(a) for a, b in zip(words, parts, strict=True))

    exact = [i for i, m in enumerate(legal) if low in names(m)]
    if exact:
        return exact[0]
    hits = [i for i, m in enumerate(legal) if any(fits(x) for x in names(m))]
    if not hits and len(words) == 1:
        hits = [i for i, m in enumerate(legal) if [str(c).lower() for c in m["cards"]] == words]
    if len(hits) == 1:
        return hits[0]
    if hits:
        options = ", ".join(f"{i + 1}) {legal[i]['label']}" for i in hits)
        return f"{t!r} could be {options}: say which"
    return f"{t!r} is not a legal move now: choose 1-{n}, or type a move as listed"


def _wrapped(parts: Sequence[str], width: int = 100) -> list[str]:
    lines: list[str] = []
    line = " "
    for p in parts:
        if len(line) + len(p) > width and line.strip():
            lines.append(line)
            line = " "
        line += " " + p
    return [*lines, line]


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


class Screen:
    """What the human sees: everything is printed as plain lines to ``out``. It names the seats
    for the replay viewer's pieces (:class:`arena.replays.view.SeatNames`)."""

    def __init__(self, out: TextIO, seat: int, game: str, style: Style | None = None) -> None:
        self.out = out
        self.seat = seat
        self.game = game
        self.style = style or Style()
        self.describe = seat_lines.describer(game, self.style)
        self.names: list[str] = []
        self.you = game_words.game_words("en").get(game, {})
        """The game's "you" forms in English (its ``en`` catalog): the human's own moves are said
        as "You draw 4s from the stock", not "You draws ..."."""

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def seat_name(self, seat: int | None) -> str:
        """``You`` for the human's seat, the player's name for another."""
        if seat is None or seat < 0:
            return "nobody"
        if seat == self.seat:
            return "You"
        return self.names[seat] if seat < len(self.names) else f"seat {seat}"

    def shown_names(self) -> list[str]:
        """The names a description's ``{N}`` stand for."""
        return [self.seat_name(s) for s in range(max(len(self.names), self.seat + 1))]

    def scores(self, scores: Sequence[int]) -> str:
        return ", ".join(f"{self.seat_name(s)} {v}" for s, v in enumerate(scores))

    def _words(self, msg: Any) -> str:
        return seat_lines.game_text(msg, self.describe)

    def match_started(self, m: bot_pb2.MatchStarted, rules_text: str) -> None:
        self.names = list(m.player_names)
        self.say(f"Match {m.match_id} ({m.game_name}): {' vs '.join(self.names)} — you are seat {m.seat} "
                 f"({self.names[m.seat]}).")
        self.say(f"Rules: {rules_text}; time control {m.time_control.text or '-'}.")

    def deal_started(self, d: bot_pb2.DealStarted) -> None:
        self.say()
        self.say(f"=== Game {d.game_number}, deal {d.deal_number} — dealer: {self.seat_name(d.dealer)} ===")

    def event(self, e: common_pb2.Event) -> None:
        mine = self._mine(e) if e.seat == self.seat else None
        self.say(f"  {mine}" if mine else f"  {self.seat_name(e.seat)}: {self._words(e) or 'moved'}")

    def _mine(self, e: common_pb2.Event) -> str | None:
        """The human's own move in the second person, from the game's words (``event_words``:
        the text and its template) and its "you" forms; ``None`` if the game has neither."""
        member = e.WhichOneof("game")
        told = getattr(games.get(self.game).wire, "event_words", None)
        if member is None or member == "other" or told is None or not self.you:
            return None
        say = Words()
        return _sentence(game_words.game_text(str(told(getattr(e, member), say)), say.texts, self.you, subject=True))

    def request(self, req: bot_pb2.ActionRequest, shown: Mapping[str, Any],
                where: tuple[int, int, Sequence[int]]) -> None:
        """A decision: the game's description of the position (``present(match_view(match, seat))``);
        ``where``: the game and deal numbers, and the game's points by seat (where the description
        gives none)."""
        raw = shown
        shown = named(dict(shown), self.shown_names())
        game, deal, scores = where
        style = self.style
        self.say()
        self.say(f"--- Game {game}, deal {deal} | scores: {self.scores(shown['scores'] or scores)} | "
                 f"time for this move: {req.time_for_move_ms // 1000} s ---")
        if shown["notes"]:
            self.say("  " + " · ".join(shown["notes"]))
        last = shown.get("last")
        if last is not None and last["seat"] == self.seat and self.you:  # "Last: You draw 4s from the stock"
            mine = raw["last"]
            self.say("  Last: " + _sentence(game_words.game_text(mine["text"], raw.get("texts") or {}, self.you,
                                                                 subject=True)))
        elif last is not None:
            self.say(f"  Last: {self.seat_name(last['seat'])} {last['text']}")
        width = max((len(self.seat_name(s["seat"])) for s in shown["seats"]), default=0)
        for line in shown_seat_lines(self, shown, style, width):
            self.say(line)
        for extra in (table_line(self, shown, style), pile_line(shown, style)):
            if extra is not None:
                self.say(extra)
        self.say("Legal moves:")
        for line in _wrapped([f"{i}) {m['label']}" for i, m in enumerate(shown["legal"], 1)]):
            self.say(line)

    def deal_finished(self, r: common_pb2.DealResult) -> None:
        self.say()
        won = f"{self.seat_name(r.winner)} won the deal" if r.winner >= 0 else "nobody won the deal"
        words = self._words(r)
        self.say(f"*** Deal over: {won}" + (f" — {words}" if words else "") + " ***")
        self.say(f"  Scores: {self.scores(r.scores_after)}" + ("  (game over)" if r.game_over else ""))

    def game_finished(self, g: common_pb2.GameResult) -> None:
        self.say()
        won = f"{self.seat_name(g.winner)} won" if g.winner >= 0 else "no single winner"
        words = self._words(g)
        self.say(f"### Game {g.game_number} over: {won} ###" + (f" ({words})" if words else ""))
        for s, total in enumerate(g.final_totals):
            place = f"place {g.places[s]}, " if s < len(g.places) else ""
            self.say(f"  {self.seat_name(s):<10} {place}{total} points")

    def match_finished(self, m: common_pb2.MatchResult) -> None:
        self.say()
        term = common_pb2.Termination.Name(m.termination).removeprefix("TERMINATION_").lower()
        winner = "a draw / no winner" if m.winner < 0 else f"{self.seat_name(m.winner)} won" + (
            "" if m.winner != self.seat else " — congratulations!")
        self.say(f"##### Match over ({term}): {winner} #####")
        if m.detail:
            self.say(f"  {m.detail}")
        for s in range(len(m.games_won)):
            self.say(f"  {self.seat_name(s):<10} games won {m.games_won[s]}, total points {m.total_points[s]}")


# ----- the session -----
@dataclass(frozen=True, slots=True)
class PlaySession:
    """What ``arena play`` plays, beside its match's spec: the human's seat and the opponents."""

    seat: int
    """The human's seat, from 0."""
    name: str
    """The human's name."""
    bot: str = ""
    """The sample bot in the other seats (``js``: the JavaScript one), unless ``command`` is given."""
    command: str = ""
    """Any other bot's command line (``{referee}``, ``{token}`` and ``{python}`` replaced; without
    ``{token}`` it gets ``--referee A --token T --name N`` appended)."""
    replay_dir: Path = Path("replays")
    """Where the replay (and each opponent's log) goes."""


def opponent(session: PlaySession, game: str, address: str, token: str, name: str, log_path: str) -> referee.BotLaunch:
    """How an opponent plays one seat (started by ``referee.run_bot``): a sample bot gets its
    token in the environment alone (``GIN_TOKEN``, which only the bot's user may read, where a
    command line is everyone's: ``ps``, ``/proc/PID/cmdline``); a command of the user's gets it
    as it always did."""
    if session.command:
        parts = shlex.split(session.command)
        given = any("{token}" in part for part in parts)
        cmd = tuple(part.replace("{referee}", address).replace("{token}", token).replace("{python}", sys.executable)
                    for part in parts)
        return referee.BotLaunch(command=cmd, pass_args=not given, env=QUIET, name=name, log_path=log_path)
    if session.bot == JS_BOT:
        root = Path(__file__).resolve().parent.parent.parent / "sample_bots" / "js" / "bot.js"
        return referee.BotLaunch(command=("node", str(root)), env=QUIET, token_in_argv=False, name=name,
                                 log_path=log_path)
    bot = samples(game).bot(session.bot)
    if bot is None:
        raise ValueError(f"{game} has no sample bot {session.bot!r}")
    return launch(bot, name, log_path)


async def read_line() -> str | None:
    """One line of stdin (without blocking the event loop); ``None`` at end of input."""
    line: str = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
    return line if line else None


async def play(session: PlaySession, spec: referee.MatchSpec, screen: Screen) -> int:
    """Run the referee, the bots and the human's session; returns the exit code."""
    seat = session.seat
    replay_dir = session.replay_dir
    replay_dir.mkdir(parents=True, exist_ok=True)
    others = [s for s in range(len(spec.players)) if s != seat]
    async with referee.open_referee(replay_dir=replay_dir) as ref:
        table = ref.create_match(spec)
        tokens = [link.token for link in table.links]
        over = trio.Event()
        codes: dict[Path, int | None] = {}

        async def run(launch: referee.BotLaunch, token: str, log_path: Path, *,
                      task_status: trio.TaskStatus[int]) -> None:
            codes[log_path] = await referee.run_bot(launch, ref.address, token, over,
                                                    label=f"{table.match_id} {launch.name}", task_status=task_status)

        async with trio.open_nursery() as nursery:
            try:
                for s in others:
                    name = spec.players[s]
                    log_path = replay_dir / f"{table.match_id}-{name}.log"
                    bot = opponent(session, spec.game, ref.address, tokens[s], name, str(log_path))
                    try:
                        await nursery.start(run, bot, tokens[s], log_path)
                    except OSError as e:
                        screen.say(f"arena play: cannot start the bot {shlex.join(bot.command)}: {e}")
                        nursery.cancel_scope.cancel()
                        return EXIT_FAILED
                code = await _session(ref.address, tokens[seat], session.name, screen, table, spec)
            finally:
                over.set()
        report = table.report
        if report is not None and report.replay_path:
            screen.say(f"Replay: {report.replay_path}  (view it: arena replay {report.replay_path})")
        for log_path, returncode in codes.items():
            if returncode not in (0, None, -9) and report is not None and report.termination == "crashed":
                screen.say(f"A bot exited with code {returncode}; its log: {log_path}")
        return code


async def _session(address: str, token: str, name: str, screen: Screen, table: referee.lowlevel.Table,
                   spec: referee.MatchSpec) -> int:
    reg = games.get(spec.game)
    channel = grpc.aio.insecure_channel(address)
    stub: Any = bot_pb2_grpc.BotServiceStub(channel)
    call: Any = stub.Play()
    resigned = False
    try:
        await referee.aio(call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(
            bot_name=name, token=token, protocol_version=2, client_info="arena play (human)",
            games=[spec.game]))))
        while True:
            msg = await referee.aio(call.read())
            if msg is _EOF:
                break
            kind = msg.WhichOneof("kind")
            if kind == "match_started":
                rules = spec.rules if spec.rules is not None else reg.game.default_rules()
                rules_text = reg.presentation.rules_text(rules) if reg.presentation is not None else str(rules)
                screen.match_started(msg.match_started, rules_text)
            elif kind == "deal_started":
                screen.deal_started(msg.deal_started)
            elif kind == "event":
                screen.event(msg.event)
            elif kind == "action_request":
                action = await _ask(msg.action_request, screen, reg, table)
                if action is None:
                    resigned = True
                    screen.say("You resign: closing the session (the referee scores the disconnect).")
                    call.cancel()
                    break
                await referee.aio(call.write(bot_pb2.BotMessage(action=bot_pb2.ActionResponse(
                    match_id=msg.match_id, request_id=msg.action_request.request_id, action=action))))
            elif kind == "action_rejected":
                rj = msg.action_rejected
                screen.say(f"The referee refused {seat_lines.game_text(rj.action, screen.describe)}: {rj.reason}")
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
        winner = "no winner" if r.winner is None else f"{screen.seat_name(r.winner)} won"
        screen.say(f"##### Match over ({r.termination}): {winner} #####")
        if r.detail:
            screen.say(f"  {r.detail}")
    return EXIT_OK


def _described(req: bot_pb2.ActionRequest, screen: Screen, reg: games.Registered,
               table: referee.lowlevel.Table) -> tuple[dict[str, Any], list[common_pb2.Action] | None]:
    """The position as the game describes it to the human's seat, and — for a game without a
    presentation — the request's own legal actions to send back (``None``: send each legal
    move's id through the wire)."""
    if reg.presentation is not None and table.match is not None:
        return reg.presentation.present(reg.presentation.match_view(table.match, screen.seat)), None
    legal = list(req.legal_actions)
    moves = [{"id": "", "label": seat_lines.game_text(a, screen.describe), "kind": "", "cards": []} for a in legal]
    return {"seats": [], "piles": [], "table": None, "scores": [], "notes": [], "last": None, "legal": moves}, legal


async def _ask(req: bot_pb2.ActionRequest, screen: Screen, reg: games.Registered,
               table: referee.lowlevel.Table) -> common_pb2.Action | None:
    """Show the decision and read answers until one is legal; ``None`` to resign."""
    shown, raw = _described(req, screen, reg, table)
    legal = shown["legal"]
    match = table.match
    where = (match.game_number, match.deal_number, match.scores) if match is not None else (0, 0, ())
    screen.request(req, shown, where)
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
        got = parse_answer(line, legal)
        if isinstance(got, str):
            screen.say(f"  ! {got}")
            continue
        screen.say(f"  -> {legal[got]['label']}")
        return raw[got] if raw is not None else reg.wire.action_from_text(str(legal[got]["id"]))
