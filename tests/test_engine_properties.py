"""Properties of the engine over random play (hypothesis): card conservation, ``legal_actions``
is exactly what ``apply`` accepts, the information state hides what RULES §12 hides, deals end,
replays rebuild a deal, and matches are deterministic."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.gin import (
    DECK,
    Action,
    BigGin,
    Card,
    Deal,
    Discard,
    DrawDiscard,
    DrawStock,
    IllegalActionError,
    InformationState,
    Knock,
    Match,
    Pass,
    PublicEvent,
    RuleSet,
    TakeUpcard,
    to_mask,
)
from referee.gin._melds import deadwood_mask

RULES = [
    RuleSet.classic(),
    RuleSet.oklahoma(),
    RuleSet.straight(),
    RuleSet.short(),
    RuleSet.classic(stock_exhausted="reshuffle"),
    RuleSet.oklahoma(stock_exhausted="reshuffle", big_gin=False),
    RuleSet.straight(stock_exhausted="reshuffle"),
    RuleSet.classic(knock_limit=0, big_gin=False),
]
RULE_IDS = ["classic", "oklahoma", "straight", "short", "classic-reshuffle", "oklahoma-reshuffle-nobig",
            "straight-reshuffle", "limit0"]

EVERY_ACTION: tuple[Action, ...] = (
    Pass(), TakeUpcard(), DrawStock(), DrawDiscard(), BigGin(),
    *(Discard(c) for c in DECK), *(Knock(c) for c in DECK),
)
"""All 7 kinds, with all 52 cards for discard and knock: 109 actions."""

MAX_STEPS = 5000
"""Random deals end long before this (RULES §8: the stock runs down by one at every stock draw)."""

POLICY_MODES = ("uniform", "eager", "never_end", "greedy")

Policy = Callable[[Sequence[Action]], Action]


def make_policy(rng: random.Random, mode: str) -> Policy:
    """``uniform``: any legal action; ``eager``: knock or big gin whenever legal; ``never_end``:
    never knock (so that stocks run out: dead hands and reshuffles); ``greedy``: knock or big gin
    whenever legal, else discard a card that leaves the least deadwood (reaches knocks fast)."""

    def act(legal: Sequence[Action]) -> Action:
        enders = [a for a in legal if isinstance(a, Knock | BigGin)]
        if mode in ("eager", "greedy") and enders:
            return rng.choice(enders)
        if mode == "greedy":
            discards = [a for a in legal if isinstance(a, Discard)]
            if discards:
                hand = to_mask(a.card for a in discards)
                return min(discards, key=lambda a: (deadwood_mask(hand & ~a.card.mask), rng.random()))
        if mode == "never_end":
            others = [a for a in legal if not isinstance(a, Knock | BigGin)]
            if others:
                return rng.choice(others)
        return rng.choice(list(legal))

    return act


def play_deal(deal: Deal, policy: Policy, each: Callable[[Deal], None] | None = None) -> int:
    """Play to the end, calling ``each`` on the state before every step and at the end."""
    for step in range(MAX_STEPS):
        if each is not None:
            each(deal)
        if deal.is_over:
            return step
        deal.apply(policy(deal.legal_actions()))
    raise AssertionError(f"deal not over after {MAX_STEPS} steps")


def snapshot(deal: Deal) -> tuple[object, ...]:
    """Everything observable about a deal (the stock's order included, read from its private list)."""
    return (
        deal.phase, deal.to_move, tuple(deal.hands), deal.discard_pile, deal.stock_size,
        tuple(deal._stock), deal.history, deal.outcome, deal.forbidden_discard,
        deal.known_cards(0), deal.known_cards(1), deal.upcard_passes, deal.stock_draw_only,
        deal.reshuffled, tuple(deal.legal_actions()),
    )


deals = st.builds(
    lambda deck, dealer, rules, key: Deal.from_deck(deck, dealer, rules, key=key),
    st.permutations(DECK),
    st.integers(0, 1),
    st.sampled_from(RULES),
    st.one_of(st.just(b""), st.binary(min_size=8, max_size=16)),
)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOWER = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----- (a) conservation -----


def check_conservation(deal: Deal) -> None:
    out = deal.outcome
    knock = out.knock_discard if out is not None else None
    face_down = [knock] if knock is not None else []
    pile = deal.discard_pile
    sizes = [h.bit_count() for h in deal.hands]
    assert sum(sizes) + deal.stock_size + len(pile) + len(face_down) == 52
    seen = deal.hands[0] | deal.hands[1] | to_mask(pile) | to_mask(face_down)
    assert seen.bit_count() == 52 - deal.stock_size, "no card in two places"
    stock = to_mask(Card.from_index(i) for i in deal._stock)
    assert stock == ((1 << 52) - 1) & ~seen, "the stock is the rest"
    if deal.phase == "discard":
        assert sizes[deal.to_move] == 11 and sizes[1 - deal.to_move] == 10
    elif deal.phase in ("upcard", "draw"):
        assert sizes == [10, 10]
    elif out is not None and out.kind == "big_gin":
        assert sorted(sizes) == [10, 11]
    else:
        assert sizes == [10, 10]


@FAST
@given(deal=deals, seed=st.integers(0, 2**32), mode=st.sampled_from(POLICY_MODES))
def test_52_cards_are_conserved_at_every_step(deal: Deal, seed: int, mode: str) -> None:
    play_deal(deal, make_policy(random.Random(seed), mode), check_conservation)


@pytest.mark.parametrize("rules", RULES, ids=RULE_IDS)
def test_52_cards_are_conserved_for_every_rule_set(rules: RuleSet) -> None:
    rng = random.Random(rules.name + rules.stock_exhausted)
    reshuffled = 0
    for n in range(30):
        deck = rng.sample(DECK, 52)
        deal = Deal.from_deck(deck, n % 2, rules, key=bytes([n]))
        play_deal(deal, make_policy(rng, POLICY_MODES[n % 3]), check_conservation)
        reshuffled += deal.reshuffled
    if rules.stock_exhausted == "reshuffle":
        assert reshuffled >= 3, "the reshuffle path was exercised"
    else:
        assert reshuffled == 0


# ----- (b) legal_actions is exactly what apply accepts -----


def check_legal_actions(deal: Deal) -> None:
    legal = deal.legal_actions()
    assert len(set(legal)) == len(legal), "no duplicates"
    accepted = []
    for action in EVERY_ACTION:
        trial = deal.copy()
        before = snapshot(trial)
        try:
            trial.apply(action)
        except IllegalActionError as e:
            assert str(e), "an illegal action names its reason"
            assert snapshot(trial) == before, f"refused {action} changed the deal"
        else:
            accepted.append(action)
    assert set(accepted) == set(legal), (
        f"phase {deal.phase}: accepted but not listed {set(accepted) - set(legal)}, "
        f"listed but refused {set(legal) - set(accepted)}"
    )
    assert snapshot(deal) == snapshot(deal.copy()), "copies are independent"
    if legal:
        other = 1 - deal.to_move
        before = snapshot(deal)
        with pytest.raises(IllegalActionError, match=f"seat {deal.to_move}'s turn"):
            deal.copy().apply(legal[0], seat=other)
        trial = deal.copy()
        with pytest.raises(IllegalActionError):
            trial.apply(legal[0], seat=other)
        assert snapshot(trial) == before


@SLOWER
@given(deal=deals, seed=st.integers(0, 2**32), mode=st.sampled_from(POLICY_MODES))
def test_legal_actions_are_exactly_the_actions_apply_accepts(deal: Deal, seed: int, mode: str) -> None:
    play_deal(deal, make_policy(random.Random(seed), mode), check_legal_actions)


def test_legal_actions_at_knock_and_big_gin_states() -> None:
    # Random play rarely reaches knock states: play greedily and check every state of 30 deals.
    rng = random.Random(5)
    knocks = 0
    for n in range(30):
        deal = Deal.from_deck(rng.sample(DECK, 52), n % 2, RULES[n % len(RULES)], key=b"k")
        play_deal(deal, make_policy(rng, "greedy"), check_legal_actions)
        knocks += deal.outcome is not None and deal.outcome.kind != "dead"
    assert knocks >= 15


# ----- (c) the information state hides what RULES §12 hides -----


_FIELDS: dict[type, tuple[str, ...]] = {}


def walk(value: Any) -> Iterator[Any]:
    """Every leaf value reachable through dataclass fields, tuples, lists, sets and dicts; a
    Card is a leaf."""
    kind = type(value)
    if kind is Card:
        yield value
    elif kind in (tuple, list, set, frozenset):
        for v in value:
            yield from walk(v)
    elif kind is dict:
        for k, v in value.items():
            yield from walk(k)
            yield from walk(v)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS.get(kind)
        if names is None:
            names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(value))
        for name in names:
            yield from walk(getattr(value, name))
    else:
        yield value


