"""``mc`` for rummy (2–6 seats): what the seat knows, worlds consistent with it, greedy playouts.

**What the seat knows** (:class:`Knowledge`, from one request). Every action is public but the
card of another seat's stock draw: the seat knows its own dealt cards (its hand now with its own
moves undone), the first upcard, its stock draws and at which draw, every card taken from the
pile (and by whom), every stop called, every meld, layoff and discard. What it does not know:
the other seats' dealt cards, their stock draws, the rest of the stock. The hard constraint: each
card another seat laid or discarded that it had not taken from the pile (or got back by a stop)
was dealt to it or drawn by it before.

**Worlds** (:func:`sample_deck`): as for Gin (:mod:`.gin`), seat by seat — each unexplained card
in a random place open to it then (the seat's dealt cards, its earlier draws), oldest first;
every other card elsewhere at random; the actions are replayed on the deck with the engine.

**Candidates.** The greedy sample bot's choice first (the baseline: see :mod:`.search`), then
the top discards of the pile, the biggest melds and layoffs, the discards of unpartnered cards.

**Playouts** (:func:`greedy_action`): take a discard when the engine allows it (it offers only
cards that can be used at once), lay the biggest meld, then layoffs, discard the highest card
with no partner in the hand (else the highest), decline stops. The result is the seat's points
less the mean of the other seats'.

A deal whose pile was reshuffled into a new stock is not searched (the new order depends on a
key the seat never sees): the greedy sample bot's rule decides.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import rummy_pb2
from referee import rummy

from .. import rummy_greedy_bot
from ..kit import rummy as kit
from .search import Budget, Search, decision_rng, fill_the_rest, rules_from_message

CANDIDATE_PLAYS = 6
"""Melds and layoffs compared by playouts (the biggest first)."""
CANDIDATE_DISCARDS = 4
"""Discards compared by playouts (the highest unpartnered cards first)."""
CANDIDATE_TAKES = 3
"""Takes from the pile compared by playouts (the top ones first), besides the stock draw."""

_INDEX = {str(c): c.index for c in rummy.DECK}
_LEAVES = ("discard", "lay_meld", "lay_off")


@dataclass(frozen=True)
class Knowledge:
    """What one seat knows about the rummy deal in progress."""

    seat: int
    """The seat."""
    seats: int
    """Seats at the table."""
    dealer: int
    """The deal's dealer."""
    dealt: tuple[int, ...]
    """The seat's dealt cards (indexes)."""
    upcard: int
    """The first upcard."""
    my_draws: tuple[tuple[int, int], ...]
    """The seat's stock draws: (the draw's number in the deal from 0, the card)."""
    draws: tuple[tuple[int, ...], ...]
    """By seat: the numbers of its stock draws (the other seats' cards are hidden)."""
    needs: tuple[tuple[tuple[int, int], ...], ...]
    """By seat: the cards it laid or discarded that it had not taken, each with how many stock
    draws it had made before."""
    actions: tuple[rummy.Action, ...]
    """The deal's actions so far."""
    reshuffled: bool
    """Whether the pile was reshuffled into a new stock (the search is then skipped)."""


def _cards_leaving(action: rummy_pb2.Action) -> list[str]:
    """The cards an action moves out of the hand (a discard, a meld, a layoff)."""
    kind = action.WhichOneof("kind")
    if kind == "discard":
        return [action.discard.card]
    if kind == "lay_meld":
        return list(action.lay_meld.cards)
    if kind == "lay_off":
        return [action.lay_off.card]
    return []


@dataclass
class _Walk:
    """The forward walk over the events (private to :func:`knowledge`)."""

    seats: int
    draws: int = 0

    def __post_init__(self) -> None:
        self.seat_draws: list[list[int]] = [[] for _ in range(self.seats)]
        self.needs: list[list[tuple[int, int]]] = [[] for _ in range(self.seats)]
        self.taken: list[set[int]] = [set() for _ in range(self.seats)]

    def leave(self, seat: int, card: int) -> None:
        if card in self.taken[seat]:
            self.taken[seat].discard(card)
        else:
            self.needs[seat].append((card, len(self.seat_draws[seat])))


