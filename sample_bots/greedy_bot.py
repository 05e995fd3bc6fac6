"""The greedy sample bot: lowest deadwood now, knock at once.

- Takes the upcard / the top discard only if that lowers its deadwood (after its best discard).
- Discards the card that leaves the least deadwood (on a tie, the higher card).
- Knocks as soon as it may, with the knock that leaves the least deadwood; big gin when legal.

Deadwood comes from :mod:`.kit.masks` (hands as bit masks, sub-hands cached): the same
numbers as :mod:`.kit.cards`, several times faster, which matters when bot processes play
game after game.

Run: ``python -m sample_bots.greedy_bot --referee HOST:PORT --token T``.
"""

from __future__ import annotations

from gin_arena.v2 import bot_pb2, common_pb2

from .kit import run_bot
from .kit.gin import actions as A
from .kit.gin.cards import rank, value
from .kit.gin.masks import INDEX, deadwood_after_draw_mask, deadwood_mask, to_mask


def decide(request: bot_pb2.ActionRequest) -> common_pb2.Action:
    """The greedy choice among the request's legal actions."""
    state = request.gin
    hand = list(state.hand)
    held = to_mask(hand)
    legal = request.legal_actions

    if A.can(request, A.BIG_GIN):
        return A.action(A.BIG_GIN)

    knocks = A.legal_of_kind(request, A.KNOCK)
    if knocks:
        after = {k.gin.card: deadwood_mask(held & ~(1 << INDEX[k.gin.card])) for k in knocks}
        card = min(after, key=lambda c: (after[c], -value(c), -rank(c)))
        return A.action(A.KNOCK, card)

    discards = A.legal_of_kind(request, A.DISCARD)
    if discards:
        after = {d.gin.card: deadwood_mask(held & ~(1 << INDEX[d.gin.card])) for d in discards}
        card = min(after, key=lambda c: (after[c], -value(c), -rank(c)))
        return A.action(A.DISCARD, card)

    # Drawing: the face-up card only if it lowers the deadwood.
    take_kind = A.TAKE_UPCARD if A.can(request, A.TAKE_UPCARD) else A.DRAW_DISCARD
    if A.can(request, take_kind) and state.discard_pile:
        top = state.discard_pile[-1]
        # (the least deadwood after taking it and throwing any card, itself included: lower
        # than now only if keeping it helps)
        if deadwood_after_draw_mask(held, INDEX[top]) < deadwood_mask(held):
            return A.action(take_kind)
    for kind in (A.DRAW_STOCK, A.PASS):
        if A.can(request, kind):
            return A.action(kind)
    return legal[0]


def main(argv: list[str] | None = None) -> int:
    """Run the greedy bot from the command line."""
    return run_bot(decide, name="greedy", argv=argv)


if __name__ == "__main__":
    raise SystemExit(main())
