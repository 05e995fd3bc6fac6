"""``arena replay`` of a rummy match: the positions and the summary as text, for n seats.

A position shows the last move, every hand (complete information), the table's melds by owner
with their layoffs, the discard row and the stock; a deal's end every hand left, its value, the
deal points and the game totals; a game's end the totals and places.
"""

from __future__ import annotations

from google.protobuf import text_format

from arena.replays.base import Style
from arena.replays.page_parts import plural
from arena.replays.rummy_model import RummyDealView, RummyMatchView, RummyPosition, end_text, game_end_text
from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import rummy_pb2
from referee.replays import FaultRecord
from referee.rummy import TableMeld


def _rules_text(view: RummyMatchView) -> str:
    r = view.rules
    parts = [r.name, f"target {r.target}"]
    if r.games > 1:
        parts.append(f"{r.games} games")
    return ", ".join(parts)


def header_text(view: RummyMatchView) -> str:
    """The match in one line: players by seat, rules, time control, fault policy."""
    seats = ", ".join(f"{n} (seat {s})" for s, n in enumerate(view.players))
    h = view.header
    return (f"Match {view.match_id} (rummy, {len(view.players)} seats): {seats} · {_rules_text(view)} · "
            f"{h.time_control} · faults: {h.fault_policy}")


def _scores(view: RummyMatchView, scores: tuple[int, ...]) -> str:
    return ", ".join(f"{view.seat_name(s)} {v}" for s, v in enumerate(scores))


def meld_text(view: RummyMatchView, meld: TableMeld, style: Style) -> str:
    """A table meld: its number, owner, cards, and who laid off which card."""
    offs = [p for p in meld.placed if p.layoff]
    laid = "; laid off " + ", ".join(f"{style.card(p.card)} by {view.seat_name(p.seat)}" for p in offs) if offs else ""
    return f"#{meld.number} {style.meld(meld)}{laid}"


def _last_text(view: RummyMatchView, pos: RummyPosition, style: Style) -> str:
    last = pos.last
    if last is None:
        return f"Dealt: upcard {style.card(pos.discard_pile[-1]) if pos.discard_pile else '—'}"
    cards = style.cards(last.cards) if last.cards else ""
    words = {
        "draw_stock": f"draws {cards} from the stock", "take_discard": f"takes {cards} from the discards",
        "meld": f"lays the meld {cards}",
        "discard": f"discards {cards}", "call_stop": "calls stop", "decline_stop": "declines to call stop",
    }.get(last.kind, last.action)
    if last.kind == "lay_off":
        _, _, number, end = last.action.split()
        words = f"lays off {cards} on meld #{number} ({end})"
    sub = " (substitute)" if last.substitute else ""
    reshuffle = " · the discard pile is shuffled into a new stock" if last.reshuffled else ""
    clocks = "/".join(str(c) for c in last.clocks)
    return (f"Last: {view.seat_name(last.seat)}{sub} {words} · {last.think_us / 1000:.1f} ms · clocks {clocks} ms"
            f"{reshuffle}")


def _fault_text(view: RummyMatchView, rec: FaultRecord) -> str:
    return f"Fault: {view.seat_name(rec.seat)} — {rec.termination}: {rec.detail} (policy {rec.policy})"


def _seat_lines(view: RummyMatchView, pos: RummyPosition, style: Style, width: int) -> list[str]:
    deal = view.deal_of(pos)
    out = []
    for seat, hand in enumerate(pos.hands):
        tags = " (dealer)" if deal.dealer == seat else ""
        marker = f" ▶ to move ({pos.phase})" if pos.to_move == seat else ""
        out.append(f"  {view.seat_name(seat):<{width}}{tags:<9} {style.cards(hand)} ({len(hand)}){marker}")
    return out


def _end_lines(view: RummyMatchView, deal: RummyDealView, style: Style, width: int) -> list[str]:
    end = deal.end
    assert end is not None
    c = end.content
    lines = [style.bold("Deal over: ") + end_text(view, end)]
    for seat, hand in enumerate(c.hands):
        lines.append(f"  {view.seat_name(seat):<{width}} left {style.cards(hand)} (value {c.hand_values[seat]}) · "
                     f"table {c.table_points[seat]} · deal points {c.points[seat]}")
    lines.append(f"  game totals after the deal: {_scores(view, end.scores)}")
    return lines


def render_position(view: RummyMatchView, pos: RummyPosition, style: Style | None = None) -> str:
    """One position of the match, as a block of text."""
    style = style or Style()
    deal = view.deal_of(pos)
    width = max(len(n) for n in view.players)
    last_step = len(deal.positions) - 1
    lines = [
        style.bold(f"Game {deal.game}, deal {deal.number}") + f" (deal {deal.index + 1} of {len(view.deals)} in the "
        f"match) · move {pos.step} of {last_step} · position {pos.index} of {len(view.positions) - 1}",
        f"Dealer {view.seat_name(deal.dealer)} · totals {_scores(view, deal.scores_before)}",
        _last_text(view, pos, style),
        *_seat_lines(view, pos, style, width),
        "  table: " + (" · ".join(f"{view.seat_name(m.owner)} {meld_text(view, m, style)}" for m in pos.table)
                       or "no melds"),
        f"  discard pile (top last): {style.cards(pos.discard_pile)} · stock {pos.stock_size}",
    ]
    if pos.must_use is not None:
        lines.append(f"  the taken {style.card(pos.must_use)} must be used first")
    if pos.stopped is not None:
        lines.append(f"  stop: {style.card(pos.stopped)}")
    lines.extend(_fault_text(view, rec) for rec in view.faults_at.get(pos.index, []))
    if pos.step == last_step and deal.end is not None:
        lines.extend(_end_lines(view, deal, style, width))
    if pos.step == last_step and deal.game_end is not None:
        g = deal.game_end
        lines.append(style.bold(f"Game {g.game} over: ") + game_end_text(view, g))
    if pos.index == len(view.positions) - 1:
        lines.append(style.bold("Match over: ") + view.outcome_text())
    return "\n".join(lines)


