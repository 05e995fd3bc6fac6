"""Gin through the referee's game seam: the adapter that drives the pure engine
(``referee.gin``) for the plumbing (``referee.games``' ``Game`` and ``GameMatch``), and the one
module that converts Gin's values to and from protobuf messages (``gin_arena.v2.games.gin``, in
the member ``gin`` of the envelope's ``oneof game``). Messages to a seat are built here from that
seat's :class:`~referee.gin.InformationState` and nothing else. The one module of the game's
package that is not pure (it imports protobuf and the referee's envelope)."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from typing import Any

from gin_arena.v2 import bot_pb2, common_pb2, referee_pb2
from gin_arena.v2.games import gin_pb2
from referee import games, gin
from referee.cardcore.present import T, Words
from referee.gin import knowledge as gin_knowledge
from referee.gin.present import PRESENTATION, RESULT_WORDS, move_words
from referee.gin.records import GinDealEnd, GinGameEnd
from referee.wire import envelope as _env
from referee.wire.envelope import LEN as _LEN
from referee.wire.envelope import VARINT as _VARINT
from referee.wire.envelope import WireError, spectator_event_bytes
from referee.wire.envelope import len_field as _len_field
from referee.wire.envelope import packed as _packed
from referee.wire.envelope import tags as _tags
from referee.wire.envelope import text as _text
from referee.wire.envelope import uint as _uint
from referee.wire.envelope import uint_field as _uint_field
from referee.wire.envelope import v as _v

_GAME = _env.game_tags("gin")
"""Gin's member of the envelope's ``oneof game``s."""

_KIND_TO_PB = {
    "pass": gin_pb2.ACTION_KIND_PASS,
    "take_upcard": gin_pb2.ACTION_KIND_TAKE_UPCARD,
    "draw_stock": gin_pb2.ACTION_KIND_DRAW_STOCK,
    "draw_discard": gin_pb2.ACTION_KIND_DRAW_DISCARD,
    "discard": gin_pb2.ACTION_KIND_DISCARD,
    "knock": gin_pb2.ACTION_KIND_KNOCK,
    "big_gin": gin_pb2.ACTION_KIND_BIG_GIN,
}
_PB_TO_KIND = {v: k for k, v in _KIND_TO_PB.items()}
_PHASE_TO_PB = {
    "upcard": gin_pb2.PHASE_UPCARD_OFFER,
    "draw": gin_pb2.PHASE_DRAW,
    "discard": gin_pb2.PHASE_DISCARD,
    "over": gin_pb2.PHASE_OVER,
}
_OUTCOME_TO_PB = {
    "knock": gin_pb2.DEAL_OUTCOME_KNOCK,
    "undercut": gin_pb2.DEAL_OUTCOME_UNDERCUT,
    "gin": gin_pb2.DEAL_OUTCOME_GIN,
    "big_gin": gin_pb2.DEAL_OUTCOME_BIG_GIN,
    "dead": gin_pb2.DEAL_OUTCOME_DEAD_HAND,
}
_ENUMS: dict[str, dict[str, int]] = {
    "knock": {"limit": gin_pb2.KNOCK_MODE_LIMIT, "oklahoma": gin_pb2.KNOCK_MODE_OKLAHOMA,
              "gin_only": gin_pb2.KNOCK_MODE_GIN_ONLY},
    "shutout": {"double": gin_pb2.SHUTOUT_RULE_DOUBLE, "bonus": gin_pb2.SHUTOUT_RULE_BONUS,
                "none": gin_pb2.SHUTOUT_RULE_NONE},
    "next_dealer": {"alternate": gin_pb2.NEXT_DEALER_ALTERNATE, "winner": gin_pb2.NEXT_DEALER_WINNER,
                    "loser": gin_pb2.NEXT_DEALER_LOSER},
    "stock_exhausted": {"void": gin_pb2.STOCK_EXHAUSTED_VOID,
                        "reshuffle": gin_pb2.STOCK_EXHAUSTED_RESHUFFLE},
    "first_dealer": {"random": gin_pb2.FIRST_DEALER_RANDOM, "alternate": gin_pb2.FIRST_DEALER_ALTERNATE},
}
_ENUMS_BACK = {field: {v: k for k, v in table.items()} for field, table in _ENUMS.items()}
_SCALARS = (
    "knock_limit", "oklahoma_ace_gin_only", "oklahoma_spades_double", "big_gin", "gin_bonus",
    "big_gin_bonus", "undercut_bonus", "target", "game_bonuses", "line_bonus", "game_bonus",
    "shutout_bonus", "games", "match_target",
)
_MELD_KIND = {"set": gin_pb2.MELD_KIND_SET, "run": gin_pb2.MELD_KIND_RUN}


# ----- cards and actions -----
_TEXT = tuple(str(c) for c in gin.DECK)  # card text by index: no __str__ call on the hot path


def cards(cs: Iterable[gin.Card]) -> list[str]:
    """Cards as their text forms."""
    text = _TEXT
    return [text[c.index] for c in cs]


_CARD_BY_TEXT = {t: c for t, c in zip(_TEXT, gin.DECK, strict=True)}


def card_from_text(text: str, what: str = "card") -> gin.Card:
    """Parse a card field, raising :class:`WireError` with the field named."""
    card = _CARD_BY_TEXT.get(text)
    if card is not None:
        return card
    try:
        return gin.parse_card(text)
    except ValueError as e:
        raise WireError(f"{what}: {e}") from None


def gin_action(action: gin.Action) -> gin_pb2.Action:
    """A domain action as Gin's message."""
    card = getattr(action, "card", None)
    if card is None:
        return gin_pb2.Action(kind=_KIND_TO_PB[action.kind])
    return gin_pb2.Action(kind=_KIND_TO_PB[action.kind], card=_TEXT[card.index])


