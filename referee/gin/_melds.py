"""Melds, arrangements and deadwood (RULES §2), exact and fast.

Cards are handled as 52-bit masks (see :mod:`referee.gin._cards`): bit ``suit * 13 + rank - 1``.

How the minimum deadwood is found. Every arrangement is a choice of sets plus runs within each
suit, and runs never cross suits. So for each *set choice* (for every rank holding three or four
cards: no set, a set of three, or the set of four) the least deadwood of what is left is the sum,
over the four suits, of a lookup table ``RUN_DW`` indexed by the suit's 13-bit mask (the least
deadwood of that suit's cards using runs only). The minimum over the set choices is exact.

For an 11-card hand the least deadwood after the best single discard uses a second table,
``RUN_DW_DROP1[m]`` (the least ``RUN_DW`` of ``m`` less one card): for a set choice, discarding
from the cards outside its sets is best done in the suit where dropping a card gains most.
Discarding a card of a chosen set is covered by another set choice (a set of four becomes a set
of three with that card outside; a set of three becomes no set), so the minimum over set choices
is exact again.

Set choices that cannot win are skipped (see ``_build_pruned_options``): a card with no
neighbour in its suit can only be deadwood or in a set, so for a rank held four times the sets
of three leaving such a card out are never better than the set of four.

Hands too large for the set-choice enumeration (more than about 512 set choices, which needs far
more than 11 cards) fall back to an exact dynamic programme over the ranks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final, Literal

from referee.cardcore import Value
from referee.gin._cards import DECK, FULL_MASK, Card, from_mask

__all__ = [
    "RUN_DW",
    "RUN_DW_DROP1",
    "Arrangement",
    "Meld",
    "MeldKind",
    "all_arrangements",
    "all_arrangements_mask",
    "arrange",
    "arrange_mask",
    "arrangements_within",
    "cards_mask",
    "deadwood",
    "deadwood_after_each_discard",
    "deadwood_after_each_discard_mask",
    "deadwood_mask",
    "is_meld_mask",
    "meld_candidates_mask",
    "min_arrangements",
    "min_deadwood_after_discard",
    "min_deadwood_after_discard_mask",
    "value_mask",
]

MeldKind = Literal["set", "run"]

_SUIT: Final = 0x1FFF
"""The 13 bits of one suit."""
_SPREAD: Final = 1 | 1 << 13 | 1 << 26 | 1 << 39
"""One bit per suit at rank ace: shifted left by ``r`` it selects the four cards of rank ``r + 1``."""
_INF: Final = 1 << 30
"""Larger than any deadwood."""
_ENUM_LIMIT: Final = 512
"""Above this many set choices the rank-by-rank dynamic programme is used instead."""

_RANK_VALUE: Final = tuple(min(i + 1, 10) for i in range(13))
"""Deadwood value of the card at bit ``i`` of a suit (rank ``i + 1``)."""


# ----------------------------------------------------------------------------------------------
# Lookup tables
# ----------------------------------------------------------------------------------------------


def _build_run_tables() -> tuple[list[int], list[int], list[int], list[int]]:
    """``RUN_DW``, ``RUN_DW_DROP1``, the gain table and, per suit mask, the first run chosen
    (0: the lowest card is deadwood) by one optimal runs-only decomposition."""
    size = 1 << 13
    run_dw = [0] * size
    first_run = [0] * size
    vals = _RANK_VALUE
    for m in range(1, size):
        low = m & -m
        i = low.bit_length() - 1
        best = run_dw[m ^ low] + vals[i]
        choice = 0
        t = m >> i
        # length of the block of consecutive cards starting at the lowest one
        length = (~t & (t + 1)).bit_length() - 1
        if length >= 3:
            for n in range(3, length + 1):
                run = ((1 << n) - 1) << i
                d = run_dw[m ^ run]
                if d < best:  # strictly less: the shortest run wins ties (deterministic)
                    best = d
                    choice = run
        run_dw[m] = best
        first_run[m] = choice
    drop1 = [_INF] * size
    for m in range(1, size):
        best = _INF
        rest = m
        while rest:
            low = rest & -rest
            rest ^= low
            d = run_dw[m ^ low]
            if d < best:
                best = d
        drop1[m] = best
    gain = [run_dw[m] - drop1[m] for m in range(size)]
    gain[0] = -_INF
    return run_dw, drop1, gain, first_run


_TABLES: Final = _build_run_tables()
RUN_DW: Final[list[int]] = _TABLES[0]
"""``RUN_DW[m]``: least deadwood of one suit's cards (13-bit mask ``m``) using runs only."""
RUN_DW_DROP1: Final[list[int]] = _TABLES[1]
"""``RUN_DW_DROP1[m]``: least ``RUN_DW`` of ``m`` without one of its cards (huge for ``m == 0``)."""
_GAIN: Final[list[int]] = _TABLES[2]
"""``RUN_DW[m] - RUN_DW_DROP1[m]``: what the best discard from this suit saves (``-inf`` if empty)."""
_FIRST_RUN: Final[list[int]] = _TABLES[3]
"""For reconstruction: the run holding the lowest card of ``m`` in one optimal decomposition."""