def cards_in(value: Any) -> list[Card]:
    """Every Card reachable from a value."""
    return [v for v in walk(value) if isinstance(v, Card)]


class Witness:
    """What each seat has legitimately seen during one deal: every card it held, and every
    card that was ever face up (the upcard and every discard)."""

    def __init__(self) -> None:
        self.seen = [0, 0]

    def update(self, deal: Deal) -> None:
        public = to_mask(deal.discard_pile) | deal.first_upcard.mask
        for seat in (0, 1):
            self.seen[seat] |= deal.hands[seat] | public

    def check(self, deal: Deal, view: InformationState, seat: int, secrets: Sequence[bytes]) -> None:
        allowed = self.seen[seat]
        out = deal.outcome
        if out is not None and out.kind != "dead":
            allowed |= to_mask(out.hands[0]) | to_mask(out.hands[1])  # the showdown reveals both hands
        leaves = list(walk(view))
        leaked = to_mask(v for v in leaves if isinstance(v, Card)) & ~allowed
        assert not leaked, f"seat {seat} sees {' '.join(str(c) for c in DECK if c.mask & leaked)}"
        # Specific secrets, also when the card happens to be known otherwise:
        for ev in view.events:
            if ev.seat != seat and ev.kind in ("draw_stock", "knock"):
                assert ev.card is None, f"seat {seat} sees the opponent's {ev.kind} card"
        if view.outcome is not None:
            if view.outcome.knocker != seat:
                assert view.outcome.knock_discard is None, "the face-down knock discard is shown"
            if out is not None and out.kind == "dead":
                assert view.outcome.hands == () and view.outcome.showdown is None
        if not deal.is_over:
            assert view.hand == deal.hand(seat)
            assert view.hand_sizes == tuple(h.bit_count() for h in deal.hands)
        text = repr(view)
        for secret in secrets:
            if len(secret) >= 6:  # shorter ones match any text by chance
                assert secret.hex() not in text and repr(secret) not in text
        assert not any(isinstance(v, bytes) and v for v in leaves), "no key or seed in a view"


