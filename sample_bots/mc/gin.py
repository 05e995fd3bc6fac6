"""``mc`` for Gin: what the seat knows, worlds consistent with it, greedy playouts in them.

**What the seat knows** (:class:`Knowledge`, from one request: its state and the deal's events
as this seat saw them). Every action of the deal is public but the card of the opponent's stock
draws. So the seat knows its own ten dealt cards (its hand now, its own draws and discards undone),
the first upcard, the cards it drew from the stock and at which draw, the cards the opponent took
from the pile (and still holds, unless it threw them again), the upcards passed, every discard.
What it does not know: the opponent's ten dealt cards, its stock draws, and the rest of the stock.
The one hard constraint on them: every card the opponent discarded that it had not taken from the
pile was dealt to it or drawn by it from the stock before that discard.

**Worlds** (:func:`sample_deck`). A deck order the deal could have been dealt from: the seat's
cards and draws where they were; each of the opponent's unexplained discards in one of the
places open to it at that time (its dealt cards, its earlier stock draws), chosen at random,
oldest discard first (the places open to a discard include every place open to an earlier one,
so this never runs out); every other card anywhere else, shuffled. The deal's actions are then
replayed on that deck with the engine (:func:`world`): the replay accepts every action and
shows this seat exactly what it saw (tests/test_mc_bot.py checks both on many real deals).

**Candidates.** The expert sample bot's choice first (the baseline: see :mod:`.search`), then
the draws, the best knock and the discards leaving the least deadwood.

**Playouts.** Each candidate action is applied in each world, and the deal is played out by a
fast greedy policy for both seats (:func:`rollout`: take the face-up card only if it lowers the
deadwood, throw the card that leaves the least, knock at the first chance, big gin when legal);
the result is the deal's points, the seat's positive. Knocking is one candidate among the
discards: the engine's showdown in each world (layoffs, undercuts) is the knock's value, so
undercut risk is counted from the opponent hands the seat thinks possible.

A deal whose discard pile was shuffled into a new stock (``stock_exhausted=reshuffle``) is not
searched: the new stock's order depends on a key the seat never sees; the greedy policy decides.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import gin_pb2
from referee import gin

from .. import expert_bot, greedy_bot
from ..kit.actions import to_action
from ..kit.gin import actions as A
from .search import Budget, Search, decision_rng, fill_the_rest, rules_from_message

HAND = 10
"""Cards dealt to each seat."""
UPCARD_POSITION = 2 * HAND
"""The deck position of the first upcard (RULES §3: the hands are dealt first, one card at a time)."""
CANDIDATE_DISCARDS = 4
"""Discards compared by playouts: those leaving the least deadwood (the others are rarely right)."""

_KIND_NAMES = {v.number: v.name.removeprefix("ACTION_KIND_").lower()
               for v in gin_pb2.DESCRIPTOR.enum_types_by_name["ActionKind"].values if v.number}
_DISCARD = tuple(gin.make_action("discard", c) for c in gin.DECK)
_KNOCK = tuple(gin.make_action("knock", c) for c in gin.DECK)
_DRAW_STOCK = gin.make_action("draw_stock")
_DRAW_DISCARD = gin.make_action("draw_discard")
_TAKE_UPCARD = gin.make_action("take_upcard")
_PASS = gin.make_action("pass")
_BIG_GIN = gin.make_action("big_gin")
_INDEX = {str(c): c.index for c in gin.DECK}
_VALUES = tuple(c.value for c in gin.DECK)


@dataclass(frozen=True)
class Knowledge:
    """What one seat knows about the deal in progress (nothing it was not shown)."""

    seat: int
    """The seat."""
    dealer: int
    """The deal's dealer."""
    dealt: tuple[int, ...]
    """The seat's ten dealt cards (indexes)."""
    upcard: int
    """The first upcard."""
    my_draws: tuple[tuple[int, int], ...]
    """The seat's stock draws: (the draw's number in the deal from 0, the card)."""
    opp_draws: tuple[int, ...]
    """The numbers of the opponent's stock draws, in order (their cards are hidden)."""
    opp_needs: tuple[tuple[int, int], ...]
    """The opponent's discards of cards it had not taken from the pile: (card, how many stock
    draws it had made before): each was dealt to it or is one of those draws."""
    actions: tuple[gin.Action, ...]
    """The deal's actions so far (a hidden stock draw is just ``draw_stock``)."""
    reshuffled: bool
    """Whether the discard pile was shuffled into a new stock (the search is then skipped)."""


def _event_kind(event: Any) -> str:
    return _KIND_NAMES.get(event.gin.kind, "")