def action_to_proto(action: gin.Action) -> common_pb2.Action:
    """A domain action as the envelope's ``Action`` (its ``gin`` member)."""
    return common_pb2.Action(gin=gin_action(action))


def action_from_proto(msg: common_pb2.Action) -> gin.Action:
    """An envelope ``Action`` as a domain action, or :class:`WireError` naming what is malformed."""
    which = msg.WhichOneof("game")
    if which != "gin":
        raise WireError(f"action: a gin match's action goes in action.gin; got {which or 'no game'}")
    return gin_action_from_proto(msg.gin)


def gin_action_from_proto(msg: gin_pb2.Action) -> gin.Action:
    """Gin's action message as a domain action, or :class:`WireError` naming what is malformed."""
    kind = _PB_TO_KIND.get(msg.kind)
    if kind is None:
        raise WireError(f"action.kind {msg.kind} is not a known ActionKind")
    if kind in ("discard", "knock"):
        if not msg.card:
            raise WireError(f"action.card is required for {kind}")
        return gin.make_action(kind, card_from_text(msg.card, "action.card"))
    if msg.card:
        raise WireError(f"action.card must be empty for {kind}; got {msg.card!r}")
    return gin.make_action(kind)


# ----- rules and time -----
def rules_to_proto(rules: gin.RuleSet) -> gin_pb2.RuleSet:
    """Every field filled, so a bot never needs to know the presets."""
    out: gin_pb2.RuleSet = _env.fill_rules(gin_pb2.RuleSet(name=rules.name), rules, _ENUMS, _SCALARS)
    return out


def rules_from_proto(msg: gin_pb2.RuleSet) -> gin.RuleSet:
    """The preset named (classic if empty) with every field that is set overriding it."""
    overrides = _env.rules_overrides(msg, _ENUMS_BACK, _SCALARS, "rules")
    try:
        return gin.RuleSet.preset(msg.name or "classic", **overrides)
    except ValueError as e:
        raise WireError(f"rules: {e}") from None


# ----- what a seat sees -----
def _meld(m: gin.Meld) -> gin_pb2.Meld:
    return gin_pb2.Meld(kind=_MELD_KIND[m.kind], cards=cards(m.cards))


def public_event(ev: gin.PublicEvent, think_ms: int = 0) -> common_pb2.Event:
    """One step of a deal as some seat saw it (already filtered by the engine's view), as the
    envelope's ``Event`` (a reshuffle: seat 0, no think time)."""
    if ev.kind == "reshuffle":
        return common_pb2.Event(seat=0, gin=gin_pb2.Event(stock_size_after=ev.stock_size, reshuffled=True))
    return common_pb2.Event(seat=ev.seat, think_ms=think_ms, gin=gin_pb2.Event(
        kind=_KIND_TO_PB[ev.kind], card=_TEXT[ev.card.index] if ev.card is not None else "",
        stock_size_after=ev.stock_size,
    ))


# The messages that go out on every decision (the action request and the information state in
# it) are encoded straight to protobuf bytes: building them as message objects cost ~170 µs a
# request, more than gRPC's own round trip. The encoding is the one protobuf's deterministic
# serialisation gives (fields in number order, proto3 defaults left out, packed repeated
# scalars); tests/test_wire_encoding.py checks it against message objects on thousands of
# states. Field numbers come from the descriptors, so the encoder follows the .proto
# (the encoders of fields are the envelope's, ``_wire``).
_IS = _tags(gin_pb2.State, {
    "seat": _VARINT, "num_seats": _VARINT, "dealer": _VARINT, "to_move": _VARINT, "phase": _VARINT,
    "hand": _LEN, "my_melds": _LEN, "my_deadwood_cards": _LEN, "my_deadwood": _VARINT, "discard_pile": _LEN,
    "stock_size": _VARINT, "hand_sizes": _LEN, "known_cards": _LEN, "first_upcard": _LEN,
    "knock_limit": _VARINT, "forbidden_discard": _LEN, "upcard_passes": _VARINT,
    "game_number": _VARINT, "deal_number": _VARINT, "scores": _LEN, "deals_won": _LEN, "match_scores": _LEN,
    "spade_double": _VARINT, "reshuffled": _VARINT,
})
_MELD_TAGS = _tags(gin_pb2.Meld, {"kind": _VARINT, "cards": _LEN})
_SEAT_CARDS = _tags(gin_pb2.SeatCards, {"seat": _VARINT, "cards": _LEN})


def _card_entries(tag: bytes) -> tuple[bytes, ...]:
    """Each card (by index) as one element of a repeated string field."""
    return tuple(tag + _v(len(t)) + t.encode() for t in _TEXT)


_HAND = _card_entries(_IS["hand"])
_DEADWOOD = _card_entries(_IS["my_deadwood_cards"])
_PILE = _card_entries(_IS["discard_pile"])
_MELD_CARD = _card_entries(_MELD_TAGS["cards"])
_SEAT_CARD = _card_entries(_SEAT_CARDS["cards"])
_SET_KIND = _MELD_TAGS["kind"] + _v(gin_pb2.MELD_KIND_SET)
_RUN_KIND = _MELD_TAGS["kind"] + _v(gin_pb2.MELD_KIND_RUN)
_SAME_RANK = 1 | 1 << 13 | 1 << 26 | 1 << 39
_PHASE_BYTES = {k: _IS["phase"] + _v(v) for k, v in _PHASE_TO_PB.items()}




_bits = gin.mask_indices

