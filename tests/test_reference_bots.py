"""The reference bots (issue 33): ``eaai-simple`` follows the EAAI simple player's published
policy; ``mc`` samples only worlds consistent with what its seat knows (a property over many
situations of real played deals, Gin and rummy, 2–6 seats), cannot peek (two deals that differ
only in cards its seat never saw get the same decisions), is deterministic for a seed and a
budget of worlds, and plays whole matches as a real bot process through the referee (Gin; rummy
at 4 seats) with every answer legal. Nothing here depends on how fast the bots are: the budgets
are small and the time controls generous."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import referee
from gin_arena.v2 import bot_pb2, common_pb2
from referee import BotLaunch, MatchSpec, TimeControl, games, gin, rummy
from referee.gin import wire as gin_wire
from referee.rummy import wire as rummy_wire
from sample_bots import eaai_simple_bot, mc_bot
from sample_bots.kit.actions import action_text, is_legal, to_action
from sample_bots.kit.gin import cards as kit_cards
from sample_bots.mc import gin as mc_gin
from sample_bots.mc import rummy as mc_rummy
from sample_bots.mc.search import MAX_WORLDS, Budget, Search, beats, parse_budget
from tests.test_sample_bots import play_match
from tests.test_sample_bots_rummy import assert_no_fallback, audit

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""Hypothesis: no deadline (a loaded machine is slower, never red)."""
GENEROUS = TimeControl(per_move_ms=600_000)
"""Ten minutes a decision: the process tests check legality, never speed."""
NO_LIMIT = 0
"""``time_for_move_ms`` of the requests built here: no time share cuts a search short."""
SMALL = Budget(worlds=4)
"""A small search: the tests check what the bot does, not how well."""

GIN_DEAL_FIELDS = ("phase", "to_move", "hand", "discard_pile", "stock_size", "hand_sizes", "known_cards",
                   "first_upcard", "knock_limit", "forbidden_discard", "upcard_passes", "stock_draw_only", "events")
"""What a Gin seat is shown of the deal (its InformationState less the match's numbers)."""
RUMMY_DEAL_FIELDS = ("phase", "to_move", "turn", "hand", "discard_pile", "stock_size", "hand_sizes", "table",
                     "must_use", "stopped", "events")
"""What a rummy seat is shown of the deal."""


# ----- eaai-simple -----
def _joins_a_meld(hand: list[str], card: str) -> bool:
    """Written apart from the bot: some meld of the hand with the card contains the card."""
    return any(card in meld for meld in kit_cards.find_melds([*hand, card]))


def test_eaai_simple_follows_its_published_policy() -> None:
    """Over whole matches against the expert: the face-up card is taken exactly when it joins a
    meld; every discard leaves the least deadwood (ties: the highest rank), never the card just
    taken; it knocks whenever it may; every answer is legal and the match ends."""
    checked = {"take": 0, "refuse": 0, "discard": 0, "knock": 0}

    def policy(request: bot_pb2.ActionRequest) -> common_pb2.Action:
        answer = eaai_simple_bot.decide(request)
        texts = [action_text(a) for a in request.legal_actions]
        hand = list(request.gin.hand)
        chosen = action_text(answer)
        if "take_upcard" in texts or "draw_discard" in texts:
            top = request.gin.discard_pile[-1]
            takes = _joins_a_meld(hand, top)
            assert (chosen in ("take_upcard", "draw_discard")) == takes, (hand, top, chosen)
            checked["take" if takes else "refuse"] += 1
        knocks = [t.split()[1] for t in texts if t.startswith("knock")]
        if knocks and "big_gin" not in texts:
            assert chosen.startswith("knock"), (hand, chosen)
            checked["knock"] += 1
        elif chosen.startswith("discard"):
            allowed = [t.split()[1] for t in texts if t.startswith("discard")]
            after = {c: kit_cards.deadwood([h for h in hand if h != c]) for c in allowed}
            least = min(after.values())
            card = chosen.split()[1]
            assert after[card] == least and card != request.gin.forbidden_discard, (hand, chosen, after)
            tied = [c for c in allowed if after[c] == least]
            assert kit_cards.RANKS.index(card[0]) == max(kit_cards.RANKS.index(c[0]) for c in tied)
            checked["discard"] += 1
        return answer

    from sample_bots import expert_bot
    for i in range(4):
        policies: list[Callable[[bot_pb2.ActionRequest], common_pb2.Action | str]] = [policy, expert_bot.decide]
        outcome, _ = play_match(policies[:: 1 if i % 2 else -1], f"eaai-{i}".encode())
        assert outcome.winner in (0, 1)
    assert min(checked.values()) > 0, checked


