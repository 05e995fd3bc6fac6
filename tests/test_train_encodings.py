"""The observation encodings (sample_bots.kit.encodings) leak nothing: the conformance ``hidden``
check on every encoding — two matches a seat cannot tell apart (the cards it never saw shuffled
among their places) give it byte-identical observations, masks and extras at every checked
decision — and the check catches an encoder that reads a hidden card. Also each encoding's
documented layout on a known request."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import gin_pb2
from referee import games, gin, rummy
from referee.gin import wire as gin_wire
from referee.rummy import wire as rummy_wire
from sample_bots.kit import encodings
from sample_bots.kit.encodings import gin as gin_enc
from tests._decks import seen_by
from tests.test_rummy_hidden import _seen as rummy_seen

Observe = Callable[[games.Registered, games.GameMatch, list[Any], int], list[bytes]]


def _gin_variant(rules: Any, seed: bytes, seats: int, seat: int, actions: Sequence[tuple[int, Any]]) -> games.GameMatch:
    """Gin whose current deal's cards ``seat`` has not seen are shuffled among their places."""
    now = gin.Match(rules, seed)
    for who, action in actions:
        now.apply(action, who)
    g, d, deck = now.game.number, now.game.deal_number, list(now.deal.deck)
    _shuffle_unseen(deck, seen_by(now.deal, seat), seed + bytes([seat]))

    def decks(s: bytes, game: int, deal: int) -> list[gin.Card]:
        return list(deck) if (game, deal) == (g, d) else gin.deck_for_deal(s, game, deal)

    return gin_wire.GinMatch(gin.Match(rules, seed, decks=decks))


def _rummy_variant(rules: Any, seed: bytes, seats: int, seat: int,
                   actions: Sequence[tuple[int, Any]]) -> games.GameMatch:
    """Rummy whose current deal's cards ``seat`` has not seen are shuffled among their places."""
    now = rummy_wire.RummyMatch(rummy.Match(rules, seed, seats))
    for who, action in actions:
        now.apply(who, action)
    engine = now.match
    g, d, deck = engine.game.number, engine.game.deal_number, list(engine.deal.deck)
    _shuffle_unseen(deck, rummy_seen(engine.deal, seat), seed + bytes([seat]))

    def decks(s: bytes, game: int, deal: int) -> list[rummy.Card]:
        return list(deck) if (game, deal) == (g, d) else list(rummy.deck_for_deal(s, game, deal))

    return rummy_wire.RummyMatch(rummy.Match(rules, seed, seats, decks=decks))


def _shuffle_unseen(deck: list[Any], seen: set[Any], seed: bytes) -> None:
    places = [i for i, c in enumerate(deck) if c not in seen]
    moved = [deck[i] for i in places]
    random.Random(seed).shuffle(moved)
    for i, c in zip(places, moved, strict=True):
        deck[i] = c


def _request(reg: games.Registered, match: games.GameMatch, caches: list[Any], seat: int) -> bot_pb2.ActionRequest:
    data, _ = reg.wire.request(match, seat, "m", 1, [1000] * len(caches), 0, 1000, caches[seat])
    return bot_pb2.RefereeMessage.FromString(data).action_request


def _tell(reg: games.Registered, match: games.GameMatch, caches: list[Any], happenings: Sequence[Any]) -> None:
    for h in happenings:
        for s in range(len(caches)):
            reg.wire.tell(match, h, s, 0, caches[s])


def _arrays(encoding: encodings.Encoding) -> Observe:
    def observe(reg: games.Registered, match: games.GameMatch, caches: list[Any], seat: int) -> list[bytes]:
        encoded = encodings.encode(encoding, _request(reg, match, caches, seat))
        return [np.ascontiguousarray(v).tobytes() for _, v in sorted(encoded.observation.items())] + [
            bytes(encoded.legal)]
    return observe