_TO_MOVE = _uint_field(_IS["to_move"])
_STOCK_SIZE = _uint_field(_IS["stock_size"])
_UPCARD_PASSES = _uint_field(_IS["upcard_passes"])
_MY_DEADWOOD = _uint_field(_IS["my_deadwood"])
_HAND_SIZES: dict[tuple[int, ...], bytes] = {}
_FORBIDDEN = (b"", *(_text(_IS["forbidden_discard"], t) for t in _TEXT))  # by card index + 1
_RESHUFFLED = (b"", _uint(_IS["reshuffled"], 1))


def _arrangement_fields(hand_mask: int) -> bytes:
    """``my_melds``, ``my_deadwood_cards`` and ``my_deadwood`` of a hand (the engine's
    deterministic minimum-deadwood arrangement, melds ordered by their lowest card)."""
    out = []
    dead = hand_mask
    tag = _IS["my_melds"]
    for m in sorted(gin.arrange_mask(hand_mask), key=lambda m: m & -m):
        dead ^= m
        low = (m & -m).bit_length() - 1
        kind = _SET_KIND if m & ~(_SAME_RANK << (low % 13)) == 0 else _RUN_KIND
        out.append(_len_field(tag, kind + b"".join([_MELD_CARD[i] for i in _bits(m)])))
    out.extend(_DEADWOOD[i] for i in _bits(dead))
    out.append(_MY_DEADWOOD(gin.value_mask(dead)))
    return b"".join(out)


_EV = _tags(gin_pb2.Event, {"kind": _VARINT, "card": _LEN, "stock_size_after": _VARINT, "reshuffled": _VARINT})
_EV_KIND = {k: _uint(_EV["kind"], v) for k, v in _KIND_TO_PB.items()}
_EV_CARD = _card_entries(_EV["card"])
_EV_RESHUFFLED = _uint(_EV["reshuffled"], 1)
_HIDDEN_KINDS = gin.HIDDEN_KINDS


def _step_bytes(kind: str, card: gin.Card | None, stock_size: int) -> bytes:
    """Gin's ``Event`` of an action step encoded (the envelope's ``Event.gin``)."""
    return _EV_KIND[kind] + (_EV_CARD[card.index] if card is not None else b"") \
        + _uint(_EV["stock_size_after"], stock_size)


def _event_bytes(ev: gin.PublicEvent) -> bytes:
    """Gin's ``Event`` of ``ev`` encoded (the envelope's ``Event.gin``)."""
    if ev.kind == "reshuffle":
        return _uint(_EV["stock_size_after"], ev.stock_size) + _EV_RESHUFFLED
    return _step_bytes(ev.kind, ev.card, ev.stock_size)


def _spectator_step_bytes(move: gin.Move) -> bytes:
    """``_event_bytes(_seat_event(move, -1))`` without the event value (a spectator's step of
    every decision): a stock draw's card and a knock's face-down card are hidden."""
    action = move.action
    assert action is not None
    kind = action.kind
    return _step_bytes(kind, None if kind in _HIDDEN_KINDS else move.card, move.stock_size)


def _event_entry(ev: gin.PublicEvent) -> bytes:
    """``ev`` as an entry of ``ActionRequest.events``."""
    return _env.event_entry(0 if ev.kind == "reshuffle" else ev.seat, _GAME.event, _event_bytes(ev))


class EventLog:
    """What one seat's messages repeat within a deal, encoded once: its events (the envelope's
    :class:`~referee.wire.envelope.SeatEvents`) and the fields of its state that stay the same
    for the whole deal (seat, dealer, upcard, knock limit, scores)."""

    __slots__ = ("events", "head", "middle", "reshuffled", "tail")

    def __init__(self) -> None:
        self.events = _env.SeatEvents()
        self.reshuffled = False
        self.head = self.middle = self.tail = b""

    def _entry(self, ev: gin.PublicEvent) -> bytes:
        if ev.kind == "reshuffle":
            self.reshuffled = True
        return _event_entry(ev)

    def prepare(self, state: gin.InformationState) -> None:
        """Bring the log to ``state``'s deal and events."""
        key = (state.seat, state.game_number, state.deal_number)
        events = state.events
        if key != self.events.deal or self.events.count > len(events):
            f = _IS
            self.reshuffled = False
            self.head = _uint(f["seat"], state.seat) + _uint(f["num_seats"], state.num_seats) \
                + _uint(f["dealer"], state.dealer)
            self.middle = _text(f["first_upcard"], _TEXT[state.first_upcard.index]) \
                + _uint(f["knock_limit"], -1 if state.knock_limit is None else state.knock_limit)
            self.tail = b"".join([
                _uint(f["game_number"], state.game_number), _uint(f["deal_number"], state.deal_number),
                _packed(f["scores"], state.scores), _packed(f["deals_won"], state.deals_won),
                _packed(f["match_scores"], state.games_won), _uint(f["spade_double"], int(state.doubled)),
            ])
        self.events.update(key, events, self._entry)