def knowledge(request: bot_pb2.ActionRequest) -> Knowledge:
    """What the seat of ``request`` knows, read from the request alone."""
    state = request.rummy
    me, seats = state.seat, state.num_seats
    walk = _Walk(seats)
    my_draws: list[tuple[int, int]] = []
    mine: list[tuple[int, list[int]]] = []  # the seat's own moves: (+1 in / -1 out, cards)
    actions: list[rummy.Action] = []
    pile: list[int] = []  # the pile since the deal began, as far as the events tell
    last_discarder = -1
    reshuffled = False
    for envelope in request.events:
        e, seat = envelope.rummy, envelope.seat
        if e.WhichOneof("kind") == "reshuffle":
            reshuffled = True
            continue
        a = e.action
        kind = a.WhichOneof("kind")
        actions.append(rummy.parse_action(kit.action_text(a)))
        if kind == "draw_stock":
            if seat == me:
                my_draws.append((walk.draws, _INDEX[e.drawn_card]))
                mine.append((1, [_INDEX[e.drawn_card]]))
            walk.seat_draws[seat].append(walk.draws)
            walk.draws += 1
        elif kind == "take_discard":
            cards = [_INDEX[c] for c in e.taken_cards]
            walk.taken[seat].update(cards)
            mine += [(1, cards)] if seat == me else []
            del pile[max(0, len(pile) - len(cards)):]
        elif kind == "call_stop":
            card = pile.pop()
            walk.taken[last_discarder].add(card)
            mine += [(1, [card])] if last_discarder == me else []
        elif kind in _LEAVES:
            cards = [_INDEX[c] for c in _cards_leaving(a)]
            for card in cards:
                walk.leave(seat, card)
            mine += [(-1, cards)] if seat == me else []
            if kind == "discard":
                pile.append(cards[0])
                last_discarder = seat
    hand = {_INDEX[c] for c in state.hand}
    for sign, cards in reversed(mine):
        (hand.difference_update if sign > 0 else hand.update)(cards)
    upcard = _upcard(state, request)
    return Knowledge(me, seats, state.dealer, tuple(sorted(hand)), upcard, tuple(my_draws),
                     tuple(tuple(d) for d in walk.seat_draws), tuple(tuple(n) for n in walk.needs),
                     tuple(actions), reshuffled)


def _upcard(state: rummy_pb2.State, request: bot_pb2.ActionRequest) -> int:
    """The deal's first upcard: the pile now with the events undone, newest first (a discard
    leaves the top, a take puts its cards back, a stop puts back the discard before it)."""
    events = [e.rummy for e in request.events if e.rummy.WhichOneof("kind") == "action"]
    stopped: list[int] = []
    last_discard = -1
    for e in events:
        if e.action.WhichOneof("kind") == "discard":
            last_discard = _INDEX[e.action.discard.card]
        elif e.action.WhichOneof("kind") == "call_stop":
            stopped.append(last_discard)
    pile = [_INDEX[c] for c in state.discard_pile]
    for e in reversed(events):
        kind = e.action.WhichOneof("kind")
        if kind == "discard":
            pile.pop()
        elif kind == "take_discard":
            pile.extend(_INDEX[c] for c in e.taken_cards)
        elif kind == "call_stop":
            pile.append(stopped.pop())
    return pile[0]


def dealt_positions(seat: int, seats: int, dealer: int) -> list[int]:
    """The deck positions of a seat's dealt cards: ``deck[i]`` for ``i < n·h`` goes to seat
    ``(dealer + 1 + i) mod n``."""
    h = rummy.hand_size(seats)
    return list(range((seat - dealer - 1) % seats, seats * h, seats))


def sample_deck(k: Knowledge, rng: random.Random) -> list[int]:
    """A deck order (card indexes) consistent with ``k``, at random (see the module's doc)."""
    deck = [-1] * 52
    up = k.seats * rummy.hand_size(k.seats)
    placed = 0
    for pos, card in zip(dealt_positions(k.seat, k.seats, k.dealer), k.dealt, strict=True):
        deck[pos] = card
        placed |= 1 << card
    deck[up] = k.upcard
    placed |= 1 << k.upcard
    for number, card in k.my_draws:
        deck[up + 1 + number] = card
        placed |= 1 << card
    for seat in range(k.seats):
        if seat == k.seat:
            continue
        open_places = dealt_positions(seat, k.seats, k.dealer)
        opened = 0
        for card, draws_before in k.needs[seat]:
            while opened < draws_before:
                open_places.append(up + 1 + k.draws[seat][opened])
                opened += 1
            deck[open_places.pop(rng.randrange(len(open_places)))] = card
            placed |= 1 << card
    return fill_the_rest(deck, placed, rng)


def world(k: Knowledge, rules: rummy.RummyRules, deck: list[int]) -> rummy.Deal:
    """The deal on ``deck`` with the deal's actions replayed."""
    return rummy.Deal.replay([rummy.DECK[i] for i in deck], k.dealer, rules, k.seats, k.actions)


def _partnered(card: rummy.Card, held: set[tuple[int, int]]) -> bool:
    r, s = card.rank, card.suit
    return sum(1 for t in range(4) if t != s and (r, t) in held) >= 1 or (r - 1, s) in held or (r + 1, s) in held


def _discard_order(discards: list[rummy.Discard], face_values: str) -> list[rummy.Discard]:
    """Discards, the best first: cards with no partner (same rank, next rank of the suit) before
    the others, higher values first."""
    held = {(d.card.rank, d.card.suit) for d in discards}
    return sorted(discards, key=lambda d: (_partnered(d.card, held), -rummy.card_value(d.card, face_values),
                                           -d.card.index))


