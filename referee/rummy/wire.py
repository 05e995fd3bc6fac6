"""Rummy (2–6 seats) through the referee's game seam: the adapter that drives the pure engine
(``referee.rummy``) for the plumbing (:class:`RummyGame`, :class:`RummyMatch`), and the one module
that converts rummy's values to and from protobuf messages (``gin_arena.v2.games.rummy``, in
the member ``rummy`` of the envelope's ``oneof game``). Messages to a seat are built here from
that seat's :class:`~referee.rummy.InformationState` and nothing else. The one module of the
game's package that is not pure (it imports protobuf and the referee's envelope)."""

from __future__ import annotations

import base64
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from typing import Any

from gin_arena.v2 import bot_pb2, common_pb2, referee_pb2
from gin_arena.v2.games import rummy_pb2
from referee import games, rummy
from referee.cardcore.present import T, Words
from referee.rummy import knowledge as rummy_knowledge
from referee.rummy.present import PRESENTATION, RESULT_WORDS, move_words, moved_cards
from referee.rummy.records import RummyDealEnd, RummyGameEnd
from referee.wire import envelope as _env
from referee.wire.envelope import LEN as _LEN
from referee.wire.envelope import VARINT as _VARINT
from referee.wire.envelope import WireError
from referee.wire.envelope import len_field as _len_field
from referee.wire.envelope import packed as _packed
from referee.wire.envelope import tags as _tags
from referee.wire.envelope import text as _text
from referee.wire.envelope import uint as _uint

_GAME = _env.game_tags("rummy")
"""Rummy's member of the envelope's ``oneof game``s."""

_SEAT_COUNTS = range(2, 7)

_ENUMS: dict[str, dict[str, int]] = {
    "ace": {"low": rummy_pb2.ACE_LOW, "low_or_high": rummy_pb2.ACE_LOW_OR_HIGH},
    "discard_draw": {"top": rummy_pb2.DISCARD_DRAW_TOP, "row": rummy_pb2.DISCARD_DRAW_ROW},
    "scoring": {"hands": rummy_pb2.SCORING_HANDS, "table": rummy_pb2.SCORING_TABLE},
    "face_values": {"ten": rummy_pb2.FACE_VALUES_TEN, "rank": rummy_pb2.FACE_VALUES_RANK},
    "next_dealer": {"winner": rummy_pb2.NEXT_DEALER_WINNER, "left": rummy_pb2.NEXT_DEALER_LEFT},
    "stock_exhausted": {"lowest_wins": rummy_pb2.STOCK_EXHAUSTED_LOWEST_WINS,
                        "reshuffle": rummy_pb2.STOCK_EXHAUSTED_RESHUFFLE},
}
_ENUMS_BACK = {field: {v: k for k, v in table.items()} for field, table in _ENUMS.items()}
_SCALARS = ("stop", "rummy_doubles", "out_needs_discard", "target", "max_deals_per_game", "games")
_END_TO_PB = {"set": rummy_pb2.LAYOFF_END_SET, "low": rummy_pb2.LAYOFF_END_LOW,
              "high": rummy_pb2.LAYOFF_END_HIGH}
_PB_TO_END: dict[int, rummy.End] = {rummy_pb2.LAYOFF_END_SET: "set", rummy_pb2.LAYOFF_END_LOW: "low",
                                    rummy_pb2.LAYOFF_END_HIGH: "high"}
_PHASE_TO_PB = {"draw": rummy_pb2.PHASE_DRAW, "play": rummy_pb2.PHASE_PLAY,
                "stop": rummy_pb2.PHASE_STOP, "lay_back": rummy_pb2.PHASE_LAY_BACK,
                "over": rummy_pb2.PHASE_OVER}
_REASON_TO_PB = {"out": rummy_pb2.DEAL_END_REASON_OUT, "lowest": rummy_pb2.DEAL_END_REASON_LOWEST,
                 "void": rummy_pb2.DEAL_END_REASON_VOID}
_MELD_KIND = {"set": rummy_pb2.MELD_KIND_SET, "run": rummy_pb2.MELD_KIND_RUN}


# ----- cards, rules and actions -----
_TEXT = tuple(str(c) for c in rummy.DECK)  # card text by index
_CARD_BY_TEXT = {t: c for t, c in zip(_TEXT, rummy.DECK, strict=True)}


def cards(cs: Iterable[rummy.Card]) -> list[str]:
    """Cards as their text forms."""
    return [_TEXT[c.index] for c in cs]


def card_from_text(text: str, what: str) -> rummy.Card:
    """Parse a card field, raising :class:`WireError` with the field named."""
    card = _CARD_BY_TEXT.get(text)
    if card is not None:
        return card
    try:
        return rummy.parse_card(text)
    except ValueError as e:
        raise WireError(f"{what}: {e}") from None