def knowledge(request: bot_pb2.ActionRequest) -> Knowledge:
    """What the seat of ``request`` knows, read from the request alone."""
    state = request.gin
    me = state.seat
    draws = 0
    my_draws: list[tuple[int, int]] = []
    opp_draws: list[int] = []
    opp_needs: list[tuple[int, int]] = []
    opp_taken: set[int] = set()
    actions: list[gin.Action] = []
    mine: list[tuple[str, int]] = []
    reshuffled = False
    for e in request.events:
        kind = _event_kind(e)
        card = _INDEX[e.gin.card] if e.gin.card else -1
        reshuffled = reshuffled or e.gin.reshuffled
        actions.append(_DISCARD[card] if kind == "discard" else gin.make_action(kind))
        if e.seat == me:
            mine.append((kind, card))
            if kind == "draw_stock":
                my_draws.append((draws, card))
        elif kind == "draw_stock":
            opp_draws.append(draws)
        elif kind in ("take_upcard", "draw_discard"):
            opp_taken.add(card)
        elif kind == "discard":
            if card in opp_taken:
                opp_taken.discard(card)
            else:
                opp_needs.append((card, len(opp_draws)))
        draws += kind == "draw_stock"
    hand = {_INDEX[c] for c in state.hand}
    for kind, card in reversed(mine):  # undo the seat's own moves: its dealt cards are left
        if kind == "discard":
            hand.add(card)
        elif kind in ("draw_stock", "take_upcard", "draw_discard"):
            hand.discard(card)
    return Knowledge(me, state.dealer, tuple(sorted(hand)), _INDEX[state.first_upcard], tuple(my_draws),
                     tuple(opp_draws), tuple(opp_needs), tuple(actions), reshuffled)


def dealt_positions(seat: int, dealer: int) -> list[int]:
    """The deck positions of a seat's dealt cards (the non-dealer gets the first card)."""
    first = 0 if seat != dealer else 1
    return [first + 2 * i for i in range(HAND)]


def sample_deck(k: Knowledge, rng: random.Random) -> list[int]:
    """A deck order (card indexes) consistent with ``k``, at random (see the module's doc)."""
    deck = [-1] * 52
    placed = 0
    for pos, card in zip(dealt_positions(k.seat, k.dealer), k.dealt, strict=True):
        deck[pos] = card
        placed |= 1 << card
    deck[UPCARD_POSITION] = k.upcard
    placed |= 1 << k.upcard
    for number, card in k.my_draws:
        deck[UPCARD_POSITION + 1 + number] = card
        placed |= 1 << card
    open_places = dealt_positions(1 - k.seat, k.dealer)
    opened = 0
    for card, draws_before in k.opp_needs:
        while opened < draws_before:
            open_places.append(UPCARD_POSITION + 1 + k.opp_draws[opened])
            opened += 1
        deck[open_places.pop(rng.randrange(len(open_places)))] = card
        placed |= 1 << card
    return fill_the_rest(deck, placed, rng)


def world(k: Knowledge, rules: gin.RuleSet, rng: random.Random) -> gin.Deal:
    """A deal consistent with ``k``: a sampled deck with the deal's actions replayed on it."""
    deck = [gin.DECK[i] for i in sample_deck(k, rng)]
    return gin.Deal.replay(deck, k.dealer, rules, k.actions)


def _top(deal: gin.Deal) -> int:
    """The top card of the discard pile (without copying the pile)."""
    if deal.steps:
        card = deal.last_move().card
        if card is not None and deal.last_move().action is not None:
            return card.index
    pile = deal.discard_pile
    return pile[-1].index if pile else -1


def _greedy_discard(hand: int, forbidden: int) -> tuple[int, int]:
    """The discard leaving the least deadwood (a tie: the higher card) and that deadwood."""
    best, best_dw = -1, 1 << 30
    h = hand
    while h:
        low = h & -h
        i = low.bit_length() - 1
        h ^= low
        if i == forbidden:
            continue
        dw = gin.deadwood_mask(hand ^ low)
        if dw < best_dw or (dw == best_dw and _VALUES[i] >= _VALUES[best]):
            best, best_dw = i, dw
    return best, best_dw


def greedy_action(deal: gin.Deal) -> gin.Action:
    """The fast rollout policy's action for the seat to move (full view of its own hand only)."""
    seat = deal.to_move
    hand = deal.hands[seat]
    phase = deal.phase
    if phase == "discard":
        if deal.rules.big_gin and gin.deadwood_mask(hand) == 0:
            return _BIG_GIN
        forbidden = deal.forbidden_discard
        card, dw = _greedy_discard(hand, forbidden.index if forbidden is not None else -1)
        limit = deal.knock_limit
        if dw <= (0 if limit is None else limit):
            return _KNOCK[card]
        return _DISCARD[card]
    top = _top(deal)
    take = phase == "upcard" or not deal.stock_draw_only
    if take and top >= 0 and gin.min_deadwood_after_discard_mask(hand | 1 << top) < gin.deadwood_mask(hand):
        return _TAKE_UPCARD if phase == "upcard" else _DRAW_DISCARD
    return _PASS if phase == "upcard" else _DRAW_STOCK


