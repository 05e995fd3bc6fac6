"""The referee encodes its busiest messages (the action request with the seat's information
state) straight to bytes. Those bytes must be exactly what protobuf's deterministic
serialisation gives for the same message built field by field from the same state — checked
here on every state of many matches, for every rule preset, with reshuffles, knock limits,
spade doubles and scores of several games."""

from __future__ import annotations

import hashlib
import random

import pytest

from gin_arena.v2 import bot_pb2, common_pb2, referee_pb2
from gin_arena.v2.games import gin_pb2
from referee import games, gin
from referee.gin import wire as wire

PHASE = {"upcard": gin_pb2.PHASE_UPCARD_OFFER, "draw": gin_pb2.PHASE_DRAW,
         "discard": gin_pb2.PHASE_DISCARD, "over": gin_pb2.PHASE_OVER}
MELD = {"set": gin_pb2.MELD_KIND_SET, "run": gin_pb2.MELD_KIND_RUN}
KIND = {"pass": gin_pb2.ACTION_KIND_PASS, "take_upcard": gin_pb2.ACTION_KIND_TAKE_UPCARD,
        "draw_stock": gin_pb2.ACTION_KIND_DRAW_STOCK, "draw_discard": gin_pb2.ACTION_KIND_DRAW_DISCARD,
        "discard": gin_pb2.ACTION_KIND_DISCARD, "knock": gin_pb2.ACTION_KIND_KNOCK,
        "big_gin": gin_pb2.ACTION_KIND_BIG_GIN}


def reference_events(state: gin.InformationState) -> list[common_pb2.Event]:
    """The deal's events built as message objects (the reference of ``ActionRequest.events``)."""
    events = []
    for e in state.events:
        if e.kind == "reshuffle":
            events.append(common_pb2.Event(seat=0, gin=gin_pb2.Event(stock_size_after=e.stock_size, reshuffled=True)))
        else:
            events.append(common_pb2.Event(seat=e.seat, gin=gin_pb2.Event(
                kind=KIND[e.kind], card=str(e.card) if e.card else "", stock_size_after=e.stock_size)))
    return events


def reference_state(state: gin.InformationState) -> gin_pb2.State:
    """The information state built as a message object, field by field (the reference)."""
    arrangement = gin.arrange(state.hand)
    return gin_pb2.State(
        seat=state.seat, num_seats=state.num_seats, dealer=state.dealer,
        to_move=state.to_move if state.to_move is not None else 0, phase=PHASE[state.phase],
        hand=[str(c) for c in state.hand],
        my_melds=[gin_pb2.Meld(kind=MELD[m.kind], cards=[str(c) for c in m.cards]) for m in arrangement.melds],
        my_deadwood_cards=[str(c) for c in arrangement.deadwood_cards], my_deadwood=arrangement.deadwood,
        discard_pile=[str(c) for c in state.discard_pile], stock_size=state.stock_size, hand_sizes=state.hand_sizes,
        known_cards=[gin_pb2.SeatCards(seat=s, cards=[str(c) for c in k]) for s, k in enumerate(state.known_cards)],
        first_upcard=str(state.first_upcard),
        knock_limit=-1 if state.knock_limit is None else state.knock_limit,
        forbidden_discard=str(state.forbidden_discard) if state.forbidden_discard is not None else "",
        upcard_passes=state.upcard_passes, game_number=state.game_number,
        deal_number=state.deal_number, scores=state.scores, deals_won=state.deals_won, match_scores=state.games_won,
        spade_double=state.doubled, reshuffled=any(e.kind == "reshuffle" for e in state.events),
    )


def reference_request(match_id: str, request_id: int, state: gin.InformationState, remaining: list[int],
                      increment: int, allowance: int) -> bot_pb2.RefereeMessage:
    return bot_pb2.RefereeMessage(match_id=match_id, action_request=bot_pb2.ActionRequest(
        request_id=request_id,
        legal_actions=[common_pb2.Action(gin=gin_pb2.Action(
            kind=KIND[a.kind], card=str(getattr(a, "card", None) or ""))) for a in state.legal_actions],
        clocks=[common_pb2.Clock(seat=s, remaining_ms=r, increment_ms=increment, running=s == state.seat)
                for s, r in enumerate(remaining)],
        time_for_move_ms=allowance, events=reference_events(state), gin=reference_state(state),
    ))


