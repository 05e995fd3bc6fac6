"""``arena replay``: look at a recorded match, of any game.

* ``arena replay REPLAY`` — on a terminal, step through the match deal by deal, move by move
  (n/space/→ next, p/← previous, d/↓ next deal, u/↑ previous deal, g first, G last, q quit);
  every hand is shown as its game groups it (melds grouped), the piles, the table, and at the
  end of each deal what the game describes of it (melds, layoffs, points) and the scores. Not on
  a terminal (or with ``--step K`` / ``--deal D`` / ``--all``) positions are printed; by default
  a summary.
* ``arena replay REPLAY --seat N`` — exactly what seat N was sent, message by message (re-derived
  by playing the replay again through the referee); ``--raw`` prints protobuf text format.
* ``arena replay REPLAY --html OUT`` — one self-contained HTML page (see ``arena.replays.html``).

Positions are rebuilt by the game's engine and described by its presentation
(:mod:`arena.replays.steps`): this renderer draws those plain descriptions and names no game.
``arena audit`` is what checks that the replay is genuine.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import struct
import sys
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from google.protobuf import text_format

from arena.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from arena.replays import seat_lines
from arena.replays.base import Style as Style
from arena.replays.model import MatchView, ReplayModelError, load
from arena.replays.page_parts import plural
from arena.replays.steps import DealView, Position
from gin_arena.v2 import bot_pb2
from referee import ReplayError, games, resimulate
from referee.replays import PROTOCOL_VERSION, FaultRecord, Replay, read_replay

STORY_KINDS = ("match_started", "deal_started", "action_request", "event", "deal_finished", "game_finished")


# ----------------------------------------------------------------------------------------------
# positions as text: the game's descriptions drawn
# ----------------------------------------------------------------------------------------------
class SeatNames(Protocol):
    """Whatever names the seats of a description: a replay's :class:`MatchView`, or ``arena play``'s
    screen (where one seat is "You")."""

    def seat_name(self, seat: int | None) -> str:
        """The name shown for ``seat``."""


def _fault_text(view: MatchView, rec: FaultRecord) -> str:
    return f"Fault: {view.seat_name(rec.seat)} — {rec.termination}: {rec.detail} (policy {rec.applied})"


def header_text(view: MatchView) -> str:
    """The match in one line: its game, players by seat, rules, time control, fault policy."""
    seats = ", ".join(f"{n} (seat {s})" for s, n in enumerate(view.players))
    h = view.header
    return (f"Match {view.match_id} ({games.display_name(view.game)}, {plural(len(view.players), 'seat')}): {seats}"
            f" · {view.rules_text} · {h.time_control} · faults: {h.fault_policy}")


def _hand_text(hand: Any, style: Style) -> str:
    groups = [style.group(g) for g in hand["groups"]]
    loose = style.cards(hand["loose"]) if hand["loose"] else ""
    return " ".join([*groups, loose]).strip() or "—"


def _move_text(view: MatchView, pos: Position, style: Style) -> str:
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


def shown_seat_lines(view: SeatNames, shown: Any, style: Style, width: int) -> list[str]:
    """One line per seat of a description: its name (padded to ``width``), dealer, hand (or how
    many cards, hidden), notes and whether it is to move (``arena play`` draws these too)."""
    out = []
    for s in shown["seats"]:
        tags = " (dealer)" if s["dealer"] else ""
        hand = _hand_text(s["hand"], style) if s["hand"] is not None else f"{plural(s['count'], 'card')} (hidden)"
        notes = "".join(f" · {n}" for n in s["notes"])
        marker = f" ▶ to move ({shown['phase']})" if s["to_move"] else ""
        out.append(f"  {view.seat_name(s['seat']):<{width}}{tags:<9} {hand}{notes}{marker}")
    return out


def table_line(view: SeatNames, shown: Any, style: Style) -> str | None:
    """The description's table (melds and who laid each card), or ``None`` for a game without one."""
    if shown["table"] is None:
        return None
    if not shown["table"]:
        return "  table: empty"
    parts = []
    for t in shown["table"]:
        owner = f"{view.seat_name(t['owner'])} " if t.get("owner") is not None else ""
        by = t.get("placed_by") or []
        offs = [f"{style.card(c)} by {view.seat_name(b)}" for c, b in zip(t["cards"], by, strict=False)
                if t.get("owner") is not None and b != t["owner"]]
        laid = "; laid off " + ", ".join(offs) if offs else ""
        parts.append(f"{owner}{t['label']} {style.group(t['cards'])}{laid}")
    return "  table: " + " · ".join(parts)


def pile_line(shown: Any, style: Style) -> str | None:
    """The description's piles (face-up ones top last, face-down ones as counts), or ``None``."""
    piles = []
    for p in shown["piles"]:
        if p.get("cards") is None:
            piles.append(f"{p['name']} {p['count']}")
        else:
            piles.append(f"{p['name']} (top last): {style.cards(p['cards'])}")
    return "  " + " · ".join(piles) if piles else None