def information_state_bytes(state: gin.InformationState, log: EventLog | None = None) -> bytes:
    """A seat's complete information state, encoded (``log`` keeps what repeats encoded)."""
    if log is None:
        log = EventLog()
    log.prepare(state)
    hand_mask = 0
    for c in state.hand:
        hand_mask |= 1 << c.index
    sizes = _HAND_SIZES.get(state.hand_sizes)
    if sizes is None:
        sizes = _HAND_SIZES[state.hand_sizes] = _packed(_IS["hand_sizes"], state.hand_sizes)
    known_tag, seat_tag = _IS["known_cards"], _SEAT_CARDS["seat"]
    forbidden = state.forbidden_discard
    return b"".join([
        log.head,
        _TO_MOVE(state.to_move or 0),
        _PHASE_BYTES[state.phase],
        b"".join([_HAND[c.index] for c in state.hand]),
        _arrangement_fields(hand_mask),
        b"".join([_PILE[c.index] for c in state.discard_pile]),
        _STOCK_SIZE(state.stock_size),
        sizes,
        *[_len_field(known_tag, _uint(seat_tag, s) + b"".join([_SEAT_CARD[c.index] for c in kc]))
          for s, kc in enumerate(state.known_cards)],
        log.middle,
        _FORBIDDEN[forbidden.index + 1 if forbidden is not None else 0],
        _UPCARD_PASSES(state.upcard_passes),
        log.tail,
        _RESHUFFLED[log.reshuffled],
    ])


def information_state(state: gin.InformationState, log: EventLog | None = None) -> gin_pb2.State:
    """A seat's complete information state as a message (its events are the request's)."""
    return gin_pb2.State.FromString(information_state_bytes(state, log))


def events(state: gin.InformationState) -> list[common_pb2.Event]:
    """The deal's events so far as the seat of ``state`` saw them (``ActionRequest.events``)."""
    return [public_event(ev) for ev in state.events]


def _every_action() -> list[gin.Action]:
    out: list[gin.Action] = []
    for kind in gin.ACTION_KINDS:
        if kind in ("discard", "knock"):
            out.extend(gin.make_action(kind, c) for c in gin.DECK)
        else:
            out.append(gin.make_action(kind))
    return out


# The engine's actions are interned (one value per action, for ever): look them up by identity,
# which spares hashing a dataclass per legal action.
def _new_action_entry(action: gin.Action) -> bytes:
    return _env.action_entry(_GAME.action, gin_action(action).SerializeToString(deterministic=True))


_ACTION_BY_ID = {id(a): _new_action_entry(a) for a in _every_action()}


def _action_entry(action: gin.Action) -> bytes:
    entry = _ACTION_BY_ID.get(id(action))
    if entry is None:  # not an interned value (a hand-made action): encode it
        entry = _new_action_entry(action)
    return entry


def action_request_bytes(
    match_id: str, request_id: int, state: gin.InformationState, remaining_ms: Sequence[int], increment_ms: int,
    time_for_move_ms: int, log: EventLog | None = None,
) -> bytes:
    """``RefereeMessage{match_id, action_request}`` encoded: a request for a decision with the
    legal actions, every seat's clock (the seat of ``state`` running), the deal's events and the
    seat's complete information state."""
    if log is None:
        log = EventLog()
    state_bytes = information_state_bytes(state, log)
    return _env.action_request_bytes(
        match_id, request_id, b"".join([_action_entry(a) for a in state.legal_actions]),
        _env.clocks_bytes(remaining_ms, increment_ms, state.seat), time_for_move_ms, log.events.joined,
        _GAME.state, state_bytes,
    )


def deal_result(state: gin.InformationState, *, game_over: bool) -> common_pb2.DealResult:
    """The end of a deal as the seat of ``state`` may see it (from its view's outcome)."""
    out = state.outcome
    assert out is not None, "deal_result() needs a finished deal"
    msg = common_pb2.DealResult(
        game_number=state.game_number,
        deal_number=state.deal_number,
        dealer=state.dealer,
        winner=-1 if out.winner is None else out.winner,
        scores_after=state.scores,
        game_over=game_over,
        gin=gin_pb2.DealResult(
            outcome=_OUTCOME_TO_PB[out.kind],
            knocker=-1 if out.knocker is None else out.knocker,
            points=out.points,
            doubled=out.doubled,
            knock_discard=str(out.knock_discard) if out.knock_discard is not None else "",
        ),
    )
    sd = out.showdown
    if sd is not None and out.knocker is not None:
        knocker = out.knocker
        for seat in range(state.num_seats):
            if seat == knocker:
                msg.gin.hands.append(gin_pb2.SeatHand(
                    seat=seat, cards=cards(sd.knocker_cards), melds=[_meld(m) for m in sd.knocker_melds],
                    deadwood_cards=cards(sd.knocker_deadwood_cards), deadwood=sd.knocker_deadwood,
                ))
            else:
                msg.gin.hands.append(gin_pb2.SeatHand(
                    seat=seat, cards=cards(sd.defender_cards), melds=[_meld(m) for m in sd.defender_melds],
                    laid_off=cards(sd.layoffs), deadwood_cards=cards(sd.defender_deadwood_cards),
                    deadwood=sd.defender_deadwood,
                ))
    return msg


def game_result(result: gin.GameResult) -> common_pb2.GameResult:
    """A finished game as a message."""
    return common_pb2.GameResult(
        game_number=result.game, winner=result.winner, final_totals=result.totals,
        places=_game_ranking(result).places,
        gin=gin_pb2.GameResult(deal_points=result.deal_points, deals_won=result.deals_won, shutout=result.shutout),
    )


def deal_started(state: gin.InformationState, log: EventLog | None = None) -> bot_pb2.DealStarted:
    """The start of a deal, for the seat of ``state``."""
    return bot_pb2.DealStarted(
        game_number=state.game_number, deal_number=state.deal_number, dealer=state.dealer,
        gin=information_state(state, log),
    )


def action_request(
    request_id: int, state: gin.InformationState, remaining_ms: Sequence[int], increment_ms: int,
    time_for_move_ms: int, log: EventLog | None = None,
) -> bot_pb2.ActionRequest:
    """A request for a decision as a message (the same encoding as :func:`action_request_bytes`)."""
    data = action_request_bytes("", request_id, state, remaining_ms, increment_ms, time_for_move_ms, log)
    return bot_pb2.RefereeMessage.FromString(data).action_request



