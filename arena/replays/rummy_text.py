"""``arena replay`` of a rummy match: the positions and the summary as text, for n seats.

A position shows the last move, every hand (complete information), the table's melds by owner
with their layoffs, the discard row and the stock; a deal's end every hand left, its value, the
deal points and the game totals; a game's end the totals and places.
"""

from __future__ import annotations

from arena.replays.base import Style
from arena.replays.rummy_model import RummyDealView, RummyMatchView, RummyPosition, end_text, game_end_text
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
    lines = [header_text(view), f"{len(view.deals)} deals, {len(view.positions)} positions, final hash "
             f"{view.final_hash}"]
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
