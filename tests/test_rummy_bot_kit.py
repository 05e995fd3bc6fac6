"""The kit's rummy helpers against the engine, and the sample rummy bots' decisions driven
in process from ``referee.rummy`` (no wire): every answer is legal, matches of 2..6 seats
finish for every preset, greedy beats random, the hoarder goes out "rummy"."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence

import pytest

from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import rummy_pb2
from referee import rummy
from sample_bots import rummy_greedy_bot, rummy_hoarder_bot, rummy_random_bot
from sample_bots.kit import RummyBot, cards
from sample_bots.kit import rummy as kr
from sample_bots.kit.actions import action_text, is_legal

Choose = Callable[[kr.View], str]


# ----- the engine's state as the kit's view -----
def table_of(state: rummy.InformationState) -> tuple[kr.TableMeld, ...]:
    return tuple(
        kr.TableMeld(m.number, m.owner, m.kind, tuple(str(c) for c in m.cards), m.low, m.high) for m in state.table
    )


def rules_of(rules: rummy.RummyRules) -> kr.Rules:
    return kr.Rules(
        name=rules.name, ace_high=rules.ace == "low_or_high", row=rules.discard_draw == "row", stop=rules.stop,
        rummy_doubles=rules.rummy_doubles, out_needs_discard=rules.out_needs_discard,
        table_scoring=rules.scoring == "table", face_values=rules.face_values, target=rules.target,
    )


def view_of(state: rummy.InformationState) -> kr.View:
    assert state.seat is not None
    return kr.View(
        seat=state.seat, num_seats=state.num_seats, dealer=state.dealer, turn=state.turn, phase=state.phase,
        hand=tuple(str(c) for c in state.hand), legal=tuple(str(a) for a in state.legal_actions),
        rules=rules_of(state.rules), hand_sizes=state.hand_sizes, stock_size=state.stock_size,
        discard_pile=tuple(str(c) for c in state.discard_pile), table=table_of(state),
        must_use=str(state.must_use or ""), stopped=str(state.stopped or ""), scores=state.scores,
    )


# ----- helpers against the engine -----
def _random_hands(n: int, seed: int) -> Iterator[list[str]]:
    rng = random.Random(seed)
    deck = [str(c) for c in rummy.DECK]
    for k in range(n):
        hand = set(rng.sample(deck, rng.choice([3, 6, 7, 8, 10, 11])))
        if k % 2:  # meld-rich: a run (maybe Q-K-A) and a set
            s, low = rng.choice("shdc"), rng.randint(1, 12)
            hand |= {kr._position_card(s, p) for p in range(low, min(low + rng.randint(3, 5), 15))}
            r = rng.randint(1, 13)
            hand |= {r_s for r_s in (cards.make_card(r, t) for t in rng.sample("shdc", rng.randint(3, 4)))}
        yield sorted(hand)


@pytest.mark.parametrize("ace_high", [False, True])
def test_meld_finder_matches_the_engine_on_random_hands(ace_high: bool) -> None:
    for hand in _random_hands(1500, 3 + ace_high):
        engine = {tuple(str(c) for c in m) for m in rummy.melds_from(rummy.parse_cards(hand), ace_high)}
        mine = kr.find_melds(hand, ace_high)
        assert len(mine) == len(set(mine)) and set(mine) == engine, hand
        for m in mine:
            shape = rummy.meld_shape(rummy.parse_cards(m), ace_high)
            assert shape is not None and kr.meld_shape(m, ace_high) == shape


@pytest.mark.parametrize("face_values", ["ten", "rank"])
def test_hand_value_matches_the_engine(face_values: str) -> None:
    for hand in _random_hands(300, 7):
        expected = sum(rummy.card_value(c, face_values) for c in rummy.parse_cards(hand))
        assert kr.hand_value(hand, face_values) == expected


def _views(preset: str, seats: int, seed: int) -> Iterator[rummy.InformationState]:
    """States of every seat to move during random play of a few deals."""
    rng = random.Random(seed)
    match = rummy.Match(rummy.RummyRules.preset(preset), f"kit-{preset}-{seats}-{seed}".encode(), seats)
    for _ in range(400):
        if match.is_over:
            return
        seat = match.to_move
        assert seat is not None
        yield match.view(seat)
        legal = match.legal_actions()
        plays = [a for a in legal if isinstance(a, (rummy.LayMeld, rummy.LayOff))]
        match.apply(rng.choice(plays) if plays and rng.random() < 0.7 else rng.choice(legal), seat)


@pytest.mark.parametrize("preset", rummy.PRESETS)
def test_layoffs_and_fits_match_the_engine_on_played_tables(preset: str) -> None:
    for seats in (2, 4, 6):
        for state in _views(preset, seats, seats):
            ace_high = state.rules.ace == "low_or_high"
            table = table_of(state)
            for engine_meld, meld in zip(state.table, table, strict=True):
                assert kr.fits(meld, ace_high) == [(str(c), e) for c, e in rummy.fits(engine_meld, ace_high)]
            if state.phase == "play" and state.must_use is None:
                keep = 1 if state.rules.out_needs_discard else 0
                engine_offs = {str(a) for a in state.legal_actions if isinstance(a, rummy.LayOff)}
                hand = [str(c) for c in state.hand]
                mine = {kr.lay_off_action(*x) for x in kr.layoffs(hand, table, ace_high)}
                assert engine_offs == (mine if len(state.hand) - 1 >= keep else set())
                engine_melds = {str(a) for a in state.legal_actions if isinstance(a, rummy.LayMeld)}
                mine_melds = {kr.meld_action(m) for m in kr.find_melds(hand, ace_high)
                              if len(state.hand) - len(m) >= keep}
                assert engine_melds == mine_melds


def _apply_plan(hand: list[str], plan: kr.Plan, table: Sequence[kr.TableMeld], ace_high: bool) -> None:
    """Play a plan on a deal built so that the hand is to move: the engine must accept it."""
    placed = list(table)
    rest = set(hand)
    for m in plan.melds:
        assert kr.is_meld(m, ace_high) and rest.issuperset(m)
        rest.difference_update(m)
        placed.append(kr.TableMeld.of(len(placed), 0, m, ace_high))
    for card, number, end in plan.layoffs:
        assert (card, end) in kr.fits(placed[number], ace_high) and card in rest
        rest.discard(card)
        placed[number] = kr.extend(placed[number], card, end)
    assert tuple(cards.sort_cards(rest)) == plan.rest


@pytest.mark.parametrize("ace_high", [False, True])
def test_plans_are_playable_and_the_best_leaves_the_least(ace_high: bool) -> None:
    rng = random.Random(11)
    for hand in _random_hands(300, 5 + ace_high):
        table: list[kr.TableMeld] = []
        for m in kr.find_melds([str(c) for c in rummy.DECK if str(c) not in hand and rng.random() < 0.5],
                               ace_high)[:2]:
            if all(c not in t.cards for t in table for c in m):
                table.append(kr.TableMeld.of(len(table), 1, m, ace_high))
        every = kr.plans(hand, table, ace_high)
        for plan in every:
            _apply_plan(hand, plan, table, ace_high)
        best = kr.best_plan(hand, table, ace_high)
        assert kr.hand_value(best.rest) == min(kr.hand_value(p.rest) for p in every)
        assert kr.penalty(hand, table, ace_high) == kr.hand_value(best.rest)


def test_going_out_examples() -> None:
    table = (kr.TableMeld.of(0, 1, ["9h", "Th", "Jh"]),)
    hand = ["2s", "3s", "4s", "5s", "Qh", "Kh", "7d"]
    plan, last = kr.going_out(hand, table) or (None, None)
    assert plan is not None and last == "7d" and plan.laid == 6
    assert kr.going_out(hand, table, needs_discard=True) is not None
    assert kr.going_out(["2s", "3s", "4s"], (), needs_discard=True) is None
    assert kr.going_out(["2s", "3s", "4s"], ()) == (kr.Plan((("2s", "3s", "4s"),), (), ()), None)
    assert kr.going_out(["Qd", "Kd", "Ad", "5c"], (), ace_high=True) is not None
    assert kr.going_out(["Qd", "Kd", "Ad", "5c"], (), ace_high=False) is None
    # a taken card must be used by the first play, and is never the last discard
    found = kr.going_out(["5s", "6s", "7s", "8s", "Ks"], (), use="8s")
    assert found is not None and "8s" in found[0].melds[0] and found[1] == "Ks"


def test_discard_order_keeps_melds_and_partners() -> None:
    table = (kr.TableMeld.of(0, 1, ["9h", "Th", "Jh"]),)
    order = kr.discard_order(["5s", "6s", "7s", "Kd", "Qh", "2c", "3c"], table)
    assert order[0] == "Kd"          # fits nothing, highest
    assert order.index("2c") < order.index("Qh") < order.index("5s")   # partner < lays off < meld


# ----- the bots' decisions in process -----
def play_match(chooses: Sequence[Choose], rules: rummy.RummyRules, seed: bytes) -> tuple[rummy.Match, list[
        rummy.RummyOutcome]]:
    """One match; every answer must be legal. Returns the match and every deal's outcome."""
    match = rummy.Match(rules, seed, len(chooses))
    outcomes: list[rummy.RummyOutcome] = []
    decisions = 0
    while not match.is_over:
        seat = match.to_move
        assert seat is not None
        state = match.view(seat)
        answer = chooses[seat](view_of(state))
        legal = [str(a) for a in state.legal_actions]
        assert answer in legal, f"seat {seat} answered {answer!r}; legal: {legal}"
        outcome = match.apply(rummy.parse_action(answer), seat)
        if outcome is not None:
            outcomes.append(outcome)
        decisions += 1
        assert decisions < 200_000, "the match does not end"
    return match, outcomes


