"""The ``eaai-simple`` reference bot: the EAAI Gin Rummy challenge's simple player.

The policy of ``SimpleGinRummyPlayer``, the baseline opponent of the EAAI 2021 Undergraduate
Research Challenge (Todd W. Neller's Gin Rummy framework, 2020–21), written here from its
published description — "ignore opponent actions and cards no longer in play; draw the face-up
card only if it becomes part of a meld, draw face down otherwise; discard a highest-ranking
unmelded card without regard to breaking up pairs; knock as early as possible" — not from its
code:

- **Drawing.** It takes the upcard (or the top of the discard pile) only if that card would be
  part of a meld with cards it holds; otherwise it passes the upcard / draws from the stock. It
  looks at nothing else: not what the opponent took, refused or threw away.
- **Discarding.** It throws the card that leaves the least deadwood; among cards leaving the
  same least deadwood, the highest-ranking one (the framework chooses at random among them; this
  bot is deterministic: highest rank, then the suit order of the deck). Never the card just
  taken from the pile (the rules forbid it; the referee offers it no such discard).
- **Knocking.** At the first chance: whenever a knock is legal it knocks, with the discard that
  leaves the least deadwood (gin when it can); big gin when the rules allow it.

The challenge's papers measure their players against this one (e.g. a CNN player with hand
estimation won 55.4% ± 0.8% of games against it), which is why it is here: a fixed, published
point of reference for ``arena benchmark`` and docs/benchmark.md.

Run: ``python -m sample_bots.eaai_simple_bot --referee HOST:PORT --token T``.
"""

from __future__ import annotations

from gin_arena.v2 import bot_pb2, common_pb2

from .kit import run_bot
from .kit.gin import actions as A
from .kit.gin.masks import INDEX, WITH, deadwood_mask, to_mask


def joins_a_meld(held: int, card: int) -> bool:
    """Whether card index ``card`` would be part of a meld with cards of the hand ``held``."""
    with_card = held | 1 << card
    return any(meld & with_card == meld for meld in WITH[card])


def _least_deadwood_card(held: int, cards: list[str]) -> str:
    """Of ``cards`` (all in ``held``), the one whose removal leaves the least deadwood; on a tie,
    the highest-ranking (then the later in the deck's order)."""
    return min(cards, key=lambda c: (deadwood_mask(held & ~(1 << INDEX[c])), -(INDEX[c] % 13), -INDEX[c]))


def decide(request: bot_pb2.ActionRequest) -> common_pb2.Action:
    """The simple player's choice among the request's legal actions."""
    state = request.gin
    held = to_mask(state.hand)

    if A.can(request, A.BIG_GIN):
        return A.action(A.BIG_GIN)
    knocks = [k.gin.card for k in A.legal_of_kind(request, A.KNOCK)]
    if knocks:
        return A.action(A.KNOCK, _least_deadwood_card(held, knocks))
    discards = [d.gin.card for d in A.legal_of_kind(request, A.DISCARD)]
    if discards:
        return A.action(A.DISCARD, _least_deadwood_card(held, discards))

    take_kind = A.TAKE_UPCARD if A.can(request, A.TAKE_UPCARD) else A.DRAW_DISCARD
    if A.can(request, take_kind) and state.discard_pile and joins_a_meld(held, INDEX[state.discard_pile[-1]]):
        return A.action(take_kind)
    for kind in (A.DRAW_STOCK, A.PASS):
        if A.can(request, kind):
            return A.action(kind)
    return request.legal_actions[0]


def main(argv: list[str] | None = None) -> int:
    """Run the simple player from the command line."""
    return run_bot(decide, name="eaai-simple", argv=argv)


if __name__ == "__main__":
    raise SystemExit(main())