# ----- Gin through the seam -----
_NUM_SEATS = 2
_SEAT_COUNTS = range(_NUM_SEATS, _NUM_SEATS + 1)


class GinGame:
    """Gin Rummy for two seats."""

    name = "gin"

    @property
    def deal_end_content(self) -> type:
        """What a replay's deal-end record holds for Gin."""
        return GinDealEnd

    @property
    def game_end_content(self) -> type:
        """What a replay's game-end record holds for Gin."""
        return GinGameEnd

    def seat_counts(self) -> range:
        """Gin is played by two."""
        return _SEAT_COUNTS

    def default_rules(self) -> gin.RuleSet:
        """The classic preset."""
        return gin.RuleSet.classic()

    def preset_names(self) -> tuple[str, ...]:
        """The presets, the default first."""
        return tuple(gin.PRESETS)

    def rules_preset(self, name: str) -> gin.RuleSet:
        """A preset of the rules."""
        return gin.RuleSet.preset(name)

    def check_rules(self, rules: Any) -> None:
        """``ValueError`` unless a Gin rule set."""
        if not isinstance(rules, gin.RuleSet):
            raise ValueError(f"gin needs a gin gin.RuleSet; got {type(rules).__name__}")

    def rules_to_dict(self, rules: gin.RuleSet) -> dict[str, Any]:
        """The rule set as plain values."""
        return rules.to_dict()

    def match_size(self, rules: gin.RuleSet) -> Sequence[tuple[str, str, int]]:
        """Games per match, the game's and the match's targets."""
        return (("rules.games", "games", rules.games), ("rules.target", "target", rules.target),
                ("rules.match_target", "target", rules.match_target))

    def rules_from_dict(self, data: Mapping[str, Any]) -> gin.RuleSet:
        """A rule set from plain values."""
        return gin.RuleSet.from_dict(dict(data))

    @property
    def card_fields(self) -> frozenset[str]:
        """The fields of its messages that hold cards (``games.KnowsCards``)."""
        return gin_knowledge.CARD_FIELDS

    def card_text(self, text: str) -> str | None:
        return gin_knowledge.card_text(text)

    def known_cards(self, rules: gin.RuleSet, deal: Mapping[str, Any], moves: Sequence[tuple[int, str]],
                    seats: int) -> list[list[set[str]]]:
        return gin_knowledge.known_cards(rules, deal, moves, seats)

    def commitment(self, seed: bytes) -> bytes:
        """SHA-256 of the seed."""
        return gin.commitment(seed)

    def first_dealer(self, seed: bytes, seats: int) -> int:
        """The first game's dealer a match from ``seed`` draws (``games.DrawsFirstDealer``)."""
        return gin.first_dealer(seed, 1, seats)

    def mix_seed(self, seed: bytes, nonces: Sequence[bytes]) -> bytes:
        """The seed with the nonces mixed in."""
        return gin.mix_seed(seed, list(nonces))

    def new_match(self, rules: gin.RuleSet, seed: bytes, seats: int) -> GinMatch:
        """A match of two seats."""
        if seats != _NUM_SEATS:
            raise ValueError(f"gin is played by {_NUM_SEATS} seats; got {seats}")
        return GinMatch(gin.Match(rules, seed))

    def deal_deck(self, seed: bytes, game: int, deal: int) -> tuple[list[str], bytes]:
        """The deck and key of a deal, from the seed."""
        return [str(c) for c in gin.deck_for_deal(seed, game, deal)], gin.deal_key(seed, game, deal)

    def result_fields(self, outcome: gin.MatchOutcome | None) -> dict[str, Any]:
        """Games won and totals (empty lists when no match was played)."""
        return {"games_won": list(outcome.games_won) if outcome else [],
                "totals": list(outcome.totals) if outcome else []}


def _game_ranking(result: gin.GameResult) -> games.Ranking:
    places = tuple(1 if s == result.winner else 2 for s in range(_NUM_SEATS))
    return games.Ranking(places, result.totals)