@SLOW
@given(deal=deals, seed=st.integers(0, 2**32), mode=st.sampled_from(POLICY_MODES))
def test_deal_view_shows_no_hidden_card(deal: Deal, seed: int, mode: str) -> None:
    witness = Witness()

    def each(d: Deal) -> None:
        witness.update(d)
        for seat in (0, 1):
            witness.check(d, d.view(seat), seat, [d.key])

    play_deal(deal, make_policy(random.Random(seed), mode), each)


@SLOWER
@given(
    seed=st.binary(min_size=8, max_size=16),
    policy_seed=st.integers(0, 2**32),
    rules=st.sampled_from(RULES),
    mode=st.sampled_from(("uniform", "greedy")),
)
def test_match_view_shows_no_hidden_card_nor_the_seed(
    seed: bytes, policy_seed: int, rules: RuleSet, mode: str
) -> None:
    match = Match(rules, seed)
    policy = make_policy(random.Random(policy_seed), mode)
    witness = Witness()
    current = (match.game.number, match.game.deal_number)
    deals_seen = 0
    while not match.is_over and deals_seen < 3:
        here = (match.game.number, match.game.deal_number)
        if here != current:
            witness, current, deals_seen = Witness(), here, deals_seen + 1
        deal = match.deal
        witness.update(deal)
        for seat in (0, 1):
            view = match.view(seat)
            assert (view.game_number, view.deal_number) == here
            assert view.scores == tuple(match.game.scores)
            assert view.legal_actions == (tuple(match.legal_actions()) if match.to_move == seat else ())
            witness.check(deal, view, seat, [seed, deal.key])
        match.apply(policy(match.legal_actions()))


def test_view_after_showdown_reveals_hands_but_not_the_knock_discard() -> None:
    rng = random.Random(9)
    checked = hidden_checked = 0
    for n in range(60):
        deal = Deal.from_deck(rng.sample(DECK, 52), n % 2, RuleSet.classic(), key=b"x")
        play_deal(deal, make_policy(rng, "greedy"))
        out = deal.outcome
        assert out is not None
        if out.kind in ("knock", "undercut", "gin"):
            assert out.knocker is not None and out.knock_discard is not None
            defender = 1 - out.knocker
            seen = deal.view(defender)
            assert seen.outcome is not None and seen.outcome.knock_discard is None
            assert seen.outcome.hands == out.hands and seen.outcome.showdown == out.showdown
            assert deal.view(out.knocker).outcome == out
            hidden = out.knock_discard
            was_public = hidden == deal.first_upcard or any(
                m.card == hidden and m.action is not None and m.action.kind not in ("draw_stock", "knock")
                for m in deal.history
            )
            if not was_public:
                assert hidden not in set(cards_in(seen)), "the face-down card is not in the defender's view"
                hidden_checked += 1
            checked += 1
    assert checked >= 10 and hidden_checked >= 5, (checked, hidden_checked)


# ----- (d) deals end -----


@FAST
@given(deal=deals, seed=st.integers(0, 2**32), mode=st.sampled_from(POLICY_MODES))
def test_random_deals_end(deal: Deal, seed: int, mode: str) -> None:
    steps = play_deal(deal, make_policy(random.Random(seed), mode))
    assert deal.is_over and deal.outcome is not None and deal.legal_actions() == []
    assert steps == len(deal.actions) <= MAX_STEPS
    assert steps >= 2
    with pytest.raises(IllegalActionError, match="the deal is over"):
        deal.apply(DrawStock())


