"""Rummy helpers for bot authors (docs/rules-rummy.md): values, melds in a hand, what lays off
where, the cards a hand can put on the table this turn, and a plain view of a request.

Cards are strings as on the wire and in :mod:`.cards` (``"As"``, ``"Td"``, ``"Kc"``). Whether
an ace may also sit above a king (Q-K-A, Michigan and Bozenkill) is the ``ace_high`` argument
(:attr:`Rules.ace_high`); a run never wraps (K-A-2 is never a run).

Action texts (what ``decide`` returns, and :attr:`View.legal`)::

    draw_stock · take_discard 7h · meld 5s 6s 7s · lay_off 8s 0 high · discard Kd
    call_stop · decline_stop

A layoff names the table meld by its number (its position on the table, from 0) and the end:
``set``, or ``low`` / ``high`` of a run.

    >>> find_melds(["5s", "6s", "7s", "7h", "7d"])
    [('7s', '7h', '7d'), ('5s', '6s', '7s')]
    >>> hand_value(["Ks", "Qh", "As"])
    21
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import rummy_pb2

from ..deck import SUITS, make_card, parse_card, rank, sort_cards, suit
from ..games import GameKit, register

HIGH_ACE = 14
"""The position of an ace laid above a king in a run (``ace_high`` only)."""


# ----- values -----
def value(card: str, face_values: str = "ten") -> int:
    """A card's value in a hand (R1): ace 1, pips, J Q K 10 (``ten``) or 11 12 13 (``rank``).
    An ace left in a hand counts 1 in every variant."""
    r = rank(card)
    return r if r < 10 or face_values == "rank" else 10


def hand_value(cards: Iterable[str], face_values: str = "ten") -> int:
    """What a hand pays the winner when the deal ends (R5): every card in it counts, melds
    kept in the hand included."""
    return sum(value(c, face_values) for c in cards)


# ----- melds -----
def _position_card(card_suit: str, position: int) -> str:
    return make_card(1 if position == HIGH_ACE else position, card_suit)


def run_of(card_suit: str, low: int, high: int) -> tuple[str, ...]:
    """The cards of a run of one suit from position ``low`` to ``high`` (14 = an ace above K)."""
    return tuple(_position_card(card_suit, p) for p in range(low, high + 1))


def meld_shape(cards: Sequence[str], ace_high: bool = False) -> tuple[str, int, int] | None:
    """``("set", rank, rank)`` or ``("run", low, high)`` if the cards are one meld (R2),
    else ``None``. A run's positions are ranks, an ace laid high is 14."""
    if len(cards) < 3 or len(set(cards)) != len(cards):
        return None
    ranks = sorted(rank(c) for c in cards)
    if ranks[0] == ranks[-1]:
        return ("set", ranks[0], ranks[0]) if len(cards) <= 4 else None
    if len({suit(c) for c in cards}) != 1 or len(cards) > 13:
        return None
    if ranks == list(range(ranks[0], ranks[0] + len(ranks))):
        return "run", ranks[0], ranks[-1]
    high = [*ranks[1:], HIGH_ACE]
    if ace_high and ranks[0] == 1 and high == list(range(high[0], HIGH_ACE + 1)):
        return "run", high[0], HIGH_ACE
    return None


def is_meld(cards: Sequence[str], ace_high: bool = False) -> bool:
    """Whether the cards are one set or one run."""
    return meld_shape(cards, ace_high) is not None


def find_melds(cards: Iterable[str], ace_high: bool = False) -> list[tuple[str, ...]]:
    """Every set and run the cards can make (they may overlap): sets first, by rank, then runs
    by suit and low end. A set is listed in suit order, a run from its low end (an ace laid
    high last); each is also the order of a ``meld`` action's cards."""
    held = set(cards)
    out: list[tuple[str, ...]] = []
    for r in range(1, 14):
        same = [make_card(r, s) for s in SUITS if make_card(r, s) in held]
        for size in (3, 4):
            out.extend(itertools.combinations(same, size))
    for s in SUITS:
        present = {rank(c) for c in held if suit(c) == s}
        if ace_high and 1 in present:
            present.add(HIGH_ACE)
        for low in sorted(present):
            high = low
            while high + 1 in present and high + 1 - low < 13:
                high += 1
                if high - low >= 2 and not (low == 2 and high == HIGH_ACE):  # 2..A is A..K again
                    out.append(run_of(s, low, high))
    return out


