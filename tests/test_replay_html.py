"""The HTML replay in a real browser (headless Chromium, Debian's ``chromium`` package): the page
opened at ``#step=K`` shows the cards, piles, scores and deal results of position K; its controls
step through the match. And a run's results page links every game to its replay page."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as arena_main
from arena.replays.model import MatchView, Position, load
from arena.replays.steps import card_texts
from arena.results.page import compute_report, write_results_page
from referee import MatchReport, MatchSpec, TimeControl
from referee.gin import RuleSet
from tests.test_audit import RunFixture, greedy, make_run, play_match

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--virtual-time-budget=3000",
)
WANTED = ("hand-0", "hand-1", "pile-discard-pile", "pile-stock", "score-0", "score-1", "deal-end", "deal-end-text",
          "step-label", "last-move", "deal-select", "match-over", "seat-0", "seat-1")


def chromium() -> str:
    path = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if path is None:
        pytest.fail("Chromium is missing: install Debian's chromium (apt-get update && apt-get install -y chromium); "
                    "this test opens the HTML replay in headless Chromium and must not be skipped")
    return path


class _Dom(HTMLParser):
    """The attributes and text of the elements with the ids we look at, and the body's attributes."""

    VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                      "wbr", "circle", "line", "rect", "path", "polyline"})

    def __init__(self) -> None:
        super().__init__()
        self.attrs: dict[str, dict[str, str]] = {}
        self.text: dict[str, str] = {}
        self.body: dict[str, str] = {}
        self.stack: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "body":
            self.body = a
        if tag in self.VOID:
            return
        ident = a.get("id")
        if ident in WANTED:
            self.attrs[ident] = a
            self.text[ident] = ""
            self.stack.append(ident)
        else:
            self.stack.append(None)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        for ident in self.stack:
            if ident is not None:
                self.text[ident] += data


def open_page(page: Path, fragment: str, profile: Path) -> _Dom:
    """The page's DOM after its script ran, as headless Chromium sees it at ``page#fragment``."""
    proc = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", f"{page.as_uri()}#{fragment}"],
        capture_output=True, text=True, timeout=90,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = _Dom()
    dom.feed(proc.stdout)
    assert dom.body.get("class") == "ready", "the page's script did not run to its end"
    return dom


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, MatchView, MatchReport]:
    folder = tmp_path_factory.mktemp("html")
    spec = MatchSpec(players=("alice", "bob <b>"), rules=RuleSet.classic(target=40),
                     time_control=TimeControl.parse("st=1"), seed=b"html-seed", match_id="html-1")
    report = play_match(spec, (greedy, greedy), folder, seed=5)
    out = folder / "page.html"
    assert arena_main(["replay", report.replay_path, "--html", str(out)]) == 0
    view = load(Path(report.replay_path))
    assert isinstance(view, MatchView)
    return out, view, report


def _pile(pos: Position, name: str) -> dict[str, Any]:
    return next(p for p in pos.shown["piles"] if p["name"] == name)


def _check(dom: _Dom, view: MatchView, pos: Position) -> None:
    deal = view.deal_of(pos)
    at_end = pos.step == len(deal.positions) - 1 and deal.end is not None
    assert dom.body["data-position"] == str(pos.index)
    assert dom.body["data-deal"] == str(deal.index + 1) and dom.body["data-move"] == str(pos.step)
    for seat in (0, 1):
        assert dom.attrs[f"hand-{seat}"]["data-cards"] == " ".join(card_texts(pos.shown, seat))
        assert len(card_texts(pos.shown, seat)) in (10, 11)
    assert dom.attrs["pile-discard-pile"]["data-cards"] == " ".join(_pile(pos, "discard pile")["cards"])
    assert dom.attrs["pile-stock"]["data-count"] == str(_pile(pos, "stock")["count"])
    scores = deal.end.scores if at_end and deal.end is not None else deal.scores_before
    assert (dom.text["score-0"], dom.text["score-1"]) == (str(scores[0]), str(scores[1]))
    assert f"position {pos.index} / {len(view.positions) - 1}" in dom.text["step-label"]
    assert f"move {pos.step} / {len(deal.positions) - 1}" in dom.text["step-label"]
    for seat in (0, 1):
        assert ("to-move" in dom.attrs[f"seat-{seat}"]["class"]) == (pos.shown["to_move"] == seat)
    hidden = "hidden" in dom.attrs["deal-end"].get("class", "")
    assert hidden != at_end
    if at_end:
        end = deal.end_shown
        assert deal.end is not None and end is not None
        assert dom.attrs["deal-end"]["data-points"] == ",".join(str(p) for p in end["points"])
        assert dom.text["deal-end-text"] == end["text"]
        if sum(end["points"]):
            assert f"scores {sum(end['points'])}" in dom.text["deal-end-text"]
    last = pos.shown["last"]
    if last is not None and last["cards"]:
        assert last["cards"][0][0] in dom.text["last-move"].replace("10", "T")