def make_choose(name: str, seed: int = 0) -> Choose:
    if name == "greedy":
        return rummy_greedy_bot.choose
    if name == "hoarder":
        return rummy_hoarder_bot.choose
    if name == "random":
        return rummy_random_bot.RandomRummy(seed).choose
    raise ValueError(name)


@pytest.mark.parametrize("preset", rummy.PRESETS)
@pytest.mark.parametrize("seats", [2, 4, 6])
def test_sample_rummy_bots_play_complete_legal_matches(preset: str, seats: int) -> None:
    names = ["greedy", "hoarder", "random"]
    chooses = [make_choose(names[s % 3], s) for s in range(seats)]
    rules = rummy.RummyRules.preset(preset, target=60 if preset in ("rummy", "open") else 150)
    match, outcomes = play_match(chooses, rules, f"legal-{preset}-{seats}".encode())
    assert match.outcome is not None and outcomes
    assert sorted(match.outcome.places)[0] == 1


def test_greedy_beats_random_clearly(capsys: pytest.CaptureFixture[str]) -> None:
    """Four-seat tables, two greedy against two random, seats alternating: greedy's share of
    the first places."""
    games, wins = 40, 0
    for i in range(games):
        names = ["greedy", "random"] * 2 if i % 2 == 0 else ["random", "greedy"] * 2
        match, _ = play_match([make_choose(n, i * 4 + k) for k, n in enumerate(names)],
                              rummy.RummyRules.preset("rummy"), f"rate-{i}".encode())
        assert match.outcome is not None
        winners = [s for s, p in enumerate(match.outcome.places) if p == 1]
        wins += all(names[s] == "greedy" for s in winners)
    rate = wins / games
    with capsys.disabled():
        print(f"\ngreedy won {rate:.0%} of {games} four-seat games against random (2 v 2)")
    assert rate >= 0.8