def rules_to_proto(rules: rummy.RummyRules) -> rummy_pb2.RuleSet:
    """Every field filled, so a bot never needs to know the presets."""
    out: rummy_pb2.RuleSet = _env.fill_rules(rummy_pb2.RuleSet(name=rules.name), rules, _ENUMS, _SCALARS)
    return out


def rules_from_proto(msg: rummy_pb2.RuleSet) -> rummy.RummyRules:
    """The preset named (``rummy`` if empty) with every field that is set overriding it."""
    overrides = _env.rules_overrides(msg, _ENUMS_BACK, _SCALARS, "rules.rummy")
    try:
        return rummy.RummyRules.preset(msg.name or "rummy", **overrides)
    except ValueError as e:
        raise WireError(f"rules.rummy: {e}") from None


def _rummy_action(a: rummy.Action) -> rummy_pb2.Action:
    if isinstance(a, rummy.DrawStock):
        return rummy_pb2.Action(draw_stock=rummy_pb2.DrawStock())
    if isinstance(a, rummy.TakeDiscard):
        return rummy_pb2.Action(take_discard=rummy_pb2.TakeDiscard(card=_TEXT[a.card.index]))
    if isinstance(a, rummy.LayMeld):
        return rummy_pb2.Action(lay_meld=rummy_pb2.LayMeld(cards=cards(a.cards)))
    if isinstance(a, rummy.LayOff):
        return rummy_pb2.Action(lay_off=rummy_pb2.LayOff(
            card=_TEXT[a.card.index], meld=a.meld, end=_end(a.end)))
    if isinstance(a, rummy.Discard):
        return rummy_pb2.Action(discard=rummy_pb2.Discard(card=_TEXT[a.card.index]))
    if isinstance(a, rummy.CallStop):
        return rummy_pb2.Action(call_stop=rummy_pb2.CallStop())
    return rummy_pb2.Action(decline_stop=rummy_pb2.DeclineStop())


def action_to_proto(action: rummy.Action) -> common_pb2.Action:
    """A domain action as the envelope's ``Action`` (its ``rummy`` member)."""
    return common_pb2.Action(rummy=_rummy_action(action))


def _from_rummy_action(msg: rummy_pb2.Action) -> rummy.Action:
    which = msg.WhichOneof("kind")
    if which is None:
        raise WireError("action.rummy: no kind set (one of draw_stock, take_discard, lay_meld, lay_off, "
                        "discard, call_stop, decline_stop)")
    if which == "draw_stock":
        return rummy.DrawStock()
    if which == "call_stop":
        return rummy.CallStop()
    if which == "decline_stop":
        return rummy.DeclineStop()
    if which == "take_discard":
        return rummy.TakeDiscard(card_from_text(msg.take_discard.card, "action.rummy.take_discard.card"))
    if which == "discard":
        return rummy.Discard(card_from_text(msg.discard.card, "action.rummy.discard.card"))
    if which == "lay_meld":
        if not msg.lay_meld.cards:
            raise WireError("action.rummy.lay_meld.cards: no cards")
        return rummy.LayMeld(tuple(card_from_text(c, "action.rummy.lay_meld.cards") for c in msg.lay_meld.cards))
    off = msg.lay_off
    end = _PB_TO_END.get(off.end)
    if end is None:
        raise WireError(f"action.rummy.lay_off.end: {off.end} is not SET, LOW or HIGH")
    return rummy.LayOff(card_from_text(off.card, "action.rummy.lay_off.card"), off.meld, end)


def action_from_proto(msg: common_pb2.Action) -> rummy.Action:
    """An envelope ``Action`` as a domain action, or :class:`WireError` naming what is malformed."""
    which = msg.WhichOneof("game")
    if which != "rummy":
        raise WireError(f"action: a rummy match's action goes in action.rummy; got {which or 'no game'}")
    return _from_rummy_action(msg.rummy)


# ----- what a seat sees -----
def _end(end: str) -> Any:
    return _END_TO_PB[end]


def table_meld(m: rummy.TableMeld) -> rummy_pb2.TableMeld:
    """A meld on the table with who laid each of its cards."""
    return rummy_pb2.TableMeld(
        number=m.number, owner=m.owner, kind=_MELD_KIND[m.kind], cards=cards(m.cards),
        placed=[rummy_pb2.Placed(card=_TEXT[p.card.index], seat=p.seat, end=_end(p.end), layoff=p.layoff)
                for p in m.placed],
    )


def rummy_event(ev: rummy.PublicEvent) -> rummy_pb2.Event:
    """One step of a deal as some seat saw it (already filtered by the engine's view)."""
    if ev.kind == "reshuffle":
        raise ValueError("a reshuffle is told with reshuffle_event")
    a: rummy.Action
    if ev.kind == "draw_stock":
        return rummy_pb2.Event(action=_rummy_action(rummy.DrawStock()),
                                   drawn_card=_TEXT[ev.card.index] if ev.card is not None else "")
    if ev.kind == "take_discard":
        assert ev.card is not None
        return rummy_pb2.Event(action=_rummy_action(rummy.TakeDiscard(ev.card)), taken_cards=cards(ev.cards))
    if ev.kind == "meld":
        a = rummy.LayMeld(ev.cards)
    elif ev.kind == "lay_off":
        assert ev.card is not None
        a = rummy.LayOff(ev.card, ev.meld, "set" if ev.end == "set" else "low" if ev.end == "low" else "high")
    elif ev.kind == "discard":
        assert ev.card is not None
        a = rummy.Discard(ev.card)
    else:
        a = rummy.CallStop() if ev.kind == "call_stop" else rummy.DeclineStop()
    return rummy_pb2.Event(action=_rummy_action(a))