# ----- mc: the worlds it samples -----
def _gin_step(deal: gin.Deal, rng: random.Random) -> None:
    """One move of a played deal: mostly the greedy rollout policy, sometimes any legal move
    (so that takes of the pile, discards of taken cards and passes all come up)."""
    if rng.random() < 0.3:
        deal.apply(rng.choice(deal.legal_actions()))
    else:
        deal.apply(mc_gin.greedy_action(deal))


def _gin_situation(seed: int, steps: int, rules: gin.RuleSet) -> tuple[gin.Deal, bot_pb2.ActionRequest] | None:
    """A deal played ``steps`` moves from a shuffled deck, and the request its seat to move gets
    (``None`` if the deal ended first)."""
    rng = random.Random(seed)
    deck = gin.shuffle(list(gin.DECK), seed.to_bytes(8, "big"))
    deal = gin.Deal.from_deck(deck, rng.randrange(2), rules)
    for _ in range(steps):
        if deal.is_over:
            return None
        _gin_step(deal, rng)
    if deal.is_over:
        return None
    return deal, gin_wire.action_request(1, deal.view(deal.to_move), [60_000, 60_000], 0, NO_LIMIT)


@PROPERTY
@given(seed=st.integers(0, 2**32), steps=st.integers(0, 60), world_seed=st.integers(0, 2**32),
       preset=st.sampled_from(["classic", "oklahoma", "straight"]))
def test_gin_worlds_never_contradict_what_the_seat_knows(seed: int, steps: int, world_seed: int, preset: str) -> None:
    rules = gin.RuleSet.preset(preset)
    found = _gin_situation(seed, steps, rules)
    if found is None:
        return
    truth, request = found
    seat = truth.to_move
    k = mc_gin.knowledge(request)
    deck = mc_gin.sample_deck(k, random.Random(world_seed))
    assert sorted(deck) == list(range(52))
    world = gin.Deal.replay([gin.DECK[i] for i in deck], k.dealer, mc_gin.deal_rules(rules, request.gin), k.actions)
    seen, shown = world.view(seat), truth.view(seat)
    for field in GIN_DEAL_FIELDS:
        assert getattr(seen, field) == getattr(shown, field), field
    # The opponent's sampled hand holds only cards the seat cannot see, and what it picked up.
    opp = 1 - seat
    visible = set(shown.hand) | set(shown.discard_pile) | {e.card for e in shown.events if e.card is not None}
    for card in world.hand(opp):
        assert card not in visible or card in shown.known_cards[opp], card


def _rummy_situation(seed: int, steps: int, seats: int, rules: rummy.RummyRules
                     ) -> tuple[rummy.Deal, bot_pb2.ActionRequest] | None:
    rng = random.Random(seed)
    deck = rummy.shuffle(list(rummy.DECK), seed.to_bytes(8, "big"))
    deal = rummy.Deal.from_deck(deck, rng.randrange(seats), rules, seats)
    for _ in range(steps):
        if deal.outcome is not None:
            return None
        if rng.random() < 0.3:
            deal.apply(rng.choice(deal.legal_actions()))
        else:
            deal.apply(mc_rummy.greedy_action(deal))
    if deal.outcome is not None or deal.to_move is None:
        return None
    state = rummy.deal_state(deal, deal.to_move)
    data = rummy_wire.action_request_bytes("", 1, state, [0] * seats, [60_000] * seats, 0, NO_LIMIT)
    return deal, bot_pb2.RefereeMessage.FromString(data).action_request


@PROPERTY
@given(seed=st.integers(0, 2**32), steps=st.integers(0, 120), world_seed=st.integers(0, 2**32),
       seats=st.integers(2, 6), preset=st.sampled_from(list(rummy.PRESETS)))
def test_rummy_worlds_never_contradict_what_the_seat_knows(seed: int, steps: int, world_seed: int, seats: int,
                                                           preset: str) -> None:
    rules = rummy.RummyRules.preset(preset)
    found = _rummy_situation(seed, steps, seats, rules)
    if found is None:
        return
    truth, request = found
    k = mc_rummy.knowledge(request)
    if k.reshuffled:  # (not searched: the greedy rule decides)
        return
    deck = mc_rummy.sample_deck(k, random.Random(world_seed))
    assert sorted(deck) == list(range(52))
    world = mc_rummy.world(k, rules, deck)
    seat = truth.to_move
    seen, shown = rummy.deal_state(world, seat), rummy.deal_state(truth, seat)
    for field in RUMMY_DEAL_FIELDS:
        assert getattr(seen, field) == getattr(shown, field), field


