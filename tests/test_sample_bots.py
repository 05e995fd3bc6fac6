"""The sample bots play in-process against each other through the engine and the wire
conversion the referee uses (no server): every answer is legal, games finish, and the expert
is clearly stronger. Also: the stdio protocol (bridge encoding, the sample stdio bot) and the
JavaScript bot's decisions (``node bot.js --selftest``)."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from google.protobuf import json_format

from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import gin_pb2
from referee import gin
from referee.gin import wire as gin_wire
from sample_bots import expert_bot, greedy_bot, random_bot
from sample_bots.kit.actions import action_text, is_legal, parse_action, to_action
from sample_bots.kit.gin import cards
from sample_bots.stdio_bridge import AnswerError, StdioBot, parse_answer, referee_line

ROOT = Path(__file__).resolve().parent.parent
JS_DIR = ROOT / "sample_bots" / "js"
STDIO_BOT = ROOT / "sample_bots" / "stdio" / "bot.js"
NODE = shutil.which("node")

Policy = Callable[[bot_pb2.ActionRequest], common_pb2.Action | str]


def requests_of(match: gin.Match, seat: int, request_id: int) -> bot_pb2.ActionRequest:
    """The ActionRequest the referee sends to ``seat`` now."""
    state = match.view(seat)
    return gin_wire.action_request(request_id, state, [60_000, 60_000], 0, 1_000)


def play_match(
    policies: Sequence[Policy], seed: bytes, rules: gin.RuleSet | None = None
) -> tuple[gin.MatchOutcome, int]:
    """Play one match; every answer must be one of the request's legal actions. Returns the
    outcome and the number of requests answered."""
    match = gin.Match(rules or gin.RuleSet.classic(), seed)
    request_id = 0
    while not match.is_over:
        seat = match.to_move
        assert seat is not None
        request_id += 1
        request = requests_of(match, seat, request_id)
        answer = to_action(policies[seat](request), request)
        assert is_legal(request, answer), (
            f"seat {seat} answered {action_text(answer)!r}; legal: {[action_text(a) for a in request.legal_actions]}"
        )
        match.apply(gin_wire.action_from_proto(answer), seat)
        assert request_id < 100_000, "the match does not end"
    assert match.outcome is not None
    return match.outcome, request_id


def make_policy(name: str, seed: int = 0) -> Policy:
    if name == "expert":
        return expert_bot.decide
    if name == "greedy":
        return greedy_bot.decide
    if name == "random":
        return random_bot.RandomBot(seed).decide
    raise ValueError(name)


def _game(args: tuple[str, str, int]) -> bool:
    """Game ``i`` of ``a`` against ``b``: games come in pairs on the same deals (the same seed)
    with the seats swapped, so that neither bot is luckier with the cards. Whether ``a`` won."""
    a, b, i = args
    seat_a = i % 2
    policies = [make_policy(a, i), make_policy(b, i)]
    if seat_a:
        policies.reverse()
    outcome, _ = play_match(policies, f"sample-bots-{a}-{b}-{i // 2}".encode())
    return outcome.winner == seat_a


def win_rate(a: str, b: str, games: int) -> float:
    """``a``'s share of ``games`` one-game matches against ``b`` (pairs of games on the same deals,
    seats swapped)."""
    jobs = [(a, b, i) for i in range(games)]
    workers = min(4, os.cpu_count() or 1)
    if workers > 1:
        # spawn, not fork: the test process may have grpc loaded (an xdist worker runs other
        # tests first), and a forked child of grpc's threads can crash in its first collection.
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            wins = sum(pool.map(_game, jobs, chunksize=max(2, games // (4 * workers))))
    else:
        wins = sum(map(_game, jobs))
    return wins / games


# ----- legality and completion -----
RULE_VARIANTS = {  # short games (target 50) in every variant
    "classic": gin.RuleSet.preset("classic", target=50),
    "oklahoma": gin.RuleSet.preset("oklahoma", target=50),
    "straight": gin.RuleSet.preset("straight", target=50),
    "reshuffle": gin.RuleSet.preset("short", stock_exhausted="reshuffle"),
    "two-games-winner-deals": gin.RuleSet.preset("classic", target=50, games=2, next_dealer="winner"),
}


@pytest.mark.parametrize("rules", list(RULE_VARIANTS.values()), ids=list(RULE_VARIANTS))
@pytest.mark.parametrize("pairing", [("greedy", "random"), ("random", "expert"), ("expert", "greedy")],
                         ids="-".join)
def test_sample_bots_play_complete_legal_matches(pairing: tuple[str, str], rules: gin.RuleSet) -> None:
    policies = [make_policy(pairing[0], 1), make_policy(pairing[1], 2)]
    outcome, requests = play_match(policies, f"legal-{rules.name}-{rules.games}".encode(), rules)
    assert outcome.winner in (0, 1, None)
    assert requests > 0


def test_expert_against_itself() -> None:
    outcome, _ = play_match([expert_bot.decide, expert_bot.decide], b"mirror", gin.RuleSet.preset("short"))
    assert outcome.winner in (0, 1)


def test_decisions_only_use_the_request() -> None:
    """The bots are stateless: the same request gives the same answer (random: same seed)."""
    match = gin.Match(gin.RuleSet.classic(), b"stateless")
    for rid in range(1, 40):
        seat = match.to_move
        assert seat is not None
        request = requests_of(match, seat, rid)
        for policy in (expert_bot.decide, greedy_bot.decide):
            assert to_action(policy(request)) == to_action(policy(bot_pb2.ActionRequest.FromString(
                request.SerializeToString())))
        match.apply(gin_wire.action_from_proto(to_action(greedy_bot.decide(request))), seat)
        if match.is_over:
            break


def test_greedy_takes_only_improving_cards_and_knocks_at_once() -> None:
    match = gin.Match(gin.RuleSet.classic(), b"greedy-rules")
    knock_seen = False
    for rid in range(1, 2000):
        seat = match.to_move
        if seat is None:
            break
        request = requests_of(match, seat, rid)
        answer = to_action(greedy_bot.decide(request))
        kinds = {a.gin.kind for a in request.legal_actions}
        if gin_pb2.ACTION_KIND_BIG_GIN in kinds:
            assert answer.gin.kind == gin_pb2.ACTION_KIND_BIG_GIN
        elif gin_pb2.ACTION_KIND_KNOCK in kinds:
            assert answer.gin.kind == gin_pb2.ACTION_KIND_KNOCK
            knock_seen = True
        elif answer.gin.kind in (gin_pb2.ACTION_KIND_TAKE_UPCARD, gin_pb2.ACTION_KIND_DRAW_DISCARD):
            hand = gin.parse_cards(list(request.gin.hand))
            top = gin.parse_card(request.gin.discard_pile[-1])
            assert gin.min_deadwood_after_discard([*hand, top]) < gin.deadwood(hand)
        match.apply(gin_wire.action_from_proto(answer), seat)
    assert knock_seen


def _gin(kind: gin_pb2.ActionKind.ValueType, card: str = "") -> common_pb2.Action:
    return common_pb2.Action(gin=gin_pb2.Action(kind=kind, card=card))


def _greedy_by_cards(request: bot_pb2.ActionRequest) -> common_pb2.Action:
    """The greedy bot's rule written with the readable deadwood of ``kit.gin.cards`` (the bot
    itself uses ``kit.gin.masks``): what it must choose, request by request."""
    hand, legal = list(request.gin.hand), [a.gin for a in request.legal_actions]
    kinds = [a.kind for a in legal]
    if gin_pb2.ACTION_KIND_BIG_GIN in kinds:
        return _gin(gin_pb2.ACTION_KIND_BIG_GIN)
    for kind in (gin_pb2.ACTION_KIND_KNOCK, gin_pb2.ACTION_KIND_DISCARD):
        after = {a.card: cards.deadwood([c for c in hand if c != a.card]) for a in legal if a.kind == kind}
        if after:
            card = min(after, key=lambda c: (after[c], -cards.value(c), -cards.rank(c)))
            return _gin(kind, card)
    take = gin_pb2.ACTION_KIND_TAKE_UPCARD if gin_pb2.ACTION_KIND_TAKE_UPCARD in kinds \
        else gin_pb2.ACTION_KIND_DRAW_DISCARD
    pile = request.gin.discard_pile
    if take in kinds and pile and \
            cards.min_deadwood_after_discard([*hand, pile[-1]], forbidden=pile[-1]) < cards.deadwood(hand):
        return _gin(take)
    for kind in (gin_pb2.ACTION_KIND_DRAW_STOCK, gin_pb2.ACTION_KIND_PASS):
        if kind in kinds:
            return _gin(kind)
    return request.legal_actions[0]


def test_greedy_chooses_what_the_readable_deadwood_gives() -> None:
    """Every request of greedy-vs-random matches (classic and short rules): the bot's answer
    on bit masks is the one the readable ``kit.cards`` functions give."""
    compared = 0
    for n, rules in enumerate([gin.RuleSet.classic(), gin.RuleSet.preset("short")] * 5):
        match = gin.Match(rules, b"greedy-masks-%d" % n)
        other = random_bot.RandomBot(n).decide
        for rid in range(1, 5000):
            seat = match.to_move
            if seat is None:
                break
            request = requests_of(match, seat, rid)
            expected = _greedy_by_cards(request)
            assert to_action(greedy_bot.decide(request)) == expected, action_text(expected)
            compared += 1
            answer = expected if seat == 0 else to_action(other(request))
            match.apply(gin_wire.action_from_proto(answer), seat)
    assert compared > 500


# ----- strength -----
GAMES = 80  # expert against greedy: pairs of games on the same deals, seats swapped


@pytest.mark.parametrize(("a", "b", "games", "at_least"), [
    ("expert", "greedy", GAMES, 0.60),
    ("expert", "random", GAMES // 2, 0.95),
    ("greedy", "random", GAMES // 4, 0.90),
], ids=["expert-greedy", "expert-random", "greedy-random"])
def test_stronger_bots_win(a: str, b: str, games: int, at_least: float, capsys: pytest.CaptureFixture[str]) -> None:
    t = time.time()
    rate = win_rate(a, b, games)
    with capsys.disabled():
        print(f"\nwin rate: {a} vs {b} {rate:.1%} ({games} games); {time.time() - t:.1f} s")
    assert rate >= at_least


# ----- the stdio protocol -----
def _some_requests(n: int = 60, seed: bytes = b"stdio") -> Iterator[tuple[gin.Match, bot_pb2.ActionRequest]]:
    match = gin.Match(gin.RuleSet.classic(), seed)
    for rid in range(1, n + 1):
        seat = match.to_move
        if seat is None:
            return
        request = requests_of(match, seat, rid)
        yield match, request
        match.apply(gin_wire.action_from_proto(to_action(greedy_bot.decide(request))), seat)


def test_request_line_is_the_proto3_json_of_the_request() -> None:
    for match, request in _some_requests():
        line = referee_line("m-1", "action_request", request)
        assert "\n" not in line
        obj = json.loads(line)
        assert obj == json_format.MessageToDict(bot_pb2.RefereeMessage(match_id="m-1", action_request=request))
        back = json_format.Parse(line, bot_pb2.RefereeMessage())
        assert back.match_id == "m-1" and back.action_request == request  # nothing lost
        r = obj["actionRequest"]
        assert r["requestId"] == str(request.request_id) and r["timeForMoveMs"] == 1_000  # uint64: a string
        st = r["gin"]
        view = match.view(request.gin.seat)
        assert st["hand"] == [str(c) for c in view.hand]
        assert st.get("discardPile", []) == [str(c) for c in view.discard_pile]  # empty: left out
        assert st.get("stockSize", 0) == view.stock_size
        assert st["phase"] in ("PHASE_UPCARD_OFFER", "PHASE_DRAW", "PHASE_DISCARD")
        assert st.get("myDeadwood", 0) == gin.deadwood(view.hand)  # 0: left out, as every default
        assert st["knockLimit"] == 10
        assert st.get("forbiddenDiscard") == (str(view.forbidden_discard) if view.forbidden_discard else None)
        assert len(r.get("events", [])) == len(view.events)
        for ev, mine in zip(r.get("events", []), view.events, strict=True):
            if mine.kind == "reshuffle":
                assert ev["gin"]["reshuffled"] and "kind" not in ev["gin"]
                continue
            assert ev.get("seat", 0) == mine.seat
            assert ev["gin"]["kind"] == "ACTION_KIND_" + mine.kind.upper()
            assert ev["gin"].get("card") == (str(mine.card) if mine.card is not None else None)


def test_notification_lines_are_the_proto3_json_of_the_messages() -> None:
    result = common_pb2.MatchResult(
        winner=1, termination=common_pb2.TERMINATION_NORMAL, games_won=[0, 1], seed=b"\x01\xff",
        games=[common_pb2.GameResult(game_number=1, winner=1, final_totals=[10, 160])], player_names=["a", "b"],
    )
    obj = json.loads(referee_line("m", "match_finished", bot_pb2.MatchFinished(result=result)))
    r = obj["matchFinished"]["result"]
    assert r["winner"] == 1 and r["termination"] == "TERMINATION_NORMAL" and r["gamesWon"] == [0, 1]
    assert r["seed"] == "Af8=" and r["games"][0]["finalTotals"] == [10, 160]  # bytes: base64
    assert "faultingSeat" not in r and "detail" not in r  # defaults left out
    started = bot_pb2.MatchStarted(match_id="m", seat=1, game_name="gin",
                                   gin=gin_wire.rules_to_proto(gin.RuleSet.classic()))
    rules = json.loads(referee_line("m", "match_started", started))["matchStarted"]
    assert rules["gameName"] == "gin" and rules["seat"] == 1
    assert rules["gin"]["knock"] == "KNOCK_MODE_LIMIT" and rules["gin"]["knockLimit"] == 10
    assert rules["gin"]["target"] == 100


def _answer(action: common_pb2.Action, **ids: object) -> str:
    return json.dumps({"action": {**ids, "action": json_format.MessageToDict(action)}})


def test_answer_lines_parse() -> None:
    _, request = next(_some_requests())
    legal = request.legal_actions[0]
    rid = request.request_id
    for line in (_answer(legal), _answer(legal, requestId=str(rid)), _answer(legal, requestId=rid, matchId="m-1"),
                 _answer(legal, match_id="m-1", request_id=rid) + "\n"):  # the proto names are read too
        assert parse_answer(line, "m-1", request) == legal
    assert parse_answer(_answer(parse_action("big_gin")), "m-1", request) == parse_action("big_gin")  # judged later


@pytest.mark.parametrize(("line", "message"), [
    ("draw_stock", "is not JSON"),
    ('{"action": {"action": {}}', "is not JSON"),
    ('["draw_stock"]', "must be a JSON object"),
    ('{"action": "draw_stock"}', "is not a BotMessage"),
    ('{"move": {"action": {}}}', "is not a BotMessage"),
    ('{"action": {"action": {"gin": {"kind": "ACTION_KIND_FOLD"}}}}', "is not a BotMessage"),
    ('{"ping": {"pingId": "1"}}', "must be an action like"),
    ("{}", "got nothing"),
    ('{"action": {"action": {}}}', "has no action"),
    ('{"action": {"requestId": "4", "action": {"gin": {"kind": "ACTION_KIND_PASS"}}}}', "names requestId 4"),
    ('{"action": {"matchId": "m-2", "action": {"gin": {"kind": "ACTION_KIND_PASS"}}}}', "names matchId 'm-2'"),
    ('{"resign": {"matchId": "m-2"}}', "names match 'm-2'"),
])
def test_malformed_answer_lines_are_reported_precisely(line: str, message: str) -> None:
    request = bot_pb2.ActionRequest(request_id=5, legal_actions=[parse_action("pass")])
    with pytest.raises(AnswerError, match=message) as info:
        parse_answer(line, "m-1", request)
    assert "request 5" in str(info.value)


def test_a_resign_line_is_the_programs_resignation() -> None:
    from sample_bots.stdio_bridge import Resignation

    request = bot_pb2.ActionRequest(request_id=5, legal_actions=[parse_action("pass")])
    with pytest.raises(Resignation, match="lost"):
        parse_answer('{"resign": {"reason": "lost"}}', "m-1", request)


def test_sample_stdio_bot_answers_legally_through_the_bridge() -> None:
    """A whole match: the sample stdio bot (through StdioBot, as the bridge runs it) against greedy."""
    bot = StdioBot([str(NODE), str(STDIO_BOT)])
    try:
        bot.send("m-9", "match_started", bot_pb2.MatchStarted(match_id="m-9", game_name="gin"))

        def stdio_policy(request: bot_pb2.ActionRequest) -> common_pb2.Action:
            return bot.decide_in_match("m-9", request)

        outcome, requests = play_match([stdio_policy, greedy_bot.decide], b"stdio-match")
        assert requests > 10 and outcome.winner in (0, 1)
        bot.send("m-9", "match_finished", bot_pb2.MatchFinished(result=common_pb2.MatchResult(winner=outcome.winner)))
    finally:
        bot.close()
    assert bot.proc.returncode == 0


def _python_program(code: str) -> list[str]:
    return [sys.executable, "-c", code]


@pytest.mark.parametrize(("code", "message"), [
    ("import sys; sys.stdin.readline(); print('draw_stock', flush=True)", "is not JSON"),
    ("import sys; sys.stdin.readline(); print('{\"act\": 1}', flush=True)", "is not a BotMessage"),
    ("import sys; sys.stdin.readline(); sys.exit(3)", "exited with code 3 before answering request"),
])
def test_bridge_gives_up_the_match_on_a_bad_program(code: str, message: str) -> None:
    from sample_bots.kit import BotCodeError

    bot = StdioBot(_python_program(code))
    try:
        _, request = next(_some_requests())
        with pytest.raises(BotCodeError, match=message) as raised:
            bot.decide_in_match("m-1", request)
        assert raised.value.match_id == "m-1" and message in raised.value.reason
    finally:
        bot.close()


def test_bridge_reports_a_program_that_is_gone() -> None:
    from sample_bots.kit import BotCodeError

    bot = StdioBot(_python_program("import sys; sys.exit(0)"))
    try:
        bot.proc.wait(timeout=10)
        with pytest.raises(BotCodeError, match="exited with code 0"):
            for _ in range(3):  # the pipe may accept a line or two before it breaks
                bot.send("m", "deal_finished", bot_pb2.DealFinished())
                _, request = next(_some_requests())
                bot.decide_in_match("m", request)
    finally:
        bot.close()


# ----- the JavaScript bot -----
def _node_lines(args: list[str], lines: list[str]) -> list[str]:
    out = subprocess.run([str(NODE), *args], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         timeout=60, check=True)
    return out.stdout.splitlines()


def test_js_bot_decides_like_the_python_greedy_bot() -> None:
    requests = []
    for i in range(3):
        for _, request in _some_requests(400, f"js-{i}".encode()):
            requests.append(request)
    lines = [referee_line("m", "action_request", r) for r in requests]
    lines.insert(0, referee_line("m", "match_started", bot_pb2.MatchStarted(game_name="gin")))  # no answer
    answers = _node_lines([str(JS_DIR / "bot.js"), "--selftest"], lines)
    assert len(answers) == len(requests)
    for request, line in zip(requests, answers, strict=True):
        chosen = parse_answer(line, "m", request)  # a BotMessage line, with the request's ids
        assert json.loads(line)["action"]["requestId"] == str(request.request_id)
        assert is_legal(request, chosen)
        assert chosen == to_action(greedy_bot.decide(request)), action_text(chosen)


def test_js_bot_usage_errors_exit_2() -> None:
    env = {k: v for k, v in os.environ.items() if k != "GIN_TOKEN"}
    out = subprocess.run([str(NODE), str(JS_DIR / "bot.js"), "--referee", "localhost:1"], capture_output=True,
                         text=True, timeout=60, env=env)
    assert out.returncode == 2 and "token is required" in out.stderr