def _build_rank_options() -> dict[int, tuple[int, ...]]:
    """For every rank and every way to hold three or four of its cards: the set choices
    (52-bit masks), the first always 0 (no set)."""
    opts: dict[int, tuple[int, ...]] = {}
    for r in range(13):
        bits = [1 << (s * 13 + r) for s in range(4)]
        for pattern in range(16):
            held = [b for s, b in enumerate(bits) if pattern >> s & 1]
            if len(held) < 3:
                continue
            key = sum(held)
            if len(held) == 3:
                opts[key] = (0, key)
            else:
                opts[key] = (0, key ^ held[0], key ^ held[1], key ^ held[2], key ^ held[3], key)
    return opts


_RANK_OPTS: Final = _build_rank_options()
"""Set choices keyed by the mask of the cards held at one rank (three or four of them)."""

_QUAD: Final = 1 << 52
"""Flag bit on a set choice holding a set of four (for the discard search)."""


def _build_pruned_options() -> tuple[dict[int, tuple[int, ...]], dict[int, tuple[int, ...]]]:
    """Set choices without the dominated ones, keyed by ``held | isolated << 52`` where
    ``isolated`` are the held cards that no run can use (no neighbours for one in their suit).

    Without a discard: a set of three leaving out an isolated card loses to the set of four (the
    card left out is deadwood); no set at all loses to a set when every card is isolated.

    With a discard (second table): a choice with a set of four also covers discarding one of
    its cards (a set of three remains), so a set of three leaving out an isolated card ``x``
    loses to the set of four (discard ``x``, or any other card with ``x`` still deadwood), and so
    does no set when all four are isolated. Sets of four carry the ``_QUAD`` flag."""
    plain: dict[int, tuple[int, ...]] = {}
    discard: dict[int, tuple[int, ...]] = {}
    for held in _RANK_OPTS:
        cards = [1 << i for i in range(52) if held >> i & 1]
        for k in range(1 << len(cards)):
            isolated = sum(c for j, c in enumerate(cards) if k >> j & 1)
            key = held | isolated << 52
            all_isolated = isolated == held
            if len(cards) == 3:
                plain[key] = (held,) if all_isolated else (0, held)
                discard[key] = (0, held)
                continue
            threes = tuple(held ^ c for c in cards if not c & isolated)
            base = () if all_isolated else (0,)
            plain[key] = (*base, *threes, held)
            discard[key] = (*base, *threes, held | _QUAD)
    return plain, discard


_PRUNED: Final = _build_pruned_options()
_PRUNED_PLAIN: Final = _PRUNED[0]
_PRUNED_DISCARD: Final = _PRUNED[1]

_RANK_LE_Q: Final = 0xFFF * _SPREAD
"""Every suit's ranks ace to queen (a card with a higher neighbour can be there)."""
_RANK_LE_J: Final = 0x7FF * _SPREAD
_RANK_GE_2: Final = 0x1FFE * _SPREAD
_RANK_GE_3: Final = 0x1FFC * _SPREAD


def _run_potential(mask: int) -> int:
    """The cards of ``mask`` that some run of cards of ``mask`` could use (a neighbour on each
    side, or two on one side, in their suit)."""
    up1 = (mask >> 1) & _RANK_LE_Q
    up2 = (mask >> 2) & _RANK_LE_J
    dn1 = (mask << 1) & _RANK_GE_2
    dn2 = (mask << 2) & _RANK_GE_3
    return (up1 & (up2 | dn1)) | (dn1 & dn2)