def render_summary(view: RummyMatchView, style: Style | None = None) -> str:
    """The match in a few lines: one per deal."""
    lines = [header_text(view), f"{plural(len(view.deals), 'deal')}, {plural(len(view.positions), 'position')}, "
             f"final hash {view.final_hash}"]
    for deal in view.deals:
        res = end_text(view, deal.end) if deal.end else "not finished"
        sc = f" → {'–'.join(str(s) for s in deal.end.scores)}" if deal.end else ""
        lines.append(f"  deal {deal.index + 1:>3} (game {deal.game}.{deal.number}, {len(deal.positions) - 1} moves): "
                     f"{res}{sc}")
        lines.extend("    " + _fault_text(view, rec) for rec in deal.faults)
        if deal.game_end is not None:
            lines.append(f"  game {deal.game_end.game} over: {game_end_text(view, deal.game_end)}")
    if not view.deals:
        lines.extend("  " + _fault_text(view, rec) for rec in view.faults)
    lines.append("Result: " + view.outcome_text() + f" — {view.detail}")
    lines.append("Step through it: arena replay REPLAY (on a terminal), --step K, --deal D, --all, --html OUT")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# what a seat was sent (``arena replay REPLAY --seat N``)
# ----------------------------------------------------------------------------------------------
def _enum(enum: str, number: int, prefix: str) -> str:
    values = rummy_pb2.DESCRIPTOR.enum_types_by_name[enum].values_by_number
    return values[number].name.removeprefix(prefix).lower() if number in values else str(number)


def action_text(a: rummy_pb2.Action, st: Style) -> str:
    """A rummy action of the protocol in the engine's words (``lay_off 7h 2 high``)."""
    kind = a.WhichOneof("kind") or "?"
    if kind == "take_discard":
        return f"take_discard {st.card(a.take_discard.card)}"
    if kind == "discard":
        return f"discard {st.card(a.discard.card)}"
    if kind == "lay_meld":
        return f"meld {st.cards(list(a.lay_meld.cards))}"
    if kind == "lay_off":
        end = _enum("LayoffEnd", a.lay_off.end, "LAYOFF_END_")
        return f"lay_off {st.card(a.lay_off.card)} {a.lay_off.meld} {end}"
    return kind


def _state_text(s: rummy_pb2.State, st: Style) -> str:
    table = " ".join(f"#{m.number}:{m.owner}[{' '.join(st.card(c) for c in m.cards)}]" for m in s.table) or "—"
    return (f"{_enum('Phase', s.phase, 'PHASE_')} · hand {st.cards(list(s.hand))} · hands "
            f"{'/'.join(map(str, s.hand_sizes))} · discards {st.cards(list(s.discard_pile))} · stock {s.stock_size} · "
            f"table {table} · scores {'–'.join(map(str, s.scores))}")


def _event_text(e: common_pb2.Event, st: Style) -> str:
    r = e.rummy
    if r.WhichOneof("kind") == "reshuffle":
        return f"reshuffle {r.reshuffle.number}: new upcard {st.card(r.reshuffle.upcard)}"
    what = action_text(r.action, st)
    if r.drawn_card:
        what += f" ({st.card(r.drawn_card)})"
    if r.taken_cards:
        what += f" (took {st.cards(list(r.taken_cards))})"
    return f"seat {e.seat} {what} · {e.think_ms} ms"


def message_line(i: int, msg: bot_pb2.RefereeMessage, style: Style | None = None) -> str:
    """One message of a rummy match to a seat, in one line with its key fields."""
    st = style or Style()
    kind = msg.WhichOneof("kind")
    head = f"#{i:<4} {kind}"
    if kind == "match_started":
        m = msg.match_started
        return (f"{head}: match {m.match_id} · you are seat {m.seat} · players {', '.join(m.player_names)} · rules "
                f"{m.rummy.name} (target {m.rummy.target}) · {m.time_control.text} · commitment "
                f"{m.seed_commitment.hex()}")
    if kind == "deal_started":
        d = msg.deal_started
        state = _state_text(d.rummy, st)
        return f"{head}: game {d.game_number} deal {d.deal_number} · dealer {d.dealer} · {state}"
    if kind == "action_request":
        r = msg.action_request
        legal = ", ".join(action_text(a.rummy, st) for a in r.legal_actions)
        return (f"{head}: id {r.request_id} · {_state_text(r.rummy, st)} · {r.time_for_move_ms} ms · "
                f"legal: {legal}")
    if kind == "event":
        return f"{head}: {_event_text(msg.event, st)}"
    if kind == "deal_finished":
        res = msg.deal_finished.result
        rr = res.rummy
        hands = "; ".join(f"seat {h.seat} {st.cards(list(h.cards))}" for h in rr.hands)
        return (f"{head}: game {res.game_number} deal {res.deal_number} · "
                f"{_enum('DealEndReason', rr.reason, 'DEAL_END_REASON_')} · winner {res.winner} · points "
                f"{'–'.join(map(str, rr.points))} · scores {'–'.join(map(str, res.scores_after))} · left: {hands}"
                + (" · game over" if res.game_over else ""))
    if kind == "game_finished":
        g = msg.game_finished.result
        return (f"{head}: game {g.game_number} · totals {'–'.join(map(str, g.final_totals))} · places "
                f"{'–'.join(map(str, g.places))}")
    return f"{head}: {text_format.MessageToString(msg, as_one_line=True)}"