def test_the_page_shows_the_position_of_its_address(page: tuple[Path, MatchView, MatchReport], tmp_path: Path) -> None:
    out, view, _ = page
    assert len(view.deals) >= 3
    first_end = view.deals[0].positions[-1]
    mid = view.deals[1].positions[len(view.deals[1].positions) // 2]
    last = view.positions[-1]
    for pos in (view.positions[0], mid, first_end, last):
        dom = open_page(out, f"step={pos.index}", tmp_path / "profile")
        _check(dom, view, pos)
        assert ("hidden" in dom.attrs["match-over"]["class"]) == (pos is not last)
    assert dom.text["deal-select"].count("Deal ") == len(view.deals)


def test_the_controls_step_through_the_match(page: tuple[Path, MatchView, MatchReport], tmp_path: Path) -> None:
    out, view, _ = page
    d2 = view.deals[1]
    # deal 2, move 3; then → → ← (move 4), ↓ (start of deal 3), the "previous move" button (end of deal 2)
    dom = open_page(out, "deal=2&move=3&keys=ArrowRight,ArrowRight,ArrowLeft,ArrowDown,@btn-prev", tmp_path / "p")
    _check(dom, view, d2.positions[-1])
    dom = open_page(out, "step=0&keys=End", tmp_path / "p")
    _check(dom, view, view.positions[-1])


def test_the_page_is_self_contained(page: tuple[Path, MatchView, MatchReport]) -> None:
    text = page[0].read_text()
    assert re.findall(r"https?://[^\"' )]+", text) == ["http://www.w3.org/2000/svg"]
    assert "<link" not in text and "src=" not in text and "@import" not in text
    assert "bob &lt;b&gt;" in text and "bob <b>" not in text.split('id="replay-data"')[0]
    data = json.loads(text.split('<script type="application/json" id="replay-data">')[1].split("</script>")[0])
    assert data["players"] == ["alice", "bob <b>"] and len(data["positions"]) == len(page[1].positions)
    assert 'id="score-chart"' in text and "<polyline" in text and 'id="score-sheet"' in text
    assert data["final_hash"] == page[2].replay_hash


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunFixture:
    return make_run(tmp_path_factory.mktemp("run"))


def test_results_page_links_every_game_to_its_replay(run: RunFixture, tmp_path: Path) -> None:
    results = json.loads((run.folder / "results.json").read_text())
    # results.json as the arena writes it: standings, crosstable, ratings
    report = compute_report(results["games"])
    report["ratings_mle"] = [{"bot": s["bot"], "elo": s["elo"] or 0.0, "margin": 120.0} for s in report["standings"]]
    report["run"] = {"run_id": "test-run", "format": "gauntlet"}
    (run.folder / "results.json").write_text(json.dumps(report))
    index = write_results_page(run.folder)
    text = index.read_text()
    assert index == run.folder / "index.html" and "test-run" in text
    for name, r in run.reports.items():
        page = run.folder / "html" / f"{r.match_id}.html"
        assert page.is_file(), name
        assert f"href='html/{r.match_id}.html'" in text
        assert r.replay_hash[:12] in text
        assert 'href="../index.html"' in page.read_text()
    assert "id='crosstable'" in text and "id='standings'" in text and 'id="rating-chart"' in text
    assert "hash differs" not in text
    # a plain list of games is enough: the standings and crosstable are computed
    plain = tmp_path / "plain"
    (plain / "replays").mkdir(parents=True)
    shutil.copy(run.replays["normal"], plain / "replays")
    r = run.reports["normal"]
    games = [{"players": list(r.players), "winner": r.players[r.winner or 0], "points": list(r.outcome.totals)
              if r.outcome else [0, 0], "replay": f"replays/{r.match_id}.jsonl", "match_id": r.match_id,
              "replay_hash": "ff" * 32}]
    (plain / "results.json").write_text(json.dumps(games))
    text = write_results_page(plain).read_text()
    assert "hash differs" in text and f"html/{r.match_id}.html" in text
    standings = text.split("id='standings'")[1].split("</table>")[0]
    assert standings.count("<tr><td class='num'>") == 2  # two bots
    # the replay page of a results page opens in the browser too
    dom = open_page(plain / "html" / f"{r.match_id}.html", "step=0", tmp_path / "profile")
    assert dom.body["data-position"] == "0"
