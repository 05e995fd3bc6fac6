"""``arena replay``: look at a recorded match.

* ``arena replay REPLAY`` — on a terminal, step through the match deal by deal, move by move
  (n/space/→ next, p/← previous, d/↓ next deal, u/↑ previous deal, g first, G last, q quit);
  both hands are shown sorted with their melds grouped, the discard pile, the stock, and at the
  end of each deal the melds, layoffs, points and scores. Not on a terminal (or with
  ``--step K`` / ``--deal D`` / ``--all``) positions are printed; by default a summary.
* ``arena replay REPLAY --seat N`` — exactly what seat N was sent, message by message (re-derived
  by playing the replay again through the referee); ``--raw`` prints protobuf text format.
* ``arena replay REPLAY --html OUT`` — one self-contained HTML page (see ``arena.replays.html``).

Positions are rebuilt by playing the recorded actions through the rules engine; ``arena audit``
is what checks that the replay is genuine. A rummy match (2–6 seats) is shown in its own words
(:mod:`arena.replays.rummy_text`): every hand, the table's melds by owner, the discard row.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import struct
import sys
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any, TextIO

from google.protobuf import text_format

from arena.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from arena.replays import rummy_text, steps
from arena.replays.base import Style as Style
from arena.replays.gin_model import DealView, MatchView, Position, end_text, shutout
from arena.replays.model import AnyView, ReplayModelError, load
from arena.replays.page_parts import plural
from arena.replays.rummy_model import RummyMatchView
from gin_arena.v1 import bot_pb2, game_pb2
from referee import ReplayError, resimulate
from referee.replays import FaultRecord, Replay, read_replay

STORY_KINDS = ("match_started", "deal_started", "action_request", "event", "deal_finished", "game_finished")

_KIND_NAMES = {v.number: v.name.removeprefix("ACTION_KIND_").lower()
               for v in game_pb2.DESCRIPTOR.enum_types_by_name["ActionKind"].values}
_OUTCOME_NAMES = {v.number: v.name.removeprefix("DEAL_OUTCOME_").lower()
                  for v in game_pb2.DESCRIPTOR.enum_types_by_name["DealOutcome"].values}
_PHASE_NAMES = {v.number: v.name.removeprefix("PHASE_").lower()
                for v in game_pb2.DESCRIPTOR.enum_types_by_name["Phase"].values}


# ----------------------------------------------------------------------------------------------
# positions as text
# ----------------------------------------------------------------------------------------------
def _rules_text(view: MatchView) -> str:
    r = view.rules
    parts = [r.name]
    if r.knock == "limit" and r.knock_limit != 10:
        parts.append(f"knock ≤ {r.knock_limit}")
    parts.append(f"target {r.target}")
    if r.games > 1:
        parts.append(f"{r.games} games")
    if r.match_target:
        parts.append(f"match to {r.match_target}")
    if r.stock_exhausted != "void":
        parts.append(f"stock exhausted: {r.stock_exhausted}")
    return ", ".join(parts)


def header_text(view: MatchView) -> str:
    names = view.players
    h = view.header
    return (f"Match {view.match_id}: {names[0]} (seat 0) vs {names[1]} (seat 1) · {_rules_text(view)} · "
            f"{h.time_control} · faults: {h.fault_policy}")


def _seat_line(view: MatchView, pos: Position, seat: int, style: Style, width: int) -> str:
    names = view.players
    a = pos.arranged(seat)
    groups = [style.meld(m) for m in a.melds]
    loose = style.cards(a.deadwood_cards) if a.deadwood_cards else ""
    hand = " ".join([*groups, loose]).strip()
    marker = ""
    if pos.to_move == seat:
        marker = f" ▶ to move ({pos.phase})"
    deal = view.deal_of(pos)
    tags = " (dealer)" if deal.dealer == seat else ""
    return f"  {names[seat]:<{width}}{tags:<9} {hand}  · deadwood {a.deadwood}{marker}"


def _last_text(view: MatchView, pos: Position, style: Style) -> str:
    last = pos.last
    if last is None:
        deal = view.deal_of(pos)
        return f"Dealt: upcard {style.card(deal.first_upcard)}"
    names = view.players
    kind = last.kind
    card = style.card(last.card) if last.card else ""
    words = {
        "pass": "passes the upcard", "take_upcard": f"takes the upcard {card}",
        "draw_stock": f"draws {card} from the stock", "draw_discard": f"takes {card} from the discard pile",
        "discard": f"discards {card}", "knock": f"knocks, discarding {card} face down",
        "big_gin": "declares big gin",
    }.get(kind, last.action)
    who = names[last.seat]
    sub = " (substitute)" if last.substitute else ""
    reshuffle = " · the discard pile is shuffled into a new stock" if last.reshuffled else ""
    clocks = "/".join(str(c) for c in last.clocks)
    return f"Last: {who}{sub} {words} · {last.think_us / 1000:.1f} ms · clocks {clocks} ms{reshuffle}"


def _fault_text(view: MatchView | steps.MatchView, rec: FaultRecord) -> str:
    return f"Fault: {view.seat_name(rec.seat)} — {rec.termination}: {rec.detail} (policy {rec.policy})"


def _seat_showdown_lines(view: MatchView, deal: DealView, style: Style, width: int) -> list[str]:
    end = deal.end
    assert end is not None
    out = []
    for seat, sd in enumerate(end.seats):
        melds = " ".join(style.meld(m) for m in sd.melds) or "no melds"
        laid = f" · laid off {style.cards(sd.laid_off)}" if sd.laid_off else ""
        dead = style.cards(sd.deadwood_cards) if sd.deadwood_cards else "none"
        knock = ""
        if end.knocker == seat and end.knock_discard is not None:
            knock = f" · knock discard {style.card(end.knock_discard)}"
        out.append(f"  {view.players[seat]:<{width}} melds {melds}{laid} · deadwood {dead} ({sd.deadwood}){knock}")
    return out


def render_position(view: MatchView, pos: Position, style: Style | None = None) -> str:
    """One position of the match, as a block of text."""
    style = style or Style()
    deal = view.deal_of(pos)
    names = view.players
    width = max(len(n) for n in names)
    last_step = len(deal.positions) - 1
    scores = deal.scores_before
    lines = [
        style.bold(f"Game {deal.game}, deal {deal.number}") + f" (deal {deal.index + 1} of {len(view.deals)} in the "
        f"match) · move {pos.step} of {last_step} · position {pos.index} of {len(view.positions) - 1}",
        f"Dealer {names[deal.dealer]} · knock limit "
        f"{'gin only' if deal.knock_limit is None else deal.knock_limit}"
        f"{' · spade upcard: doubled' if deal.doubled else ''}"
        f" · score {names[0]} {scores[0]}, {names[1]} {scores[1]} · games won {deal.games_won_before[0]}–"
        f"{deal.games_won_before[1]}",
        _last_text(view, pos, style),
        _seat_line(view, pos, 0, style, width),
        _seat_line(view, pos, 1, style, width),
        f"  discard pile (top last): {style.cards(pos.discard_pile)} · stock {pos.stock_size}",
    ]
    for rec in view.faults_at.get(pos.index, []):
        lines.append(_fault_text(view, rec))
    if pos.step == last_step and deal.end is not None:
        end = deal.end
        lines.append(style.bold("Deal over: ") + end_text(view, end))
        if end.kind != "dead":
            lines.extend(_seat_showdown_lines(view, deal, style, width))
        lines.append(f"  scores after the deal: {names[0]} {end.scores[0]}, {names[1]} {end.scores[1]}")
    if pos.step == last_step and deal.game_end is not None:
        g = deal.game_end
        who = view.seat_name(g.winner)
        extra = " · shutout" if shutout(g) else ""
        extra += f" · forfeit by {view.seat_name(g.forfeit)}" if g.forfeit is not None else ""
        totals = g.totals
        lines.append(style.bold(f"Game {g.game} over: ") + f"{who} wins · totals {names[0]} {totals[0]}, "
                     f"{names[1]} {totals[1]}{extra}")
    if pos.index == len(view.positions) - 1:
        lines.append(style.bold("Match over: ") + view.outcome_text())
    return "\n".join(lines)


def render_summary(view: MatchView, style: Style | None = None) -> str:
    """The match in a few lines: one per deal."""
    style = style or Style()
    lines = [header_text(view), f"{plural(len(view.deals), 'deal')}, {plural(len(view.positions), 'position')}, "
             f"final hash {view.final_hash}"]
    for deal in view.deals:
        res = end_text(view, deal.end) if deal.end else "not finished"
        sc = f" → {deal.end.scores[0]}–{deal.end.scores[1]}" if deal.end else ""
        lines.append(f"  deal {deal.index + 1:>3} (game {deal.game}.{deal.number}, {len(deal.positions) - 1} moves): "
                     f"{res}{sc}")
        for rec in deal.faults:
            lines.append("    " + _fault_text(view, rec))
        if deal.game_end is not None:
            g = deal.game_end
            lines.append(f"  game {g.game} over: {view.seat_name(g.winner)} wins, totals "
                         f"{g.totals[0]}–{g.totals[1]}")
    if not view.deals:
        for rec in view.faults:
            lines.append("  " + _fault_text(view, rec))
    lines.append("Result: " + view.outcome_text() + f" — {view.detail}")
    lines.append("Step through it: arena replay REPLAY (on a terminal), --step K, --deal D, --all, --html OUT")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# any game: its presentation's descriptions as text (arena.replays.steps)
# ----------------------------------------------------------------------------------------------
def shown_header(view: steps.MatchView) -> str:
    """The match in one line: its game, players by seat, rules, time control, fault policy."""
    seats = ", ".join(f"{n} (seat {s})" for s, n in enumerate(view.players))
    h = view.header
    return (f"Match {view.match_id} ({view.game}, {plural(len(view.players), 'seat')}): {seats} · {view.rules_text}"
            f" · {h.time_control} · faults: {h.fault_policy}")


def _hand_text(hand: Any, style: Style) -> str:
    groups = [style.group(g) for g in hand["groups"]]
    loose = style.cards(hand["loose"]) if hand["loose"] else ""
    return " ".join([*groups, loose]).strip() or "—"


def _move_text(view: steps.MatchView, pos: steps.Position, style: Style) -> str:
    shown = pos.shown
    last = shown.get("last")
    if pos.move is None or last is None:
        piles = [f"{p['name']} {style.card(p['cards'][-1]) if p.get('cards') else p['count']}"
                 for p in shown["piles"]]
        return "Dealt" + (": " + ", ".join(piles) if piles else "")
    m = pos.move
    text = last["text"]
    for card in last.get("cards") or ():
        text = text.replace(str(card), style.card(card))
    sub = " (substitute)" if m.substitute else ""
    reshuffle = " · the discard pile is shuffled into a new stock" if pos.reshuffled else ""
    clocks = "/".join(str(c) for c in m.clocks)
    return (f"Last: {view.seat_name(m.seat)}{sub} {text} · {m.think_us / 1000:.1f} ms · clocks {clocks} ms"
            f"{reshuffle}")


def _shown_seat_lines(view: steps.MatchView, shown: Any, style: Style, width: int) -> list[str]:
    out = []
    for s in shown["seats"]:
        tags = " (dealer)" if s["dealer"] else ""
        hand = _hand_text(s["hand"], style) if s["hand"] is not None else f"{plural(s['count'], 'card')} (hidden)"
        notes = "".join(f" · {n}" for n in s["notes"])
        marker = f" ▶ to move ({shown['phase']})" if s["to_move"] else ""
        out.append(f"  {view.seat_name(s['seat']):<{width}}{tags:<9} {hand}{notes}{marker}")
    return out


def _table_line(view: steps.MatchView, shown: Any, style: Style) -> str | None:
    if not shown["table"]:
        return None
    parts = []
    for t in shown["table"]:
        owner = f"{view.seat_name(t['owner'])} " if t.get("owner") is not None else ""
        by = t.get("placed_by") or []
        offs = [f"{style.card(c)} by {view.seat_name(b)}" for c, b in zip(t["cards"], by, strict=False)
                if t.get("owner") is not None and b != t["owner"]]
        laid = "; laid off " + ", ".join(offs) if offs else ""
        parts.append(f"{owner}{t['label']} {style.group(t['cards'])}{laid}")
    return "  table: " + " · ".join(parts)


def _pile_line(shown: Any, style: Style) -> str | None:
    piles = []
    for p in shown["piles"]:
        if p.get("cards") is None:
            piles.append(f"{p['name']} {p['count']}")
        else:
            piles.append(f"{p['name']} (top last): {style.cards(p['cards'])}")
    return "  " + " · ".join(piles) if piles else None


def _end_lines(view: steps.MatchView, deal: steps.DealView, style: Style, width: int) -> list[str]:
    end = deal.end_shown
    lines = [style.bold("Deal over: ") + (end["text"] if end is not None else "")]
    if end is not None:
        for s in end["seats"]:
            parts = [" ".join(style.group(g) for g in s["groups"])] if s["groups"] else []
            if s["laid_off"]:
                parts.append(f"laid off {style.cards(s['laid_off'])}")
            if s["loose"]:
                parts.append(f"left {style.cards(s['loose'])}")
            parts.extend(s["notes"])
            lines.append(f"  {view.seat_name(s['seat']):<{width}} " + " · ".join(parts))
        if end.get("points"):
            lines.append("  deal points: " + ", ".join(f"{view.seat_name(s)} {p}" for s, p in enumerate(end["points"])))
    if deal.end is not None:
        lines.append("  scores after the deal: " + ", ".join(
            f"{view.seat_name(s)} {v}" for s, v in enumerate(deal.end.scores)))
    return lines


def render_shown(view: steps.MatchView, pos: steps.Position, style: Style | None = None) -> str:
    """One position of any game's match, as a block of text (from the game's description)."""
    style = style or Style()
    deal = view.deal_of(pos)
    shown = pos.shown
    width = max(len(n) for n in view.players)
    last_step = len(deal.positions) - 1
    totals = ", ".join(f"{view.seat_name(s)} {v}" for s, v in enumerate(deal.scores_before))
    lines = [
        style.bold(f"Game {deal.game}, deal {deal.number}") + f" (deal {deal.index + 1} of {len(view.deals)} in the "
        f"match) · move {pos.step} of {last_step} · position {pos.index} of {len(view.positions) - 1}",
        " · ".join([f"Dealer {view.seat_name(deal.dealer)}", *shown["notes"], f"score {totals}"]),
        _move_text(view, pos, style),
        *_shown_seat_lines(view, shown, style, width),
    ]
    lines.extend(x for x in (_table_line(view, shown, style), _pile_line(shown, style)) if x is not None)
    lines.extend(_fault_text(view, rec) for rec in view.faults_at.get(pos.index, []))
    if pos.step == last_step and deal.end is not None:
        lines.extend(_end_lines(view, deal, style, width))
    if pos.step == last_step and deal.game_end is not None:
        g = deal.game_end
        lines.append(style.bold(f"Game {g.game} over: ") + view.game_end_text(g))
    if pos.index == len(view.positions) - 1:
        lines.append(style.bold("Match over: ") + view.outcome_text())
    return "\n".join(lines)


def render_shown_summary(view: steps.MatchView, style: Style | None = None) -> str:
    """Any game's match in a few lines: one per deal."""
    lines = [shown_header(view), f"{plural(len(view.deals), 'deal')}, {plural(len(view.positions), 'position')}, "
             f"final hash {view.final_hash}"]
    for deal in view.deals:
        end = deal.end_shown
        res = (end["text"] if end is not None else "over") if deal.end is not None else "not finished"
        sc = f" → {'–'.join(str(s) for s in deal.end.scores)}" if deal.end is not None else ""
        lines.append(f"  deal {deal.index + 1:>3} (game {deal.game}.{deal.number}, {len(deal.positions) - 1} moves): "
                     f"{res}{sc}")
        lines.extend("    " + _fault_text(view, rec) for rec in deal.faults)
        if deal.game_end is not None:
            lines.append(f"  game {deal.game_end.game} over: {view.game_end_text(deal.game_end)}")
    if not view.deals:
        lines.extend("  " + _fault_text(view, rec) for rec in view.faults)
    lines.append("Result: " + view.outcome_text() + f" — {view.detail}")
    lines.append("Step through it: arena replay REPLAY (on a terminal), --step K, --deal D, --all, --html OUT")
    return "\n".join(lines)


