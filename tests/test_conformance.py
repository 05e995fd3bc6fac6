"""The public conformance helper (referee.conformance.check_game) passes Gin, Rummy and the plugin
game toy3, and catches games that break the seam: one whose views leak a hidden card, one whose
``apply`` takes an action that is not legal, one whose deal is not a function of the seed."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from toy3_game import engine as toy
from toy3_game.wire import REGISTERED as TOY
from toy3_game.wire import ToyWire

from gin_arena.v2 import bot_pb2
from referee import games, gin
from referee.conformance import ConformanceError, check_game
from referee.gin import wire as gin_wire
from tests._decks import seen_by


def _gin_hidden(rules: gin.RuleSet, seed: bytes, seats: int, seat: int,
                actions: Sequence[tuple[int, Any]]) -> games.GameMatch:
    """Gin with the current deal's cards ``seat`` has not seen (the other hand, the stock)
    shuffled among their places."""
    now = gin.Match(rules, seed)
    for who, action in actions:
        now.apply(action, who)
    g, d = now.game.number, now.game.deal_number
    deck = list(now.deal.deck)
    seen = seen_by(now.deal, seat)
    places = [i for i, c in enumerate(deck) if c not in seen]
    cards = [deck[i] for i in places]
    shuffled = cards[:]
    random.Random(seed + bytes([seat])).shuffle(shuffled)
    for i, c in zip(places, shuffled, strict=True):
        deck[i] = c

    def decks(s: bytes, game: int, deal: int) -> list[gin.Card]:
        return list(deck) if (game, deal) == (g, d) else gin.deck_for_deal(s, game, deal)

    return gin_wire.GinMatch(gin.Match(rules, seed, decks=decks))


def test_the_plugin_game_conforms() -> None:
    report = check_game("toy3", hidden=toy.hidden_variant)
    assert report.game == "toy3" and report.matches == 5 * 3  # 2..6 seats, three seeds
    assert report.legal_applied > 0 and report.illegal_refused > 0 and report.views_compared >= 5 * 3


def test_gin_conforms() -> None:
    report = check_game("gin", rules=gin.RuleSet.preset("short"), seeds=(b"one", b"two"), hidden=_gin_hidden)
    assert report.matches == 2 and report.decisions > 50 and report.views_compared > 4
    assert report.legal_applied > report.decisions // 2 and report.illegal_refused > 0


def test_rummy_conforms() -> None:
    report = check_game("rummy", seeds=(b"one", b"two"))
    assert report.matches == 5 * 2 and report.legal_applied > 0 and report.illegal_refused > 0


class _LeakyWire(ToyWire):
    """Tells every seat the next seat's cards in each request."""

    def request(self, match: games.GameMatch, seat: int, match_id: str, request_id: int, clocks: Sequence[int],
                increment_ms: int, allowance_ms: int, cache: Any) -> tuple[bytes, Any]:
        data, legal = super().request(match, seat, match_id, request_id, clocks, increment_ms, allowance_ms, cache)
        assert isinstance(match, toy.ToyMatch)
        msg = bot_pb2.RefereeMessage.FromString(data)
        msg.action_request.request_id += 1000 * sum(match.hands[(seat + 1) % match.seats])
        return msg.SerializeToString(deterministic=True), legal


class _LaxMatch(toy.ToyMatch):
    """Takes any card from the seat to move (even one it does not hold)."""

    def apply(self, seat: int, action: int) -> list[games.Happening]:
        if action not in self.hands[seat]:
            self.hands[seat].append(action)
        return super().apply(seat, action)


class _Lax(toy.ToyGame):
    def new_match(self, rules: toy.ToyRules, seed: bytes, seats: int) -> toy.ToyMatch:
        return _LaxMatch(rules, seed, seats)


class _SeedBlind(toy.ToyGame):
    def new_match(self, rules: toy.ToyRules, seed: bytes, seats: int) -> toy.ToyMatch:
        return toy.ToyMatch(rules, b"always the same", seats)


def test_the_checks_catch_a_leak_a_lax_apply_and_a_deal_blind_to_the_seed() -> None:
    with pytest.raises(ConformanceError, match=r"game 'toy3', play \(2 seats.*depends on what it cannot know"):
        check_game(games.Registered(TOY.game, _LeakyWire()), hidden=toy.hidden_variant)
    with pytest.raises(ConformanceError, match=r"accepts an action that is not among the legal actions"):
        check_game(games.Registered(_Lax(), TOY.wire))
    with pytest.raises(ConformanceError, match=r"game 'toy3', seed \(2 seats.*deal_deck"):
        check_game(games.Registered(_SeedBlind(), TOY.wire))