def rollout(deal: gin.Deal, seat: int) -> float:
    """Play ``deal`` (changed in place) to its end by the greedy policy; ``seat``'s points
    (negative when the other seat scores)."""
    while not deal.is_over:
        deal.apply(greedy_action(deal))
    outcome = deal.outcome
    if outcome is None or outcome.winner is None:
        return 0.0
    return float(outcome.points if outcome.winner == seat else -outcome.points)


def playout(deal: gin.Deal, action: gin.Action) -> float:
    """The result for the seat to move of ``action`` in ``deal`` (left unchanged), played out."""
    seat = deal.to_move
    after = deal.copy()
    after.apply(action)
    return rollout(after, seat)


def candidates(deal: gin.Deal) -> list[gin.Action]:
    """The actions worth comparing, best guess first: both draws; the discards leaving the
    least deadwood and the best knock (gin and big gin are taken at once, alone)."""
    phase = deal.phase
    if phase == "upcard":
        return [_PASS, _TAKE_UPCARD]
    if phase == "draw":
        return [_DRAW_STOCK] if deal.stock_draw_only else [_DRAW_STOCK, _DRAW_DISCARD]
    legal = deal.legal_actions()
    if _BIG_GIN in legal:
        return [_BIG_GIN]
    hand = deal.hands[deal.to_move]
    knocks = [a for a in legal if isinstance(a, gin.Knock)]
    after = {a.card.index: gin.deadwood_mask(hand ^ 1 << a.card.index) for a in knocks}
    if knocks:
        best_knock = min(knocks, key=lambda a: (after[a.card.index], -_VALUES[a.card.index], -a.card.index))
        if after[best_knock.card.index] == 0:
            return [best_knock]
    discards = [a for a in legal if isinstance(a, gin.Discard)]
    dw = {a.card.index: gin.deadwood_mask(hand ^ 1 << a.card.index) for a in discards}
    discards.sort(key=lambda a: (dw[a.card.index], -_VALUES[a.card.index], -a.card.index))
    out: list[gin.Action] = list(discards[:CANDIDATE_DISCARDS])
    if knocks:
        out.insert(0, best_knock)
    return out


def rules_of_match(msg: gin_pb2.RuleSet | None) -> gin.RuleSet:
    """The match's rules from ``MatchStarted.gin`` (classic when absent or unreadable)."""
    found: Any = rules_from_message(msg, gin.RuleSet, gin.PRESETS)
    return found if isinstance(found, gin.RuleSet) else gin.RuleSet.classic()


def deal_rules(rules: gin.RuleSet, state: gin_pb2.State) -> gin.RuleSet:
    """``rules`` with this deal's knock limit as the state tells it (Oklahoma's depends on the
    upcard): the worlds then allow exactly the knocks the referee does."""
    if state.knock_limit < 0:
        return replace(rules, knock="gin_only", knock_limit=10)
    return replace(rules, knock="limit", knock_limit=state.knock_limit)


def to_message(action: gin.Action) -> common_pb2.Action:
    """An engine action as the envelope's Action."""
    card = getattr(action, "card", None)
    return A.action(A.KINDS[action.kind], str(card) if card is not None else "")


def decide(request: bot_pb2.ActionRequest, rules: gin.RuleSet, budget: Budget, seed: int) -> common_pb2.Action:
    """``mc``'s choice for a Gin request, under the match's ``rules``."""
    state = request.gin
    k = knowledge(request)
    if k.reshuffled:
        return greedy_bot.decide(request)
    r = deal_rules(rules, state)
    rng = decision_rng(seed, state.SerializeToString(deterministic=True),
                       *(e.SerializeToString(deterministic=True) for e in request.events))
    first = world(k, r, rng)
    baseline = gin.parse_action(A.action_text(to_action(expert_bot.decide(request), request)))
    options = [baseline, *(a for a in candidates(first) if a != baseline)]
    if len(options) > 1 and not isinstance(baseline, gin.BigGin):
        spare = [first]

        def sample(g: random.Random) -> gin.Deal:
            return spare.pop() if spare else world(k, r, g)

        search = Search(options, sample, playout)
        best, _, _ = search.run(budget, rng, request.time_for_move_ms)
        options = [options[best]]
    return to_message(options[0])