def view_header(view: AnyView) -> str:
    """The match in one line, in its game's words."""
    if isinstance(view, steps.MatchView):
        return shown_header(view)
    return rummy_text.header_text(view) if isinstance(view, RummyMatchView) else header_text(view)


def view_position(view: AnyView, index: int, style: Style) -> str:
    """Position ``index`` of the match, in its game's words."""
    if isinstance(view, steps.MatchView):
        return render_shown(view, view.positions[index], style)
    if isinstance(view, RummyMatchView):
        return rummy_text.render_position(view, view.positions[index], style)
    return render_position(view, view.positions[index], style)


def view_summary(view: AnyView, style: Style) -> str:
    """The match in a few lines, in its game's words."""
    if isinstance(view, steps.MatchView):
        return render_shown_summary(view, style)
    return rummy_text.render_summary(view, style) if isinstance(view, RummyMatchView) else render_summary(view, style)


def deal_positions(view: AnyView, which: str) -> list[int]:
    """The positions (their indexes) of a deal given as ``D`` (its number in the match, from 1)
    or ``G:D``."""
    if ":" in which:
        g, _, d = which.partition(":")
        for deal in view.deals:
            if str(deal.game) == g.strip() and str(deal.number) == d.strip():
                return [p.index for p in deal.positions]
        raise ValueError(f"no deal {which} (game:deal) in this match")
    n = int(which)
    if not 1 <= n <= len(view.deals):
        raise ValueError(f"deal {n}: the match has deals 1 to {len(view.deals)}")
    return [p.index for p in view.deals[n - 1].positions]