def _pruned_choices(mask: int, t3: int, table: dict[int, tuple[int, ...]]) -> list[int] | None:
    """The set choices worth trying (see ``_build_pruned_options``), or ``None`` if too many."""
    isolated = mask & ~_run_potential(mask)
    combos = [0]
    while t3:
        low = t3 & -t3
        t3 ^= low
        held = mask & (_SPREAD << (low.bit_length() - 1))
        opts = table[held | (held & isolated) << 52]
        if len(combos) * len(opts) > _ENUM_LIMIT:
            return None
        combos = [x | o for x in combos for o in opts]
    return combos


def _set_ranks(mask: int) -> int:
    """13-bit mask of the ranks held three or four times."""
    a = mask & _SUIT
    b = (mask >> 13) & _SUIT
    c = (mask >> 26) & _SUIT
    d = mask >> 39
    return ((a & b) & (c | d)) | ((c & d) & (a | b))


def _set_choices(mask: int, t3: int) -> list[int] | None:
    """Every set choice of the hand as a 52-bit mask of the set cards (the first is 0), or
    ``None`` if there are more than ``_ENUM_LIMIT``."""
    combos = [0]
    while t3:
        low = t3 & -t3
        t3 ^= low
        opts = _RANK_OPTS[mask & (_SPREAD << (low.bit_length() - 1))]
        if len(combos) * len(opts) > _ENUM_LIMIT:
            return None
        combos = [x | o for x in combos for o in opts]
    return combos


# ----------------------------------------------------------------------------------------------
# Values and validation
# ----------------------------------------------------------------------------------------------


def _check_mask(mask: int) -> None:
    if not 0 <= mask <= FULL_MASK:
        raise ValueError(f"not a card mask (52 bits): {mask!r}")


def _build_suit_values() -> list[int]:
    vals = [0] * (1 << 13)
    for m in range(1, 1 << 13):
        low = m & -m
        vals[m] = vals[m ^ low] + _RANK_VALUE[low.bit_length() - 1]
    return vals


_SUIT_VALUE: Final = _build_suit_values()
"""Sum of the card values of a 13-bit suit mask."""
_CARD_VALUE: Final = tuple(_RANK_VALUE[i % 13] for i in range(52))
"""Deadwood value of the card at each index."""


def value_mask(mask: int) -> int:
    """Sum of the deadwood values of the cards in ``mask``."""
    V = _SUIT_VALUE
    return V[mask & _SUIT] + V[(mask >> 13) & _SUIT] + V[(mask >> 26) & _SUIT] + V[(mask >> 39) & _SUIT]


def cards_mask(cards: Iterable[Card]) -> int:
    """The mask of ``cards``; a card given twice is a ``ValueError``."""
    m = 0
    for c in cards:
        if not isinstance(c, Card):
            raise TypeError(f"not a Card: {c!r}")
        bit = 1 << c.index
        if m & bit:
            raise ValueError(f"duplicate card: {c} appears more than once in the hand")
        m |= bit
    return m


# ----------------------------------------------------------------------------------------------
# Minimum deadwood
# ----------------------------------------------------------------------------------------------


def deadwood_mask(mask: int) -> int:
    """The least deadwood over all arrangements of the cards in a 52-bit mask (any number of cards)."""
    if not 0 <= mask <= FULL_MASK:
        raise ValueError(f"not a card mask (52 bits): {mask!r}")
    a = mask & _SUIT
    b = (mask >> 13) & _SUIT
    c = (mask >> 26) & _SUIT
    d = mask >> 39
    R = RUN_DW
    best = R[a] + R[b] + R[c] + R[d]
    t3 = ((a & b) & (c | d)) | ((c & d) & (a | b))
    if not t3:
        return best
    if not t3 & (t3 - 1):
        held = mask & (_SPREAD << (t3.bit_length() - 1))
        if held.bit_count() == 3:  # the common case: one set of three or none
            rem = mask ^ held
            v = R[rem & _SUIT] + R[(rem >> 13) & _SUIT] + R[(rem >> 26) & _SUIT] + R[rem >> 39]
            return v if v < best else best
    combos = _pruned_choices(mask, t3, _PRUNED_PLAIN)
    if combos is None:
        return _deadwood_dp(mask)
    for o in combos:
        if o:
            rem = mask ^ o
            v = R[rem & _SUIT] + R[(rem >> 13) & _SUIT] + R[(rem >> 26) & _SUIT] + R[rem >> 39]
            if v < best:
                best = v
    return best