def reshuffle_event(number: int, upcard: rummy.Card) -> common_pb2.Event:
    """The ``number``-th reshuffle of the deal's discard pile into a new stock (public)."""
    return common_pb2.Event(seat=0, rummy=rummy_pb2.Event(reshuffle=rummy_pb2.Reshuffle(
        number=number, upcard=_TEXT[upcard.index])))


def public_event(ev: rummy.PublicEvent, think_ms: int = 0) -> common_pb2.Event:
    """An action as the envelope's ``Event`` carrying its ``rummy`` part (reshuffles:
    :func:`reshuffle_event`)."""
    return common_pb2.Event(seat=ev.seat, think_ms=think_ms, rummy=rummy_event(ev))


# The state goes out on every decision: it is encoded straight to protobuf bytes (protobuf's
# deterministic serialisation: fields in number order, proto3 defaults left out, packed repeated
# scalars), with what repeats (an event, a meld on the table, a card entry) encoded once;
# tests/test_rummy_referee.py checks the bytes against protobuf's own on thousands of states.
_ST = _tags(rummy_pb2.State, {
    "seat": _VARINT, "num_seats": _VARINT, "dealer": _VARINT, "turn": _VARINT, "to_move": _VARINT, "phase": _VARINT,
    "hand": _LEN, "hand_sizes": _LEN, "stock_size": _VARINT, "discard_pile": _LEN, "table": _LEN, "must_use": _LEN,
    "stopped": _LEN, "scores": _LEN, "game_number": _VARINT, "deal_number": _VARINT,
    "match_points": _LEN, "reshuffles": _VARINT,
})
_HAND = tuple(_text(_ST["hand"], t) for t in _TEXT)
_PILE = tuple(_text(_ST["discard_pile"], t) for t in _TEXT)
_MUST_USE = tuple(_text(_ST["must_use"], t) for t in _TEXT)
_STOPPED = tuple(_text(_ST["stopped"], t) for t in _TEXT)
_PHASE = {k: _uint(_ST["phase"], v) for k, v in _PHASE_TO_PB.items()}
_MELDS: dict[rummy.TableMeld, bytes] = {}
_EVENTS: dict[tuple[rummy.PublicEvent, int], bytes] = {}


def _memo(cache: dict[Any, bytes], key: Any, make: Any) -> bytes:
    """``cache[key]``, made by ``make()`` when missing (the cache is emptied when it grows large)."""
    out = cache.get(key)
    if out is None:
        if len(cache) > 20_000:
            cache.clear()
        out = cache[key] = make()
    return out


def _event_entry(ev: rummy.PublicEvent, reshuffles: int) -> bytes:
    """One entry of ``ActionRequest.events`` (``reshuffles``: the reshuffle's number)."""
    if ev.kind == "reshuffle":
        assert ev.card is not None
        msg = reshuffle_event(reshuffles, ev.card)
    else:
        msg = public_event(ev)
    return _env.event_entry(msg.seat, _GAME.event, msg.rummy.SerializeToString(deterministic=True))


def _meld_entry(m: rummy.TableMeld) -> bytes:
    return _len_field(_ST["table"], table_meld(m).SerializeToString(deterministic=True))


class SeatCache:
    """What one seat's messages repeat within a deal, encoded once: its events (the envelope's
    :class:`~referee.wire.envelope.SeatEvents`) and the deal's reshuffles so far."""

    __slots__ = ("log", "reshuffles")

    def __init__(self) -> None:
        self.log = _env.SeatEvents()
        self.reshuffles = 0

    def _entry(self, ev: rummy.PublicEvent) -> bytes:
        if ev.kind == "reshuffle":
            self.reshuffles += 1
        n = self.reshuffles if ev.kind == "reshuffle" else 0
        return _memo(_EVENTS, (ev, n), lambda: _event_entry(ev, n))

    def events(self, state: rummy.InformationState) -> bytes:
        """``state.events`` as entries of ``ActionRequest.events``, encoded."""
        key = (state.seat, state.game_number, state.deal_number)
        if key != self.log.deal or self.log.count > len(state.events):
            self.reshuffles = 0
        self.log.update(key, state.events, self._entry)
        return self.log.joined