# ----------------------------------------------------------------------------------------------
# what a seat was sent
# ----------------------------------------------------------------------------------------------
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


def seat_story(replay: Replay, seat: int) -> tuple[list[bot_pb2.RefereeMessage], str]:
    """The messages of the match's story sent to ``seat`` (re-derived by the re-run), and a note on
    how they compare with the replay's digest."""
    again = resimulate(replay)
    if not 0 <= seat < len(again.seat_messages):
        raise ValueError(f"seat {seat}: the match has seats 0 to {len(again.seat_messages) - 1}")
    msgs = [m for m in again.seat_messages[seat] if m.WhichOneof("kind") in STORY_KINDS]
    h = hashlib.sha256()
    for m in msgs:
        data = m.SerializeToString(deterministic=True)
        h.update(struct.pack(">I", len(data)) + data)
    result = replay.result
    digests = result.message_digests if result is not None else ()
    counts = result.messages if result is not None else ()
    recorded = digests[seat] if seat < len(digests) else None
    count = counts[seat] if seat < len(counts) else None
    if h.hexdigest() == recorded:
        note = f"{len(msgs)} messages; their digest {recorded} matches the replay's result record ✓"
    elif count is not None and len(msgs) < count:
        note = (f"{len(msgs)} of {count} messages: the seat's session ended (disconnected) and the rest was not "
                "delivered")
    else:
        note = f"{len(msgs)} messages; digest {h.hexdigest()} DIFFERS from the replay's {recorded} (run arena audit)"
    return msgs, note