def min_deadwood_after_discard_mask(mask11: int) -> int:
    """The least deadwood of the cards kept over every single-card discard (11 cards: what
    decides whether a knock is possible). The mask must hold at least one card."""
    if not 0 < mask11 <= FULL_MASK:
        raise ValueError(f"not a non-empty card mask (52 bits): {mask11!r}")
    a = mask11 & _SUIT
    b = (mask11 >> 13) & _SUIT
    c = (mask11 >> 26) & _SUIT
    d = mask11 >> 39
    R = RUN_DW
    G = _GAIN
    best = R[a] + R[b] + R[c] + R[d] - max(G[a], G[b], G[c], G[d])
    t3 = ((a & b) & (c | d)) | ((c & d) & (a | b))
    if not t3:
        return best
    if not t3 & (t3 - 1):
        held = mask11 & (_SPREAD << (t3.bit_length() - 1))
        if held.bit_count() == 3:  # the common case: one set of three or none
            rem = mask11 ^ held
            a = rem & _SUIT
            b = (rem >> 13) & _SUIT
            c = (rem >> 26) & _SUIT
            d = rem >> 39
            v = R[a] + R[b] + R[c] + R[d] - max(G[a], G[b], G[c], G[d])
            return v if v < best else best
    combos = _pruned_choices(mask11, t3, _PRUNED_DISCARD)
    if combos is None:
        return min(deadwood_mask(mask11 ^ (1 << c.index)) for c in from_mask(mask11))
    for o in combos:
        if o:
            rem = mask11 ^ (o & FULL_MASK)
            a = rem & _SUIT
            b = (rem >> 13) & _SUIT
            c = (rem >> 26) & _SUIT
            d = rem >> 39
            if o >> 52:  # a set of four: discarding one of its cards is possible too
                v = R[a] + R[b] + R[c] + R[d] - max(G[a], G[b], G[c], G[d], 0)
            else:
                v = R[a] + R[b] + R[c] + R[d] - max(G[a], G[b], G[c], G[d])
            if v < best:
                best = v
    return best


def deadwood(cards: Iterable[Card]) -> int:
    """The least deadwood over all arrangements of ``cards`` (RULES §2)."""
    return deadwood_mask(cards_mask(cards))


def min_deadwood_after_discard(cards: Iterable[Card]) -> int:
    """The least deadwood of the cards kept over every single-card discard."""
    return min_deadwood_after_discard_mask(cards_mask(cards))


def deadwood_after_each_discard_mask(mask: int) -> dict[int, int]:
    """For each card index in ``mask``: the least deadwood of the other cards."""
    _check_mask(mask)
    out: dict[int, int] = {}
    rest = mask
    while rest:
        low = rest & -rest
        rest ^= low
        out[low.bit_length() - 1] = deadwood_mask(mask ^ low)
    return out


def deadwood_after_each_discard(cards: Iterable[Card]) -> dict[Card, int]:
    """For each card of the hand: the least deadwood of the cards kept if it is discarded."""
    per_index = deadwood_after_each_discard_mask(cards_mask(cards))
    return {DECK[i]: v for i, v in per_index.items()}


# ----------------------------------------------------------------------------------------------
# Exact dynamic programme over the ranks (large hands)
# ----------------------------------------------------------------------------------------------
#
# Ranks are processed from ace to king. The state holds, per suit, the length of the run being
# built in that suit: 0 (none), 1, 2 or 3 (three or more: may stop at any time). At a rank each
# held card is deadwood, in a set (three or four cards of the rank) or continues its suit's run.
# A run of one or two cards may not stop. At the end every suit must be at 0 or 3.

_ROLE_DEAD: Final = 0
_ROLE_RUN: Final = 1
_ROLE_SET: Final = 2