class GinMatch:
    """One Gin match, driven through the seam. ``match`` is the engine's :class:`gin.Match`."""

    __slots__ = ("ended", "match")

    def __init__(self, match: gin.Match) -> None:
        self.match = match
        self.ended: tuple[int, int, gin.Deal, tuple[int, ...]] | None = None
        """The last deal that ended: its game and deal numbers, the finished deal and the game's
        scores after it (the match deals the next one at once; ``deal_end_view`` shows it)."""

    @property
    def is_over(self) -> bool:
        """Whether the match has ended."""
        return self.match.outcome is not None

    @property
    def decider(self) -> int | None:
        """The seat to move (Gin asks nobody else)."""
        return self.match.to_move

    @property
    def game_number(self) -> int:
        """The current game."""
        return self.match.game.number

    @property
    def deal_number(self) -> int:
        """The current deal of the game."""
        return self.match.game.deal_number

    @property
    def actions_in_deal(self) -> int:
        """Steps of the current deal."""
        return self.match.deal.steps

    @property
    def scores(self) -> tuple[int, ...]:
        """The current game's deal points."""
        return tuple(self.match.game.scores)

    @property
    def games_won(self) -> tuple[int, ...]:
        """Games won so far."""
        return self.match.games_won

    @property
    def outcome(self) -> gin.MatchOutcome | None:
        """The engine's match outcome once over; before (a match cut short), the games finished
        so far without a winner (``None`` if none finished)."""
        match = self.match
        if match.outcome is not None or not match.results:
            return match.outcome
        return gin.MatchOutcome(winner=None, games_won=match.games_won, totals=match.totals,
                                games=tuple(match.results))

    def _deal_begun(self) -> games.DealBegun:
        match = self.match
        deal, game = match.deal, match.game
        return games.DealBegun({
            "game": game.number, "deal": game.deal_number, "dealer": deal.dealer,
            "deck": [str(c) for c in deal.deck], "key": deal.key.hex(),
        })

    def opening(self) -> list[games.Happening]:
        """The first deal."""
        return [self._deal_begun()]

    def why_illegal(self, seat: int, action: gin.Action) -> str:
        """The engine's reason, from a copy of the deal."""
        try:
            self.match.deal.copy().apply(action, seat)
        except gin.IllegalActionError as e:
            return str(e)
        return "not among the legal actions"  # pragma: no cover - legal_actions is exact

    def apply(self, seat: int, action: gin.Action) -> list[games.Happening]:
        """Play the action; the reshuffle it may trigger is a chance step after it."""
        match = self.match
        deal = match.deal
        events = match.apply(action, seat)
        move = deal.last_move()
        reshuffle: gin.Move | None = None
        if move.seat == -1:  # the discard just played triggered a reshuffle
            reshuffle = move
            move = deal.last_move(2)
        card = move.card
        revealed = str(card) if card is not None else None
        out: list[games.Happening] = [games.Acted(seat, action, str(action), revealed, move)]
        if reshuffle is not None:
            out.append(games.Chance("reshuffle", {"stock_size": reshuffle.stock_size}, reshuffle))
        for step in events:
            if isinstance(step, gin.DealEnded):
                out.append(self._deal_over(deal, step, any(isinstance(e, gin.GameEnded) for e in events)))
            elif isinstance(step, gin.GameEnded):
                out.append(self._game_over(step.result))
            elif isinstance(step, gin.DealStarted):
                out.append(self._deal_begun())
        return out

    def _deal_over(self, deal: gin.Deal, ev: gin.DealEnded, game_over: bool) -> games.DealOver:
        out = ev.outcome
        sd = out.showdown
        record = {
            "game": ev.game, "deal": ev.deal, "kind": out.kind, "knocker": out.knocker, "winner": out.winner,
            "points": out.points, "doubled": out.doubled,
            "knock_discard": str(out.knock_discard) if out.knock_discard else None,
            "hands": [[str(c) for c in h] for h in out.hands],
            "layoffs": [str(c) for c in sd.layoffs] if sd else [],
            "deadwood": [sd.knocker_deadwood, sd.defender_deadwood] if sd else [],
            "scores": list(ev.scores),
        }
        self.ended = (ev.game, ev.deal, deal, tuple(ev.scores))
        return games.DealOver(record, game_over, (deal, ev))

    def _game_over(self, result: gin.GameResult) -> games.GameOver:
        record = {
            "game": result.game, "winner": result.winner, "totals": list(result.totals),
            "deal_points": list(result.deal_points), "deals_won": list(result.deals_won),
            "shutout": result.shutout, "deals": result.deals, "forfeit": result.forfeit,
        }
        return games.GameOver(_game_ranking(result), record, result)

    def substitute(self, seat: int) -> gin.Action:
        """The built-in bot's choice from the seat's view."""
        return gin.substitute_action(self.match.view(seat))

    def forfeit(self, seats: Sequence[int]) -> list[games.Happening]:
        """The first faulting seat loses the game in progress and the match."""
        return [self._game_over(ev.result) for ev in self.match.forfeit(seats[0]) if isinstance(ev, gin.GameEnded)]

    def ranking(self) -> games.Ranking:
        """The match's winner first (both first on a draw), with the game totals."""
        out = self.match.outcome
        totals = out.totals if out is not None else self.match.totals
        winner = out.winner if out is not None else None
        places = tuple(1 if winner is None or s == winner else 2 for s in range(_NUM_SEATS))
        return games.Ranking(places, totals)


def _seat_event(move: gin.Move, seat: int) -> gin.PublicEvent:
    action = move.action
    assert action is not None
    return gin.seat_event(seat, move.seat, action.kind, move.card, move.stock_size)



# ----- the game's content of a message in words (``arena replay REPLAY --seat N``) -----
def _gin_enum(enum: str, number: int, prefix: str) -> str:
    values = gin_pb2.DESCRIPTOR.enum_types_by_name[enum].values_by_number
    return values[number].name.removeprefix(prefix).lower() if number in values else str(number)


def _gin_cards(cards: Iterable[str], card: Callable[[str], str]) -> str:
    return " ".join(card(c) for c in cards) or "—"