def _replayed(reg: games.Registered, match: games.GameMatch, seats: int,
              actions: Sequence[tuple[int, Any]]) -> tuple[games.GameMatch, list[Any]]:
    caches = [reg.wire.new_seat_cache() for _ in range(seats)]
    _tell(reg, match, caches, match.opening())
    for who, action in actions:
        _tell(reg, match, caches, match.apply(who, action))
    return match, caches


def check_no_leak(game: str, rules: Any, seats: int, seed: bytes, observe: Observe,
                  variant: Callable[..., games.GameMatch], checks: int = 6) -> int:
    """Play a match at random; at ``checks`` decisions compare what ``observe`` gives the deciding
    seat with what it gives it in the hidden variant. Returns the decisions compared at which the
    variant truly differed (its complete view did). Raises AssertionError at the first difference."""
    reg = games.get(game)
    rng = random.Random(seed)
    match, caches = _replayed(reg, reg.game.new_match(rules, seed, seats), seats, [])
    actions: list[tuple[int, Any]] = []
    differed = done = 0
    assert reg.presentation is not None
    while not match.is_over and done < checks:
        seat = match.decider
        assert seat is not None
        if len(actions) % 5 == 3:
            other, other_caches = _replayed(reg, variant(rules, seed, seats, seat, actions), seats, actions)
            mine = observe(reg, match, caches, seat)
            theirs = observe(reg, other, other_caches, seat)
            assert mine == theirs, f"{game}: seat {seat}'s observation depends on what it cannot know " \
                                   f"(after {len(actions)} actions)"
            everything = [reg.presentation.present(reg.presentation.match_view(m, games.EVERYONE))
                          for m in (match, other)]
            differed += everything[0] != everything[1]
            done += 1
        _, legal = reg.wire.request(match, seat, "m", 1, [1000] * seats, 0, 1000, caches[seat])
        action = rng.choice(list(legal))  # type: ignore[call-overload]
        actions.append((seat, action))
        _tell(reg, match, caches, match.apply(seat, action))
    return differed


CASES = [("gin", name, 2, preset) for name in encodings.names("gin") for preset in ("classic", "oklahoma")] + [
    ("rummy", name, seats, preset) for name in encodings.names("rummy") for seats in (2, 4, 6)
    for preset in ("rummy", "michigan")]


@pytest.mark.parametrize(("game", "encoding", "seats", "preset"), CASES)
def test_no_encoding_leaks_what_the_seat_cannot_know(game: str, encoding: str, seats: int, preset: str) -> None:
    reg = games.get(game)
    rules = reg.game.rules_preset(preset)
    variant = _gin_variant if game == "gin" else _rummy_variant
    observe = _arrays(encodings.encoding(game, encoding))
    differed = sum(check_no_leak(game, rules, seats, f"leak/{seed}".encode(), observe, variant) for seed in range(3))
    assert differed >= 6, "the variants must truly differ in what the seat cannot see, or nothing was compared"


def test_the_check_catches_an_encoder_that_reads_a_hidden_card() -> None:
    honest = _arrays(encodings.encoding("gin"))

    def leaky(reg: games.Registered, match: games.GameMatch, caches: list[Any], seat: int) -> list[bytes]:
        assert reg.presentation is not None
        whole = reg.presentation.present(reg.presentation.match_view(match, games.EVERYONE))
        other = next(s for s in whole["seats"] if s["seat"] != seat)
        return [*honest(reg, match, caches, seat), repr(other["hand"]).encode()]

    rules = gin.RuleSet.preset("classic")
    with pytest.raises(AssertionError, match="depends on what it cannot know"):
        check_no_leak("gin", rules, 2, b"leak/0", leaky, _gin_variant)


def _gin_request(**state: Any) -> bot_pb2.ActionRequest:
    events = state.pop("events", [])
    legal = state.pop("legal", [])
    return bot_pb2.ActionRequest(request_id=1, gin=gin_pb2.State(**state), events=events, legal_actions=[
        common_pb2.Action(gin=gin_pb2.Action(kind=k, card=c)) for k, c in legal])


