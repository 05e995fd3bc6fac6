"""Rummy in the viewers: matches of 4 and 6 seats played through a real referee table (in process,
on a mock clock; each seat a small player of the protocol's legal actions), read back by the rummy
model, shown by ``arena replay`` (summary, ``--deal``, ``--step``, ``--all``, ``--seat``) and by
the HTML replay in headless Chromium (every hand, the table's melds by owner, the discard row, the
deal's end, the score sheet for n players); and the audit's information check on rummy replays."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import pty
import random
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as arena_main
from arena.replays import audit
from arena.replays import view as replay_view
from arena.replays.model import load
from arena.replays.steps import MatchView as RummyMatchView
from arena.replays.steps import Position as RummyPosition
from arena.replays.steps import card_texts
from gin_arena.v2 import bot_pb2, common_pb2
from referee import MatchReport, MatchSpec, TimeControl, resimulate
from referee.replays import ActionRecord, DealRecord, read_replay
from referee.rummy import RummyRules, parse_card
from tests.test_audit import play_match
from tests.test_replay_html import CHROMIUM_FLAGS, chromium

CARD_TEXT = re.compile(r"\b[2-9TJQKA][shdc]\b")
"""A card's text in a rendered line."""


def player(n: int, req: bot_pb2.ActionRequest, rng: random.Random) -> tuple[common_pb2.Action, int]:
    """Mostly lays what it can, else any legal action (draws, takes, discards, stop calls)."""
    legal = list(req.legal_actions)
    plays = [a for a in legal if a.rummy.WhichOneof("kind") in ("lay_meld", "lay_off")]
    pick = plays[0] if plays and rng.random() < 0.8 else rng.choice(legal)
    return pick, rng.randint(200, 5000)


def _match(folder: Path, seats: int, preset: str, target: int) -> tuple[Path, MatchReport]:
    mid = f"rummy-{seats}-{preset}"
    names = ("ann", "bob <b>", "cy", "dee", "eve", "fay")[:seats]
    spec = MatchSpec(players=names, game="rummy", rules=RummyRules.preset(preset, target=target),
                     time_control=TimeControl.parse("st=1 timemargin=50"), seed=hashlib.sha256(mid.encode()).digest(),
                     match_id=mid)
    report = play_match(spec, (player,) * seats, folder, seed=seats, lean=(False,) * seats)  # type: ignore[arg-type]
    assert report.termination == "normal", report.detail
    return Path(report.replay_path), report


@pytest.fixture(scope="module")
def four(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RummyMatchView]:
    path, _ = _match(tmp_path_factory.mktemp("rummy4"), 4, "rummy", 60)
    view = load(path)
    assert isinstance(view, RummyMatchView)
    return path, view


@pytest.fixture(scope="module")
def six(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RummyMatchView]:
    path, _ = _match(tmp_path_factory.mktemp("rummy6"), 6, "michigan", 400)
    view = load(path)
    assert isinstance(view, RummyMatchView)
    return path, view


def _texts(cards: object) -> str:
    return " ".join(str(c) for c in cards)  # type: ignore[attr-defined]


def _hands(pos: RummyPosition) -> list[list[str]]:
    return [card_texts(pos.shown, s) for s in range(len(pos.shown["seats"]))]


def _pile(pos: RummyPosition, name: str) -> dict[str, Any]:
    return next(p for p in pos.shown["piles"] if p["name"] == name)


def _table(pos: RummyPosition) -> list[dict[str, Any]]:
    return list(pos.shown["table"])