@dataclass(frozen=True)
class TableMeld:
    """A meld on the table as a bot sees it."""

    number: int
    """Its position on the table (what a ``lay_off`` names), from 0."""
    owner: int
    """The seat that laid it."""
    kind: str
    """``set`` or ``run``."""
    cards: tuple[str, ...]
    """Its cards now, layoffs included: a set in suit order, a run from its low end."""
    low: int
    """A run's lowest position (an ace low is 1); a set's rank."""
    high: int
    """A run's highest position (an ace laid high is 14); a set's rank."""

    @classmethod
    def of(cls, number: int, owner: int, cards: Sequence[str], ace_high: bool = False) -> TableMeld:
        """The table meld that ``cards`` make (``ValueError`` if they are not a meld)."""
        shape = meld_shape(cards, ace_high)
        if shape is None:
            raise ValueError(f"not a meld: {' '.join(cards)}")
        kind, low, high = shape
        ordered = tuple(sort_cards(cards)) if kind == "set" else run_of(suit(cards[0]), low, high)
        return cls(number, owner, kind, ordered, low, high)


def fits(meld: TableMeld, ace_high: bool = False) -> list[tuple[str, str]]:
    """The cards that could be laid off onto the meld as it stands, with the end (R2): the
    missing suits of a set, the next card at either end of a run."""
    if meld.kind == "set":
        return [(make_card(meld.low, s), "set") for s in SUITS if make_card(meld.low, s) not in meld.cards]
    if meld.high - meld.low + 1 >= 13:
        return []
    s = suit(meld.cards[0])
    out: list[tuple[str, str]] = []
    if meld.low > 1:
        out.append((_position_card(s, meld.low - 1), "low"))
    if meld.high < 13 or (meld.high == 13 and ace_high):
        out.append((_position_card(s, meld.high + 1), "high"))
    return out


def extend(meld: TableMeld, card: str, end: str) -> TableMeld:
    """The meld with ``card`` laid off at ``end`` (the caller checked that it fits)."""
    if end == "low":
        return replace(meld, low=meld.low - 1, cards=(card, *meld.cards))
    if end == "high":
        return replace(meld, high=meld.high + 1, cards=(*meld.cards, card))
    return replace(meld, cards=tuple(sort_cards([*meld.cards, card])))


def layoffs(hand: Iterable[str], table: Sequence[TableMeld], ace_high: bool = False) -> list[tuple[str, int, str]]:
    """Every ``(card, meld number, end)`` by which a card of the hand lays off on the table now."""
    held = set(hand)
    return [(c, m.number, end) for m in table for c, end in fits(m, ace_high) if c in held]


def fits_table(card: str, table: Sequence[TableMeld], ace_high: bool = False) -> bool:
    """Whether the single card lays off on some table meld as it stands."""
    return any(c == card for m in table for c, _ in fits(m, ace_high))


# ----- what a hand can put down this turn -----
@dataclass(frozen=True)
class Plan:
    """Plays for one turn: melds from the hand, then layoffs (in an order that works: a card
    laid off can make room for the next), and the cards left in the hand."""

    melds: tuple[tuple[str, ...], ...]
    """Melds to lay from the hand, in order."""
    layoffs: tuple[tuple[str, int, str], ...]
    """``(card, meld number, end)``, in order; the numbers count the plan's own melds as laid
    after the table's."""
    rest: tuple[str, ...]
    """The cards the plan leaves in the hand, sorted."""

    @property
    def laid(self) -> int:
        """How many cards the plan puts on the table."""
        return sum(len(m) for m in self.melds) + len(self.layoffs)

    def actions(self) -> list[str]:
        """The plan as action texts, in order."""
        return [meld_action(m) for m in self.melds] + [lay_off_action(*x) for x in self.layoffs]


def _closure(
    rest: set[str], table: list[TableMeld], ace_high: bool
) -> list[tuple[str, int, str]]:
    """Lay off from ``rest`` onto ``table`` (both updated) while anything fits; runs first (a
    card laid on a run can open room for another, on a set it cannot)."""
    done: list[tuple[str, int, str]] = []
    progress = True
    while progress:
        progress = False
        for i, meld in sorted(enumerate(table), key=lambda im: im[1].kind != "run"):
            for card, end in fits(meld, ace_high):
                if card in rest:
                    rest.discard(card)
                    table[i] = extend(meld, card, end)
                    done.append((card, meld.number, end))
                    progress = True
                    break
            if progress:
                break
    return done


