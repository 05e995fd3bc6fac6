"""The expert sample bot (first cut, being tuned)."""

from __future__ import annotations

from dataclasses import dataclass

from gin_arena.v1 import bot_pb2, game_pb2

from .kit import actions as A
from .kit import run_bot
from .kit.cards import DECK
from .kit.masks import (
    INDEX,
    VALUES,
    deadwood_after_best_discard_mask,
    deadwood_after_draw_mask,
    deadwood_mask,
    indices,
    to_mask,
)

FULL = (1 << 52) - 1


@dataclass(frozen=True)
class Params:
    alpha: float = 1.0
    beta: float = 4.0
    take_margin: float = 0.0
    knock_early_turns: int = 99
    knock_late_max: int = 10
    max_candidates: int = 6
    candidate_margin: int = 10


@dataclass
class View:
    hand: int
    unseen: int
    opp_known: int
    dead: int
    p_opp: float
    stock: int
    turns: int


def _view(state: game_pb2.InformationState) -> View:
    me = state.seat
    opp = A.opponent(state)
    hand = to_mask(state.hand)
    pile = to_mask(state.discard_pile)
    opp_known = to_mask(A.known_cards_of(state, opp))
    unseen = FULL & ~(hand | pile | opp_known)
    opp_unknown = max(0, (state.hand_sizes[opp] if len(state.hand_sizes) > opp else 10) - opp_known.bit_count())
    n_unseen = unseen.bit_count()
    p_opp = opp_unknown / n_unseen if n_unseen else 0.0
    turns = sum(1 for e in state.events if e.seat == me and e.kind in (A.DRAW_STOCK, A.DRAW_DISCARD, A.TAKE_UPCARD))
    return View(hand, unseen, opp_known, pile, p_opp, state.stock_size, turns)


def _near(i: int) -> int:
    r, s = i % 13, i // 13
    m = 0
    for t in range(4):
        if t != s:
            m |= 1 << (t * 13 + r)
    for rr in (r - 1, r + 1):
        if 0 <= rr < 13:
            m |= 1 << (s * 13 + rr)
    return m


NEAR = tuple(_near(i) for i in range(52))


def potential(h10: int, unseen: int) -> float:
    dw = deadwood_mask(h10)
    if not unseen or dw == 0:
        return 0.0
    near = 0
    for i in indices(h10):
        near |= NEAR[i]
    near &= unseen
    total = 0
    for i in indices(near):
        total += dw - deadwood_after_draw_mask(h10, i)
    slack = dw - deadwood_after_best_discard_mask(h10)
    for i in indices(unseen & ~near):
        if VALUES[i] < slack:
            total += slack - VALUES[i]
    return total / unseen.bit_count()


def evaluate(h10: int, v: View, p: Params) -> float:
    return deadwood_mask(h10) - p.alpha * potential(h10, v.unseen)


def _q(i: int, v: View) -> float:
    bit = 1 << i
    if v.opp_known & bit:
        return 1.0
    if v.unseen & bit:
        return v.p_opp
    return 0.0


def danger(i: int, v: View) -> float:
    """Chance the opponent can meld card i."""
    r, s = i % 13, i // 13
    others = [_q(t * 13 + r, v) for t in range(4) if t != s]
    # P(at least two of the three)
    a, b, c = others
    p_set = a * b + a * c + b * c - 2 * a * b * c
    def q(rr: int) -> float:
        return _q(s * 13 + rr, v) if 0 <= rr < 13 else 0.0
    pairs = [q(r - 2) * q(r - 1), q(r - 1) * q(r + 1), q(r + 1) * q(r + 2)]
    miss = (1 - p_set)
    for x in pairs:
        miss *= 1 - x
    return 1 - miss


def candidates(h11: int, allowed: list[int], p: Params) -> list[int]:
    after = {i: deadwood_mask(h11 & ~(1 << i)) for i in allowed}
    order = sorted(allowed, key=lambda i: (after[i], -VALUES[i]))
    best = after[order[0]]
    return [i for i in order[: p.max_candidates] if after[i] <= best + p.candidate_margin]


def decide(request: bot_pb2.ActionRequest, p: Params | None = None) -> game_pb2.Action:
    p = p or Params()
    state = request.state
    v = _view(state)
    if A.can(request, A.BIG_GIN):
        return A.action(A.BIG_GIN)
    knocks = A.legal_of_kind(request, A.KNOCK)
    discards = A.legal_of_kind(request, A.DISCARD)
    if knocks:
        after = {k.card: deadwood_mask(v.hand & ~(1 << INDEX[k.card])) for k in knocks}
        card = min(after, key=lambda c: (after[c], -VALUES[INDEX[c]]))
        k = after[card]
        if k == 0 or v.turns <= p.knock_early_turns or k <= p.knock_late_max:
            return A.action(A.KNOCK, card)
    if discards:
        allowed = [INDEX[d.card] for d in discards]
        scored = {
            i: evaluate(v.hand & ~(1 << i), v, p) + p.beta * danger(i, v)
            for i in candidates(v.hand, allowed, p)
        }
        i = min(scored, key=lambda i: scored[i])
        return A.action(A.DISCARD, DECK[i])
    take_kind = A.TAKE_UPCARD if A.can(request, A.TAKE_UPCARD) else A.DRAW_DISCARD
    if A.can(request, take_kind) and state.discard_pile:
        t = INDEX[state.discard_pile[-1]]
        h11 = v.hand | (1 << t)
        allowed = [i for i in indices(v.hand)]
        take = min(evaluate(h11 & ~(1 << i), v, p) for i in candidates(h11, allowed, p))
        pot = potential(v.hand, v.unseen)
        stock = deadwood_mask(v.hand) - 2 * p.alpha * pot
        if take < stock - p.take_margin:
            return A.action(take_kind)
    for kind in (A.DRAW_STOCK, A.PASS):
        if A.can(request, kind):
            return A.action(kind)
    return request.legal_actions[0]


def main(argv: list[str] | None = None) -> int:
    return run_bot(decide, name="expert", argv=argv)


if __name__ == "__main__":
    raise SystemExit(main())