def print_seat(path: Path, seat: int, raw: bool, out: TextIO, style: Style) -> int:
    try:
        replay = read_replay(path)
        msgs, note = seat_story(replay, seat)
    except (OSError, ValueError, ReplayError) as e:  # ReplayFormatError is a ValueError
        print(f"arena replay: {path}: {e}", file=sys.stderr)
        return EXIT_FAILED
    names = replay.header.players
    name = names[seat] if seat < len(names) else "?"
    line = rummy_text.message_line if replay.header.game == "rummy" else message_line
    print(f"Seat {seat} ({name}) of match {replay.header.match_id}: {note}", file=out)
    for i, m in enumerate(msgs):
        if raw:
            print(f"--- #{i} {m.WhichOneof('kind')}", file=out)
            print(text_format.MessageToString(m), end="", file=out)
        else:
            print(line(i, m, style), file=out)
    return EXIT_OK


# ----------------------------------------------------------------------------------------------
# interactive
# ----------------------------------------------------------------------------------------------
HELP = "n/space/→ next · p/← previous · d/↓ next deal · u/↑ previous deal · g first · G last · q quit"


def _keys(stream: TextIO) -> Generator[str, None, None]:
    import termios
    import tty

    fd = stream.fileno()
    old = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd, termios.TCSANOW)  # keep keys typed ahead
        while True:
            ch = os.read(fd, 1).decode(errors="replace")
            if ch == "\x1b":
                seq = os.read(fd, 2).decode(errors="replace")
                yield {"[C": "right", "[D": "left", "[A": "up", "[B": "down", "[H": "home", "[F": "end"}.get(seq, "esc")
            else:
                yield ch
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


