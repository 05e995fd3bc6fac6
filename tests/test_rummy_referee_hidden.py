"""The referee cannot leak what a rummy seat may not know (R11), byte for byte.

For 2, 4 and 6 seats and every preset, matches are played through the real referee Table
(in-process sessions, a mock clock) and every message to each seat is kept as bytes. Then a deal
is played again with the cards one seat never saw (the other hands' hidden cards, the stock's)
moved among their places in the deck, every player repeating its actions; every message that
seat receives before the deal's last action must be the same bytes. The decks are passed into
the engine's match (not patched: a compiled engine would not see a patched module).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Sequence
from typing import cast

import pytest
import trio
import trio.testing

from gin_arena.v2 import bot_pb2, common_pb2
from referee import MatchSpec, TimeControl, games, rummy
from referee.lowlevel import Table
from referee.rummy import wire as rw
from tests._tables import FakeSession, Policy

DEALS = int(os.environ.get("RUMMY_HIDDEN_DEALS", "2100"))
"""Deals checked over all the tests (a third each for 2, 4 and 6 seats)."""
PER_TEST = 70
"""Deals one test checks (so that the test workers share them)."""
SECOND_DEAL_EVERY = 4
"""Every so many matches, their second deal is checked too (with the scores of the first)."""
_SETUPS: tuple[tuple[str, dict[str, str]], ...] = (
    ("rummy", {"stock_exhausted": "reshuffle"}),
    ("open", {"face_values": "rank"}),
    ("michigan", {}),
    ("bozenkill", {"next_dealer": "left", "stock_exhausted": "reshuffle"}),
)
Record = list[tuple[int, int, common_pb2.Action]]
DeckSource = Callable[[bytes, int, int], Sequence[rummy.Card]]


def _policy(rng: random.Random, record: Record, seat: int) -> Policy:
    """Mostly sound play, so that deals end by going out (melds and layoffs first, a discard
    taken when it is offered, the highest card discarded), sometimes anything."""

    def decide(req: bot_pb2.ActionRequest) -> common_pb2.Action:
        legal = list(req.legal_actions)
        kinds = [a.rummy.WhichOneof("kind") for a in legal]
        laying = [a for a, k in zip(legal, kinds, strict=True) if k in ("lay_meld", "lay_off")]
        takes = [a for a, k in zip(legal, kinds, strict=True) if k == "take_discard"]
        discards = [a for a, k in zip(legal, kinds, strict=True) if k == "discard"]
        if rng.random() < 0.05:
            choice = rng.choice(legal)
        elif laying:
            choice = rng.choice(laying)
        elif takes:
            choice = rng.choice(takes)
        elif discards:
            choice = max(discards, key=lambda a: (_VALUE[a.rummy.discard.card[0]], rng.random()))
        else:
            choice = legal[0]
        record.append((req.rummy.deal_number, seat, choice))
        return choice

    return decide


_VALUE = {r: i for i, r in enumerate("A23456789TJQK", 1)}


class _RummyWithDecks:
    """Rummy through the seam, its matches dealing from the decks given."""

    def __init__(self, game: games.Game, decks: DeckSource) -> None:
        self._game = game
        self._decks = decks

    def __getattr__(self, name: str) -> object:
        return getattr(self._game, name)

    def new_match(self, rules: rummy.RummyRules, seed: bytes, seats: int) -> rw.RummyMatch:
        return rw.RummyMatch(rummy.Match(rules, seed, seats, decks=self._decks))


def _play(spec: MatchSpec, policies: list[Policy], stop_after_deal: int, watched: int,
          decks: DeckSource | None = None, holder: list[Table] | None = None) -> tuple[Table, list[FakeSession]]:
    """Play until ``stop_after_deal`` deals are over; only seat ``watched`` is sent events (the
    others' messages are not compared)."""
    async def main() -> tuple[Table, list[FakeSession]]:
        table = Table(spec, None, lambda t: None, quiet=True)
        if holder is not None:
            holder.append(table)
        if decks is not None:
            table.game = cast(games.Game, _RummyWithDecks(table.game, decks))
        sessions = []
        for link, policy in zip(table.links, policies, strict=True):
            session = FakeSession(bot_name=link.name, policy=policy, skip_event_messages=link.seat != watched)
            session.link = link
            assert link.attach(session) is None
            sessions.append(session)
        for s in sessions:
            _stop_on(table, s, stop_after_deal)
        await table.run()
        return table, sessions

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def _stop_on(table: Table, session: FakeSession, stop_after_deal: int) -> None:
    """Cancel the match once ``stop_after_deal`` deals are over, or the game is."""
    orig = session.send

    def send(data: bytes, on_written: Callable[[float], None] | None = None) -> None:
        orig(data, on_written)
        msg = session.messages[-1]
        kind = msg.WhichOneof("kind")
        if (kind == "deal_finished" and msg.deal_finished.result.deal_number >= stop_after_deal) \
                or kind == "game_finished":
            table.cancel("test done")

    session.send = send  # type: ignore[method-assign]


def _replayer(table: list[Table], actions: list[common_pb2.Action]) -> Policy:
    """Answers with ``actions`` in order; when they run out, ends the match (the comparison
    stops there)."""
    it = iter(actions)

    def decide(req: bot_pb2.ActionRequest) -> common_pb2.Action | None:
        action = next(it, None)
        if action is None:
            table[0].cancel("script done")
        return action

    return decide


def _seen(deal: rummy.Deal, seat: int) -> set[rummy.Card]:
    """Every card ``seat`` saw in the deal: its own hand, its own draws, the pile, the table, the
    discards (a discard that triggers a reshuffle leaves the pile at once)."""
    probe = rummy.Deal(deal.deck, deal.dealer, deal.rules, deal.seats, deal.key)
    seen = set(probe.hands[seat]) | set(probe.pile)
    for move in deal.history:
        probe.apply(move.action)
        if move.seat == seat:
            seen |= set(probe.hands[seat])
        if isinstance(move.action, rummy.Discard):
            seen.add(move.action.card)
        seen |= set(probe.pile) | {p.card for m in probe.table for p in m.placed}
    return seen


def _cut(session: FakeSession, deal_no: int, events: int) -> list[bytes]:
    """The seat's messages up to (not including) the ``events``-th event of deal ``deal_no``."""
    count, started = 0, False
    for i, m in enumerate(session.messages):
        kind = m.WhichOneof("kind")
        if kind == "deal_started" and m.deal_started.game_number == 1 and m.deal_started.deal_number == deal_no:
            started = True
        elif started and kind == "event":
            count += 1
            if count == events:
                return session.sent[:i]
    raise AssertionError("the deal's events were not all seen")


def _alt_deck(deck: Sequence[rummy.Card], seen: set[rummy.Card], rng: random.Random) -> list[rummy.Card] | None:
    hidden = [i for i, c in enumerate(deck) if c not in seen]
    cards = [deck[i] for i in hidden]
    moved = cards[:]
    for _ in range(10):
        rng.shuffle(moved)
        if moved != cards:
            break
    else:
        return None
    alt = list(deck)
    for i, c in zip(hidden, moved, strict=True):
        alt[i] = c
    return alt


def _check(seats: int, seed: int) -> int:
    """Play a match of ``seats`` and check its first deals for one seat each; how many were checked."""
    rng = random.Random(f"{seats}/{seed}")
    preset, options = _SETUPS[seed % len(_SETUPS)]
    rules = rummy.RummyRules.preset(preset, **options)
    spec = MatchSpec(players=tuple(f"p{s}" for s in range(seats)), game="rummy", rules=rules,
                     time_control=TimeControl(per_move_ms=1000), match_id="m", seed=b"hidden %d" % seed)
    record: Record = []
    seat = rng.randrange(seats)
    deals = 2 if seed % SECOND_DEAL_EVERY == 0 else 1
    base_table, base = _play(spec, [_policy(rng, record, s) for s in range(seats)], deals, seat)
    match = base_table.match
    assert isinstance(match, rw.RummyMatch)
    checked = 0
    for deal_no in range(1, deals + 1):
        actions = [(s, a) for d, s, a in record if d == deal_no]
        if not actions or match.match.game.number != 1 or match.match.game.deal_number < deal_no:
            continue
        started = next(m.deal_started for m in base[seat].messages if m.WhichOneof("kind") == "deal_started"
                       and m.deal_started.deal_number == deal_no)
        deck = rummy.deck_for_deal(spec.seed or b"", 1, deal_no)
        deal = rummy.Deal.replay(deck, started.dealer, rules, seats, [rw.action_from_proto(a) for _, a in actions],
                                 key=rummy.deal_key(spec.seed or b"", 1, deal_no))
        assert deal.is_over
        alt = _alt_deck(deck, _seen(deal, seat), rng)
        if alt is None:
            continue

        def decks(s: bytes, game: int, d: int, _n: int = deal_no, _alt: list[rummy.Card] = alt) -> list[rummy.Card]:
            return list(_alt) if (game, d) == (1, _n) else rummy.deck_for_deal(s, game, d)

        script = [(s, a) for d, s, a in record if d < deal_no] + actions[:-1]
        last = max(i for i, step in enumerate(deal.steps) if isinstance(step, rummy.Move))
        cut = _cut(base[seat], deal_no, last + 1)
        holder: list[Table] = []
        alt_table, alt_sessions = _play(spec, [_replayer(holder, [a for s, a in script if s == q])
                                               for q in range(seats)], deal_no, seat, decks, holder)
        alt_match = alt_table.match
        assert isinstance(alt_match, rw.RummyMatch) and alt_match.match.game.deal.deck == tuple(alt)
        assert alt_sessions[seat].sent[:len(cut)] == cut, \
            f"{seats} seats, seed {seed}, deal {deal_no}: seat {seat}'s messages depend on cards it never saw"
        checked += 1
    return checked


@pytest.mark.parametrize("seats", [2, 4, 6])
@pytest.mark.parametrize("part", range(max(1, DEALS // 3 // PER_TEST)))
def test_rummy_messages_to_a_seat_do_not_depend_on_cards_it_never_saw(seats: int, part: int) -> None:
    want = PER_TEST
    checked, seed = 0, part * 10_000
    while checked < want:
        checked += _check(seats, seed)
        seed += 1
        assert seed < part * 10_000 + want * 2, f"only {checked} deals could be checked"
