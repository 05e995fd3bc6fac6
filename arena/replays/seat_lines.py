"""``arena replay REPLAY --seat N``: one line per message a seat was sent, in its game's words.

These lines read the messages of protocol v1, where each game's fields sit in the shared
messages; they are per game until protocol v2 puts a game's content behind one ``oneof game``
(then each game's wire describes its own messages). A game without lines here is printed in
protobuf's one-line text format.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from google.protobuf import text_format

from arena.replays.base import Style
from gin_arena.v1 import bot_pb2, game_pb2

_KIND_NAMES = {v.number: v.name.removeprefix("ACTION_KIND_").lower()
               for v in game_pb2.DESCRIPTOR.enum_types_by_name["ActionKind"].values}
_OUTCOME_NAMES = {v.number: v.name.removeprefix("DEAL_OUTCOME_").lower()
                  for v in game_pb2.DESCRIPTOR.enum_types_by_name["DealOutcome"].values}
_PHASE_NAMES = {v.number: v.name.removeprefix("PHASE_").lower()
                for v in game_pb2.DESCRIPTOR.enum_types_by_name["Phase"].values}



def _action_text(a: game_pb2.Action) -> str:
    kind = _KIND_NAMES.get(a.kind, str(a.kind))
    return f"{kind} {a.card}" if a.card else kind


def _pair(values: Sequence[int]) -> str:
    return "–".join(str(v) for v in values)


def message_line(i: int, msg: bot_pb2.RefereeMessage, style: Style | None = None) -> str:
    """One message to a seat, in one line with its key fields."""
    st = style or Style()
    kind = msg.WhichOneof("kind")
    head = f"#{i:<4} {kind}"
    if kind == "match_started":
        m = msg.match_started
        return (f"{head}: match {m.match_id} · you are seat {m.seat} · players {', '.join(m.player_names)} · rules "
                f"{m.rules.name} (target {m.rules.target}) · {m.time_control.text} · commitment "
                f"{m.seed_commitment.hex()}")
    if kind == "deal_started":
        d = msg.deal_started
        s = d.state
        return (f"{head}: game {d.game_number} deal {d.deal_number} · dealer {d.dealer} · hand {st.cards(list(s.hand))}"
                f" · upcard {st.card(s.first_upcard) if s.first_upcard else '—'} · stock {s.stock_size}")
    if kind == "action_request":
        r = msg.action_request
        s = r.state
        top = st.card(s.discard_pile[-1]) if s.discard_pile else "—"
        legal = ", ".join(_action_text(a) for a in r.legal_actions)
        return (f"{head}: id {r.request_id} · {_PHASE_NAMES.get(s.phase, s.phase)} · hand {st.cards(list(s.hand))} "
                f"(deadwood {s.my_deadwood}) · discard top {top} · stock {s.stock_size} · scores {_pair(s.scores)} · "
                f"{r.time_for_move_ms} ms · legal: {legal}")
    if kind == "event":
        e = msg.event
        if e.reshuffled:
            return f"{head}: the discard pile is shuffled into a new stock · stock {e.stock_size_after}"
        what = _KIND_NAMES.get(e.kind, str(e.kind))
        card = st.card(e.card) if e.card else ("(hidden)" if what in ("draw_stock", "knock") else "")
        return f"{head}: seat {e.seat} {what} {card}".rstrip() + f" · stock {e.stock_size_after} · {e.think_ms} ms"
    if kind == "deal_finished":
        res = msg.deal_finished.result
        hands = "; ".join(
            f"seat {h.seat} " + " ".join("[" + " ".join(st.card(c) for c in m.cards) + "]" for m in h.melds)
            + (f" deadwood {st.cards(list(h.deadwood_cards))} ({h.deadwood})" if h.deadwood_cards else " deadwood 0")
            + (f" laid off {st.cards(list(h.laid_off))}" if h.laid_off else "")
            for h in res.hands)
        knock = f" · knock discard {st.card(res.knock_discard)}" if res.knock_discard else ""
        return (f"{head}: game {res.game_number} deal {res.deal_number} · "
                f"{_OUTCOME_NAMES.get(res.outcome, res.outcome)} · knocker {res.knocker} · winner {res.winner} · "
                f"{res.points} points · scores {_pair(res.scores_after)}{knock}"
                + (f" · {hands}" if hands else "") + (" · game over" if res.game_over else ""))
    if kind == "game_finished":
        g = msg.game_finished.result
        return (f"{head}: game {g.game_number} · winner {g.winner} · totals {_pair(g.final_totals)} · deal points "
                f"{_pair(g.deal_points)}" + (" · shutout" if g.shutout else ""))
    return f"{head}: {text_format.MessageToString(msg, as_one_line=True)}"



def _enum(enum: str, number: int, prefix: str) -> str:
    values = game_pb2.DESCRIPTOR.enum_types_by_name[enum].values_by_number
    return values[number].name.removeprefix(prefix).lower() if number in values else str(number)


def action_text(a: game_pb2.RummyAction, st: Style) -> str:
    """A rummy action of the protocol in the engine's words (``lay_off 7h 2 high``)."""
    kind = a.WhichOneof("kind") or "?"
    if kind == "take_discard":
        return f"take_discard {st.card(a.take_discard.card)}"
    if kind == "discard":
        return f"discard {st.card(a.discard.card)}"
    if kind == "lay_meld":
        return f"meld {st.cards(list(a.lay_meld.cards))}"
    if kind == "lay_off":
        end = _enum("RummyLayoffEnd", a.lay_off.end, "RUMMY_LAYOFF_END_")
        return f"lay_off {st.card(a.lay_off.card)} {a.lay_off.meld} {end}"
    return kind