def state_bytes(state: rummy.InformationState, match_points: Sequence[int], cache: SeatCache | None = None) -> bytes:
    """A seat's (or a spectator's) complete information state, encoded (``State``; its events
    are the request's: :meth:`SeatCache.events`)."""
    cache = cache if cache is not None else SeatCache()
    f = _ST
    cache.events(state)
    return b"".join([
        _uint(f["seat"], -1 if state.seat is None else state.seat),
        _uint(f["num_seats"], state.num_seats), _uint(f["dealer"], state.dealer), _uint(f["turn"], state.turn),
        _uint(f["to_move"], -1 if state.to_move is None else state.to_move), _PHASE[state.phase],
        b"".join([_HAND[c.index] for c in state.hand]),
        _packed(f["hand_sizes"], state.hand_sizes), _uint(f["stock_size"], state.stock_size),
        b"".join([_PILE[c.index] for c in state.discard_pile]),
        b"".join([_memo(_MELDS, m, lambda m=m: _meld_entry(m)) for m in state.table]),
        _MUST_USE[state.must_use.index] if state.must_use is not None else b"",
        _STOPPED[state.stopped.index] if state.stopped is not None else b"",
        _packed(f["scores"], state.scores), _uint(f["game_number"], state.game_number),
        _uint(f["deal_number"], state.deal_number), _packed(f["match_points"], match_points),
        _uint(f["reshuffles"], cache.reshuffles),
    ])


def rummy_state(state: rummy.InformationState, match_points: Sequence[int],
                cache: SeatCache | None = None) -> rummy_pb2.State:
    """A seat's complete information state as a message."""
    return rummy_pb2.State.FromString(state_bytes(state, match_points, cache))


_LEGAL: dict[rummy.Action, bytes] = {}


def _legal_entry(action: rummy.Action) -> bytes:
    entry = _LEGAL.get(action)
    if entry is None:
        if len(_LEGAL) > 50_000:
            _LEGAL.clear()
        entry = _LEGAL[action] = _env.action_entry(
            _GAME.action, _rummy_action(action).SerializeToString(deterministic=True))
    return entry


def events(state: rummy.InformationState) -> list[common_pb2.Event]:
    """The deal's events so far as the seat of ``state`` saw them (``ActionRequest.events``)."""
    out = []
    n = 0
    for ev in state.events:
        if ev.kind == "reshuffle":
            n += 1
            assert ev.card is not None
            out.append(reshuffle_event(n, ev.card))
        else:
            out.append(public_event(ev))
    return out


def action_request_bytes(
    match_id: str, request_id: int, state: rummy.InformationState, match_points: Sequence[int],
    remaining_ms: Sequence[int], increment_ms: int, time_for_move_ms: int, cache: SeatCache | None = None,
) -> bytes:
    """``RefereeMessage{match_id, action_request}`` encoded: the legal actions, every seat's
    clock (the seat of ``state`` running), the deal's events and the seat's complete
    information state."""
    cache = cache if cache is not None else SeatCache()
    state_part = state_bytes(state, match_points, cache)
    return _env.action_request_bytes(
        match_id, request_id, b"".join([_legal_entry(a) for a in state.legal_actions]),
        _env.clocks_bytes(remaining_ms, increment_ms, -1 if state.seat is None else state.seat), time_for_move_ms,
        cache.log.joined, _GAME.state, state_part,
    )


def deal_result(deal: rummy.Deal, outcome: rummy.RummyOutcome, record: Mapping[str, Any],
                game_over: bool) -> common_pb2.DealResult:
    """The end of a deal, every hand revealed (R11: the same for every seat and spectators)."""
    return common_pb2.DealResult(
        game_number=record["game"], deal_number=record["deal"], dealer=deal.dealer,
        winner=-1 if outcome.winner is None else outcome.winner, scores_after=record["scores"],
        game_over=game_over, rummy=rummy_pb2.DealResult(
            reason=_REASON_TO_PB[outcome.reason], points=outcome.points, rummy_doubled=outcome.rummy,
            hands=[rummy_pb2.SeatCards(seat=s, cards=cards(h)) for s, h in enumerate(outcome.hands)],
            hand_values=outcome.hand_values, table_points=outcome.table_points,
            table=[table_meld(m) for m in deal.table],
        ),
    )


def game_result(result: rummy.GameResult) -> common_pb2.GameResult:
    """A finished game as a message."""
    winner = games.Ranking(result.places, result.totals).winner
    return common_pb2.GameResult(
        game_number=result.number, winner=-1 if winner is None else winner, final_totals=result.totals,
        places=result.places, rummy=rummy_pb2.GameResult(
            deals=result.deals, finished=result.finished, forfeited=result.forfeited),
    )