def _end_lines(view: MatchView, deal: DealView, style: Style, width: int) -> list[str]:
    end = deal.end_shown
    lines = [style.bold("Deal over: ") + (end["text"] if end is not None else "")]
    if end is not None:
        for s in end["seats"]:
            parts = [" ".join(style.group(g) for g in s["groups"])] if s["groups"] else []
            if s.get("counted") == "all":  # every card left counts (its melds too): all "left"
                parts = [" ".join(["left", *parts, *([style.cards(s["loose"])] if s["loose"] else [])])]
            if s["laid_off"]:
                parts.append(f"laid off {style.cards(s['laid_off'])}")
            if (s["loose"] or not parts) and s.get("counted") != "all":
                parts.append(f"left {style.cards(s['loose'])}")
            parts.extend(s["notes"])
            lines.append(f"  {view.seat_name(s['seat']):<{width}} " + " · ".join(parts))
        if end.get("points"):
            lines.append("  deal points: " + ", ".join(f"{view.seat_name(s)} {p}" for s, p in enumerate(end["points"])))
    if deal.end is not None:
        lines.append("  scores after the deal: " + ", ".join(
            f"{view.seat_name(s)} {v}" for s, v in enumerate(deal.end.scores)))
    return lines


def render_position(view: MatchView, pos: Position, style: Style | None = None) -> str:
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
        *shown_seat_lines(view, shown, style, width),
    ]
    lines.extend(x for x in (table_line(view, shown, style), pile_line(shown, style)) if x is not None)
    lines.extend(_fault_text(view, rec) for rec in view.faults_at.get(pos.index, []))
    if pos.step == last_step and deal.end is not None:
        lines.extend(_end_lines(view, deal, style, width))
    if pos.step == last_step and deal.game_end is not None:
        g = deal.game_end
        lines.append(style.bold(f"Game {g.game} over: ") + view.game_end_text(g))
    if pos.index == len(view.positions) - 1:
        lines.append(style.bold("Match over: ") + view.outcome_text())
    return "\n".join(lines)


def render_summary(view: MatchView, style: Style | None = None) -> str:
    """Any game's match in a few lines: one per deal."""
    lines = [header_text(view), f"{plural(len(view.deals), 'deal')}, {plural(len(view.positions), 'position')}, "
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


def view_header(view: MatchView) -> str:
    """The match in one line."""
    return header_text(view)


def view_position(view: MatchView, index: int, style: Style) -> str:
    """Position ``index`` of the match."""
    return render_position(view, view.positions[index], style)


def view_summary(view: MatchView, style: Style) -> str:
    """The match in a few lines."""
    return render_summary(view, style)


def deal_positions(view: MatchView, which: str) -> list[int]:
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
    elif replay.header.protocol != PROTOCOL_VERSION:
        note = (f"{len(msgs)} messages, shown in bot protocol {PROTOCOL_VERSION}; the replay's digest {recorded} is "
                f"of protocol {replay.header.protocol}'s bytes (not comparable)")
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
    print(f"Seat {seat} ({name}) of match {replay.header.match_id}: {note}", file=out)
    for i, m in enumerate(msgs):
        if raw:
            print(f"--- #{i} {m.WhichOneof('kind')}", file=out)
            print(text_format.MessageToString(m), end="", file=out)
        else:
            print(seat_lines.message_line(i, m, style, replay.header.game), file=out)
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


def step_key(view: MatchView, index: int, key: str) -> int | None:
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


def interactive(view: MatchView, style: Style, stdin: TextIO, out: TextIO) -> int:
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
    return p


@dataclass(frozen=True, slots=True)
class Show:
    """What ``arena replay`` shows of its replay (its options, as plain values)."""

    replay: Path
    """The replay file."""
    step: int | None = None
    """One position (``--step K``, from 0)."""
    deal: str | None = None
    """Every position of a deal (``--deal D`` or ``GAME:DEAL``)."""
    all: bool = False
    """Every position of the match."""
    seat: int | None = None
    """Exactly what this seat was sent, one line per message."""
    html: Path | None = None
    """Write a self-contained HTML replay here instead."""
    raw: bool = False
    """With ``seat``: protobuf text format."""
    symbols: bool = False
    """Suit symbols instead of card text."""
    color: str = "auto"
    """Red suits and bold headings: ``always``, ``never``, or ``auto`` (on a terminal)."""


def run(show: Show, *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """``arena replay``: shows ``show`` (a terminal on both ``stdin`` and ``stdout``: interactive); the exit code."""
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    tty = out.isatty() and stdin.isatty()
    style = Style(symbols=show.symbols, color=show.color == "always" or (show.color == "auto" and out.isatty()))
    if show.raw and show.seat is None:
        print("arena replay: --raw goes with --seat N", file=sys.stderr)
        return EXIT_USAGE
    if not show.replay.is_file():
        print(f"arena replay: {show.replay}: no such file", file=sys.stderr)
        return EXIT_USAGE
    return _run(show, stdin, out, tty, style)  # `arena replay … | head`: arena.cli.main ends it quietly


def _run(show: Show, stdin: TextIO, out: TextIO, tty: bool, style: Style) -> int:
    if show.seat is not None:
        return print_seat(show.replay, show.seat, show.raw, out, style)
    try:
        view = load(show.replay)
    except ReplayModelError as e:
        print(f"arena replay: {e} (arena audit explains what is wrong with it)", file=sys.stderr)
        return EXIT_FAILED
    if show.html is not None:
        from arena.replays.html import write_replay_html

        write_replay_html(view, show.html)
        print(f"wrote {show.html} ({len(view.positions)} positions; open {show.html}#step=K to jump to a position)",
              file=out)
        return EXIT_OK
    if not view.positions:
        print(view_summary(view, style), file=out)
        return EXIT_OK
    try:
        if show.step is not None:
            if not 0 <= show.step < len(view.positions):
                raise ValueError(f"--step {show.step}: the match has positions 0 to {len(view.positions) - 1}")
            chosen = [show.step]
        elif show.deal is not None:
            chosen = deal_positions(view, show.deal)
        elif show.all:
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