def _dp_transitions(state: int, held: int) -> list[tuple[int, tuple[int, ...]]]:
    """Moves from ``state`` when the suits in the 4-bit ``held`` have a card at this rank:
    (new state, role per suit) for every legal assignment of roles."""
    moves: list[tuple[int, tuple[int, ...]]] = []
    suits = [s for s in range(4) if held >> s & 1]
    for code in range(3 ** len(suits)):
        roles = [-1, -1, -1, -1]
        x = code
        for s in suits:
            roles[s] = x % 3
            x //= 3
        n_set = roles.count(_ROLE_SET)
        if n_set not in (0, 3, 4):
            continue
        new = 0
        ok = True
        for s in range(4):
            run = (state >> (2 * s)) & 3
            if roles[s] == _ROLE_RUN:
                new |= min(run + 1, 3) << (2 * s)
            elif run in (1, 2):
                ok = False
                break
        if ok:
            moves.append((new, tuple(roles)))
    return moves


_DP_MOVES: dict[tuple[int, int], list[tuple[int, tuple[int, ...]]]] = {}


def _dp_moves(state: int, held: int) -> list[tuple[int, tuple[int, ...]]]:
    key = (state, held)
    moves = _DP_MOVES.get(key)
    if moves is None:
        moves = _DP_MOVES[key] = _dp_transitions(state, held)
    return moves


def _dp_solve(mask: int) -> tuple[int, list[tuple[int, ...]]]:
    """The least deadwood of ``mask`` and one optimal role per suit at each rank (-1: no card)."""
    layers: list[dict[int, tuple[int, int, tuple[int, ...]]]] = []
    cur: dict[int, int] = {0: 0}
    for r in range(13):
        held = 0
        for s in range(4):
            if mask >> (s * 13 + r) & 1:
                held |= 1 << s
        value = _RANK_VALUE[r]
        nxt: dict[int, int] = {}
        back: dict[int, tuple[int, int, tuple[int, ...]]] = {}
        for state, cost in cur.items():
            for new, roles in _dp_moves(state, held):
                c = cost + value * roles.count(_ROLE_DEAD)
                if c < nxt.get(new, _INF):
                    nxt[new] = c
                    back[new] = (state, c, roles)
        layers.append(back)
        cur = nxt
    final = [(cost, st) for st, cost in cur.items() if all((st >> (2 * s)) & 3 in (0, 3) for s in range(4))]
    best_cost, state = min(final)
    roles_by_rank: list[tuple[int, ...]] = [()] * 13
    for r in range(12, -1, -1):
        prev, _, roles = layers[r][state]
        roles_by_rank[r] = roles
        state = prev
    return best_cost, roles_by_rank


def _deadwood_dp(mask: int) -> int:
    return _dp_solve(mask)[0]


def _arrange_dp(mask: int) -> list[int]:
    """Meld masks of one optimal arrangement, from the rank-by-rank programme."""
    _, roles_by_rank = _dp_solve(mask)
    melds: list[int] = []
    for r, roles in enumerate(roles_by_rank):
        set_mask = 0
        for s in range(4):
            if roles[s] == _ROLE_SET:
                set_mask |= 1 << (s * 13 + r)
        if set_mask:
            melds.append(set_mask)
    for s in range(4):
        run = 0
        for r in range(13):
            if roles_by_rank[r][s] == _ROLE_RUN:
                run |= 1 << (s * 13 + r)
            elif run:
                melds.append(run)
                run = 0
        if run:
            melds.append(run)
    return melds


# ----------------------------------------------------------------------------------------------
# Melds and arrangements
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Meld(Value):
    """A set (3 or 4 cards of one rank) or a run (3 or more consecutive ranks of one suit)."""

    kind: MeldKind
    """``"set"`` or ``"run"``."""
    cards: tuple[Card, ...]
    """The meld's cards, sorted by index."""

    def __post_init__(self) -> None:
        if list(self.cards) != sorted(self.cards):
            raise ValueError(f"meld cards must be sorted by index: {' '.join(map(str, self.cards))}")
        kind = _meld_kind(cards_mask(self.cards))
        if kind != self.kind:
            raise ValueError(f"not a {self.kind}: {''.join(map(str, self.cards))}")

    @property
    def mask(self) -> int:
        """The meld's cards as a 52-bit mask."""
        m = 0
        for c in self.cards:
            m |= 1 << c.index
        return m

    @classmethod
    def from_mask(cls, mask: int) -> Meld:
        """The meld made of the cards of ``mask`` (a ``ValueError`` if they are not a meld)."""
        kind = _meld_kind(mask)
        if kind is None:
            raise ValueError(f"not a meld: {''.join(map(str, from_mask(mask)))}")
        return cls(kind, tuple(from_mask(mask)))

    def __str__(self) -> str:
        return "".join(str(c) for c in self.cards)