def _plan_with(
    hand: frozenset[str], melds: tuple[tuple[str, ...], ...], table: Sequence[TableMeld], ace_high: bool
) -> Plan:
    placed = list(table) + [TableMeld.of(len(table) + k, -1, m, ace_high) for k, m in enumerate(melds)]
    rest = set(hand).difference(*melds) if melds else set(hand)
    offs = _closure(rest, placed, ace_high)
    return Plan(melds, tuple(offs), tuple(sort_cards(rest)))


def plans(
    hand: Iterable[str], table: Sequence[TableMeld] = (), ace_high: bool = False
) -> list[Plan]:
    """Every choice of disjoint melds from the hand, each with every layoff that then fits.
    Exhaustive (a few dozen plans for a 7- to 11-card hand)."""
    cards = frozenset(hand)
    melds = find_melds(cards, ace_high)
    out: list[Plan] = []

    def walk(start: int, used: frozenset[str], chosen: tuple[tuple[str, ...], ...]) -> None:
        out.append(_plan_with(cards, chosen, table, ace_high))
        for i in range(start, len(melds)):
            if used.isdisjoint(melds[i]):
                walk(i + 1, used | set(melds[i]), (*chosen, melds[i]))

    walk(0, frozenset(), ())
    return out


def best_plan(
    hand: Iterable[str], table: Sequence[TableMeld] = (), ace_high: bool = False, face_values: str = "ten"
) -> Plan:
    """The plan that leaves the least value in the hand (on a tie, the fewest cards, then the
    fewest melds: keep flexible)."""
    return min(
        plans(hand, table, ace_high),
        key=lambda p: (hand_value(p.rest, face_values), len(p.rest), len(p.melds), p.melds),
    )


def penalty(
    hand: Iterable[str], table: Sequence[TableMeld] = (), ace_high: bool = False, face_values: str = "ten"
) -> int:
    """The value left in the hand after the best plan: what the hand would pay if it laid
    everything it could now and the deal then ended."""
    return hand_value(best_plan(hand, table, ace_high, face_values).rest, face_values)


def _uses_first(plan: Plan, card: str, on_table: int) -> Plan | None:
    """The plan reordered so that its first play uses ``card`` (a meld holding it, or its
    layoff onto a meld already on the table), or ``None`` if it cannot."""
    for m in plan.melds:
        if card in m:
            return replace(plan, melds=(m, *(x for x in plan.melds if x != m)))
    for x in plan.layoffs:
        if x[0] == card and x[1] < on_table:
            return replace(plan, layoffs=(x, *(y for y in plan.layoffs if y != x)))
    return None


def going_out(
    hand: Iterable[str], table: Sequence[TableMeld] = (), ace_high: bool = False, needs_discard: bool = False,
    use: str = "",
) -> tuple[Plan, str | None] | None:
    """A way to go out this turn (R4, R8.4): a plan and the card to discard last (``None``: the
    plan empties the hand), or ``None`` if the hand cannot. With ``needs_discard`` the last
    card must be a discard. ``use``: a discard just taken, which the plan's first play must
    use (and which is not the last discard)."""
    cards = frozenset(hand)
    lasts: list[str | None] = [] if needs_discard else [None]
    lasts += [c for c in sort_cards(cards) if c != use]
    for last in lasts:
        for plan in plans(cards - {last} if last else cards, table, ace_high):
            first = _uses_first(plan, use, len(table)) if use else plan
            if not plan.rest and first is not None:
                return first, last
    return None


# ----- action texts -----
DRAW_STOCK = "draw_stock"
CALL_STOP = "call_stop"
DECLINE_STOP = "decline_stop"


def take_action(card: str) -> str:
    """Take a card of the discard pile (with the row: every card above it comes too)."""
    return f"take_discard {card}"


def meld_action(cards: Iterable[str]) -> str:
    """Lay these cards down as a meld."""
    return "meld " + " ".join(cards)


def lay_off_action(card: str, meld: int, end: str) -> str:
    """Lay ``card`` off on table meld ``meld`` at ``end`` (``set``, ``low``, ``high``)."""
    return f"lay_off {card} {meld} {end}"


def discard_action(card: str) -> str:
    """Discard a card, ending the turn."""
    return f"discard {card}"


def kind_of(action: str) -> str:
    """The first word of an action text."""
    return action.split(" ", 1)[0]


def card_of(action: str) -> str:
    """The card an action names (``take_discard``, ``lay_off``, ``discard``); ``""`` otherwise."""
    parts = action.split()
    return parts[1] if len(parts) > 1 and parts[0] != "meld" else ""