def _state_text(s: game_pb2.RummyState, st: Style) -> str:
    table = " ".join(f"#{m.number}:{m.owner}[{' '.join(st.card(c) for c in m.cards)}]" for m in s.table) or "—"
    return (f"{_enum('RummyPhase', s.phase, 'RUMMY_PHASE_')} · hand {st.cards(list(s.hand))} · hands "
            f"{'/'.join(map(str, s.hand_sizes))} · discards {st.cards(list(s.discard_pile))} · stock {s.stock_size} · "
            f"table {table} · scores {'–'.join(map(str, s.scores))}")


def _event_text(e: game_pb2.PublicEvent, st: Style) -> str:
    r = e.rummy
    if r.WhichOneof("kind") == "reshuffle":
        return f"reshuffle {r.reshuffle.number}: new upcard {st.card(r.reshuffle.upcard)}"
    what = action_text(r.action, st)
    if r.drawn_card:
        what += f" ({st.card(r.drawn_card)})"
    if r.taken_cards:
        what += f" (took {st.cards(list(r.taken_cards))})"
    return f"seat {e.seat} {what} · {e.think_ms} ms"


def rummy_message_line(i: int, msg: bot_pb2.RefereeMessage, style: Style | None = None) -> str:
    """One message of a rummy match to a seat, in one line with its key fields."""
    st = style or Style()
    kind = msg.WhichOneof("kind")
    head = f"#{i:<4} {kind}"
    if kind == "match_started":
        m = msg.match_started
        return (f"{head}: match {m.match_id} · you are seat {m.seat} · players {', '.join(m.player_names)} · rules "
                f"{m.rummy_rules.name} (target {m.rummy_rules.target}) · {m.time_control.text} · commitment "
                f"{m.seed_commitment.hex()}")
    if kind == "deal_started":
        d = msg.deal_started
        state = _state_text(d.rummy_state, st)
        return f"{head}: game {d.game_number} deal {d.deal_number} · dealer {d.dealer} · {state}"
    if kind == "action_request":
        r = msg.action_request
        legal = ", ".join(action_text(a.rummy, st) for a in r.legal_actions)
        return (f"{head}: id {r.request_id} · {_state_text(r.rummy_state, st)} · {r.time_for_move_ms} ms · "
                f"legal: {legal}")
    if kind == "event":
        return f"{head}: {_event_text(msg.event, st)}"
    if kind == "deal_finished":
        res = msg.deal_finished.result
        rr = res.rummy
        hands = "; ".join(f"seat {h.seat} {st.cards(list(h.cards))}" for h in rr.hands)
        return (f"{head}: game {res.game_number} deal {res.deal_number} · "
                f"{_enum('RummyDealEndReason', rr.reason, 'RUMMY_DEAL_END_REASON_')} · winner {res.winner} · points "
                f"{'–'.join(map(str, rr.points))} · scores {'–'.join(map(str, res.scores_after))} · left: {hands}"
                + (" · game over" if res.game_over else ""))
    if kind == "game_finished":
        g = msg.game_finished.result
        return (f"{head}: game {g.game_number} · totals {'–'.join(map(str, g.final_totals))} · places "
                f"{'–'.join(map(str, g.places))}")
    return f"{head}: {text_format.MessageToString(msg, as_one_line=True)}"


def plain_message_line(i: int, msg: bot_pb2.RefereeMessage, style: Style | None = None) -> str:
    """One message of any game, in protobuf's one-line text format."""
    return f"#{i:<4} {msg.WhichOneof('kind')}: {text_format.MessageToString(msg, as_one_line=True)}"


LINES: dict[str, Callable[[int, bot_pb2.RefereeMessage, Style | None], str]] = {
    "gin": message_line, "rummy": rummy_message_line,
}
"""The line writer of each game whose v1 fields it knows, by the replay header's ``game``."""


def line_for(game: str) -> Callable[[int, bot_pb2.RefereeMessage, Style | None], str]:
    """The line writer for a game's messages (:func:`plain_message_line` for one not known here)."""
    return LINES.get(game, plain_message_line)