class RummyGame:
    """Rummy for two to six seats."""

    name = "rummy"
    deal_end_content = RummyDealEnd
    game_end_content = RummyGameEnd

    def seat_counts(self) -> range:
        """Two to six seats."""
        return _SEAT_COUNTS

    def default_rules(self) -> rummy.RummyRules:
        """The ``rummy`` preset."""
        return rummy.RummyRules.preset("rummy")

    def preset_names(self) -> tuple[str, ...]:
        """The presets, the default first."""
        return tuple(rummy.PRESETS)

    def rules_preset(self, name: str) -> rummy.RummyRules:
        """A preset of the rules."""
        return rummy.RummyRules.preset(name)

    def check_rules(self, rules: Any) -> None:
        """``ValueError`` unless a rummy rule set."""
        if not isinstance(rules, rummy.RummyRules):
            raise ValueError(f"rummy needs a RummyRules; got {type(rules).__name__}")

    def rules_to_dict(self, rules: rummy.RummyRules) -> dict[str, Any]:
        """The rule set as plain values."""
        return rules.to_dict()

    def match_size(self, rules: rummy.RummyRules) -> Sequence[tuple[str, str, int]]:
        """Games per match and the game's target."""
        return (("rummy_rules.games", "games", rules.games), ("rummy_rules.target", "target", rules.target))

    def rules_from_dict(self, data: Mapping[str, Any]) -> rummy.RummyRules:
        """A rule set from plain values."""
        return rummy.RummyRules.from_dict(dict(data))

    @property
    def card_fields(self) -> frozenset[str]:
        """The fields of its messages that hold cards (``games.KnowsCards``)."""
        return rummy_knowledge.CARD_FIELDS

    def card_text(self, text: str) -> str | None:
        return rummy_knowledge.card_text(text)

    def known_cards(self, rules: rummy.RummyRules, deal: Mapping[str, Any], moves: Sequence[tuple[int, str]],
                    seats: int) -> list[list[set[str]]]:
        return rummy_knowledge.known_cards(rules, deal, moves, seats)

    def commitment(self, seed: bytes) -> bytes:
        """SHA-256 of the seed."""
        return rummy.commitment(seed)

    def mix_seed(self, seed: bytes, nonces: Sequence[bytes]) -> bytes:
        """The seed with the nonces mixed in."""
        return rummy.mix_seed(seed, list(nonces))

    def new_match(self, rules: rummy.RummyRules, seed: bytes, seats: int) -> RummyMatch:
        """A match of ``seats`` seats."""
        if seats not in _SEAT_COUNTS:
            raise ValueError(f"rummy is played by 2 to 6 seats; got {seats}")
        return RummyMatch(rummy.Match(rules, seed, seats))

    def deal_deck(self, seed: bytes, game: int, deal: int) -> tuple[list[str], bytes]:
        """The deck and key of a deal, from the seed."""
        return [str(c) for c in rummy.deck_for_deal(seed, game, deal)], rummy.deal_key(seed, game, deal)

    def result_fields(self, outcome: rummy.MatchOutcome | None) -> dict[str, Any]:
        """Games won (first places) and the points summed over the games (empty lists when no
        match was played)."""
        if outcome is None:
            return {"games_won": [], "totals": []}
        won = [sum(1 for g in outcome.games if g.places[s] == 1) for s in range(len(outcome.points))]
        return {"games_won": won, "totals": list(outcome.points)}


def _match_points(match: rummy.Match) -> list[int]:
    """The finished games' totals summed, by seat (public)."""
    return [sum(r.totals[s] for r in match.results) for s in range(match.seats)]


