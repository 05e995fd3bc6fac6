"""The Python bot kit: card helpers against the engine, action text, and the session runtime
against a small fake referee (a gRPC BotService in this process, driving real engine matches),
so that nothing here needs the real referee server."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest

from gin_arena.v2 import bot_pb2, bot_pb2_grpc, common_pb2
from gin_arena.v2.games import gin_pb2
from referee import gin
from referee.gin import wire as gin_wire
from sample_bots import greedy_bot, stdio_bridge
from sample_bots.kit import Bot, BotConfig, SessionAbort, cards, make_parser, masks, parse_config, run_bot
from sample_bots.kit.actions import action_text, parse_action, to_action, unseen_cards
from tests._wait import HANG_S, RUN_HANG_S

ROOT = Path(__file__).resolve().parent.parent


# ----- card helpers -----
def _random_hands(n: int, seed: int) -> Iterator[list[str]]:
    rng = random.Random(seed)
    deck = list(cards.DECK)
    for k in range(n):
        if k % 3 == 0:  # meld-rich: a run and a set, then random cards
            s, r = rng.choice(cards.SUITS), rng.randint(1, 9)
            hand = {cards.make_card(r + i, s) for i in range(rng.randint(3, 5))}
            rr = rng.randint(1, 13)
            hand |= {cards.make_card(rr, t) for t in rng.sample(cards.SUITS, rng.randint(3, 4))}
            size = rng.choice([10, 11])
            while len(hand) < size:
                hand.add(rng.choice(deck))
            yield sorted(hand)[:size]
        else:
            yield rng.sample(deck, rng.choice([3, 7, 10, 11]))


def test_deadwood_matches_the_engine_on_random_hands() -> None:
    for hand in _random_hands(1500, 1):
        engine_hand = gin.parse_cards(hand)
        expected = gin.deadwood(engine_hand)
        assert cards.deadwood(hand) == expected, hand
        assert masks.deadwood_mask(masks.to_mask(hand)) == expected, hand
        arrangement = cards.arrange(hand)
        assert arrangement.deadwood == expected
        in_melds = [c for m in arrangement.melds for c in m]
        assert len(in_melds) == len(set(in_melds)), "melds overlap"
        assert all(cards.is_meld(m) for m in arrangement.melds)
        assert sorted(in_melds + arrangement.deadwood_cards) == sorted(hand)
        assert cards.total_value(arrangement.deadwood_cards) == expected


def test_discard_helpers_match_the_engine() -> None:
    for hand in _random_hands(600, 2):
        if len(hand) < 4:
            continue
        engine_hand = gin.parse_cards(hand)
        each = {str(c): dw for c, dw in gin.deadwood_after_each_discard(engine_hand).items()}
        assert cards.deadwood_after_discard(hand) == each
        best = min(each.values())
        assert cards.min_deadwood_after_discard(hand) == best
        assert masks.deadwood_after_best_discard_mask(masks.to_mask(hand)) == best
        choice = cards.best_discard(hand)
        assert each[choice] == best
        tied = [c for c in hand if each[c] == best]
        assert cards.value(choice) == max(cards.value(c) for c in tied)
        forbidden = hand[0]
        assert cards.best_discard(hand, forbidden=forbidden) != forbidden


def test_deadwood_after_draw_matches_adding_then_discarding() -> None:
    rng = random.Random(3)
    for hand in _random_hands(600, 4):
        m = masks.to_mask(hand)
        for card in rng.sample([c for c in cards.DECK if c not in hand], 6):
            i = masks.INDEX[card]
            expected = gin.min_deadwood_after_discard(gin.parse_cards([*hand, card]))
            assert masks.deadwood_after_draw_mask(m, i) == expected, (hand, card)


@pytest.mark.parametrize(("hand", "deadwood"), [
    (["As", "2s", "3s", "Kh", "Kd"], 20),
    (["4h", "5h", "6h", "5s", "5d"], 10),  # the run (5s 5d left) beats the set (4h 6h left)
    (["Qs", "Ks", "As"], 21),  # ace is low: Q-K-A is no run
    (["7s", "7h", "7d", "7c", "8c", "9c"], 0),
    ([], 0),
])
def test_deadwood_examples(hand: list[str], deadwood: int) -> None:
    assert cards.deadwood(hand) == deadwood


def test_card_helper_examples() -> None:
    import doctest

    assert doctest.testmod(cards).failed == 0


def test_card_text() -> None:
    assert cards.parse_card("ts") == "Ts" and cards.parse_card("10h") == "Th" and cards.parse_card(" kC ") == "Kc"
    for bad in ("", "1s", "Tx", "Ts5", "AA"):
        with pytest.raises(ValueError, match="not a card"):
            cards.parse_card(bad)
    assert [cards.value(c) for c in ("As", "9d", "Tc", "Jh", "Qs", "Kd")] == [1, 9, 10, 10, 10, 10]
    assert cards.rank("As") == 1 and cards.rank("Kd") == 13 and cards.suit("Kd") == "d"
    assert len(set(cards.DECK)) == 52 and tuple(str(c) for c in gin.DECK) == cards.DECK
    assert cards.sort_cards(["Kc", "2s", "As", "3h"]) == ["As", "2s", "3h", "Kc"]
    assert sorted(cards.layoff_targets(["5h", "6h", "7h"])) == ["4h", "8h"]
    assert sorted(cards.layoff_targets(["9s", "9h", "9d"])) == ["9c"]
    assert cards.layoff_targets(["Js", "Qs", "Ks"]) == ["Ts"]


def test_action_text_round_trip() -> None:
    for text in ("pass", "take_upcard", "draw_stock", "draw_discard", "discard Ts", "knock 2c", "big_gin"):
        assert action_text(parse_action(text)) == text
        assert gin_wire.action_from_proto(parse_action(text)) == gin.parse_action(text)
    assert action_text(parse_action("DISCARD ts")) == "discard Ts"
    for bad, message in [("", "empty"), ("fold", "unknown action"), ("discard", "exactly one card"),
                         ("draw_stock Ts", "takes no card"), ("knock Xx", "not a card")]:
        with pytest.raises(ValueError, match=message):
            parse_action(bad)
    legal = [parse_action(t) for t in ("draw_stock", "draw_discard")]
    request = bot_pb2.ActionRequest(legal_actions=legal, gin=gin_pb2.State(hand=["As"]))
    draw = common_pb2.Action(gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_DRAW_STOCK))
    assert to_action("draw_stock", request) == draw
    assert to_action(legal[1], request) is legal[1]
    with pytest.raises(ValueError, match="unknown action"):
        to_action("meld 5s 6s 7s", request)


GAME_WORD = re.compile(r"(?<![a-z])(gin|rummy)(?![a-z])", re.IGNORECASE)
"""A game's name as a word of an identifier or a string (``gin_arena`` is the protocol's package,
``GIN_TOKEN`` an environment variable: not games)."""
NOT_GAMES = re.compile(r"gin_arena|gin-arena|Gin Arena|GIN_[A-Z_]+|gin_bot")


def code_words(path: Path) -> list[str]:
    """The identifiers and string constants of a module's code (docstrings and comments aside)."""
    import ast

    tree = ast.parse(path.read_text())
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    docstrings |= {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    words: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.arg):
            words.append(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            words.append(node.name)
        elif isinstance(node, ast.alias):
            words.append(node.asname or node.name)
        elif isinstance(node, ast.ImportFrom):
            words.append(node.module or "")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.append(node.value)
    return [w for w in words if GAME_WORD.search(NOT_GAMES.sub("", w))]


@pytest.mark.parametrize("module", ["session.py", "games.py", "deck.py"])
def test_the_kits_session_names_no_game(module: str) -> None:
    """Issue 19: the kit's session code names no game; each game's helpers are its own package."""
    assert code_words(ROOT / "sample_bots" / "kit" / module) == []
    assert code_words(ROOT / "sample_bots" / "kit" / "gin" / "actions.py")  # (the test sees a game's names)


def test_each_games_helpers_are_found_by_its_name() -> None:
    from sample_bots.kit import games, gin, rummy
    found = {name: games.kit_for(name) for name in (gin.NAME, rummy.NAME)}
    assert {name: kit.name for name, kit in found.items() if kit} == {"gin": "gin", "rummy": "rummy"}
    assert games.parse_action("meld 5s 6s 7s", "rummy").HasField("rummy")
    assert games.parse_action("knock 5s", "gin").gin.card == "5s"
    assert games.kit_for("toy3") is None
    with pytest.raises(ValueError, match="no action texts of the game 'toy3'"):
        games.parse_action("7", "toy3")


def test_unseen_cards() -> None:
    match = gin.Match(gin.RuleSet.classic(), b"unseen")
    state = gin_wire.information_state(match.view(0))
    unseen = unseen_cards(state)
    assert len(unseen) == 52 - 10 - 1
    assert not unseen & set(state.hand) and state.discard_pile[-1] not in unseen


# ----- a fake referee -----
OUTCOMES = {
    "knock": gin_pb2.DEAL_OUTCOME_KNOCK, "undercut": gin_pb2.DEAL_OUTCOME_UNDERCUT,
    "gin": gin_pb2.DEAL_OUTCOME_GIN, "big_gin": gin_pb2.DEAL_OUTCOME_BIG_GIN,
    "dead": gin_pb2.DEAL_OUTCOME_DEAD_HAND,
}
Policy = Callable[[bot_pb2.ActionRequest], "common_pb2.Action | str"]


@dataclass
class FakeReferee(bot_pb2_grpc.BotServiceServicer):
    """A BotService that plays engine matches between the connecting bot (seat 0) and an
    in-process policy (seat 1), the way the real referee talks (welcome, match_started,
    deal_started, action_request, deal_finished, game_finished, match_finished)."""

    token: str = "good-token"
    matches: int = 1
    seed: bytes = b"fake"
    opponent: Policy = greedy_bot.decide
    drop_after_requests: int = 0  # > 0: end the first connection with UNAVAILABLE after this many
    hold_open: bool = False  # send welcome, then wait (for signal tests)
    hellos: list[bot_pb2.Hello] = field(default_factory=list)
    answers: list[tuple[str, int]] = field(default_factory=list)
    fallbacks: list[int] = field(default_factory=list)  # the request ids answered with ``fallback`` set
    resigns: list[bot_pb2.Resign] = field(default_factory=list)
    results: list[gin.MatchOutcome] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _matches: dict[str, gin.Match] = field(default_factory=dict)
    _request_id: int = 0
    _connections: int = 0

    def Play(
        self, request_iterator: Iterator[bot_pb2.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[bot_pb2.RefereeMessage]:
        self._connections += 1
        first = next(request_iterator)
        if first.WhichOneof("kind") != "hello":
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "hello first")
        self.hellos.append(first.hello)
        if first.hello.token != self.token:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown token")
        yield bot_pb2.RefereeMessage(welcome=bot_pb2.Welcome(protocol_version=2, session_id=f"s{self._connections}"))
        if self.hold_open:
            for _ in request_iterator:
                pass
            return
        sent = 0
        for k in range(self.matches):
            mid = f"match-{k}"
            match = self._matches.setdefault(mid, gin.Match(gin.RuleSet.preset("short"), self.seed + bytes([k])))
            if match.is_over:
                continue
            yield bot_pb2.RefereeMessage(match_id=mid, match_started=bot_pb2.MatchStarted(
                match_id=mid, seat=0, player_names=[first.hello.bot_name, "opponent"], game_name="gin",
                gin=gin_wire.rules_to_proto(match.rules)))
            yield bot_pb2.RefereeMessage(match_id=mid, deal_started=gin_wire.deal_started(match.view(0)))
            while not match.is_over:
                seat = match.to_move
                assert seat is not None
                self._request_id += 1
                request = gin_wire.action_request(self._request_id, match.view(seat), [5000, 5000], 0,
                                               5000)
                if seat == 1:
                    action = to_action(self.opponent(request), request)
                else:
                    if self.drop_after_requests and self._connections == 1 and sent >= self.drop_after_requests:
                        context.abort(grpc.StatusCode.UNAVAILABLE, "dropped for the test")
                    yield bot_pb2.RefereeMessage(match_id=mid, action_request=request)
                    sent += 1
                    reply = next(request_iterator)
                    if reply.WhichOneof("kind") == "resign":
                        self.resigns.append(reply.resign)
                        for _ in request_iterator:
                            pass
                        return
                    answer = reply.action
                    if answer.fallback:
                        self.fallbacks.append(answer.request_id)
                    self.answers.append((answer.match_id, answer.request_id))
                    if answer.match_id != mid or answer.request_id != self._request_id:
                        self.errors.append(f"bad ids {answer.match_id} {answer.request_id}")
                    action = answer.action
                domain = gin_wire.action_from_proto(action)
                if domain not in match.view(seat).legal_actions:
                    self.errors.append(f"illegal {action_text(action)}")
                    context.abort(grpc.StatusCode.FAILED_PRECONDITION, "illegal action")
                for ev in match.apply(domain, seat):
                    if isinstance(ev, gin.DealEnded):
                        o = ev.outcome
                        yield bot_pb2.RefereeMessage(match_id=mid, deal_finished=bot_pb2.DealFinished(
                            result=common_pb2.DealResult(
                                game_number=ev.game, deal_number=ev.deal,
                                winner=-1 if o.winner is None else o.winner, scores_after=ev.scores,
                                gin=gin_pb2.DealResult(outcome=OUTCOMES[o.kind], points=o.points))))
                    elif isinstance(ev, gin.GameEnded):
                        yield bot_pb2.RefereeMessage(match_id=mid, game_finished=bot_pb2.GameFinished(
                            result=gin_wire.game_result(ev.result)))
                    elif isinstance(ev, gin.DealStarted):
                        yield bot_pb2.RefereeMessage(match_id=mid, deal_started=gin_wire.deal_started(match.view(0)))
            assert match.outcome is not None
            self.results.append(match.outcome)
            yield bot_pb2.RefereeMessage(match_id=mid, match_finished=bot_pb2.MatchFinished(
                result=common_pb2.MatchResult(match_id=mid, winner=match.outcome.winner if match.outcome.winner
                                              is not None else -1, termination=common_pb2.TERMINATION_NORMAL,
                                              game_name="gin")))
        for _ in request_iterator:  # until the bot closes its side
            pass


@pytest.fixture
def serve() -> Iterator[Callable[[FakeReferee], str]]:
    servers: list[grpc.Server] = []

    def start(referee: FakeReferee) -> str:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        bot_pb2_grpc.add_BotServiceServicer_to_server(referee, server)
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        servers.append(server)
        return f"127.0.0.1:{port}"

    yield start
    for server in servers:
        server.stop(grace=None)


def _config(address: str, **kw: object) -> BotConfig:
    return BotConfig(token="good-token", referee=address, backoff_s=0.05, backoff_max_s=0.2, **kw)  # type: ignore[arg-type]


def test_run_bot_plays_a_match_and_returns_0(serve: Callable[[FakeReferee], str]) -> None:
    referee = FakeReferee()
    address = serve(referee)
    assert run_bot(greedy_bot.decide, config=_config(address, name="greedy-test")) == 0
    assert not referee.errors
    assert len(referee.results) == 1 and referee.answers
    hello = referee.hellos[0]
    assert hello.bot_name == "greedy-test" and hello.protocol_version == 2 and len(hello.nonce) == 16
    assert hello.max_concurrent_matches == 1 and "python" in hello.client_info
    assert hello.skip_event_messages  # a decide function needs no event messages


def test_the_kit_asks_for_event_messages_only_for_bots_that_read_them() -> None:
    from sample_bots.kit.session import _Session

    class Listener(Bot):
        def decide(self, request: bot_pb2.ActionRequest) -> common_pb2.Action | str:
            return greedy_bot.decide(request)

        def on_event(self, match_id: str, event: common_pb2.Event) -> None:
            pass

    class Plain(Bot):
        def decide(self, request: bot_pb2.ActionRequest) -> common_pb2.Action | str:
            return greedy_bot.decide(request)

    def skips(bot: Any, **kw: Any) -> bool:
        return _Session(bot, _config("127.0.0.1:1", **kw))._hello().hello.skip_event_messages

    assert not skips(Listener) and not skips(Listener())
    assert skips(Plain) and skips(Plain()) and skips(greedy_bot.decide)
    assert not skips(Plain, event_messages=True) and skips(Listener, event_messages=False)


class _Recorder(Bot):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def decide(self, request: bot_pb2.ActionRequest) -> common_pb2.Action | str:
        self.calls.append("decide")
        return greedy_bot.decide(request)

    def on_match_started(self, match_id: str, info: bot_pb2.MatchStarted) -> None:
        self.calls.append(f"match_started {match_id}")

    def on_deal_started(self, match_id: str, deal: bot_pb2.DealStarted) -> None:
        self.calls.append("deal_started")

    def on_deal_finished(self, match_id: str, result: common_pb2.DealResult) -> None:
        self.calls.append("deal_finished")

    def on_game_finished(self, match_id: str, result: common_pb2.GameResult) -> None:
        self.calls.append("game_finished")

    def on_match_finished(self, match_id: str, result: common_pb2.MatchResult) -> None:
        self.calls.append(f"match_finished {match_id}")

    def close(self) -> None:
        self.calls.append("close")


def test_hooks_are_called_in_order_and_several_matches_share_a_session(
    serve: Callable[[FakeReferee], str],
) -> None:
    referee = FakeReferee(matches=2)
    address = serve(referee)
    bot = _Recorder()
    assert run_bot(bot, config=_config(address, matches=2)) == 0
    assert not referee.errors and len(referee.results) == 2
    calls = bot.calls
    assert calls[0] == "match_started match-0" and calls[1] == "deal_started"
    assert calls.index("match_finished match-0") < calls.index("match_started match-1")
    assert calls[-2:] == ["match_finished match-1", "close"]
    assert calls.count("decide") == len(referee.answers)
    assert calls.count("game_finished") == 2


def test_a_bot_class_gets_one_instance_per_match(serve: Callable[[FakeReferee], str]) -> None:
    created: list[PerMatch] = []

    class PerMatch(Bot):
        def __init__(self) -> None:
            created.append(self)
            self.match_ids: set[str] = set()

        def decide(self, request: bot_pb2.ActionRequest) -> common_pb2.Action | str:
            return greedy_bot.decide(request)

        def on_match_started(self, match_id: str, info: bot_pb2.MatchStarted) -> None:
            self.match_ids.add(match_id)

    address = serve(FakeReferee(matches=2))
    assert run_bot(PerMatch, config=_config(address, matches=2)) == 0
    assert [b.match_ids for b in created] == [{"match-0"}, {"match-1"}]


def test_reconnects_after_a_dropped_connection(serve: Callable[[FakeReferee], str]) -> None:
    referee = FakeReferee(drop_after_requests=3)
    address = serve(referee)
    bot = _Recorder()
    assert run_bot(bot, config=_config(address)) == 0
    assert referee._connections == 2 and len(referee.results) == 1 and not referee.errors
    assert [h.token for h in referee.hellos] == ["good-token", "good-token"]
    assert bot.calls.count("match_started match-0") == 1  # a resumed match is not started twice


def test_a_bad_token_fails_at_once(serve: Callable[[FakeReferee], str]) -> None:
    referee = FakeReferee(token="other")
    address = serve(referee)
    assert run_bot(greedy_bot.decide, config=_config(address)) == 1
    assert len(referee.hellos) == 1  # no second attempt


def test_the_hello_declares_the_command_lines_games_presets_and_concurrency(
        serve: Callable[[FakeReferee], str]) -> None:
    referee = FakeReferee()
    argv = ["--referee", serve(referee), "--token", "good-token", "--games", "gin, rummy", "--presets",
            "gin/short,rummy/classic", "--concurrent", "3"]
    assert run_bot(greedy_bot.decide, argv=argv) == 0
    hello = referee.hellos[0]
    assert list(hello.games) == ["gin", "rummy"] and list(hello.presets) == ["gin/short", "rummy/classic"]
    assert hello.max_concurrent_matches == 3


def test_without_games_or_presets_the_hello_declares_the_bots_own(serve: Callable[[FakeReferee], str]) -> None:
    class Declared(Bot):
        games = ("gin",)
        presets = ("gin/short",)

        def decide(self, request: bot_pb2.ActionRequest) -> common_pb2.Action | str:
            return greedy_bot.decide(request)

    referee = FakeReferee()
    assert run_bot(Declared, config=_config(serve(referee))) == 0
    assert list(referee.hellos[0].games) == ["gin"] and list(referee.hellos[0].presets) == ["gin/short"]


@pytest.mark.parametrize("bad", ["gin", "gin/", "/short"])
def test_a_preset_that_is_not_game_slash_preset_is_a_usage_error(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        parse_config(make_parser(), ["--token", "t", "--presets", bad])
    assert e.value.code == 2 and "is not GAME/PRESET" in capsys.readouterr().err


def test_idle_backoff_max_bounds_the_wait_and_a_bad_one_is_a_usage_error(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    config, _ = parse_config(make_parser(), ["--token", "t", "--idle-backoff-max", "0.5"])
    assert config.idle_backoff_max_s == 0.5
    monkeypatch.setenv("GIN_IDLE_BACKOFF_MAX", "4")
    assert parse_config(make_parser(), ["--token", "t"])[0].idle_backoff_max_s == 4.0
    for bad in ("0", "-1", "nan", "soon"):
        with pytest.raises(SystemExit) as e:
            parse_config(make_parser(), ["--token", "t", "--idle-backoff-max", bad])
        assert e.value.code == 2 and "--idle-backoff-max" in capsys.readouterr().err


def test_with_matches_0_a_lost_referee_is_retried_past_retries_with_a_capped_wait(
        caplog: pytest.LogCaptureFixture) -> None:
    """``--matches 0`` plays until stopped: an unreachable referee is retried for as long as it
    takes (``retries`` does not end it), each attempt one log line, the wait capped."""
    from sample_bots.kit import play

    config = _config("127.0.0.1:1", retries=1, matches=0, idle_backoff_max_s=0.2)

    async def main() -> None:
        task = asyncio.ensure_future(play(greedy_bot.decide, config))
        while sum("reconnecting in" in r.getMessage() for r in caplog.records) < 6 and not task.done():
            await asyncio.sleep(0.05)
        assert not task.done(), task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    with caplog.at_level(logging.WARNING):
        asyncio.run(main())
    attempts = [r.getMessage() for r in caplog.records if "reconnecting in" in r.getMessage()]
    assert len(attempts) >= 6 and all(a.endswith(" until stopped)") for a in attempts), attempts
    waits = [float(a.split("reconnecting in ", 1)[1].split(" s", 1)[0]) for a in attempts]
    assert max(waits) <= 0.2 * 1.2 + 0.05, waits  # (printed to 0.1 s)


def test_an_unreachable_referee_is_retried_then_given_up(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert run_bot(greedy_bot.decide, config=_config("127.0.0.1:1", retries=2)) == 1
    attempts = [r.getMessage() for r in caplog.records if "reconnecting in" in r.getMessage()]
    assert [a.rsplit("(attempt ", 1)[1] for a in attempts] == ["1 of 2)", "2 of 2)"], attempts


def test_with_on_error_fallback_decide_errors_answer_a_legal_action_marked_fallback(
    serve: Callable[[FakeReferee], str],
) -> None:
    calls = []

    def buggy(request: bot_pb2.ActionRequest) -> str:
        calls.append(request.request_id)
        if len(calls) % 2:
            raise RuntimeError("bug")
        return "discard Zz" if len(calls) % 4 == 0 else "big_gin"

    referee = FakeReferee()
    assert run_bot(buggy, config=_config(serve(referee), on_error="fallback")) == 0
    assert not referee.errors and len(referee.results) == 1 and not referee.resigns
    # every call raised (odd) or chose an illegal action (even: big_gin or a card that is no card)
    # unless big_gin happened to be legal: each of those answers went out marked as a fallback
    assert len(referee.fallbacks) >= len(calls) - 1 and set(referee.fallbacks) <= set(calls)


def test_by_default_an_exception_in_decide_resigns_with_its_last_line_and_exits_1(
    serve: Callable[[FakeReferee], str], caplog: pytest.LogCaptureFixture,
) -> None:
    def buggy(request: bot_pb2.ActionRequest) -> str:
        raise ValueError("bad card\nsecond line")

    referee = FakeReferee()
    with caplog.at_level(logging.ERROR):
        assert run_bot(buggy, config=_config(serve(referee))) == 1
    assert [(r.match_id, r.reason) for r in referee.resigns] == [("match-0", "ValueError: bad card")]
    assert not referee.answers
    assert "ValueError: bad card" in caplog.text and "Traceback" in caplog.text


def test_an_exception_in_a_hook_resigns_by_default_and_is_logged_with_fallback(
    serve: Callable[[FakeReferee], str],
) -> None:
    class Hooked(Bot):
        def decide(self, request: bot_pb2.ActionRequest) -> common_pb2.Action:
            return greedy_bot.decide(request)

        def on_deal_started(self, match_id: str, deal: bot_pb2.DealStarted) -> None:
            raise KeyError("7h")

    referee = FakeReferee()
    assert run_bot(Hooked, config=_config(serve(referee))) == 1
    assert [r.reason for r in referee.resigns] == ["on_deal_started: KeyError: '7h'"]
    referee = FakeReferee()
    assert run_bot(Hooked, config=_config(serve(referee), on_error="fallback")) == 0
    assert len(referee.results) == 1 and not referee.resigns and not referee.fallbacks


def test_on_error_is_a_command_line_option_checked_like_the_others(tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text("from sample_bots.kit import run_bot\nraise SystemExit(run_bot(lambda r: 'pass'))\n")
    out = subprocess.run([sys.executable, str(bot), "--token", "t", "--on-error", "ignore"],
                         capture_output=True, text=True, env=_env(), cwd=ROOT)
    assert out.returncode == 2 and "--on-error" in out.stderr and "fallback" in out.stderr
    out = subprocess.run([sys.executable, str(bot), "--token", "t"], capture_output=True, text=True,
                         env={**_env(), "GIN_ON_ERROR": "ignore"}, cwd=ROOT)
    assert out.returncode == 2 and "--on-error must be one of fault, fallback; got 'ignore'" in out.stderr


def test_session_abort_ends_the_session_with_1(serve: Callable[[FakeReferee], str]) -> None:
    def quitter(request: bot_pb2.ActionRequest) -> str:
        raise SessionAbort("giving up")

    referee = FakeReferee()
    assert run_bot(quitter, config=_config(serve(referee))) == 1
    assert not referee.answers


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "proto"), env.get("PYTHONPATH", "")])
    return env


@pytest.mark.parametrize("module", ["sample_bots.random_bot", "sample_bots.greedy_bot", "sample_bots.expert_bot"])
def test_sample_bot_processes_play_a_match_and_exit_0(serve: Callable[[FakeReferee], str], module: str) -> None:
    referee = FakeReferee()
    address = serve(referee)
    env = _env()
    env["GIN_TOKEN"] = "good-token"  # the token from the environment, the rest from arguments
    args = [sys.executable, "-m", module, "--referee", address, "--name", module.split(".")[-1]]
    if module.endswith("random_bot"):
        args += ["--seed", "5"]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=RUN_HANG_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(referee.results) == 1 and not referee.errors
    assert "match match-0 finished" in done.stderr


def test_a_missing_token_is_a_usage_error() -> None:
    env = {k: v for k, v in _env().items() if k != "GIN_TOKEN"}
    done = subprocess.run([sys.executable, "-m", "sample_bots.greedy_bot"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "token is required" in done.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_sigterm_and_sigint_stop_the_bot_cleanly(serve: Callable[[FakeReferee], str], sig: int) -> None:
    address = serve(FakeReferee(hold_open=True))
    proc = subprocess.Popen([sys.executable, "-m", "sample_bots.greedy_bot", "--referee", address, "--token",
                             "good-token"], env=_env(), stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    lines: queue.Queue[str] = queue.Queue()
    stderr = proc.stderr

    def pump() -> None:
        for line in stderr:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + HANG_S  # the signal comes once the bot is playing
    while "welcome" not in lines.get(timeout=max(0.0, deadline - time.monotonic())):
        pass
    proc.send_signal(sig)
    assert proc.wait(timeout=30) == 0


def test_stdio_bridge_plays_a_match_end_to_end(serve: Callable[[FakeReferee], str], tmp_path: Path) -> None:
    """The bridge, as a process, with a Python stdio program (node may be absent) that answers
    every request with its first legal action, copied, and keeps the lines it was sent: each is a
    RefereeMessage in exactly the proto3 JSON mapping (json_format's standard options)."""
    from google.protobuf import json_format

    seen = tmp_path / "lines.jsonl"
    program = (
        "import json, sys\n"
        f"log = open({str(seen)!r}, 'w')\n"
        "for line in sys.stdin:\n"
        "    log.write(line); log.flush()\n"
        "    msg = json.loads(line)\n"
        "    if 'actionRequest' in msg:\n"
        "        print(json.dumps({'action': {'action': msg['actionRequest']['legalActions'][0]}}), flush=True)\n"
    )
    referee = FakeReferee()
    address = serve(referee)
    done = subprocess.run([sys.executable, "-m", "sample_bots.stdio_bridge", "--referee", address, "--token",
                           "good-token", "--", sys.executable, "-c", program], env=_env(), capture_output=True,
                          text=True, timeout=RUN_HANG_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(referee.results) == 1 and not referee.errors and referee.answers
    kinds = []
    for line in seen.read_text().splitlines():
        msg = json_format.Parse(line, bot_pb2.RefereeMessage())
        assert json.loads(line) == json_format.MessageToDict(msg), line  # the mapping, nothing else
        assert msg.match_id == "match-0"
        kinds.append(msg.WhichOneof("kind"))
    assert kinds[0] == "match_started" and kinds[1] == "deal_started" and kinds[-1] == "match_finished"
    assert {"action_request", "deal_finished", "game_finished"} <= set(kinds) and "event" not in kinds
    assert kinds.count("action_request") == len(referee.answers)


def test_stdio_bridge_resigns_when_the_program_says_so(serve: Callable[[FakeReferee], str]) -> None:
    program = ("import sys\nfor line in sys.stdin:\n    if 'actionRequest' in line:\n"
               "        print('{\"resign\": {\"reason\": \"no idea\"}}', flush=True)\n")
    referee = FakeReferee()
    done = subprocess.run([sys.executable, "-m", "sample_bots.stdio_bridge", "--referee", serve(referee),
                           "--token", "good-token", "--on-error", "fallback", "--", sys.executable, "-c", program],
                          env=_env(), capture_output=True, text=True, timeout=RUN_HANG_S)
    assert done.returncode == 1, done.stderr[-2000:]
    assert [(r.match_id, r.reason) for r in referee.resigns] == [("match-0", "the program resigned: no idea")]
    assert not referee.answers


def test_stdio_bridge_writes_a_plugin_games_messages_it_knows_by_reflection(tmp_path: Path) -> None:
    """toy3 (tests/plugin_game) travels as ``Any``: the bridge, which imports nothing of the game,
    asks the referee's reflection for its types and writes them in the JSON mapping (``@type``);
    the program answers with one of the legal actions, copied, and the tournament is normal."""
    program = tmp_path / "toy.py"
    program.write_text(
        "import json, sys\n"
        "log = open(sys.argv[1], 'a')\n"
        "for line in sys.stdin:\n"
        "    log.write(line); log.flush()\n"
        "    request = json.loads(line).get('actionRequest')\n"
        "    if request is not None:\n"
        "        best = max(request['legalActions'], key=lambda a: a['other'].get('card', 0))\n"
        "        print(json.dumps({'action': {'action': best}}), flush=True)\n")
    bots = [a for n in "abc" for a in ("--bot", f'name={n} cmd="{{python}} {program} {tmp_path / n}.jsonl" '
                                                  "protocol=stdio games=toy3")]
    out = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "--game", "toy3", "--seats", "3",
                          "--games", "3", "--tc", "st=10", "--out", str(tmp_path / "run"), *bots],
                         capture_output=True, text=True, timeout=RUN_HANG_S, cwd=tmp_path, env=_env())
    assert out.returncode == 0, out.stdout + out.stderr
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["terminations"] == {"normal": 3}, results
    lines = [json.loads(line) for n in "abc" for line in (tmp_path / f"{n}.jsonl").read_text().splitlines()]
    requests = [m["actionRequest"] for m in lines if "actionRequest" in m]
    assert requests and all(a["other"]["@type"] == "type.googleapis.com/toy3.v1.Play"
                            for r in requests for a in r["legalActions"])


def test_stdio_bridge_plays_the_sample_node_program(serve: Callable[[FakeReferee], str]) -> None:
    referee = FakeReferee()
    done = subprocess.run([sys.executable, "-m", "sample_bots.stdio_bridge", "--referee", serve(referee),
                           "--token", "good-token", "--", "node", str(ROOT / "sample_bots" / "stdio" / "bot.js")],
                          env=_env(), capture_output=True, text=True, timeout=RUN_HANG_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(referee.results) == 1 and not referee.errors
    assert "stdio bot: match match-0 over" in done.stderr  # the program's stderr passes through


def test_stdio_bridge_fails_when_the_program_breaks_the_protocol(serve: Callable[[FakeReferee], str]) -> None:
    program = "import sys\nfor line in sys.stdin:\n    print('not json', flush=True)\n"
    referee = FakeReferee()
    done = subprocess.run([sys.executable, "-m", "sample_bots.stdio_bridge", "--referee", serve(referee),
                           "--token", "good-token", "--", sys.executable, "-c", program], env=_env(),
                          capture_output=True, text=True, timeout=RUN_HANG_S)
    assert done.returncode == 1
    assert "stdio protocol error: the answer to request" in done.stderr and "is not JSON" in done.stderr
    assert not referee.answers


def test_stdio_bridge_needs_a_command() -> None:
    with pytest.raises(SystemExit) as info:
        stdio_bridge.main(["--token", "t"])
    assert info.value.code == 2


# ----- the JavaScript bot over gRPC -----
JS_DIR = ROOT / "sample_bots" / "js"


@pytest.fixture(scope="module")
def js_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``npm ci`` in sample_bots/js if node_modules is missing (fails when it cannot: the JS bot
    is part of what CI proves). Test workers (pytest-xdist) share one temporary root: a lock
    there keeps two of them from running ``npm ci`` in the same folder at once."""
    if shutil.which("node") is None:
        pytest.fail("node is not installed: the JavaScript bot needs Node.js >= 18")
    with (tmp_path_factory.getbasetemp().parent / "npm-ci.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _npm_ci_if_missing()
    return JS_DIR / "node_modules"


def _npm_ci_if_missing() -> None:
    if not (JS_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is not installed: run `npm ci` in sample_bots/js")
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=JS_DIR, capture_output=True,
                              text=True, timeout=RUN_HANG_S)
        if done.returncode != 0:
            pytest.fail(f"npm ci failed: {done.stderr[-500:]}")


def test_js_bot_loads_the_proto_files(js_modules: Path) -> None:
    out = subprocess.run(["node", str(JS_DIR / "bot.js"), "--check-proto"], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == "Play"


def test_js_bot_plays_a_match_and_exits_0(js_modules: Path, serve: Callable[[FakeReferee], str]) -> None:
    referee = FakeReferee()
    env = {**os.environ, "GIN_TOKEN": "good-token", "GIN_REFEREE": serve(referee)}
    done = subprocess.run(["node", str(JS_DIR / "bot.js"), "--name", "js-test"], env=env, capture_output=True,
                          text=True, timeout=RUN_HANG_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(referee.results) == 1 and not referee.errors
    assert referee.hellos[0].bot_name == "js-test" and len(referee.hellos[0].nonce) == 16
    assert referee.hellos[0].skip_event_messages  # stateless: reads each request's state


def test_js_bot_reconnects_after_a_dropped_connection(js_modules: Path, serve: Callable[[FakeReferee], str]) -> None:
    referee = FakeReferee(drop_after_requests=3)
    done = subprocess.run(["node", str(JS_DIR / "bot.js"), "--referee", serve(referee), "--token", "good-token"],
                          capture_output=True, text=True, timeout=RUN_HANG_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert referee._connections == 2 and len(referee.results) == 1 and not referee.errors


def test_js_bot_fails_on_a_bad_token(js_modules: Path, serve: Callable[[FakeReferee], str]) -> None:
    referee = FakeReferee(token="other")
    done = subprocess.run(["node", str(JS_DIR / "bot.js"), "--referee", serve(referee), "--token", "good-token"],
                          capture_output=True, text=True, timeout=RUN_HANG_S)
    assert done.returncode == 1 and "UNAUTHENTICATED" in done.stderr


def test_sample_bots_import_only_the_standard_library_grpc_and_the_protocol() -> None:
    """A bot is an independent client: never ``referee`` or ``arena`` (``google`` is protobuf;
    ``grpc_reflection`` the stdio bridge's way to a plugin game's types) — with two named
    exceptions: the search bot ``mc`` plays out sampled worlds in the games' pure engines (the
    referee's public surface only: tests/test_structure.py), and the training bridge's encoders
    and policy bot use NumPy (the optional ``train`` extra; the policy bot finds a game's encoder
    by the game's registration)."""
    import ast

    allowed = set(sys.stdlib_module_names) | {"__future__", "grpc", "grpc_reflection", "google", "gin_arena",
                                              "sample_bots"}
    also = {"mc_bot.py": {"referee"}, "mc": {"referee"}, "encodings": {"numpy"}, "policy.py": {"numpy", "referee"}}
    excepted = set()
    for path in (ROOT / "sample_bots").rglob("*.py"):
        if "node_modules" in path.parts:
            continue
        extra = set().union(*(also.get(part, set()) for part in path.relative_to(ROOT / "sample_bots").parts))
        excepted |= {path.relative_to(ROOT / "sample_bots").parts[0]} if extra else set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed | extra, f"{path.relative_to(ROOT)} imports {name}"
    assert excepted == {"mc_bot.py", "mc", "kit"}  # (the exceptions name files that exist)