def test_positions_hold_every_card_and_end_as_the_records_say(four: tuple[Path, RummyMatchView],
                                                               six: tuple[Path, RummyMatchView]) -> None:
    for _, view in (four, six):
        seats = len(view.players)
        assert len(view.deals) >= 2 and all(d.end is not None for d in view.deals)
        for pos in view.positions:
            on_table = sum(len(m["cards"]) for m in _table(pos))
            held = sum(map(len, _hands(pos))) + len(_pile(pos, "discard pile")["cards"])
            assert held + _pile(pos, "stock")["count"] + on_table == 52
            assert len(_hands(pos)) == seats
        totals = [0] * seats
        for deal in view.deals:
            assert deal.end is not None
            last = deal.positions[-1]
            assert last.shown["phase"] == "over" and last.shown["to_move"] is None
            content = deal.end.content
            assert [tuple(h) for h in _hands(last)] == [tuple(h) for h in content.hands]
            shown = deal.end_shown
            assert shown is not None and shown["points"] == list(content.points)
            assert [s["loose"] for s in shown["seats"]] == [list(h) for h in content.hands]
            totals = [0] * seats if deal.number == 1 else totals
            totals = [t + p for t, p in zip(totals, content.points, strict=True)]
            assert tuple(totals) == deal.end.scores
            first = deal.positions[0]
            assert [len(h) for h in _hands(first)] == [10 if seats == 2 else 7 if seats <= 4 else 6] * seats
        assert view.result is not None and view.result.termination == "normal"
    # the six-seat Michigan match took discards from the row and laid melds of several owners
    kinds = {p.move.action.split()[0] for p in six[1].positions if p.move is not None}
    assert {"draw_stock", "meld", "discard"} <= kinds and "take_discard" in kinds
    owners = {m["owner"] for p in six[1].positions for m in _table(p)}
    assert len(owners) >= 3
    # a layoff names who laid the card off
    assert any(b != m["owner"] for p in six[1].positions for m in _table(p) for b in m["placed_by"])


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert arena_main(["replay", *args]) == 0
    return capsys.readouterr().out