class RummyMatch:
    """One rummy match, driven through the seam. ``match`` is the engine's :class:`rummy.Match`."""

    __slots__ = ("ended", "match")

    def __init__(self, match: rummy.Match) -> None:
        self.match = match
        self.ended: tuple[int, int, rummy.Deal, tuple[int, ...]] | None = None
        """The last deal that ended: its game and deal numbers, the finished deal and the game's
        totals after it (the match has dealt the next one by the time a seat reads the end;
        the presentation's ``deal_end_view`` shows it)."""

    @property
    def is_over(self) -> bool:
        """Whether the match has ended."""
        return self.match.is_over

    @property
    def decider(self) -> int | None:
        """The seat whose decision is awaited: the player to move or a seat asked about stop."""
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
        return len(self.match.deal.steps)

    @property
    def scores(self) -> tuple[int, ...]:
        """The current game's totals."""
        return tuple(self.match.game.totals)

    @property
    def games_won(self) -> tuple[int, ...]:
        """Games won (first places) so far."""
        return tuple(sum(1 for r in self.match.results if r.places[s] == 1) for s in range(self.match.seats))

    @property
    def outcome(self) -> rummy.MatchOutcome | None:
        """The engine's match outcome once over."""
        return self.match.outcome

    def _deal_begun(self) -> games.DealBegun:
        deal, game = self.match.deal, self.match.game
        return games.DealBegun({
            "game": game.number, "deal": game.deal_number, "dealer": deal.dealer,
            "deck": [str(c) for c in deal.deck], "key": deal.key.hex(),
        })

    def opening(self) -> list[games.Happening]:
        """The first deal."""
        return [self._deal_begun()]

    def why_illegal(self, seat: int, action: rummy.Action) -> str:
        """The engine's reason (``apply`` refuses before changing anything)."""
        try:
            if seat != self.match.to_move:
                return f"it is seat {self.match.to_move}'s decision, not seat {seat}'s"
            if action in self.match.legal_actions():
                return "legal"
            self.match.deal.apply(action, seat)
        except rummy.IllegalActionError as e:
            return str(e)
        raise AssertionError("an action outside legal_actions was accepted")  # pragma: no cover

    def apply(self, seat: int, action: rummy.Action) -> list[games.Happening]:
        """Play the action; a reshuffle it triggers is a chance step after it, then the deal's
        and game's ends and the next deal."""
        match = self.match
        deal, game = match.deal, match.game
        before = len(deal.steps)
        outcome = match.apply(action, seat)
        drawn = deal.step_cards[before]
        revealed = str(drawn[0]) if isinstance(action, rummy.DrawStock) else None
        out: list[games.Happening] = [games.Acted(seat, action, str(action), revealed, (deal.steps[before], drawn))]
        for step in deal.steps[before + 1:]:
            if isinstance(step, rummy.Reshuffle):
                out.append(games.Chance("reshuffle", {"stock_size": step.stock_size}, step))
        if outcome is None:
            return out
        game_over = game.result is not None
        record = self._deal_record(game, outcome)
        self.ended = (int(record["game"]), int(record["deal"]), deal, tuple(record["scores"]))
        out.append(games.DealOver(record, game_over, (deal, outcome)))
        if game.result is not None:
            out.append(self._game_over(game.result))
        if not match.is_over:
            out.append(self._deal_begun())
        return out

    @staticmethod
    def _deal_record(game: rummy.Game, o: rummy.RummyOutcome) -> dict[str, Any]:
        return {
            "game": game.number, "deal": game.deal_number if game.result else game.deal_number - 1,
            "reason": o.reason, "winner": o.winner, "points": list(o.points), "rummy": o.rummy,
            "hands": [[str(c) for c in h] for h in o.hands], "hand_values": list(o.hand_values),
            "table_points": list(o.table_points), "scores": list(game.totals),
        }

    @staticmethod
    def _game_over(result: rummy.GameResult) -> games.GameOver:
        ranking = games.Ranking(result.places, result.totals)
        record = {
            "game": result.number, "winner": ranking.winner, "totals": list(result.totals), "deals": result.deals,
            "forfeit": result.forfeited[0] if result.forfeited else None, "finished": result.finished,
            "forfeited": list(result.forfeited),
        }
        return games.GameOver(ranking, record, result)

    def substitute(self, seat: int) -> rummy.Action:
        """The built-in bot's choice for the deciding seat."""
        if seat != self.match.to_move:
            raise ValueError(f"seat {seat} is not deciding now")
        return rummy.substitute_action(self.match.deal)

    def forfeit(self, seats: Sequence[int]) -> list[games.Happening]:
        """End the match: the game in progress is lost by ``seats``, the first to fault last."""
        return [self._game_over(self.match.forfeit(tuple(seats)))]

    def ranking(self) -> games.Ranking:
        """The match's result by seat (so far, while it is not over)."""
        outcome = self.match.outcome
        if outcome is not None:
            return games.Ranking(outcome.places, outcome.points)
        points = [sum(r.totals[s] for r in self.match.results) + self.match.game.totals[s]
                  for s in range(self.match.seats)]
        return games.Ranking.by_points(points)


# ----- the game's content of a message in words (``arena replay REPLAY --seat N``) -----
def _rummy_enum(enum: str, number: int, prefix: str) -> str:
    values = rummy_pb2.DESCRIPTOR.enum_types_by_name[enum].values_by_number
    return values[number].name.removeprefix(prefix).lower() if number in values else str(number)


def _rummy_cards(cards: Iterable[str], card: Callable[[str], str]) -> str:
    return " ".join(card(c) for c in cards) or "—"


def _action_words(a: Any, card: Callable[[str], str]) -> str:
    kind = a.WhichOneof("kind") or "?"
    if kind == "take_discard":
        return f"take_discard {card(a.take_discard.card)}"
    if kind == "discard":
        return f"discard {card(a.discard.card)}"
    if kind == "lay_meld":
        return f"meld {_rummy_cards(a.lay_meld.cards, card)}"
    if kind == "lay_off":
        end = _rummy_enum("LayoffEnd", a.lay_off.end, "LAYOFF_END_")
        return f"lay_off {card(a.lay_off.card)} {a.lay_off.meld} {end}"
    return kind