K = gin_pb2.ActionKind


def test_gin_encodings_lay_out_a_known_request() -> None:
    request = _gin_request(
        seat=1, num_seats=2, dealer=0, phase=gin_pb2.PHASE_DRAW, hand=["As", "2s", "3s", "Kh"],
        discard_pile=["9d", "Tc", "Qh"], stock_size=20, hand_sizes=[10, 10], first_upcard="9d", knock_limit=10,
        known_cards=[gin_pb2.SeatCards(seat=0, cards=["5c"])], scores=[30, 10],
        events=[common_pb2.Event(seat=0, gin=gin_pb2.Event(kind=K.ACTION_KIND_PASS, card="9d")),
                common_pb2.Event(seat=0, gin=gin_pb2.Event(kind=K.ACTION_KIND_DRAW_STOCK)),
                common_pb2.Event(seat=0, gin=gin_pb2.Event(kind=K.ACTION_KIND_DISCARD, card="Tc"))],
        legal=[(K.ACTION_KIND_DRAW_STOCK, ""), (K.ACTION_KIND_DRAW_DISCARD, "")])
    ix = encodings.CARD_INDEX
    default = encodings.encoding("gin")
    obs = default.observe(request)
    planes = obs[:len(gin_enc.PLANES) * 52].reshape(len(gin_enc.PLANES), 52)
    plane = {name: planes[i] for i, name in enumerate(gin_enc.PLANES)}
    assert sorted(np.flatnonzero(plane["hand"])) == sorted(ix[c] for c in ["As", "2s", "3s", "Kh"])
    assert plane["discard_top"][ix["Qh"]] == 1 and plane["discard_order"][ix["Qh"]] == 1
    assert plane["discard_order"][ix["Tc"]] == 0.5 and plane["discard_order"][ix["9d"]] == pytest.approx(1 / 3)
    assert list(np.flatnonzero(plane["opponent_known"])) == [ix["5c"]]
    # seat 0 passed the 9d, then drew from the stock leaving the 9d on top, then discarded the Tc
    assert list(np.flatnonzero(plane["opponent_refused"])) == [ix["9d"]]
    assert list(np.flatnonzero(plane["opponent_discarded"])) == [ix["Tc"]]
    nums = dict(zip(gin_enc.SCALARS, obs[len(gin_enc.PLANES) * 52:], strict=True))
    assert nums["phase_draw"] == 1 and nums["my_score"] == pytest.approx(0.1) and nums["opponent_score"] == 0.3
    mask, legal = encodings.mask(default, request)
    assert legal == [2, 3] and mask.sum() == 2

    pz = encodings.encoding("gin", "pettingzoo").observe(request)
    assert pz.shape == (5, 52) and pz[1, ix["Qh"]] == 1 and pz[2, ix["Tc"]] == 1 and pz[3, ix["5c"]] == 1
    assert pz.sum(axis=0).max() == 1 and pz.sum() == 52  # every card in exactly one plane
    assert encodings.mask(encodings.encoding("gin", "pettingzoo"), request)[1] == [2, 3]

    os_ = encodings.encoding("gin", "openspiel").observe(request)
    assert os_.shape == (384,) and os_[1] == 1 and os_[:2].sum() == 1 and os_[2:12].sum() == 10
    # OpenSpiel's card index: suit (s c d h) * 13 + rank; the Kh is 3 * 13 + 12
    assert os_[12 + 3 * 13 + 12] == 1 and os_[12 + 52 + 3 * 13 + 11] == 1  # hand Kh, upcard Qh
    assert os_[12 + 156:12 + 156 + 31].sum() == 20 and os_[12 + 156 + 31:].sum() == 0


def test_an_unknown_encoding_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="known: default, pettingzoo, openspiel"):
        encodings.encoding("gin", "nope")
    with pytest.raises(ValueError, match="has no observation encoding"):
        encodings.encoding("no-such-game")