# ----- the request as plain values -----
@dataclass(frozen=True)
class Rules:
    """The rule fields a bot needs (R10)."""

    name: str = "rummy"
    """The preset the rules came from."""
    ace_high: bool = False
    """Q-K-A is a run too (Michigan, Bozenkill)."""
    row: bool = False
    """Any card of the discard row may be taken, with every card above it (R8.2)."""
    stop: bool = False
    """Other seats may call "stop" on a discard that lays off (R8.3)."""
    rummy_doubles: bool = False
    """Going out with the whole hand in one turn doubles the payments (R5)."""
    out_needs_discard: bool = False
    """The last card must be discarded (R8.4)."""
    table_scoring: bool = False
    """Cards put on the table score for whoever put them there (R9.4)."""
    face_values: str = "ten"
    """``ten`` or ``rank`` (R1)."""
    target: int = 100
    """A game ends when a total reaches this."""


@dataclass(frozen=True)
class View:
    """Everything a rummy request tells its seat (R11), as plain values."""

    seat: int
    """This seat."""
    num_seats: int
    """Seats at the table."""
    dealer: int
    """The seat that dealt."""
    turn: int
    """Whose turn it is (the discarder while "stop" is asked)."""
    phase: str
    """``draw``, ``play``, ``stop`` (this seat is asked), ``lay_back`` (lay the stopped card
    off) or ``over``."""
    hand: tuple[str, ...]
    """This seat's cards, sorted."""
    legal: tuple[str, ...]
    """The legal actions as texts."""
    rules: Rules = field(default_factory=Rules)
    """The rules."""
    hand_sizes: tuple[int, ...] = ()
    """Cards in every hand, by seat."""
    stock_size: int = 0
    """Cards in the stock."""
    discard_pile: tuple[str, ...] = ()
    """The discard pile (row), bottom first."""
    table: tuple[TableMeld, ...] = ()
    """The melds on the table, by number."""
    must_use: str = ""
    """A discard this seat took and must use with its next play; ``""`` if none."""
    stopped: str = ""
    """The discard under a "stop" question (or to lay back); ``""`` if none."""
    scores: tuple[int, ...] = ()
    """Game totals by seat so far: before the deal in play; once the game is over (phase
    ``over``), after its last deal (the state's ``scores``)."""

    @property
    def next_seat(self) -> int:
        """The seat after the player whose turn it is."""
        return (self.turn + 1) % self.num_seats

    def of_kind(self, kind: str) -> list[str]:
        """The legal actions of one kind (``meld``, ``lay_off``, ``discard``, …)."""
        return [a for a in self.legal if kind_of(a) == kind]


# ----- choosing a discard -----
def _has_partner(card: str, hand: Iterable[str]) -> bool:
    """Whether another card of the hand could meld with it later (same rank, or the same suit
    within two ranks)."""
    r, s = rank(card), suit(card)
    return any(
        c != card and (rank(c) == r or (suit(c) == s and abs(rank(c) - r) <= 2)) for c in hand
    )


def discard_order(
    hand: Sequence[str], table: Sequence[TableMeld] = (), ace_high: bool = False, face_values: str = "ten"
) -> list[str]:
    """The hand's cards from the best discard to the worst: first those that fit nothing (in no
    meld of the hand, laying off nowhere, with no partner for a later meld), highest value
    first; then those with a partner; then those that lay off; then the cards of melds."""
    in_meld = {c for m in find_melds(hand, ace_high) for c in m}

    def badness(card: str) -> tuple[int, int, int]:
        tier = 3 if card in in_meld else 2 if fits_table(card, table, ace_high) else int(_has_partner(card, hand))
        return tier, -value(card, face_values), -rank(card)

    return sorted(hand, key=lambda c: (badness(c), c))


def best_discard(view: View) -> str | None:
    """The legal discard of the first card of :func:`discard_order` that may be discarded (else
    the first legal discard); ``None`` when no discard is legal now (a taken or stopped card
    must be used first)."""
    discards = view.of_kind("discard")
    r = view.rules
    for card in discard_order(view.hand, view.table, r.ace_high, r.face_values):
        if discard_action(card) in discards:
            return discard_action(card)
    return discards[0] if discards else None


# ----- the wire: rummy messages <-> texts and views -----
ENDS = {rummy_pb2.LAYOFF_END_SET: "set", rummy_pb2.LAYOFF_END_LOW: "low", rummy_pb2.LAYOFF_END_HIGH: "high"}
"""A ``LayoffEnd`` → its name in action texts (``set``, ``low``, ``high``)."""
_END_VALUES = {name: value for value, name in ENDS.items()}
PHASES = {rummy_pb2.PHASE_DRAW: "draw", rummy_pb2.PHASE_PLAY: "play", rummy_pb2.PHASE_STOP: "stop",
          rummy_pb2.PHASE_LAY_BACK: "lay_back", rummy_pb2.PHASE_OVER: "over"}