def describe_content(content: Any, card: Callable[[str], str]) -> str:
    """A Gin message's content (the member ``gin`` of an envelope's ``oneof game``) in the
    game's words, one line; ``card`` writes a card."""
    name = content.DESCRIPTOR.name
    if name == "RuleSet":
        return f"rules {content.name} (target {content.target})"
    if name == "Action":
        kind = _gin_enum("ActionKind", content.kind, "ACTION_KIND_")
        return f"{kind} {card(content.card)}" if content.card else kind
    if name == "State":
        top = card(content.discard_pile[-1]) if content.discard_pile else "—"
        upcard = f" · upcard {card(content.first_upcard)}" if content.first_upcard else ""
        return (f"{_gin_enum('Phase', content.phase, 'PHASE_')} · hand {_gin_cards(content.hand, card)} (deadwood "
                f"{content.my_deadwood}){upcard} · discard top {top} · stock {content.stock_size} · scores "
                f"{'–'.join(map(str, content.scores))}")
    if name == "Event":
        if content.reshuffled:
            return f"the discard pile is shuffled into a new stock · stock {content.stock_size_after}"
        what = _gin_enum("ActionKind", content.kind, "ACTION_KIND_")
        shown = card(content.card) if content.card else ("(hidden)" if what in ("draw_stock", "knock") else "")
        return f"{what} {shown}".rstrip() + f" · stock {content.stock_size_after}"
    if name == "DealResult":
        hands = "; ".join(
            f"seat {h.seat} " + " ".join("[" + " ".join(card(c) for c in m.cards) + "]" for m in h.melds)
            + (f" deadwood {_gin_cards(h.deadwood_cards, card)} ({h.deadwood})" if h.deadwood_cards else " deadwood 0")
            + (f" laid off {_gin_cards(h.laid_off, card)}" if h.laid_off else "")
            for h in content.hands)
        knock = f" · knock discard {card(content.knock_discard)}" if content.knock_discard else ""
        return (f"{_gin_enum('DealOutcome', content.outcome, 'DEAL_OUTCOME_')} · knocker {content.knocker} · "
                f"{content.points} points{knock}" + (f" · {hands}" if hands else ""))
    if name == "GameResult":
        return f"deal points {'–'.join(map(str, content.deal_points))}" + (" · shutout" if content.shutout else "")
    from google.protobuf import text_format

    return text_format.MessageToString(content, as_one_line=True).strip()


_HASTY_VALUES = {r: min(i + 1, 10) for i, r in enumerate("A23456789TJQK")}


def hasty_action(request: bot_pb2.ActionRequest) -> common_pb2.Action:
    """A quick, dependency-free choice that ends deals soon (the arena's test bot plays it, so
    that its games are short): big gin or knock whenever allowed, discard the highest deadwood
    card (the referee's arrangement is in the state), never take a face-up card."""
    legal = list(request.legal_actions)
    deadwood = set(request.gin.my_deadwood_cards)

    def badness(a: common_pb2.Action) -> tuple[int, int]:
        return (1 if a.gin.card in deadwood else 0, _HASTY_VALUES.get(a.gin.card[:1], 0))

    for a in legal:
        if a.gin.kind == gin_pb2.ACTION_KIND_BIG_GIN:
            return a
    for kind in (gin_pb2.ACTION_KIND_KNOCK, gin_pb2.ACTION_KIND_DISCARD):
        of_kind = [a for a in legal if a.gin.kind == kind]
        if of_kind:
            return max(of_kind, key=badness)
    for a in legal:
        if a.gin.kind in (gin_pb2.ACTION_KIND_DRAW_STOCK, gin_pb2.ACTION_KIND_PASS):
            return a
    return legal[0]