def _meld_kind(mask: int) -> MeldKind | None:
    """``"set"``, ``"run"`` or ``None`` for the cards of ``mask``."""
    n = mask.bit_count()
    if n < 3 or not 0 < mask <= FULL_MASK:
        return None
    suits = [(mask >> (13 * s)) & _SUIT for s in range(4)]
    nonempty = [m for m in suits if m]
    if len(nonempty) == 1:
        m = nonempty[0]
        t = m >> ((m & -m).bit_length() - 1)
        return "run" if t & (t + 1) == 0 else None
    one_each = len(nonempty) == n and nonempty[0].bit_count() == 1
    if n <= 4 and one_each and all(m == nonempty[0] for m in nonempty):
        return "set"
    return None


def is_meld_mask(mask: int) -> bool:
    """Whether the cards of ``mask`` form one meld (set or run)."""
    return _meld_kind(mask) is not None


@dataclass(frozen=True, slots=True)
class Arrangement(Value):
    """A choice of disjoint melds of a hand; the other cards are its deadwood."""

    melds: tuple[Meld, ...]
    """The melds, ordered by their lowest card index."""
    deadwood_cards: tuple[Card, ...]
    """The cards in no meld, sorted by index."""
    deadwood: int
    """Sum of the deadwood cards' values."""

    @property
    def deadwood_mask(self) -> int:
        """The deadwood cards as a mask."""
        m = 0
        for c in self.deadwood_cards:
            m |= 1 << c.index
        return m

    def __str__(self) -> str:
        parts = [str(m) for m in self.melds]
        dead = " ".join(str(c) for c in self.deadwood_cards)
        return f"[{' '.join(parts)}] deadwood {self.deadwood}" + (f": {dead}" if dead else "")


def _arrangement(mask: int, meld_masks: Iterable[int]) -> Arrangement:
    """The ``Arrangement`` value of ``mask`` with these (disjoint) melds."""
    melds = sorted(meld_masks, key=lambda m: m & -m)
    dead = mask
    for m in melds:
        dead ^= m
    return Arrangement(
        melds=tuple(Meld.from_mask(m) for m in melds),
        deadwood_cards=tuple(from_mask(dead)),
        deadwood=value_mask(dead),
    )


def meld_candidates_mask(mask: int) -> list[int]:
    """Every meld that can be made from the cards of ``mask`` (runs of any length ≥ 3 inside
    longer runs included), as masks, in a deterministic order."""
    out: list[int] = []
    for s in range(4):
        m = (mask >> (13 * s)) & _SUIT
        for i in range(13):
            if not m >> i & 1:
                continue
            j = i
            while j < 13 and m >> j & 1:
                j += 1
                if j - i >= 3:
                    out.append((((1 << (j - i)) - 1) << i) << (13 * s))
    t3 = _set_ranks(mask)
    while t3:
        low = t3 & -t3
        t3 ^= low
        out.extend(o for o in _RANK_OPTS[mask & (_SPREAD << (low.bit_length() - 1))] if o)
    return out


def all_arrangements_mask(mask: int) -> Iterator[tuple[tuple[int, ...], int]]:
    """Every arrangement of ``mask`` as (meld masks, deadwood mask), each exactly once:
    the lowest undecided card is either deadwood or in one of the melds holding it."""
    _check_mask(mask)
    by_card: dict[int, list[int]] = {}
    for meld in meld_candidates_mask(mask):
        rest = meld
        while rest:
            low = rest & -rest
            rest ^= low
            by_card.setdefault(low, []).append(meld)

    chosen: list[int] = []

    def rec(pool: int, dead: int) -> Iterator[tuple[tuple[int, ...], int]]:
        if not pool:
            yield tuple(chosen), dead
            return
        low = pool & -pool
        yield from rec(pool ^ low, dead | low)
        for meld in by_card.get(low, ()):
            if meld & pool == meld:
                chosen.append(meld)
                yield from rec(pool ^ meld, dead)
                chosen.pop()

    yield from rec(mask, 0)