def test_the_hoarder_goes_out_rummy_and_lays_nothing_before() -> None:
    rummies = 0
    for i in range(6):
        chooses = [make_choose("hoarder"), make_choose("random", i), make_choose("random", i + 100)]
        match = rummy.Match(rummy.RummyRules.preset("open"), f"hoard-{i}".encode(), 3)
        while not match.is_over:
            seat = match.to_move
            assert seat is not None
            deal = match.deal
            answer = rummy.parse_action(chooses[seat](view_of(match.view(seat))))
            if seat == 0 and isinstance(answer, (rummy.LayMeld, rummy.LayOff)) and deal.phase == "play":
                # the hoarder only lays when the whole hand goes down this turn
                assert kr.going_out([str(c) for c in deal.hand(0)], table_of(match.view(0)),
                                    needs_discard=False) is not None
            outcome = match.apply(answer, seat)
            if outcome is not None and outcome.winner == 0 and outcome.rummy:
                rummies += 1
    assert rummies >= 1


# ----- the wire's action messages -----
@pytest.mark.parametrize("preset", rummy.PRESETS)
def test_action_texts_round_trip_through_the_referees_messages(preset: str) -> None:
    from referee.rummy import wire as rummy_wire

    for state in _views(preset, 4, 9):
        for action in state.legal_actions:
            msg = rummy_wire.action_to_proto(action)
            assert kr.action_text(msg.rummy) == str(action)
            assert rummy_wire.action_from_proto(kr.action_message(str(action))) == action