def step_key(view: AnyView, index: int, key: str) -> int | None:
    """The position after pressing ``key`` at position ``index`` (``None``: quit)."""
    last = len(view.positions) - 1
    if key in ("q", "Q", "\x03", "\x04", "esc"):
        return None
    if key in ("n", " ", "right", "l", "\r", "\n"):
        return min(last, index + 1)
    if key in ("p", "left", "h", "\x7f"):
        return max(0, index - 1)
    deal = view.positions[index].deal_index
    if key in ("d", "down", "j"):
        return view.deals[deal + 1].positions[0].index if deal + 1 < len(view.deals) else last
    if key in ("u", "up", "k"):
        here = view.deals[deal].positions[0].index
        if index > here:
            return here
        return view.deals[deal - 1].positions[0].index if deal > 0 else 0
    if key in ("g", "home"):
        return 0
    if key in ("G", "end"):
        return last
    return index


def interactive(view: AnyView, style: Style, stdin: TextIO, out: TextIO) -> int:
    index = 0
    keys = _keys(stdin)
    try:
        while True:
            out.write("\x1b[2J\x1b[H" + view_header(view) + "\n\n" + view_position(view, index, style)
                      + f"\n\n{HELP}\n")
            out.flush()
            nxt = step_key(view, index, next(keys))
            if nxt is None:
                return EXIT_OK
            index = nxt
    finally:
        keys.close()  # the terminal's mode is restored


