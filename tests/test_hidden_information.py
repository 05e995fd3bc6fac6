"""The referee cannot leak what a seat may not know.

For many deals, a match is played through the real referee Table (in-process sessions, a
mock clock) and every message to one seat is kept as bytes. Then the same deal is played again
with the cards that seat never saw (the opponent's hidden cards, the stock, the face-down knock
discard) shuffled among their places in the deck, every player repeating its actions. Every
message that seat receives before the deal's last action must be byte-for-byte the same:
nothing in them depends on the hidden cards. (Kaggle's Gin Rummy observations fail exactly
this: they carry the whole serialized game.)
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import cast

import pytest
import trio
import trio.testing

from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import gin_pb2
from referee import MatchSpec, TimeControl, games
from referee.gin import DECK, Card, Deal, Match, RuleSet, deck_for_deal
from referee.gin import wire as wire
from referee.lowlevel import Table
from tests._decks import seen_by
from tests._tables import FakeSession, Policy, seat_sessions

SEEDS = int(__import__("os").environ.get("HIDDEN_INFO_SEEDS", "700"))  # x3 deals each
SEEDS_PER_TEST = 50
"""The seeds are checked in tests of this many (so that test workers share them)."""
MIN_DEALS = 2000
"""Deals that must be checked over all the seeds (each test checks its share)."""
DEALS_PER_MATCH = 3


_VALUE = {r: min(i + 1, 10) for i, r in enumerate("A23456789TJQK")}


def _policy(rng: random.Random, record: list[tuple[int, int, common_pb2.Action]], seat: int) -> Policy:
    """Mostly sound play (so deals end in knocks, gins and undercuts too), sometimes random."""

    def decide(req: bot_pb2.ActionRequest) -> common_pb2.Action:
        legal = list(req.legal_actions)
        ends = [a for a in legal if a.gin.kind in (gin_pb2.ACTION_KIND_KNOCK, gin_pb2.ACTION_KIND_BIG_GIN)]
        passive = [a for a in legal if a.gin.kind in (gin_pb2.ACTION_KIND_DRAW_STOCK, gin_pb2.ACTION_KIND_PASS)]
        loose = set(req.gin.my_deadwood_cards)
        discards = [a for a in legal if a.gin.kind == gin_pb2.ACTION_KIND_DISCARD and a.gin.card in loose]
        if ends and rng.random() < 0.9:
            choice = rng.choice(ends)
        elif passive and rng.random() < 0.7:
            choice = passive[0]
        elif discards and rng.random() < 0.8:
            choice = max(discards, key=lambda a: _VALUE[a.gin.card[0]])
        else:
            choice = rng.choice(legal)
        record.append((req.gin.deal_number, seat, choice))
        return choice

    return decide


def _replayer(actions: list[common_pb2.Action]) -> Callable[[bot_pb2.ActionRequest], common_pb2.Action | None]:
    it = iter(actions)

    def decide(req: bot_pb2.ActionRequest) -> common_pb2.Action | None:
        return next(it, None)

    return decide


class _GinWithDecks:
    """Gin through the seam, its matches dealing from the decks given (passed in rather than
    patched in: a compiled engine's calls inside itself do not see a patched module)."""

    def __init__(self, game: games.Game, decks: Callable[[bytes, int, int], list[Card]]) -> None:
        self._game = game
        self._decks = decks

    def __getattr__(self, name: str) -> object:
        return getattr(self._game, name)

    def new_match(self, rules: RuleSet, seed: bytes, seats: int) -> wire.GinMatch:
        assert seats == 2
        return wire.GinMatch(Match(rules, seed, decks=self._decks))


async def _play(spec: MatchSpec, policies, stop_after_deal: int,  # type: ignore[no-untyped-def]
                decks: Callable[[bytes, int, int], list[Card]] | None = None) -> tuple[Table, list[FakeSession]]:
    table = Table(spec, None, lambda t: None)
    if decks is not None:
        table.game = cast(games.Game, _GinWithDecks(table.game, decks))
    sessions = seat_sessions(table, policies)
    for s in sessions:
        orig = s.send

        def send(data: bytes, on_written=None, orig=orig, s=s) -> None:  # type: ignore[no-untyped-def]
            orig(data, on_written)
            msg = s.messages[-1]  # the fake session keeps each message it is sent, parsed
            if msg.WhichOneof("kind") == "deal_finished" and msg.deal_finished.result.deal_number >= stop_after_deal:
                table.cancel("test done")
            if msg.WhichOneof("kind") == "game_finished":
                table.cancel("test done")

        s.send = send  # type: ignore[method-assign]
    await table.run()
    return table, sessions


def _check_seed(seed: int) -> int:
    rng = random.Random(seed)
    rules = RuleSet.classic()
    spec = MatchSpec(players=("p0", "p1"), rules=rules, time_control=TimeControl(per_move_ms=1000), match_id="m",
                     seed=seed.to_bytes(8, "big"))
    record: list[tuple[int, int, common_pb2.Action]] = []
    base_table, base_sessions = trio.run(
        _play, spec, [_policy(rng, record, 0), _policy(rng, record, 1)], DEALS_PER_MATCH,
        clock=trio.testing.MockClock(autojump_threshold=0),
    )
    seam_match = base_table.match
    assert isinstance(seam_match, wire.GinMatch)
    match = seam_match.match
    checked = 0
    for deal_no in range(1, DEALS_PER_MATCH + 1):
        actions = [(s, a) for d, s, a in record if d == deal_no]
        if not actions or match.game.number != 1 or match.game.deal_number < deal_no:
            continue
        deck = deck_for_deal(spec.seed or b"", 1, deal_no)
        dealer = _dealer_of(base_sessions[0], deal_no)
        from referee.gin._shuffle import deal_key

        deal = Deal.replay(deck, dealer, rules, [wire.action_from_proto(a) for _, a in actions],
                           key=deal_key(spec.seed or b"", 1, deal_no))
        if not deal.is_over:
            continue
        seat = rng.randrange(2)
        hidden = [i for i, c in enumerate(deck) if c not in seen_by(deal, seat)]
        cards = [deck[i] for i in hidden]
        shuffled = cards[:]
        while len(cards) > 1 and shuffled == cards:
            rng.shuffle(shuffled)
        alt_deck = list(deck)
        for i, c in zip(hidden, shuffled, strict=True):
            alt_deck[i] = c
        assert sorted(alt_deck) == sorted(DECK)

        def decks(s: bytes, game: int, d: int, _n: int = deal_no, _alt: list[Card] = alt_deck) -> list[Card]:
            return list(_alt) if (game, d) == (1, _n) else deck_for_deal(s, game, d)

        prior = [(s, a) for d, s, a in record if d < deal_no]
        script = prior + actions[:-1]  # everything up to the deal's last action
        per_seat = [[a for s, a in script if s == q] for q in (0, 1)]
        cut_base = _messages_before_last_action(base_sessions[seat], deal_no, len(actions))
        alt_table, alt_sessions = trio.run(
            _play, spec, [_replayer(per_seat[0]), _replayer(per_seat[1])], deal_no, decks,
            clock=trio.testing.MockClock(autojump_threshold=0),
        )
        alt_match = alt_table.match
        assert isinstance(alt_match, wire.GinMatch)
        assert alt_match.match.game.deal.deck == tuple(alt_deck), "the deal was not dealt from the deck passed in"
        alt = alt_sessions[seat].sent[: len(cut_base)]
        assert alt == cut_base, f"seed {seed} deal {deal_no}: seat {seat}'s messages depend on hidden cards"
        checked += 1
    return checked


def _dealer_of(session: FakeSession, deal_no: int) -> int:
    for m in session.messages:
        if m.WhichOneof("kind") == "deal_started" and m.deal_started.deal_number == deal_no \
                and m.deal_started.game_number == 1:
            return m.deal_started.dealer
    raise AssertionError("deal not started")


def _messages_before_last_action(session: FakeSession, deal_no: int, n_actions: int) -> list[bytes]:
    """The seat's messages up to (not including) the events of the deal's last action."""
    count = 0
    started = False
    for i, m in enumerate(session.messages):
        kind = m.WhichOneof("kind")
        if kind == "deal_started" and m.deal_started.game_number == 1 and m.deal_started.deal_number == deal_no:
            started = True
        elif started and kind == "event":
            count += 1
            if count == n_actions:
                return session.sent[:i]
    raise AssertionError("the deal's actions were not all seen")


@pytest.mark.parametrize("first_seed", range(0, SEEDS, SEEDS_PER_TEST))
def test_messages_to_a_seat_do_not_depend_on_cards_it_never_saw(first_seed: int) -> None:
    seeds = range(first_seed, min(first_seed + SEEDS_PER_TEST, SEEDS))
    checked = sum(_check_seed(seed) for seed in seeds)
    want = MIN_DEALS * len(seeds) // SEEDS
    assert checked >= want, f"only {checked} deals checked for seeds {seeds.start}..{seeds.stop - 1} (want {want})"


def test_a_seat_that_skips_event_messages_gets_the_same_messages_less_the_events() -> None:
    """A bot may ask for no ``event`` messages (``Hello.skip_event_messages``): it then gets
    exactly the other messages, byte for byte, so everything above holds for it too; and the
    replay records the choice, so that a re-run tells each seat the same."""
    from referee import read_replay, resimulate

    for seed in range(12):
        spec = MatchSpec(players=("p0", "p1"), rules=RuleSet.classic(), time_control=TimeControl(per_move_ms=1000),
                         match_id="m", seed=seed.to_bytes(8, "big"))
        runs = []
        for skip in (False, True):
            rng = random.Random(seed)

            async def main(skip: bool = skip, rng: random.Random = rng, spec: MatchSpec = spec
                           ) -> tuple[Table, list[FakeSession]]:
                table = Table(spec, None, lambda t: None)
                sessions = seat_sessions(table, [_policy(rng, [], 0), _policy(rng, [], 1)], skip_event_messages=skip)
                await table.run()
                return table, sessions

            runs.append(trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0)))
        (table, full), (lean_table, lean) = runs
        assert table.report is not None and lean_table.report is not None
        assert table.report.termination == lean_table.report.termination == "normal"
        for seat in (0, 1):
            kinds = [m.WhichOneof("kind") for m in full[seat].messages]
            assert "event" in kinds and "event" not in [m.WhichOneof("kind") for m in lean[seat].messages]
            # The match result carries the replay's hash, and the replay records the choice.
            assert lean[seat].sent[:-1] == [b for b, k in zip(full[seat].sent, kinds, strict=True)
                                            if k != "event"][:-1]
            ends = [full[seat].messages[-1], lean[seat].messages[-1]]
            assert [m.WhichOneof("kind") for m in ends] == ["match_finished", "match_finished"]
            for m in ends:
                m.match_finished.result.replay_hash = ""
            assert ends[0] == ends[1]
        replay = read_replay(lean_table._replay.lines)
        assert replay.header.event_messages == (False, False)
        again = resimulate(replay)
        assert again.lines == lean_table._replay.lines
        assert [[m.SerializeToString(deterministic=True) for m in seat] for seat in again.seat_messages] == \
            [s.sent for s in lean]
