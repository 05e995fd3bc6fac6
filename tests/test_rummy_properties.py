"""Properties of the rummy engine over random play (hypothesis): legal actions are exactly the
accepted ones over a finite universe and agree with an independent brute force
(tests/_rummy_oracle.py); 52 cards are conserved; every state that is not over has a legal
action; every deal ends for every preset and 2..6 seats; every finished deal's points agree
with the independent scorer; deals replay and matches are deterministic."""

from __future__ import annotations

import copy
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rummy import (
    PRESETS,
    Action,
    Deal,
    DrawStock,
    IllegalActionError,
    LayMeld,
    LayOff,
    Match,
    RummyRules,
    TakeDiscard,
    deck_for_deal,
)
from tests import _rummy_oracle as oracle

EXHAUST = ("lowest_wins", "reshuffle")


def _rules(preset: str, exhausted: str, faces: str = "ten") -> RummyRules:
    return RummyRules.preset(preset, stock_exhausted=exhausted, face_values=faces)


def _fingerprint(deal: Deal) -> object:
    return (
        [sorted(h) for h in deal.hands], list(deal.pile), list(deal.stock), list(deal.table), deal.phase,
        deal.to_move, deal.pending, deal.stopped, len(deal.steps),
    )


def _conserved(deal: Deal) -> None:
    cards = [c for h in deal.hands for c in h] + deal.pile + deal.stock
    cards += [p.card for m in deal.table for p in m.placed]
    assert len(cards) == 52 and len(set(cards)) == 52


def _check_state(deal: Deal, full: bool) -> list[Action]:
    legal = deal.legal_actions()
    assert legal, f"no legal action in phase {deal.phase}"
    assert len({oracle.key(a) for a in legal}) == len(legal), "an action is listed twice"
    assert {oracle.key(a) for a in legal} == oracle.legal_keys(deal)
    if full:
        before = _fingerprint(deal)
        keys = {oracle.key(a) for a in legal}
        accepted = [a for a in oracle.universe(deal) if oracle.key(a) in keys]
        for action in oracle.universe(deal):
            if oracle.key(action) not in keys:
                with pytest.raises(IllegalActionError):
                    deal.apply(action)
                assert _fingerprint(deal) == before
        assert {oracle.key(a) for a in accepted} == keys, "a legal action lies outside the universe"
        for action in random.Random(len(deal.steps)).sample(accepted, min(4, len(accepted))):
            copy.deepcopy(deal).apply(action)
    return legal


def _rummy_flag(deal: Deal) -> bool:
    """Whether the winner laid nothing on the table before their last turn began."""
    moves = deal.history
    w = moves[-1].seat
    start = max(i for i, m in enumerate(moves) if m.seat == w and isinstance(m.action, (DrawStock, TakeDiscard)))
    return not any(m.seat == w and isinstance(m.action, (LayMeld, LayOff)) for m in moves[:start])


def _play(deal: Deal, rng: random.Random, full_every: int) -> int:
    steps = 0
    while not deal.is_over:
        legal = _check_state(deal, full_every > 0 and steps % full_every == 0)
        plays = [a for a in legal if isinstance(a, (LayMeld, LayOff))]
        action = rng.choice(plays) if plays and rng.random() < 0.7 else rng.choice(legal)
        deal.apply(action)
        _conserved(deal)
        steps += 1
        assert steps < 3000
    outcome = deal.outcome
    assert outcome is not None and deal.legal_actions() == []
    reason, winner, points = oracle.expected_points(deal, _rummy_flag(deal) if outcome.reason == "out" else False)
    assert (outcome.reason, outcome.winner, outcome.points) == (reason, winner, points)
    return steps


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    preset=st.sampled_from(PRESETS), seats=st.integers(2, 6), exhausted=st.sampled_from(EXHAUST),
    faces=st.sampled_from(("ten", "rank")), seed=st.binary(min_size=1, max_size=8), dealer=st.integers(0, 5),
)
def test_legal_actions_are_exactly_the_accepted_ones(
    preset: str, seats: int, exhausted: str, faces: str, seed: bytes, dealer: int
) -> None:
    deal = Deal.from_deck(deck_for_deal(seed, 1, 1), dealer % seats, _rules(preset, exhausted, faces), seats)
    _play(deal, random.Random(seed), full_every=7)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
def test_every_deal_ends_and_agrees_with_the_independent_generator_and_scorer(preset: str, seats: int) -> None:
    for i in range(6):
        rng = random.Random(f"{preset}{seats}{i}")
        rules = _rules(preset, EXHAUST[i % 2], ("ten", "rank")[i // 3 % 2])
        deal = Deal.from_deck(deck_for_deal(bytes([seats, i]), 1, 1), i % seats, rules, seats)
        _play(deal, rng, full_every=0)


@pytest.mark.parametrize("preset", PRESETS)
def test_a_deal_replays_exactly_from_its_actions(preset: str) -> None:
    rules = _rules(preset, "reshuffle")
    deal = Deal.from_deck(deck_for_deal(b"replay", 1, 1), 2, rules, 4, key=b"k")
    _play(deal, random.Random(preset), full_every=0)
    again = Deal.replay(deal.deck, 2, rules, 4, [m.action for m in deal.history], key=b"k")
    assert again.outcome == deal.outcome and again.steps == deal.steps and again.table == deal.table


@pytest.mark.parametrize("preset", PRESETS)
def test_a_match_is_deterministic_and_ends(preset: str) -> None:
    def run() -> tuple[object, ...]:
        rng = random.Random(7)
        match = Match(RummyRules.preset(preset, games=2, target=60), b"det", 4)
        log: list[object] = []
        while not match.is_over:
            action = rng.choice(match.legal_actions())
            log.append((match.to_move, str(action)))
            match.apply(action)
        return (match.outcome, tuple(log))

    first = run()
    assert first == run()
    outcome = first[0]
    assert outcome is not None