def test_the_sampler_places_an_opponents_discard_where_it_could_have_been() -> None:
    """A card the opponent discarded without taking it was dealt to it or drawn by it before
    the discard: in every sampled world it is at one of those places."""
    for seed in range(40):
        found = _gin_situation(seed, 30, gin.RuleSet.classic())
        if found is None:
            continue
        _, request = found
        k = mc_gin.knowledge(request)
        opp = 1 - k.seat
        for world_seed in range(5):
            deck = mc_gin.sample_deck(k, random.Random(world_seed))
            for card, before in k.opp_needs:
                places = set(mc_gin.dealt_positions(opp, k.dealer)) | {21 + n for n in k.opp_draws[:before]}
                assert deck.index(card) in places


# ----- mc: it cannot peek -----
def _hidden_positions(deal: gin.Deal, seat: int) -> list[int]:
    """Deck positions whose card ``seat`` has never been shown (nor will the replay show it)."""
    view = deal.view(seat)
    shown = set(view.hand) | set(view.discard_pile) | {e.card for e in view.events if e.card is not None}
    shown |= {c for cards in view.known_cards for c in cards} | {view.first_upcard}
    return [i for i, c in enumerate(deal.deck) if c not in shown]


@PROPERTY
@given(seed=st.integers(0, 2**32), steps=st.integers(0, 50), permute_seed=st.integers(0, 2**32))
def test_mc_decides_the_same_when_the_hidden_cards_are_permuted(seed: int, steps: int, permute_seed: int) -> None:
    """Two deals that differ only in cards the seat never saw (the opponent's hand, the stock)
    give the seat the same request, and ``mc`` the same answer — the same bot, with other
    decisions in between."""
    found = _gin_situation(seed, steps, gin.RuleSet.classic())
    if found is None:
        return
    truth, request = found
    seat = truth.to_move
    hidden = _hidden_positions(truth, seat)
    cards = [truth.deck[i] for i in hidden]
    random.Random(permute_seed).shuffle(cards)
    deck = list(truth.deck)
    for i, c in zip(hidden, cards, strict=True):
        deck[i] = c
    other = gin.Deal.replay(deck, truth.dealer, truth.rules, truth.actions)
    twin = gin_wire.action_request(1, other.view(seat), [60_000, 60_000], 0, NO_LIMIT)
    assert twin.SerializeToString(deterministic=True) == request.SerializeToString(deterministic=True)
    bot = mc_bot.MonteCarloBot(SMALL, seed=7)
    first = to_action(bot.decide(request), request)
    elsewhere = _gin_situation(seed + 1, 10, gin.RuleSet.classic())
    if elsewhere is not None:
        bot.decide(elsewhere[1])
    assert to_action(bot.decide(twin), twin) == first
    assert is_legal(request, first)


def test_mc_is_deterministic_for_a_seed_and_a_budget_of_worlds() -> None:
    """The same seed and budget of worlds give the same answer, from a fresh bot or from one
    that has decided other things since; every answer is legal."""
    used = mc_bot.MonteCarloBot(Budget(worlds=6), seed=1)
    for seed in range(30):
        found = _gin_situation(seed, 2 + seed % 20, gin.RuleSet.classic())
        if found is None:
            continue
        request = found[1]
        a = to_action(mc_bot.MonteCarloBot(Budget(worlds=6), seed=1).decide(request), request)
        assert to_action(used.decide(request), request) == a and is_legal(request, a)


def test_a_challenger_must_beat_the_baseline_clearly() -> None:
    assert beats([10.0, 11.0, 9.0, 10.0], [0.0, 1.0, 0.0, 1.0])
    assert not beats([10.0, -10.0, 10.0, -10.0], [0.0, 0.0, 0.0, 0.0])
    assert not beats([5.0], [0.0])