# ----------------------------------------------------------------------------------------------
# the command
# ----------------------------------------------------------------------------------------------
def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``replay`` to the ``arena`` command's subparsers."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "replay",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="look at a recorded match: step through it, see what a seat was sent, or write an HTML page",
        description=(
            "Look at a recorded match (a replay .jsonl file).\n"
            "On a terminal: step through it deal by deal, move by move, both hands shown (melds grouped),\n"
            "the discard pile, the stock, and the melds, layoffs, points and scores at each deal's end.\n"
            "Keys: " + HELP + ".\n"
            "Otherwise (or with --step/--deal/--all) positions are printed; without them a summary.\n"
            "--seat N prints exactly what seat N was sent, message by message (the match is played again\n"
            "through the referee to re-derive them; their digest is compared with the replay's).\n"
            "--html OUT writes one self-contained page (no network) with step controls and a score chart."
        ),
        epilog=(
            "Examples:\n"
            "  arena replay runs/demo-x/replays/m1.jsonl                 # interactive on a terminal\n"
            "  arena replay m1.jsonl --deal 3                           # every position of deal 3\n"
            "  arena replay m1.jsonl --deal 2:1 --symbols               # game 2, deal 1, with ♠♥♦♣\n"
            "  arena replay m1.jsonl --step 40                          # position 40 of the match\n"
            "  arena replay m1.jsonl --seat 1                           # what seat 1 was told\n"
            "  arena replay m1.jsonl --seat 1 --raw | less              # ... in protobuf text format\n"
            "  arena replay m1.jsonl --html m1.html                     # open m1.html#step=40 in a browser\n"
            "Check that the replay is genuine with: arena audit m1.jsonl"
        ),
    )
    p.add_argument("replay", type=Path, metavar="REPLAY", help="a replay file (.jsonl)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--step", type=int, default=None, metavar="K", help="print position K of the match (from 0)")
    what.add_argument("--deal", default=None, metavar="D",
                      help="print every position of deal D (its number in the match, from 1; or GAME:DEAL)")
    what.add_argument("--all", action="store_true", help="print every position of the match")
    what.add_argument("--seat", type=int, default=None, metavar="N",
                      help="print exactly what seat N was sent, one line per message")
    what.add_argument("--html", type=Path, default=None, metavar="OUT", help="write a self-contained HTML replay")
    p.add_argument("--raw", action="store_true", help="with --seat: protobuf text format")
    p.add_argument("--symbols", action="store_true", help="suit symbols (A♠) instead of card text (As)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="red hearts and diamonds, bold headings (default: on a terminal)")
    p.set_defaults(handler=run)
    return p


def run(args: argparse.Namespace, *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """``arena replay``."""
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    tty = out.isatty() and stdin.isatty()
    style = Style(symbols=args.symbols, color=args.color == "always" or (args.color == "auto" and out.isatty()))
    if args.raw and args.seat is None:
        print("arena replay: --raw goes with --seat N", file=sys.stderr)
        return EXIT_USAGE
    if not args.replay.is_file():
        print(f"arena replay: {args.replay}: no such file", file=sys.stderr)
        return EXIT_USAGE
    return _run(args, stdin, out, tty, style)  # `arena replay … | head`: arena.cli.main ends it quietly


def _run(args: argparse.Namespace, stdin: TextIO, out: TextIO, tty: bool, style: Style) -> int:
    if args.seat is not None:
        return print_seat(args.replay, args.seat, args.raw, out, style)
    try:
        view = load(args.replay)
    except ReplayModelError as e:
        print(f"arena replay: {e} (arena audit explains what is wrong with it)", file=sys.stderr)
        return EXIT_FAILED
    if args.html is not None:
        from arena.replays.html import write_replay_html

        write_replay_html(view, args.html)
        print(f"wrote {args.html} ({len(view.positions)} positions; open {args.html}#step=K to jump to a position)",
              file=out)
        return EXIT_OK
    if not view.positions:
        print(view_summary(view, style), file=out)
        return EXIT_OK
    try:
        if args.step is not None:
            if not 0 <= args.step < len(view.positions):
                raise ValueError(f"--step {args.step}: the match has positions 0 to {len(view.positions) - 1}")
            chosen = [args.step]
        elif args.deal is not None:
            chosen = deal_positions(view, args.deal)
        elif args.all:
            chosen = list(range(len(view.positions)))
        elif tty:
            return interactive(view, style, stdin, out)
        else:
            print(view_summary(view, style), file=out)
            return EXIT_OK
    except ValueError as e:
        print(f"arena replay: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(view_header(view), file=out)
    for index in chosen:
        print("", file=out)
        print(view_position(view, index, style), file=out)
    return EXIT_OK