RULES = [
    gin.RuleSet.classic(), gin.RuleSet.oklahoma(), gin.RuleSet.straight(), gin.RuleSet.short(),
    gin.RuleSet.classic(stock_exhausted="reshuffle"), gin.RuleSet.oklahoma(stock_exhausted="reshuffle"),
    gin.RuleSet.classic(knock_limit=0, big_gin=False),
]


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r.name}-{r.stock_exhausted}-{r.knock_limit}")
def test_encoded_requests_equal_protobufs_serialisation(rules: gin.RuleSet) -> None:
    checked = 0
    reshuffles = 0
    spectated = 0  # spectator events of steps whose card is hidden from them
    for seed in range(12):
        rng = random.Random(seed)
        match = gin.Match(rules, seed.to_bytes(4, "big"))
        logs = [wire.EventLog(), wire.EventLog()]
        request_id = 0
        while not match.is_over and checked < 12_000:  # whole matches of long deals, 1 to 7 seeds
            seat = match.to_move
            assert seat is not None
            state = match.view(seat)
            request_id += rng.choice((1, 1, 1, 300, 1 << 40))
            remaining = [rng.choice((0, 5, 999, 120_000, 1 << 33)) for _ in range(2)]
            increment, allowance = rng.choice((0, 100)), rng.choice((0, 1, 10_000))
            match_id = rng.choice(("", "m", "0123456789abcdef"))
            got = wire.action_request_bytes(match_id, request_id, state, remaining, increment, allowance, logs[seat])
            want = reference_request(match_id, request_id, state, remaining, increment, allowance)
            assert got == want.SerializeToString(deterministic=True), f"seed {seed}, request {request_id}"
            assert wire.information_state(state, logs[seat]) == want.action_request.gin
            move = match.deal.history[-1] if state.events else None
            if move is not None and move.action is not None:  # the spectator's event of the last step
                think = rng.choice((0, 1, 999, 1 << 31))
                acted = games.Acted(move.seat, move.action, str(move.action), None, move)
                got_event = wire.GinWire().show(wire.GinMatch(match), acted, match_id, think)
                seen = gin.seat_event(-1, move.seat, move.action.kind, move.card, move.stock_size)
                event = wire.public_event(seen, think)
                assert got_event == referee_pb2.SpectatorEvent(match_id=match_id, event=event).SerializeToString(
                    deterministic=True), f"seed {seed}, event {seen}"
                spectated += move.action.kind in gin.HIDDEN_KINDS
            reshuffles += want.action_request.gin.reshuffled
            checked += 1
            legal = state.legal_actions
            ends = [a for a in legal if a.kind in ("knock", "big_gin")]
            passive = [a for a in legal if a.kind in ("pass", "draw_stock", "draw_discard")]
            # Play long deals (to reach reshuffles) with an occasional knock.
            pick = rng.choice(ends) if ends and rng.random() < 0.3 else \
                rng.choice(passive) if passive else rng.choice(legal)
            match.apply(pick)
    assert checked > 1000 and spectated > 100
    if rules.stock_exhausted == "reshuffle":
        assert reshuffles > 0, "no state after a reshuffle was checked"


def test_events_are_converted_once_and_restart_with_each_deal() -> None:
    match = gin.Match(gin.RuleSet.classic(), b"events")
    log = wire.EventLog()
    deals: set[tuple[int, int, int]] = set()
    for _ in range(5000):
        if len(deals) == 3 or match.is_over:
            break
        seat = match.to_move
        assert seat is not None
        state = match.view(0)
        wire.information_state_bytes(state, log)
        assert log.events.count == len(state.events)
        assert isinstance(log.events.deal, tuple)
        deals.add(log.events.deal)
        legal = match.legal_actions()
        match.apply(next((a for a in legal if a.kind in ("knock", "big_gin")), None)
                    or next((a for a in legal if a.kind in ("draw_stock", "pass")), legal[0]))
    assert len(deals) == 3


def test_action_records_are_the_canonical_json() -> None:
    """The replay's per-decision record is written without the JSON encoder; it must be the
    same line (and so the same hash chain) as the general canonical form, odd texts included."""
    from referee.model.replay import ReplayRecorder, canonical

    rng = random.Random(7)
    fast = ReplayRecorder()
    general: list[bytes] = []
    prev = fast.last_hash
    for seq in range(3000):
        seat, rid = rng.randrange(-1, 6), rng.randrange(0, 1 << 40)
        action = rng.choice(["discard Td", "knock 2c", "big_gin", "pass", 'say "hi"', "naïve", "tab\there", "back\\"])
        card = rng.choice([None, "Td", "Ah", 'x"y', "é"])
        think, sub = rng.randrange(0, 1 << 33), rng.random() < 0.5
        clocks = [rng.randrange(0, 1 << 31) for _ in range(rng.randrange(0, 4))]
        fast.add_action(seat, rid, action, card, think, sub, clocks)
        general.append(canonical({"type": "action", "seq": seq, "prev": prev, "seat": seat, "request_id": rid,
                                  "action": action, "card": card, "think_us": think, "substitute": sub,
                                  "clocks": clocks}))
        prev = hashlib.sha256(general[-1]).hexdigest()
    assert fast.lines == general and fast.last_hash == prev