def test_the_terminal_shows_every_seat_the_table_and_the_score(four: tuple[Path, RummyMatchView],
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    path, view = four
    summary = _run(capsys, str(path))
    assert "(Rummy, 4 seats): ann (seat 0), bob <b> (seat 1), cy (seat 2), dee (seat 3)" in summary
    assert summary.count("  deal ") == len(view.deals) and "Result: " in summary
    for deal in view.deals:
        assert deal.end is not None
        assert f"→ {'–'.join(map(str, deal.end.scores))}" in summary
    deal1 = _run(capsys, str(path), "--deal", "1")
    assert deal1.count("Game 1, deal 1 ") == len(view.deals[0].positions)
    end = view.deals[0].positions[-1]
    block = _run(capsys, str(path), "--step", str(end.index))
    for seat, hand in enumerate(_hands(end)):
        assert f"{view.players[seat]}" in block and _texts(hand) in block
    assert view.deals[0].end is not None
    content = view.deals[0].end.content
    for seat, name in enumerate(view.players):
        line = next(x for x in block.splitlines() if x.startswith(f"  {name:<7} left "))  # all its cards count
        assert sorted(CARD_TEXT.findall(line.split(" · ")[0])) == sorted(content.hands[seat]), line
        assert f" · points in hand {content.hand_values[seat]}" in line, line
    with_melds = next(p for p in view.positions if len(_table(p)) >= 2)
    block = _run(capsys, str(path), "--step", str(with_melds.index))
    for m in _table(with_melds):
        assert f"{view.players[m['owner']]} {m['label']} [{_texts(m['cards'])}]" in block
    discards = _pile(with_melds, "discard pile")["cards"]
    assert f"discard pile (top last): {_texts(discards) or '—'} · stock {_pile(with_melds, 'stock')['count']}" \
        in block
    every = _run(capsys, str(path), "--all", "--symbols")
    assert every.count("position ") == len(view.positions) and "♠" in every
    assert "Match over: " in every.split("\n\n")[-1]


def test_the_terminal_shows_what_a_seat_was_sent(six: tuple[Path, RummyMatchView],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path, view = six
    out = _run(capsys, str(path), "--seat", "2")
    assert "matches the replay's result record ✓" in out
    assert "match_started: " in out and "you are seat 2" in out and "rules michigan (target 400)" in out
    requests = [line for line in out.splitlines() if " action_request: " in line]
    assert requests and all("legal: " in line for line in requests)
    assert any("call_stop" in line for line in out.splitlines()) or "stop" in out
    assert out.count("deal_finished: ") == len(view.deals)


class _Dom(HTMLParser):
    """The attributes and text of every element with an id, and the table's melds in order."""

    def __init__(self) -> None:
        super().__init__()
        self.attrs: dict[str, dict[str, str]] = {}
        self.text: dict[str, str] = {}
        self.body: dict[str, str] = {}
        self.melds: list[dict[str, str]] = []
        self.stack: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "body":
            self.body = a
        if tag in ("meta", "br", "input"):
            return
        if "tmeld" in a.get("class", "").split():
            self.melds.append(a)
        ident = a.get("id")
        if ident:
            self.attrs[ident] = a
            self.text[ident] = ""
        self.stack.append(ident)

    def handle_endtag(self, tag: str) -> None:
        if tag not in ("meta", "br", "input") and self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        for ident in self.stack:
            if ident is not None:
                self.text[ident] += data


def _open(page: Path, fragment: str, profile: Path) -> _Dom:
    """The page's DOM after its script ran, as headless Chromium sees it at ``page#fragment``."""
    proc = subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                           f"{page.as_uri()}#{fragment}"], capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = _Dom()
    dom.feed(proc.stdout)
    assert dom.body.get("class") == "ready", "the page's script did not run to its end"
    return dom


def _check(dom: _Dom, view: RummyMatchView, pos: RummyPosition) -> None:
    deal = view.deal_of(pos)
    at_end = pos.index == deal.positions[-1].index and deal.end is not None
    assert dom.body["data-position"] == str(pos.index)
    for seat, hand in enumerate(_hands(pos)):
        assert dom.attrs[f"hand-{seat}"]["data-cards"] == _texts(hand)
        assert ("to-move" in dom.attrs[f"seat-{seat}"]["class"]) == (pos.shown["to_move"] == seat)
        scores = deal.end.scores if at_end and deal.end is not None else deal.scores_before
        assert dom.text[f"score-{seat}"] == str(scores[seat])
        count = f"{len(hand)} card" if len(hand) == 1 else f"{len(hand)} cards"
        assert dom.text[f"count-{seat}"] == " · ".join([count, *pos.shown["seats"][seat]["notes"]])
    marker = dom.attrs["chart-marker"]
    moves = max(1, len(deal.positions) - 1)
    x = float(marker["data-x0"]) + float(marker["data-dx"]) * (deal.index + pos.step / moves)
    assert abs(float(marker["x1"]) - x) < 0.1, "the chart's marker stands at the position shown"
    assert dom.attrs["pile-discard-pile"]["data-cards"] == _texts(_pile(pos, "discard pile")["cards"])
    assert dom.attrs["pile-stock"]["data-count"] == str(_pile(pos, "stock")["count"])
    assert [(m["data-owner"], m["data-cards"]) for m in dom.melds] == [
        (str(m["owner"]), _texts(m["cards"])) for m in _table(pos)]
    hidden = "hidden" in dom.attrs["deal-end"].get("class", "")
    assert hidden != at_end
    if at_end:
        assert deal.end is not None
        content = deal.end.content
        assert dom.attrs["deal-end"]["data-points"] == ",".join(map(str, content.points))
        for seat, left in enumerate(content.hands):
            assert dom.attrs[f"end-seat-{seat}"]["data-cards"] == " ".join(left)


def _positions(view: RummyMatchView) -> Iterator[RummyPosition]:
    yield view.positions[0]
    yield from [p for p in view.positions if any(len(h) == 1 for h in _hands(p))][:1]  # "1 card"
    yield next(p for p in view.positions if len(_table(p)) >= 2 and any(
        b != m["owner"] for m in _table(p) for b in m["placed_by"]))
    yield view.deals[0].positions[-1]
    yield view.positions[-1]


def test_the_html_page_shows_the_position_of_its_address(four: tuple[Path, RummyMatchView], tmp_path: Path) -> None:
    path, view = four
    out = tmp_path / "r.html"
    assert arena_main(["replay", str(path), "--html", str(out)]) == 0
    for pos in _positions(view):
        _check(_open(out, f"step={pos.index}", tmp_path / "profile"), view, pos)
    # the controls: deal 2, move 2, then → → ← (move 3), ↓ (deal 3 or the end), the "previous" button
    dom = _open(out, "deal=2&move=2&keys=ArrowRight,ArrowRight,ArrowLeft", tmp_path / "profile")
    _check(dom, view, view.deals[1].positions[3])
    dom = _open(out, "step=0&keys=End", tmp_path / "profile")
    _check(dom, view, view.positions[-1])
    assert "hidden" not in dom.attrs["match-over"]["class"]


def test_the_html_page_is_self_contained_with_a_score_sheet_for_every_seat(
        six: tuple[Path, RummyMatchView], tmp_path: Path) -> None:
    path, view = six
    out = tmp_path / "r6.html"
    assert arena_main(["replay-html", str(path), "-o", str(out)]) == 0
    text = out.read_text()
    offline = text.replace("http-equiv", "").replace('xmlns="http://www.w3.org/2000/svg"', "")  # a name, not a fetch
    assert "http" not in offline and "<link" not in text and "src=" not in text
    data = json.loads(text.split('<script type="application/json" id="replay-data">')[1].split("</script>")[0])
    assert data["players"] == list(view.players) and len(data["positions"]) == len(view.positions)
    sheet = text.split('id="score-sheet">')[1].split("</table>")[0]
    assert sheet.count('<th class="num">') == 6 and sheet.count("<tr data-deal=") == len(view.deals)
    assert "bob &lt;b&gt;" in sheet
    for deal in view.deals:
        assert deal.end is not None
        row = sheet.split(f'id="sheet-row-{deal.index}">')[1].split("</tr>")[0]
        assert [int(c.split("<small>(")[1].split(")")[0]) for c in row.split('<td class="num">')[1:]] == list(
            deal.end.scores)
    def stopped(p: RummyPosition) -> bool:
        return any(n.startswith("stop: ") for n in p.shown["notes"]) or p.shown["phase"] == "lay_back"

    pos = next((p for p in view.positions if stopped(p)), view.positions[len(view.positions) // 2])
    _check(_open(out, f"step={pos.index}", tmp_path / "profile"), view, pos)
    assert parse_card(data["positions"][0]["v"]["piles"][0]["cards"][-1])  # the upcard, as card text


def test_the_html_page_charts_every_seats_total_through_the_match(six: tuple[Path, RummyMatchView],
                                                                  tmp_path: Path) -> None:
    """The score chart (SVG drawn by the arena, as on Gin's page): per game, one line per seat
    from its total before the game's first deal through its total after each deal; a higher
    total stands higher, and the first seat's legend names it."""
    path, view = six
    out = tmp_path / "chart.html"
    assert arena_main(["replay-html", str(path), "-o", str(out)]) == 0
    svg = out.read_text().split('<svg id="score-chart"')[1].split("</svg>")[0]
    lines = [chunk.split('points="')[1].split('"')[0] for chunk in svg.split("<polyline")[1:]]
    seats = len(view.players)
    games = sorted({d.game for d in view.deals})
    assert len(lines) == seats * len(games)
    for g, game in enumerate(games):
        deals = [d for d in view.deals if d.game == game and d.end is not None]
        ys = [[float(xy.split(",")[1]) for xy in lines[g * seats + seat].split()] for seat in range(seats)]
        assert all(len(y) == len(deals) + 1 for y in ys)
        for k, deal in enumerate(deals):
            assert deal.end is not None
            totals = deal.end.scores
            for a in range(seats):
                for b in range(seats):
                    if totals[a] > totals[b]:
                        assert ys[a][k + 1] < ys[b][k + 1], (game, deal.index, totals)
    assert "ann" in svg.split('class="legend"')[1] and "bob &lt;b&gt;" in svg  # names escaped


# ----------------------------------------------------------------------------------------------
# the audit's information check knows rummy's deal and what its actions show
# ----------------------------------------------------------------------------------------------
def test_the_audit_catches_a_card_a_rummy_seat_could_not_know(six: tuple[Path, RummyMatchView]) -> None:
    replay = read_replay(six[0])
    msgs = [list(m) for m in resimulate(replay).seat_messages]
    assert audit.check_information(replay, msgs) > 0
    deal = next(r for r in replay.records if isinstance(r, DealRecord))
    seat = 3
    # a card dealt to the next seat, in seat 3's first request of the deal
    other = next(c for i, c in enumerate(deal.deck[:36]) if (deal.dealer + 1 + i) % 6 == (seat + 1) % 6)
    i = next(j for j, m in enumerate(msgs[seat]) if m.WhichOneof("kind") == "action_request")
    leaked = copy.deepcopy(msgs)
    leaked[seat][i].action_request.rummy.hand.append(other)
    with pytest.raises(audit._Stop) as e:
        audit.check_information(replay, leaked)
    d = e.value.discrepancy
    assert d.check == "information" and "rummy.hand[" in d.field and d.found == other
    # another seat's stock draw shown in an event
    draw = next(r for r in replay.records if isinstance(r, ActionRecord) and r.action == "draw_stock" and r.seat != 0)
    assert draw.card is not None
    j = next(j for j, m in enumerate(msgs[0]) if m.WhichOneof("kind") == "event" and m.event.seat == draw.seat
             and m.event.rummy.action.WhichOneof("kind") == "draw_stock")
    assert msgs[0][j].event.rummy.drawn_card == ""
    leaked = copy.deepcopy(msgs)
    leaked[0][j].event.rummy.drawn_card = draw.card
    with pytest.raises(audit._Stop) as e:
        audit.check_information(replay, leaked)
    assert e.value.discrepancy.field.endswith("(event) event.rummy.drawn_card")


@pytest.mark.timeout(30)
def test_the_terminal_steps_through_a_rummy_match_by_keys(four: tuple[Path, RummyMatchView]) -> None:
    view = four[1]
    master, slave = pty.openpty()

    def type_keys() -> None:
        time.sleep(0.3)
        for key in (b"n", b"\x1b[C", b"d", b"p", b"q"):
            os.write(master, key)
            time.sleep(0.05)

    typist = threading.Thread(target=type_keys, daemon=True)
    try:
        typist.start()
        with os.fdopen(os.dup(slave), "r") as stdin:
            out = io.StringIO()
            assert replay_view.interactive(view, replay_view.Style(), stdin, out) == 0
    finally:
        typist.join(5)
        os.close(master)
        os.close(slave)
    screens = out.getvalue().split("\x1b[2J\x1b[H")[1:]
    shown = [next(int(w.split()[1]) for w in s.split(" · ") if w.startswith("position ")) for s in screens]
    second = view.deals[1].positions[0].index
    assert shown == [0, 1, 2, second, second - 1]
    assert "(Rummy, 4 seats)" in screens[0] and "table: empty" in screens[0]


def test_a_rummy_replay_the_engine_refuses_is_explained(four: tuple[Path, RummyMatchView], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    lines = four[0].read_bytes().splitlines()
    i = next(j for j in range(5, len(lines)) if b'"action":"discard ' in lines[j])
    bad = tmp_path / "bad.jsonl"
    lines[i] = lines[i].replace(b'"action":"discard ', b'"action":"take_discard ')
    bad.write_bytes(b"\n".join(lines))
    capsys.readouterr()
    assert arena_main(["replay", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"record {i}: the engine refuses 'take_discard " in err and "arena audit explains" in err