def describe_content(content: Any, card: Callable[[str], str]) -> str:
    """A Rummy message's content (the member ``rummy`` of an envelope's ``oneof game``) in the
    game's words, one line; ``card`` writes a card."""
    name = content.DESCRIPTOR.name
    if name == "RuleSet":
        return f"rules {content.name} (target {content.target})"
    if name == "Action":
        return _action_words(content, card)
    if name == "State":
        table = " ".join(f"#{m.number}:{m.owner}[{' '.join(card(c) for c in m.cards)}]" for m in content.table) or "—"
        return (f"{_rummy_enum('Phase', content.phase, 'PHASE_')} · hand {_rummy_cards(content.hand, card)} · hands "
                f"{'/'.join(map(str, content.hand_sizes))} · discards {_rummy_cards(content.discard_pile, card)} · "
                f"stock {content.stock_size} · table {table} · scores {'–'.join(map(str, content.scores))}")
    if name == "Event":
        if content.WhichOneof("kind") == "reshuffle":
            return f"reshuffle {content.reshuffle.number}: new upcard {card(content.reshuffle.upcard)}"
        what = _action_words(content.action, card)
        if content.drawn_card:
            what += f" ({card(content.drawn_card)})"
        if content.taken_cards:
            what += f" (took {_rummy_cards(content.taken_cards, card)})"
        return what
    if name == "DealResult":
        hands = "; ".join(f"seat {h.seat} {_rummy_cards(h.cards, card)}" for h in content.hands)
        return (f"{_rummy_enum('DealEndReason', content.reason, 'DEAL_END_REASON_')} · points "
                f"{'–'.join(map(str, content.points))} · left: {hands}")
    from google.protobuf import text_format

    return text_format.MessageToString(content, as_one_line=True).strip()


class RummyWire:
    """Rummy's messages (``games.GameWire``)."""

    def describe(self, content: Any, card: Callable[[str], str]) -> str:
        """The game's content of a message (its ``oneof game`` member) in the game's words."""
        return describe_content(content, card)

    def event_words(self, content: Any, say: Words) -> str:
        """An ``Event``'s content (a seat's move or a reshuffle, as a seat is told it) in the
        presentation's words (optional; ``say`` collects the templates, for a page that translates
        them)."""
        if content.WhichOneof("kind") == "reshuffle":
            return say("the discard pile is shuffled into a new stock; the new upcard is {card}",
                       card=content.reshuffle.upcard)
        taken = tuple(card_from_text(c, "event.taken_cards") for c in content.taken_cards)
        if content.drawn_card:
            taken = (card_from_text(content.drawn_card, "event.drawn_card"),)
        action = _from_rummy_action(content.action)
        return move_words(action, moved_cards(action, taken), say)


    def __init__(self) -> None:
        self._last: tuple[rummy.PublicEvent, int, common_pb2.Event] | None = None
        """The event last told (most seats are told the same one)."""

    def _event(self, ev: rummy.PublicEvent, think_ms: int) -> common_pb2.Event:
        last = self._last
        if last is not None and last[1] == think_ms and last[0] == ev:
            return last[2]
        msg = public_event(ev, think_ms)
        self._last = (ev, think_ms, msg)
        return msg

    def start_fields(self, rules: rummy.RummyRules) -> dict[str, Any]:
        """The rule set, every field filled, in ``rummy_rules``."""
        return {"rummy": rules_to_proto(rules)}

    def rules_from_request(self, request: referee_pb2.CreateMatchRequest) -> rummy.RummyRules | None:
        """The request's rules (``rummy``), or ``None`` if it names none; another game's are refused."""
        which = request.WhichOneof("game")
        if which is None:
            return None
        if which != "rummy":
            raise WireError(f"rules: a rummy match takes its rules in rummy; got {which}")
        return rules_from_proto(request.rummy)

    def new_seat_cache(self) -> SeatCache:
        """A seat's encoded events."""
        return SeatCache()

    def request(
        self, match: games.GameMatch, seat: int, match_id: str, request_id: int, clocks: Sequence[int],
        increment_ms: int, allowance_ms: int, cache: SeatCache,
    ) -> tuple[bytes, Container[rummy.Action]]:
        """The action request, encoded, and the seat's legal actions."""
        assert isinstance(match, RummyMatch)
        state = match.match.view(seat)
        data = action_request_bytes(match_id, request_id, state, _match_points(match.match), clocks, increment_ms,
                                    allowance_ms, cache)
        return data, frozenset(state.legal_actions)

    def action_from_proto(self, msg: common_pb2.Action) -> rummy.Action:
        """The bot's action."""
        return action_from_proto(msg)

    def raw_action(self, msg: common_pb2.Action) -> dict[str, Any]:
        """The action as sent: its serialised bytes, in base64."""
        return {"raw_action": base64.b64encode(msg.SerializeToString(deterministic=True)).decode()}

    def raw_action_from_record(self, record: Mapping[str, Any]) -> common_pb2.Action:
        """The action :meth:`raw_action` recorded."""
        return common_pb2.Action.FromString(base64.b64decode(record["raw_action"]))

    def action_from_text(self, text: str) -> common_pb2.Action:
        """A replay's action text as a message."""
        return action_to_proto(rummy.parse_action(text))

    def deal_started(self, match: games.GameMatch, seat: int, cache: SeatCache | None) -> bot_pb2.DealStarted:
        """The current deal's start (or where it stands, for a reconnecting seat)."""
        assert isinstance(match, RummyMatch)
        state = match.match.view(seat)
        return bot_pb2.DealStarted(
            game_number=state.game_number, deal_number=state.deal_number, dealer=state.dealer,
            rummy=rummy_state(state, _match_points(match.match), cache),
        )

    def tell(
        self, match: games.GameMatch, happening: games.Happening, seat: int, think_ms: int, cache: SeatCache
    ) -> tuple[str, Any] | None:
        """Each step as the seat may see it."""
        assert isinstance(match, RummyMatch)
        if isinstance(happening, games.Acted):
            step, moved = happening.step
            return "event", self._event(rummy.seat_event(step, moved, seat), think_ms)
        if isinstance(happening, games.Chance):
            return "event", reshuffle_event(happening.step.number, happening.step.upcard)
        if isinstance(happening, games.DealOver):
            deal, outcome = happening.step
            return "deal_finished", bot_pb2.DealFinished(
                result=deal_result(deal, outcome, happening.record, happening.game_over))
        if isinstance(happening, games.GameOver):
            return "game_finished", bot_pb2.GameFinished(result=game_result(happening.step))
        return "deal_started", self.deal_started(match, seat, cache)

    def show(self, match: games.GameMatch, happening: games.Happening, match_id: str, think_ms: int) -> bytes:
        """Each step as a spectator sees it, serialised."""
        assert isinstance(match, RummyMatch)
        kind: dict[str, Any]
        if isinstance(happening, games.Acted):
            step, moved = happening.step
            kind = {"event": public_event(rummy.seat_event(step, moved, None), think_ms)}
        elif isinstance(happening, games.Chance):
            kind = {"event": reshuffle_event(happening.step.number, happening.step.upcard)}
        elif isinstance(happening, games.DealOver):
            deal, outcome = happening.step
            kind = {"deal_finished": deal_result(deal, outcome, happening.record, happening.game_over)}
        elif isinstance(happening, games.GameOver):
            kind = {"game_finished": game_result(happening.step)}
        else:
            pub = match.match.view(None)
            kind = {"deal_started": referee_pb2.SpectatorDeal(
                game_number=pub.game_number, deal_number=pub.deal_number, dealer=pub.dealer,
                rummy=rummy_state(pub, _match_points(match.match)),
            )}
        return referee_pb2.SpectatorEvent(match_id=match_id, **kind).SerializeToString(deterministic=True)

    def game_results(self, outcome: rummy.MatchOutcome | None) -> list[common_pb2.GameResult]:
        """Every game of the outcome."""
        return [game_result(g) for g in outcome.games] if outcome is not None else []

    def outcome_from_result(self, result: common_pb2.MatchResult,
                            termination_normal: bool) -> rummy.MatchOutcome | None:
        """The games a remote referee reported, as the engine's outcome."""
        played = tuple(
            rummy.GameResult(number=g.game_number, totals=tuple(g.final_totals), places=tuple(g.places),
                             deals=g.rummy.deals, finished=g.rummy.finished, forfeited=tuple(g.rummy.forfeited))
            for g in result.games
        )
        if not played:
            return None
        points = tuple(int(p) for p in result.points) or tuple(int(t) for t in result.total_points)
        return rummy.MatchOutcome(games=played, points=points,
                                  places=tuple(result.places) or rummy.places(points))