class GinWire:
    """Gin's messages (``games.GameWire``)."""

    def describe(self, content: Any, card: Callable[[str], str]) -> str:
        """The game's content of a message (its ``oneof game`` member) in the game's words."""
        return describe_content(content, card)

    def hasty(self, request: bot_pb2.ActionRequest) -> common_pb2.Action:
        """An action of the request that ends the deal soon (optional; :func:`hasty_action`)."""
        return hasty_action(request)

    def event_words(self, content: Any, say: Words) -> str:
        """An ``Event``'s content (a seat's move, as a seat is told it) in the presentation's words
        (optional; ``say`` collects the templates, for a page that translates them)."""
        card = card_from_text(content.card, "event.card") if content.card else None
        text = move_words(_PB_TO_KIND.get(content.kind, "?"), card, say)
        return say("{move}; the discard pile is shuffled into a new stock", move=text) if content.reshuffled else text


    def start_fields(self, rules: gin.RuleSet) -> dict[str, Any]:
        """The rule set, every field filled."""
        return {"gin": rules_to_proto(rules)}

    def rules_from_request(self, request: referee_pb2.CreateMatchRequest) -> gin.RuleSet | None:
        """The request's rules (``gin``), or ``None`` if it names none."""
        which = request.WhichOneof("game")
        if which is None:
            return None
        if which != "gin":
            raise WireError(f"rules: a gin match takes its rules in gin; got {which}")
        return rules_from_proto(request.gin)

    def new_seat_cache(self) -> EventLog:
        """A seat's encoded events and deal fields."""
        return EventLog()

    def request(
        self, match: games.GameMatch, seat: int, match_id: str, request_id: int, clocks: Sequence[int],
        increment_ms: int, allowance_ms: int, cache: EventLog,
    ) -> tuple[bytes, Container[gin.Action]]:
        """The action request, encoded; the legal actions are the engine's interned values."""
        assert isinstance(match, GinMatch)
        state = match.match.view(seat)
        data = action_request_bytes(match_id, request_id, state, clocks, increment_ms, allowance_ms, cache)
        return data, state.legal_actions

    def action_from_proto(self, msg: common_pb2.Action) -> gin.Action:
        """The bot's action."""
        return action_from_proto(msg)

    def raw_action(self, msg: common_pb2.Action) -> dict[str, Any]:
        """The action's kind and card as sent (a message without ``gin``: kind 0, no card)."""
        return {"raw_kind": int(msg.gin.kind), "raw_card": msg.gin.card}

    def raw_action_from_record(self, record: Mapping[str, Any]) -> common_pb2.Action:
        """The action :meth:`raw_action` recorded."""
        return common_pb2.Action(gin=gin_pb2.Action(kind=record["raw_kind"], card=record["raw_card"]))

    def action_from_text(self, text: str) -> common_pb2.Action:
        """A replay's action text as a message."""
        return action_to_proto(gin.parse_action(text))

    def deal_started(self, match: games.GameMatch, seat: int, cache: EventLog | None) -> bot_pb2.DealStarted:
        """The current deal's start for the seat."""
        assert isinstance(match, GinMatch)
        return deal_started(match.match.view(seat), cache)

    def tell(
        self, match: games.GameMatch, happening: games.Happening, seat: int, think_ms: int, cache: EventLog
    ) -> tuple[str, Any] | None:
        """Each step as the seat may see it."""
        assert isinstance(match, GinMatch)
        if isinstance(happening, games.Acted):
            return "event", public_event(_seat_event(happening.step, seat), think_ms)
        if isinstance(happening, games.Chance):
            return "event", public_event(gin.PublicEvent(-1, "reshuffle", None, happening.step.stock_size))
        if isinstance(happening, games.DealOver):
            deal, ev = happening.step
            st = gin.deal_state(deal, seat, game_number=ev.game, deal_number=ev.deal, scores=ev.scores)
            return "deal_finished", bot_pb2.DealFinished(result=deal_result(st, game_over=happening.game_over))
        if isinstance(happening, games.GameOver):
            return "game_finished", bot_pb2.GameFinished(result=game_result(happening.step))
        return "deal_started", deal_started(match.match.view(seat), cache)

    def show(self, match: games.GameMatch, happening: games.Happening, match_id: str, think_ms: int) -> bytes:
        """Each step as a spectator sees it, serialised."""
        assert isinstance(match, GinMatch)
        if isinstance(happening, games.Acted):  # the hot path: encoded by hand
            step = happening.step
            return spectator_event_bytes(match_id, _env.event_bytes(step.seat, think_ms, _GAME.event,
                                                                    _spectator_step_bytes(step)))
        if isinstance(happening, games.Chance):
            kind: dict[str, Any] = {"event": public_event(
                gin.PublicEvent(-1, "reshuffle", None, happening.step.stock_size))}
        elif isinstance(happening, games.DealOver):
            deal, ev = happening.step
            pub = gin.deal_state(deal, -1, game_number=ev.game, deal_number=ev.deal, scores=ev.scores)
            kind = {"deal_finished": deal_result(pub, game_over=happening.game_over)}
        elif isinstance(happening, games.GameOver):
            kind = {"game_finished": game_result(happening.step)}
        else:
            pub_state = match.match.view(-1)
            kind = {"deal_started": referee_pb2.SpectatorDeal(
                game_number=pub_state.game_number, deal_number=pub_state.deal_number, dealer=pub_state.dealer,
                gin=gin_pb2.DealView(
                    upcard=str(pub_state.first_upcard), stock_size=pub_state.stock_size,
                    hand_sizes=pub_state.hand_sizes, scores=pub_state.scores,
                    knock_limit=-1 if pub_state.knock_limit is None else pub_state.knock_limit,
                    spade_double=pub_state.doubled,
                ),
            )}
        return referee_pb2.SpectatorEvent(match_id=match_id, **kind).SerializeToString()

    def game_results(self, outcome: gin.MatchOutcome | None) -> list[common_pb2.GameResult]:
        """Every game of the outcome."""
        return [game_result(g) for g in outcome.games] if outcome is not None else []

    def outcome_from_result(self, result: common_pb2.MatchResult,
                            termination_normal: bool) -> gin.MatchOutcome | None:
        """The games a remote referee reported, as the engine's outcome (deal counts are 0)."""
        played = tuple(
            gin.GameResult(
                game=g.game_number, winner=g.winner, deal_points=tuple(g.gin.deal_points),
                deals_won=tuple(g.gin.deals_won), totals=tuple(g.final_totals), shutout=g.gin.shutout, deals=0,
            )
            for g in result.games
        )
        if not played:
            return None
        winner = None if result.winner < 0 else int(result.winner)
        faulting = None if result.faulting_seat < 0 else int(result.faulting_seat)
        return gin.MatchOutcome(
            winner=winner, games_won=tuple(result.games_won), totals=tuple(int(t) for t in result.total_points),
            games=played, forfeit=faulting if not termination_normal else None,
        )


SAMPLE_BOTS = tuple(games.SampleBot(n, ("{python}", "-m", f"sample_bots.{n.replace('-', '_')}_bot"), level)
                    for n, level in (("random", "easy"), ("greedy", "medium"), ("expert", "hard"),
                                     ("eaai-simple", "medium"), ("mc", "hard"), ("hand-reader", "hard")))
"""Gin's sample bots (gin-arena's ``sample_bots`` package): the demo's, ``arena play``'s and the web tables'.
``eaai-simple``, ``mc`` and ``hand-reader`` are the reference bots of docs/bots.md (``mc`` also plays
rummy)."""
_ENGINE, _CONVERSION = GinGame(), GinWire()
_CAPABILITIES = games.Capabilities(
    knows_cards=_ENGINE, first_dealer=_ENGINE, describe=_CONVERSION.describe,
    event_words=_CONVERSION.event_words, hasty=_CONVERSION.hasty, deal_end_view=PRESENTATION.deal_end_view,
    result_words=RESULT_WORDS)
REGISTERED = games.Registered(_ENGINE, _CONVERSION, PRESENTATION, games.catalogs_in("referee.gin"),
                              bots=SAMPLE_BOTS, demo=games.Demo(opponent="greedy"),
                              help=games.catalogs_in("referee.gin", "help"), capabilities=_CAPABILITIES,
                              display_name=T("Gin"))
"""Gin, as ``referee.games`` finds it."""
PLUGIN = games.GamePlugin(plugin_api=games.PLUGIN_API, load=lambda: REGISTERED)
"""What this game's entry point names (pyproject.toml's ``[project.entry-points."gin_arena.games"]``)."""