def greedy_action(deal: rummy.Deal) -> rummy.Action:
    """The fast rollout policy's action for the seat to move."""
    legal = deal.legal_actions()
    phase = deal.phase
    if phase == "stop":
        return next(a for a in legal if isinstance(a, rummy.DeclineStop))
    if phase == "draw":
        return legal[1] if len(legal) > 1 else legal[0]  # the top usable discard, else the stock
    melds = [a for a in legal if isinstance(a, rummy.LayMeld)]
    if melds:
        return max(melds, key=lambda a: len(a.cards))
    for a in legal:
        if isinstance(a, rummy.LayOff):
            return a
    discards = [a for a in legal if isinstance(a, rummy.Discard)]
    return _discard_order(discards, deal.rules.face_values)[0] if discards else legal[0]


def score(outcome: rummy.RummyOutcome | None, seat: int) -> float:
    """The seat's points less the mean of the others'."""
    if outcome is None:
        return 0.0
    points = outcome.points
    others = [p for s, p in enumerate(points) if s != seat]
    return points[seat] - sum(others) / max(1, len(others))


def rollout(deal: rummy.Deal, seat: int, max_steps: int = 2_000) -> float:
    """Play ``deal`` (changed in place) to its end by the greedy policy; ``seat``'s result."""
    steps = 0
    while deal.outcome is None and steps < max_steps:
        deal.apply(greedy_action(deal))
        steps += 1
    return score(deal.outcome, seat)


def candidates(deal: rummy.Deal) -> list[rummy.Action]:
    """The actions worth comparing, best guess first."""
    legal = deal.legal_actions()
    phase = deal.phase
    if phase == "draw":
        return legal[: 1 + CANDIDATE_TAKES]
    if phase != "play":
        return legal
    plays: list[rummy.Action] = [a for a in legal if isinstance(a, (rummy.LayMeld, rummy.LayOff))]
    plays.sort(key=lambda a: -len(a.cards) if isinstance(a, rummy.LayMeld) else -1)
    discards = _discard_order([a for a in legal if isinstance(a, rummy.Discard)], deal.rules.face_values)
    return plays[:CANDIDATE_PLAYS] + discards[:CANDIDATE_DISCARDS]


def default_rules() -> rummy.RummyRules:
    """The rules without a ``MatchStarted``: the ``rummy`` preset."""
    return rummy.RummyRules.preset("rummy")


def rules_of_match(msg: rummy_pb2.RuleSet | None) -> rummy.RummyRules:
    """The match's rules from ``MatchStarted.rummy`` (the ``rummy`` preset when absent or unreadable)."""
    found: Any = rules_from_message(msg, rummy.RummyRules, rummy.PRESETS)
    return found if isinstance(found, rummy.RummyRules) else default_rules()


def decide(request: bot_pb2.ActionRequest, rules: rummy.RummyRules, budget: Budget, seed: int) -> common_pb2.Action:
    """``mc``'s choice for a rummy request, under the match's ``rules``."""
    k = knowledge(request)
    if k.reshuffled:
        view = kit.view_of(request, kit.rules_of(rules_message(rules)))
        return kit.answer(request, rummy_greedy_bot.choose(view))
    state = request.rummy
    rng = decision_rng(seed, state.SerializeToString(deterministic=True),
                       *(e.SerializeToString(deterministic=True) for e in request.events))
    first = sample_deck(k, rng)
    now = world(k, rules, first)
    view = kit.view_of(request, kit.rules_of(rules_message(rules)))
    baseline = rummy.parse_action(kit.action_text(kit.answer(request, rummy_greedy_bot.choose(view)).rummy))
    options = [baseline, *(a for a in candidates(now) if a != baseline)]
    if len(options) > 1:
        spare = [first]

        def sample(g: random.Random) -> list[int]:
            return spare.pop() if spare else sample_deck(k, g)

        def playout(deck: list[int], action: rummy.Action) -> float:
            deal = world(k, rules, deck)
            deal.apply(action)
            return rollout(deal, k.seat)

        best, _, _ = Search(options, sample, playout).run(budget, rng, request.time_for_move_ms)
        options = [options[best]]
    return kit.answer(request, str(options[0]))


def rules_message(rules: rummy.RummyRules) -> rummy_pb2.RuleSet:
    """The fields of ``rules`` the kit's greedy rule reads, as a ``RuleSet`` message."""
    return rummy_pb2.RuleSet(
        name=rules.name, stop=rules.stop, rummy_doubles=rules.rummy_doubles, out_needs_discard=rules.out_needs_discard,
        ace=rummy_pb2.ACE_LOW_OR_HIGH if rules.ace == "low_or_high" else rummy_pb2.ACE_LOW,
        discard_draw=rummy_pb2.DISCARD_DRAW_ROW if rules.discard_draw == "row" else rummy_pb2.DISCARD_DRAW_TOP,
        scoring=rummy_pb2.SCORING_TABLE if rules.scoring == "table" else rummy_pb2.SCORING_HANDS,
        face_values=rummy_pb2.FACE_VALUES_RANK if rules.face_values == "rank" else rummy_pb2.FACE_VALUES_TEN,
        target=rules.target,
    )