SAMPLE_BOTS = (*(games.SampleBot(n, ("{python}", "-m", f"sample_bots.rummy_{n}_bot"), level)
                 for n, level in (("random", "easy"), ("hoarder", "medium"), ("greedy", "hard"))),
               games.SampleBot("mc", ("{python}", "-m", "sample_bots.mc_bot"), "hard"))
"""Rummy's sample bots (gin-arena's ``sample_bots`` package): the demo's, ``arena play``'s and the web tables'.
``mc`` is the reference bot of docs/bots.md (the same process plays Gin)."""
_ENGINE, _CONVERSION = RummyGame(), RummyWire()
_CAPABILITIES = games.Capabilities(
    knows_cards=_ENGINE, describe=_CONVERSION.describe, event_words=_CONVERSION.event_words,
    deal_end_view=PRESENTATION.deal_end_view, result_words=RESULT_WORDS)
REGISTERED = games.Registered(_ENGINE, _CONVERSION, PRESENTATION, games.catalogs_in("referee.rummy"),
                              bots=SAMPLE_BOTS, demo=games.Demo(seats=4, games=8, opponent="greedy"),
                              help=games.catalogs_in("referee.rummy", "help"), capabilities=_CAPABILITIES,
                              display_name=T("Rummy"))
"""Rummy, as ``referee.games`` finds it."""
PLUGIN = games.GamePlugin(plugin_api=games.PLUGIN_API, load=lambda: REGISTERED)
"""What this game's entry point names (pyproject.toml's ``[project.entry-points."gin_arena.games"]``)."""