def arrangements_within(
    mask: int, limit: int | None = None, free: int = 0
) -> list[tuple[tuple[int, ...], int, int]]:
    """The arrangements of ``mask`` whose deadwood, not counting the cards of ``free``, is at most
    ``limit`` (all if ``None``), as (meld masks, deadwood mask, deadwood), in the order of
    ``all_arrangements_mask``. The deadwood returned counts every card."""
    _check_mask(mask)
    by_card: dict[int, list[int]] = {}
    for meld in meld_candidates_mask(mask):
        rest = meld
        while rest:
            low = rest & -rest
            rest ^= low
            by_card.setdefault(low, []).append(meld)
    out: list[tuple[tuple[int, ...], int, int]] = []
    chosen: list[int] = []
    values = _CARD_VALUE
    bound = _INF if limit is None else limit

    def rec(pool: int, dead: int, value: int, counted: int) -> None:
        if not pool:
            out.append((tuple(chosen), dead, value))
            return
        low = pool & -pool
        v = values[low.bit_length() - 1]
        c = counted if low & free else counted + v
        if c <= bound:
            rec(pool ^ low, dead | low, value + v, c)
        for meld in by_card.get(low, ()):
            if meld & pool == meld:
                chosen.append(meld)
                rec(pool ^ meld, dead, value, counted)
                chosen.pop()

    rec(mask, 0, 0, 0)
    return out


def all_arrangements(cards: Iterable[Card]) -> Iterator[Arrangement]:
    """Every arrangement of ``cards``: every choice of disjoint melds, including non-maximal
    ones, each listed once (exponential in the hand size; meant for hands of about 10 cards)."""
    mask = cards_mask(cards)
    for melds, _ in all_arrangements_mask(mask):
        yield _arrangement(mask, melds)


def min_arrangements(cards: Iterable[Card]) -> list[Arrangement]:
    """All arrangements of ``cards`` that reach the minimum deadwood."""
    mask = cards_mask(cards)
    return [_arrangement(mask, melds) for melds, _, _ in arrangements_within(mask, deadwood_mask(mask))]


def _runs_of_suit(m: int, shift: int) -> list[int]:
    """The runs of one optimal runs-only decomposition of the suit mask ``m``."""
    out: list[int] = []
    while m:
        run = _FIRST_RUN[m]
        if run:
            out.append(run << shift)
            m ^= run
        else:
            m ^= m & -m
    return out


def arrange_mask(mask: int) -> list[int]:
    """Meld masks of one minimum-deadwood arrangement (deterministic: the first set choice, in
    enumeration order, that reaches the minimum; within a suit the runs of ``RUN_DW``)."""
    _check_mask(mask)
    t3 = _set_ranks(mask)
    combos = _set_choices(mask, t3) if t3 else [0]
    if combos is None:
        return _arrange_dp(mask)
    R = RUN_DW
    best = _INF
    best_o = 0
    for o in combos:
        rem = mask ^ o
        v = R[rem & _SUIT] + R[(rem >> 13) & _SUIT] + R[(rem >> 26) & _SUIT] + R[rem >> 39]
        if v < best:
            best = v
            best_o = o
    melds: list[int] = []
    t = best_o
    while t:  # split the chosen set cards into one set per rank
        low = t & -t
        rank_cards = t & (_SPREAD << ((low.bit_length() - 1) % 13))
        melds.append(rank_cards)
        t ^= rank_cards
    rem = mask ^ best_o
    for s in range(4):
        melds.extend(_runs_of_suit((rem >> (13 * s)) & _SUIT, 13 * s))
    return melds


def arrange(cards: Iterable[Card]) -> Arrangement:
    """One minimum-deadwood arrangement of ``cards`` (deterministic)."""
    mask = cards_mask(cards)
    return _arrangement(mask, arrange_mask(mask))