"""A rummy ``State.phase`` → its name in a :class:`View`."""


def action_text(action: rummy_pb2.Action) -> str:
    """The text form of a rummy action message (the envelope's ``Action.rummy``; a meld's cards
    in table order)."""
    kind = action.WhichOneof("kind")
    if kind == "take_discard":
        return take_action(action.take_discard.card)
    if kind == "lay_meld":
        cards = list(action.lay_meld.cards)
        shape = meld_shape(cards, ace_high=True)
        ordered = TableMeld.of(0, 0, cards, True).cards if shape is not None else cards
        return meld_action(ordered)
    if kind == "lay_off":
        return lay_off_action(action.lay_off.card, action.lay_off.meld, ENDS.get(action.lay_off.end, "?"))
    if kind == "discard":
        return discard_action(action.discard.card)
    return kind or "none"


def action_message(text: str) -> common_pb2.Action:
    """The Action message of a rummy action text (``ValueError`` naming what is wrong)."""
    word, *args = text.split() or [""]
    a = rummy_pb2.Action()
    if word in (DRAW_STOCK, CALL_STOP, DECLINE_STOP) and not args:
        getattr(a, word).SetInParent()
    elif word in ("take_discard", "discard") and len(args) == 1:
        getattr(a, word).card = parse_card(args[0])
    elif word == "meld" and len(args) >= 3:
        a.lay_meld.cards.extend(parse_card(c) for c in args)
    elif word == "lay_off" and len(args) == 3 and args[1].isdigit() and args[2] in _END_VALUES:
        a.lay_off.card, a.lay_off.meld, a.lay_off.end = parse_card(args[0]), int(args[1]), _END_VALUES[args[2]]
    else:
        raise ValueError(
            f"not a rummy action: {text!r} (draw_stock, take_discard C, meld C C C…, lay_off C MELD set|low|high, "
            "discard C, call_stop, decline_stop)"
        )
    return common_pb2.Action(rummy=a)


def rules_of(msg: rummy_pb2.RuleSet) -> Rules:
    """The rule fields of a rummy match's ``MatchStarted.rummy``."""
    return Rules(
        name=msg.name, ace_high=msg.ace == rummy_pb2.ACE_LOW_OR_HIGH,
        row=msg.discard_draw == rummy_pb2.DISCARD_DRAW_ROW, stop=msg.stop, rummy_doubles=msg.rummy_doubles,
        out_needs_discard=msg.out_needs_discard, table_scoring=msg.scoring == rummy_pb2.SCORING_TABLE,
        face_values="rank" if msg.face_values == rummy_pb2.FACE_VALUES_RANK else "ten", target=msg.target,
    )


def table_of(state: rummy_pb2.State) -> tuple[TableMeld, ...]:
    """The state's table melds (a run ending in an ace is read as Q-K-A: the referee laid it)."""
    return tuple(TableMeld.of(m.number, m.owner, list(m.cards), ace_high=True) for m in state.table)


def view_of(request: bot_pb2.ActionRequest, rules: Rules) -> View:
    """The view of a rummy ActionRequest (its state is ``request.rummy``) under ``rules``."""
    s = request.rummy
    return View(
        seat=s.seat, num_seats=s.num_seats, dealer=s.dealer, turn=s.turn, phase=PHASES.get(s.phase, "unknown"),
        hand=tuple(s.hand), legal=tuple(action_text(a.rummy) for a in request.legal_actions), rules=rules,
        hand_sizes=tuple(s.hand_sizes), stock_size=s.stock_size, discard_pile=tuple(s.discard_pile),
        table=table_of(s), must_use=s.must_use, stopped=s.stopped, scores=tuple(s.scores),
    )


def answer(request: bot_pb2.ActionRequest, text: str) -> common_pb2.Action:
    """The Action to send for a chosen text: the request's own legal message when the text is
    one of them (so a meld's cards need not be in any order), else built from the text
    (``ValueError`` if it is not a rummy action)."""
    built = action_message(text)
    normal = action_text(built.rummy)
    for a in request.legal_actions:
        if action_text(a.rummy) == normal:
            return a
    return built


NAME = "rummy"
"""The game's name on the wire."""
register(GameKit(NAME, lambda a: action_text(a.rummy), action_message))  # its texts, for the kit (.games)