@pytest.mark.parametrize("text", ["", "meld 5s 6s", "lay_off 5s x low", "lay_off 5s 0 middle", "discard", "discard Zz",
                                  "draw_stock now", "knock 5s"])
def test_malformed_rummy_action_texts_are_refused_clearly(text: str) -> None:
    with pytest.raises(ValueError, match=r"not a rummy action|not a card"):
        kr.action_message(text)


def test_the_docs_rummy_example_plays_legally() -> None:
    """The example of docs/bots.md, as written, plays complete legal matches."""
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "bots.md").read_text()
    block = text.split("# my_rummy_bot.py\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, object] = {"__name__": "my_rummy_bot"}
    exec(compile(block, "docs/bots.md", "exec"), namespace)
    choose = namespace["choose"]
    assert callable(choose)
    for preset in ("rummy", "michigan"):
        match, _ = play_match([choose, make_choose("random", 1), choose], rummy.RummyRules.preset(preset, target=80),
                              f"docs-{preset}".encode())
        assert match.outcome is not None


# ----- RummyBot: the session's side -----
def _request(hand: list[str], legal: list[str]) -> bot_pb2.ActionRequest:
    state = rummy_pb2.State(seat=1, num_seats=3, dealer=0, turn=1, to_move=1, phase=rummy_pb2.PHASE_PLAY,
                            hand=hand, hand_sizes=[7, len(hand), 7], stock_size=20, discard_pile=["2c"])
    state.table.add(number=0, owner=0, kind=rummy_pb2.MELD_KIND_RUN, cards=["Qd", "Kd", "Ad"])
    return bot_pb2.ActionRequest(request_id=3, rummy=state,
                                 legal_actions=[kr.action_message(t) for t in legal])


def test_rummy_bot_keeps_each_matchs_rules_and_forgets_them_at_its_end() -> None:
    seen: list[kr.View] = []

    def choose(view: kr.View) -> str:
        seen.append(view)
        return view.legal[-1]

    bot = RummyBot(choose)
    michigan = rummy_pb2.RuleSet(name="michigan", ace=rummy_pb2.ACE_LOW_OR_HIGH,
                                 discard_draw=rummy_pb2.DISCARD_DRAW_ROW, stop=True, out_needs_discard=True,
                                 face_values=rummy_pb2.FACE_VALUES_RANK, target=500)
    bot.on_match_started("m1", bot_pb2.MatchStarted(game_name="rummy", rummy=michigan))
    bot.on_match_started("m2", bot_pb2.MatchStarted(game_name="rummy", rummy=rummy_pb2.RuleSet(name="rummy")))
    request = _request(["5s", "6s", "7s", "Kh"], ["meld 7s 5s 6s", "discard Kh"])
    answer = bot.decide_in_match("m1", request)
    assert answer == request.legal_actions[1]
    first = seen[-1]
    assert first.rules.ace_high and first.rules.row and first.rules.out_needs_discard and first.rules.target == 500
    assert first.legal == ("meld 5s 6s 7s", "discard Kh")   # a meld's text is in table order
    assert first.table[0].low == 12 and first.table[0].high == 14 and first.table[0].owner == 0
    assert first.hand == ("5s", "6s", "7s", "Kh") and first.phase == "play" and first.next_seat == 2
    bot.decide_in_match("m2", request)
    assert not seen[-1].rules.ace_high and seen[-1].rules.name == "rummy"
    assert set(bot._rules) == {"m1", "m2"}
    bot.on_match_finished("m1", common_pb2.MatchResult())
    bot.on_match_finished("m2", common_pb2.MatchResult())
    assert not bot._rules                    # nothing of a finished match is kept


def test_the_kit_declares_a_bots_games_in_hello() -> None:
    from sample_bots.kit import BotConfig
    from sample_bots.kit.session import _Session

    def gin_decide(request: bot_pb2.ActionRequest) -> str:
        return "draw_stock"

    def hello_games(bot: object) -> list[str]:
        return list(_Session(bot, BotConfig(token="t"))._hello().hello.games)  # type: ignore[arg-type]

    assert hello_games(RummyBot(rummy_greedy_bot.choose)) == ["rummy"]
    assert hello_games(RummyBot) == ["rummy"]
    assert hello_games(gin_decide) == []        # a Gin bot, unchanged: empty = gin


def test_a_chosen_text_that_is_not_legal_is_sent_as_built_and_judged_by_the_referee() -> None:
    request = _request(["5s", "6s", "7s", "Kh"], ["discard Kh"])
    sent = kr.answer(request, "lay_off 8s 0 high")
    assert sent.rummy.lay_off.card == "8s" and not is_legal(request, sent)
    assert is_legal(request, kr.answer(request, "discard Kh"))
    assert action_text(sent) == "lay_off 8s 0 high"


# ----- the stdio bridge's rummy lines -----
def _event(seat: int, text: str, **extra: object) -> common_pb2.Event:
    ev = rummy_pb2.Event(action=kr.action_message(text).rummy, **extra)  # type: ignore[arg-type]
    return common_pb2.Event(seat=seat, rummy=ev)


def test_the_bridge_sends_rummy_requests_as_proto3_json_lines() -> None:
    import json

    from sample_bots.stdio_bridge import AnswerError, parse_answer, referee_line

    request = _request(["5s", "6s", "7s", "Kh"], ["meld 5s 6s 7s", "discard Kh"])
    request.rummy.table[0].placed.add(card="Qd", seat=0, end=rummy_pb2.LAYOFF_END_LOW)
    request.events.extend([
        _event(0, "draw_stock"), _event(1, "draw_stock", drawn_card="Kh"),
        _event(2, "take_discard 2c", taken_cards=["2c", "3c"]), _event(2, "meld Qd Kd Ad"),
        _event(2, "lay_off 9h 1 low"), _event(2, "discard 4c"),
        common_pb2.Event(rummy=rummy_pb2.Event(reshuffle=rummy_pb2.Reshuffle(number=1, upcard="8d"))),
    ])
    line = json.loads(referee_line("m-1", "action_request", request))
    assert line["matchId"] == "m-1"
    r = line["actionRequest"]
    assert r["requestId"] == "3"  # a uint64: a string in the JSON mapping
    assert r["legalActions"] == [{"rummy": {"layMeld": {"cards": ["5s", "6s", "7s"]}}},
                                 {"rummy": {"discard": {"card": "Kh"}}}]
    st = r["rummy"]
    assert st["phase"] == "PHASE_PLAY" and st["hand"] == ["5s", "6s", "7s", "Kh"] and st["turn"] == 1
    assert st["table"] == [{"kind": "MELD_KIND_RUN", "cards": ["Qd", "Kd", "Ad"],  # number 0, owner 0: defaults
                            "placed": [{"card": "Qd", "end": "LAYOFF_END_LOW"}]}]
    assert "mustUse" not in st and "stopped" not in st
    assert r["events"] == [
        {"rummy": {"action": {"drawStock": {}}}},
        {"seat": 1, "rummy": {"action": {"drawStock": {}}, "drawnCard": "Kh"}},
        {"seat": 2, "rummy": {"action": {"takeDiscard": {"card": "2c"}}, "takenCards": ["2c", "3c"]}},
        {"seat": 2, "rummy": {"action": {"layMeld": {"cards": ["Qd", "Kd", "Ad"]}}}},
        {"seat": 2, "rummy": {"action": {"layOff": {"card": "9h", "meld": 1, "end": "LAYOFF_END_LOW"}}}},
        {"seat": 2, "rummy": {"action": {"discard": {"card": "4c"}}}},
        {"rummy": {"reshuffle": {"number": 1, "upcard": "8d"}}},
    ]
    answer = json.dumps({"action": {"action": r["legalActions"][0]}})
    assert parse_answer(answer, "m-1", request) == request.legal_actions[0]
    with pytest.raises(AnswerError, match="not a BotMessage"):
        parse_answer('{"action": {"action": {"rummy": {"knock": {}}}}}', "m-1", request)


# ----- the referee's own request bytes -----
def _wire_request(match: rummy.Match, seat: int, request_id: int) -> bot_pb2.ActionRequest:
    from referee.rummy import wire as rummy_wire

    raw = rummy_wire.action_request_bytes("m", request_id, match.view(seat), [0] * match.seats,
                                           [60_000] * match.seats, 0, 1_000)
    return bot_pb2.RefereeMessage.FromString(raw).action_request


@pytest.mark.parametrize("preset", rummy.PRESETS)
def test_the_view_of_the_referees_request_is_the_engines_state(preset: str) -> None:
    """Over whole matches of 2, 4 and 6 seats: the kit's view of the request the referee sends
    equals the view built from the engine's state, and the bots answer the same through both."""
    rules = rummy.RummyRules.preset(preset, target=60)
    assert kr.rules_of(wire_rules(rules)) == rules_of(rules)
    assert kr.rules_of(wire_rules(rules.replace(face_values="rank"))).face_values == "rank"
    for seats in (2, 4, 6):
        match = rummy.Match(rules, f"wire-{preset}-{seats}".encode(), seats)
        names = ["greedy", "hoarder", "random"]
        bots = [RummyBot(make_choose(names[s % 3], s)) for s in range(seats)]
        twins = [make_choose(names[s % 3], s) for s in range(seats)]
        for s, bot in enumerate(bots):
            bot.on_match_started("m", bot_pb2.MatchStarted(seat=s, game_name="rummy", rummy=wire_rules(rules)))
        request_id = 0
        while not match.is_over:
            seat = match.to_move
            assert seat is not None
            request_id += 1
            request = _wire_request(match, seat, request_id)
            expected = view_of(match.view(seat))
            assert kr.view_of(request, rules_of(rules)) == expected
            sent = bots[seat].decide_in_match("m", request)
            assert isinstance(sent, common_pb2.Action) and is_legal(request, sent)
            assert action_text(sent) == twins[seat](expected)
            match.apply(rummy.parse_action(action_text(sent)), seat)


def wire_rules(rules: rummy.RummyRules) -> rummy_pb2.RuleSet:
    from referee.rummy import wire as rummy_wire

    return rummy_wire.rules_to_proto(rules)
