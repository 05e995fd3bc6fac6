"""The ``hand-reader`` sample bot: the expert's hand values, with a reading of the opponent's hand.

It plays as :mod:`sample_bots.expert_bot` does — a hand is worth its deadwood less its potential
(the deadwood the next draw is expected to save), a discard is charged with the chance that it
gives the opponent a meld, a knock waits while an undercut looks likely — but it reads more of
the deal to estimate what the opponent holds, and its knobs were tuned against ``expert`` rather
than against ``greedy``. Everything it uses is in the request (no memory between requests);
a decision takes a few milliseconds.

**The opponent's hand** (``read_opponent``). Every card the bot cannot see gets a weight: how
likely the opponent holds it, relative to the others. The deal's public events move them:

- a card the opponent *discarded* makes the cards that would meld with it less likely (it threw
  a card that did not fit) — the expert's one rule;
- a face-up card the opponent *refused* — an upcard it passed, or the top of the discard pile
  when it drew from the stock instead — does the same, less strongly (a player takes a card
  that completes a meld);
- a card the opponent *took* from the pile makes the cards melding with it more likely: it
  took the card because it held partners for it (the taken card itself is known, and stays in
  the estimate for sure while the opponent holds it).

These are the inferences a human player makes ("he threw the 7♠ and passed the 8♠: spades
around 7 are safe"); the Gin Rummy literature makes them explicit as *hand estimation* — the
EAAI 2021 Gin Rummy challenge's players (Neller et al.; e.g. the CNN-with-hand-estimation
player of the challenge papers) update per-card probabilities from exactly these three kinds of
event. The weights here are plain multiplicative factors per event, tuned by play; no code or
tables come from those works.

**Safer discards.** The danger of a discard (the chance it completes an opponent meld, from
the weights above) costs ``beta`` points of deadwood, growing as the stock shrinks (late in a
deal a meld handed over is more likely to end the deal against us).

**Knocking.** The expert's undercut estimate (opponent hands sampled from the weighted unseen
cards, improved as a played hand is, then laying off on our melds) now samples from the better
weights; the thresholds were tuned against ``expert``.

Measured: docs/benchmark.md, "Reference bots" (duplicate deals against ``expert``).

Run: ``python -m sample_bots.hand_reader_bot --referee HOST:PORT --token T``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gin_arena.v2 import bot_pb2, common_pb2

from . import expert_bot as E
from .kit import run_bot
from .kit.gin import actions as A
from .kit.gin.masks import INDEX

STOCK_AT_DEAL = 31
"""Cards in the stock just after a two-seat deal (52 less 21): how far into the deal we are."""


SHARED = E.Params(undercut_max=0.25, undercut_samples=32)
"""The expert's knobs as the hand-reader sets them."""


@dataclass(frozen=True)
class Params:
    """The hand-reader's knobs; the defaults were measured best against ``expert`` (docs/benchmark.md)."""

    expert: E.Params = SHARED
    """The expert's knobs for what the two bots share (hand value, candidates, knock rules)."""
    discard_hint: float = 0.6
    """How much less likely the opponent holds a card that melds with one it discarded."""
    refuse_hint: float = 0.5
    """How much less likely it holds a card that melds with a face-up card it refused."""
    take_hint: float = 2.0
    """How much more likely (factor ``1 + take_hint``) it holds a card that melds with one it took."""
    beta_late: float = 4.0
    """Extra cost of a surely-dangerous discard when the stock is empty (scaled by how far in)."""


DEFAULT = Params()


def opponent_events(request: bot_pb2.ActionRequest, opp: int) -> tuple[list[int], list[int], list[int]]:
    """The cards the opponent discarded, refused and took from the pile this deal, as indices.

    The discard pile is followed through the events (starting from the first upcard) to know
    which card the opponent refused when it drew from the stock."""
    state = request.gin
    discarded: list[int] = []
    refused: list[int] = []
    taken: list[int] = []
    pile: list[int] = [INDEX[state.first_upcard]] if state.first_upcard else []
    for e in request.events:
        ev = e.gin
        card = INDEX[ev.card] if ev.card else None
        mine = e.seat == opp
        if ev.kind == A.PASS:
            if mine and card is not None:
                refused.append(card)
        elif ev.kind in (A.TAKE_UPCARD, A.DRAW_DISCARD):
            if mine and card is not None:
                taken.append(card)
            if pile:
                pile.pop()
        elif ev.kind == A.DRAW_STOCK:
            if mine and pile and refused[-1:] != pile[-1:]:  # (not the upcard it passed just before)
                refused.append(pile[-1])
        elif ev.kind == A.DISCARD and card is not None:
            pile.append(card)
            if mine:
                discarded.append(card)
        if ev.reshuffled:
            pile = pile[-1:]
    return discarded, refused, taken


def read_opponent(request: bot_pb2.ActionRequest, p: Params = DEFAULT) -> E.View:
    """What the bot knows, with the opponent's hand estimated from the deal's events."""
    discarded, refused, taken = opponent_events(request, A.opponent(request.gin))
    return E.weighed_view(request.gin, [(discarded, 1.0 - p.discard_hint), (refused, 1.0 - p.refuse_hint),
                                        (taken, 1.0 + p.take_hint)])


def beta_now(v: E.View, p: Params) -> float:
    """The cost of a surely-dangerous discard at this point of the deal."""
    late = max(0.0, 1.0 - v.stock / STOCK_AT_DEAL)
    return p.expert.beta + p.beta_late * late


def decide(request: bot_pb2.ActionRequest, p: Params = DEFAULT) -> common_pb2.Action:
    """The hand-reader's choice among the request's legal actions: the expert's rules
    (:func:`expert_bot.choose`) over its own reading of the opponent, with the danger of a discard
    weighed by :func:`beta_now`."""
    v = read_opponent(request, p)
    return E.choose(request, v, p.expert, beta_now(v, p))


def main(argv: list[str] | None = None) -> int:
    """Run the hand-reader bot from the command line."""
    return run_bot(decide, name="hand-reader", argv=argv)


if __name__ == "__main__":
    raise SystemExit(main())