def test_a_short_time_for_the_move_cuts_the_search_short() -> None:
    """With a budget of far more worlds than fit, a request's short time still gets an answer:
    the search stops at its share of the time (a bound on worlds, not a timing)."""
    found = _gin_situation(3, 12, gin.RuleSet.classic())
    assert found is not None
    deal, request = found
    k = mc_gin.knowledge(request)
    rules = mc_gin.deal_rules(gin.RuleSet.classic(), request.gin)
    options = mc_gin.candidates(deal)
    search = Search(options, lambda g: mc_gin.world(k, rules, g), mc_gin.playout)
    _, _, worlds = search.run(Budget(worlds=MAX_WORLDS), random.Random(1), time_for_move_ms=1)
    assert 1 <= worlds < MAX_WORLDS // 10
    _, _, worlds = search.run(Budget(worlds=5), random.Random(1), time_for_move_ms=0)
    assert worlds == 5


def test_budget_texts() -> None:
    assert parse_budget("24") == Budget(worlds=24) and parse_budget("250ms") == Budget(ms=250)
    assert str(Budget(ms=250)) == "250ms" and str(Budget(worlds=9)) == "9"
    for bad in ("0", "-3", "ms", "12s", "10ms0", "999999999"):
        with pytest.raises(ValueError, match="--budget"):
            parse_budget(bad)


def test_mc_reads_the_match_rules() -> None:
    rules = gin.RuleSet.preset("oklahoma", big_gin=False, stock_exhausted="reshuffle", target=150)
    assert mc_gin.rules_of_match(gin_wire.rules_to_proto(rules)) == rules
    r = rummy.RummyRules.preset("michigan", face_values="rank")
    assert mc_rummy.rules_of_match(rummy_wire.rules_to_proto(r)) == r
    assert mc_gin.rules_of_match(None) == gin.RuleSet.classic()


# ----- mc and eaai-simple as real bot processes -----
def _launch(module: str, logs: Path, name: str, *extra: str) -> BotLaunch:
    return BotLaunch(command=("{python}", "-m", f"sample_bots.{module}", *extra), log_path=str(logs / f"{name}.log"))


@pytest.mark.parametrize("opponent", ["expert_bot", "eaai_simple_bot"])
def test_mc_plays_a_gin_match_as_a_process(tmp_path: Path, opponent: str) -> None:
    spec = MatchSpec(players=("mc", "other"), rules=gin.RuleSet.preset("classic", target=60), seed=b"mc-gin-" +
                     opponent.encode(), time_control=GENEROUS)
    played = referee.play_match(spec, [_launch("mc_bot", tmp_path, "mc", "--budget", "4", "--seed", "3"),
                                       _launch(opponent, tmp_path, "other")])
    report = played.report
    assert report.termination == "normal", (report.termination, report.detail)
    assert report.decisions > 0 and not report.substituted_seats
    assert_no_fallback(tmp_path)
    audit(played, tmp_path)


def test_mc_plays_rummy_at_four_seats_as_a_process(tmp_path: Path) -> None:
    bots = [("mc", _launch("mc_bot", tmp_path, "mc", "--budget", "3")),
            ("greedy", _launch("rummy_greedy_bot", tmp_path, "greedy")),
            ("hoarder", _launch("rummy_hoarder_bot", tmp_path, "hoarder")),
            ("mc#2", _launch("mc_bot", tmp_path, "mc2", "--budget", "3", "--seed", "5"))]
    spec = MatchSpec(players=tuple(n for n, _ in bots), rules=rummy.RummyRules.preset("michigan", target=60),
                     game="rummy", seed=b"mc-rummy-4", time_control=GENEROUS)
    played = referee.play_match(spec, [b for _, b in bots])
    report = played.report
    assert report.termination == "normal", (report.termination, report.detail)
    assert len(report.places) == 4 and report.decisions > 0 and not report.substituted_seats
    assert_no_fallback(tmp_path)
    audit(played, tmp_path)


def test_the_reference_bots_are_registered() -> None:
    gin_bots = {b.name: b for b in games.get("gin").bots}
    rummy_bots = {b.name: b for b in games.get("rummy").bots}
    assert gin_bots["eaai-simple"].command[-1] == "sample_bots.eaai_simple_bot"
    assert gin_bots["mc"].command[-1] == rummy_bots["mc"].command[-1] == "sample_bots.mc_bot"
    assert dataclasses.is_dataclass(gin_bots["mc"])
    assert gin_bots["hand-reader"].command[-1] == "sample_bots.hand_reader_bot"
    assert gin_bots["hand-reader"].level == gin_bots["expert"].level == "hard" and "hand-reader" not in rummy_bots