# ----- (e) replay -----


@FAST
@given(deal=deals, seed=st.integers(0, 2**32), mode=st.sampled_from(POLICY_MODES), cut=st.floats(0, 1))
def test_replay_rebuilds_the_same_state_and_outcome(deal: Deal, seed: int, mode: str, cut: float) -> None:
    play_deal(deal, make_policy(random.Random(seed), mode))
    again = Deal.replay(deal.deck, deal.dealer, deal.rules, deal.actions, key=deal.key)
    assert snapshot(again) == snapshot(deal)
    assert again.outcome == deal.outcome and again.history == deal.history
    # A prefix replays to the same intermediate state as playing it.
    k = int(cut * len(deal.actions))
    part = Deal.replay(deal.deck, deal.dealer, deal.rules, deal.actions[:k], key=deal.key)
    fresh = Deal.from_deck(deal.deck, deal.dealer, deal.rules, key=deal.key)
    for a in deal.actions[:k]:
        fresh.apply(a)
    assert snapshot(part) == snapshot(fresh)


# ----- (f) matches are deterministic -----


def run_match(rules: RuleSet, seed: bytes, policy_seed: int) -> tuple[list[object], object]:
    match = Match(rules, seed)
    policy = make_policy(random.Random(policy_seed), "greedy")
    trace: list[object] = [match.view(0), match.view(1)]
    while not match.is_over:
        action = policy(match.legal_actions())
        trace.append(action)
        trace.extend(match.apply(action))
    return trace, match.outcome


@SLOW
@given(
    seed=st.binary(min_size=1, max_size=12), policy_seed=st.integers(0, 2**32), rules=st.sampled_from(RULES)
)
def test_match_is_deterministic(seed: bytes, policy_seed: int, rules: RuleSet) -> None:
    a = run_match(rules, seed, policy_seed)
    b = run_match(rules, seed, policy_seed)
    assert a == b


def test_different_seeds_give_different_matches() -> None:
    rules = RuleSet.short()
    traces = {repr(run_match(rules, bytes([i]), 1)[0][:2]) for i in range(5)}
    assert len(traces) == 5


def _per_seat_lists() -> dict[int, list[PublicEvent]]:
    return {-1: [], 0: [], 1: []}


def _per_seat_tuples() -> dict[int, tuple[PublicEvent, ...]]:
    return {-1: (), 0: (), 1: ()}


@pytest.mark.parametrize("first_seed", range(0, 25, 5))  # 25 seeds, 5 a test (so that workers share them)
@pytest.mark.parametrize("exhausted", ["void", "reshuffle"])
def test_each_seats_events_are_the_history_as_that_seat_sees_it(exhausted: str, first_seed: int) -> None:
    """The views share one event object per step where every seat sees the same (a cache kept
    on the deal); each seat's and the spectator's events must still be exactly the history
    through ``seat_event``, whichever seat asks first and however often."""
    from referee.gin import information_state, seat_event

    # Games to 50, not 100: random play rarely knocks, so a match is still hundreds of deals.
    rules = RuleSet.classic(stock_exhausted=exhausted, target=50)
    reshuffles = 0
    for seed in range(first_seed, first_seed + 5):
        rng = random.Random(seed)
        match = Match(rules, seed.to_bytes(4, "big"))
        # The history only grows within a deal, so each seat's expected events are extended as
        # it grows (not rebuilt each step), and the prefix a seat's view already matched is
        # compared with that view's events: the same objects compare in C without calling __eq__
        # (new objects still compare field by field), so each view is still checked in full.
        deal, want, seen = match.deal, _per_seat_lists(), _per_seat_tuples()
        while not match.is_over:
            if match.deal is not deal:
                deal, want, seen = match.deal, _per_seat_lists(), _per_seat_tuples()
            history = deal.history
            for seat in rng.sample([-1, 0, 1], rng.randint(1, 3)):
                view = information_state(match, seat)
                want[seat].extend(seat_event(seat, m.seat, m.action.kind if m.action is not None else "reshuffle",
                                             m.card, m.stock_size) for m in history[len(want[seat]):])
                done = len(seen[seat])
                assert len(view.events) == len(want[seat]), f"seed {seed}, seat {seat}"
                assert view.events[:done] == seen[seat], f"seed {seed}, seat {seat}: an earlier event changed"
                assert view.events[done:] == tuple(want[seat][done:]), f"seed {seed}, seat {seat}"
                seen[seat] = view.events
                reshuffles += any(e.kind == "reshuffle" for e in view.events[done:])
            legal = match.legal_actions()
            passive = [a for a in legal if a.kind in ("draw_stock", "draw_discard", "pass")]
            match.apply(rng.choice(passive) if passive and rng.random() < 0.9 else rng.choice(legal))
    assert (reshuffles > 0) == (exhausted == "reshuffle")
