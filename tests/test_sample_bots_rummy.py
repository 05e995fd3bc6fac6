"""The sample rummy bots as real processes through the real referee (``referee.play_match``):
complete 2-, 4- and 6-seat matches that end ``normal`` with no seat substituted, no illegal
choice in any bot's log, and a replay that passes ``arena audit``; the JS bot and the stdio
bridge play rummy; greedy beats random; the hoarder goes out "rummy"; a bot process that plays
several matches keeps nothing of one match in the next."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import referee
from referee import BotLaunch, MatchSpec, PlayedMatch, TimeControl
from referee.rummy import RummyRules

ROOT = Path(__file__).resolve().parent.parent
JS_BOT = ROOT / "sample_bots" / "js" / "bot.js"


@pytest.fixture
def node() -> str:
    """Node.js with the JS bot's packages (``npm ci`` in sample_bots/js): the JS bot is part of
    what CI proves, so their absence fails."""
    found = shutil.which("node")
    assert found is not None, "node is not installed: the JavaScript bot needs Node.js >= 18"
    assert (JS_BOT.parent / "node_modules").is_dir(), "run `npm ci` in sample_bots/js"
    return found


def python_bot(name: str, *extra: str) -> BotLaunch:
    return BotLaunch(command=("{python}", "-m", f"sample_bots.rummy_{name}_bot", *extra))


JS = BotLaunch(command=("node", str(JS_BOT)))
STDIO_PROGRAMS = {
    "js-selftest": ("node", str(JS_BOT), "--selftest"),
    "stdio-bot": ("node", str(ROOT / "sample_bots" / "stdio" / "bot.js")),
}


FALLBACKS = ("is not legal", "decide() raised", "decide failed", "action refused")
"""What the kit (and the JS bot) log when a bot's own choice was not legal and a fallback went
instead: a match can end normal despite them, so the logs are read."""


def play(rules: RummyRules, bots: list[tuple[str, BotLaunch]], seed: bytes, logs: Path) -> PlayedMatch:
    """Play one match; it must end normal, and no bot may have fallen back on a legal action."""
    launches = [dataclasses.replace(b, log_path=str(logs / f"{n}.log")) for n, b in bots]
    spec = MatchSpec(
        players=tuple(n for n, _ in bots), rules=rules, game="rummy", seed=seed,
        time_control=TimeControl(per_move_ms=20_000),
    )
    played = referee.play_match(spec, launches)
    report = played.report
    assert report.termination == "normal", (report.termination, report.detail)
    assert len(report.places) == len(bots) and min(report.places) == 1
    assert report.decisions > 0 and not report.substituted_seats
    assert_no_fallback(logs)
    audit(played, logs)
    return played


def audit(played: PlayedMatch, folder: Path) -> None:
    """The replay passes ``arena audit`` (chain, commitment, decks, re-run, digests, what each
    seat was told)."""
    path = folder / f"{played.report.match_id}.jsonl"
    path.write_bytes(played.replay)
    out = subprocess.run([sys.executable, "-m", "arena.cli", "audit", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def assert_no_fallback(logs: Path) -> None:
    for log in logs.glob("*.log"):
        text = log.read_text()
        assert not [w for w in FALLBACKS if w in text], f"{log.name}:\n{text[-2000:]}"


SEATINGS = {
    2: ["greedy", "hoarder"],
    4: ["greedy", "hoarder", "random", "greedy"],
    6: ["random", "greedy", "hoarder", "greedy", "random", "hoarder"],
}


@pytest.mark.parametrize("preset", ["rummy", "open", "michigan", "bozenkill"])
@pytest.mark.parametrize("seats", [2, 4, 6])
def test_python_rummy_bots_play_complete_matches(tmp_path: Path, seats: int, preset: str) -> None:
    rules = RummyRules.preset(preset, target=40 if preset in ("rummy", "open") else 120)
    bots = [(f"{n}#{i}", python_bot(n, *(("--seed", str(i)) if n == "random" else ())))
            for i, n in enumerate(SEATINGS[seats])]
    play(rules, bots, f"live-{preset}-{seats}".encode(), tmp_path)


@pytest.mark.parametrize("seats", [2, 4])
def test_the_js_bot_plays_rummy(tmp_path: Path, seats: int, node: str) -> None:
    bots = [("js", JS), ("greedy", python_bot("greedy")), ("random", python_bot("random")),
            ("js#2", JS)][:seats]
    play(RummyRules.preset("michigan", target=100), bots, f"js-{seats}".encode(), tmp_path)


@pytest.mark.parametrize("program", list(STDIO_PROGRAMS))
def test_the_stdio_bridge_plays_rummy(tmp_path: Path, node: str, program: str) -> None:
    bridged = BotLaunch(command=STDIO_PROGRAMS[program], protocol="stdio", env=(("GIN_GAMES", "gin,rummy"),))
    bots = [("bridged", bridged), ("greedy", python_bot("greedy")), ("hoarder", python_bot("hoarder"))]
    play(RummyRules.preset("michigan", target=100), bots, f"bridge-{program}".encode(), tmp_path)


class Starts(referee.MatchObserver):
    def __init__(self) -> None:
        self.pids: dict[int, list[int]] = {}

    def process_started(self, seat: int, pid: int) -> None:
        self.pids.setdefault(seat, []).append(pid)


def test_a_reused_bot_process_keeps_nothing_from_match_to_match(tmp_path: Path) -> None:
    """One hoarder process plays three matches in a row (restart=never) under different rule
    sets and seat counts: every match is normal and every choice of the hoarder was legal, so
    each match was played by its own rules (Michigan's ace high and row are gone in the next)."""
    reused = BotLaunch(command=("{python}", "-m", "sample_bots.rummy_hoarder_bot"), restart="never", name="hoarder",
                       log_path=str(tmp_path / "hoarder.log"))
    specs = [
        (RummyRules.preset("michigan", target=80), 4),
        (RummyRules.preset("rummy", target=40), 2),
        (RummyRules.preset("bozenkill", target=80, face_values="rank"), 3),
    ]
    starts = Starts()

    async def main() -> list[PlayedMatch]:
        out = []
        async with referee.open_match_context() as context:
            for i, (rules, seats) in enumerate(specs):
                others = [python_bot("greedy") for _ in range(seats - 1)]
                spec = MatchSpec(players=tuple(f"p{k}" for k in range(seats)), rules=rules, game="rummy",
                                 seed=f"reuse-{i}".encode(), match_id=f"reuse-{i}",
                                 time_control=TimeControl(per_move_ms=20_000))
                out.append(await context.play(spec, [reused, *others], starts))
        return out

    for played in referee.run(main):
        assert played.report.termination == "normal", played.report.detail
    assert len(starts.pids[0]) == 1  # one hoarder process played all three
    assert_no_fallback(tmp_path)
    assert (tmp_path / "hoarder.log").read_text().count("finished: winner") == 3


def _deal_ends(played: PlayedMatch) -> list[dict[str, object]]:
    records = [json.loads(line) for line in played.replay.split(b"\n") if line.strip()]
    return [r for r in records if r.get("type") == "deal_end"]


def test_the_hoarder_process_goes_out_rummy_in_open(tmp_path: Path) -> None:
    """Through the referee, the hoarder goes out in one go with `open`'s doubling: a deal it
    wins with ``rummy`` set (paid double)."""
    rummies = 0
    for i in range(3):
        bots = [("hoarder", python_bot("hoarder")), ("r1", python_bot("random", "--seed", str(i))),
                ("r2", python_bot("random", "--seed", str(i + 10)))]
        played = play(RummyRules.preset("open", target=150), bots, f"hoard-{i}".encode(), tmp_path)
        rummies += sum(1 for d in _deal_ends(played) if d["winner"] == 0 and d["rummy"] is True)
        if rummies:
            break
    assert rummies >= 1


def test_greedy_processes_beat_random_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Four-seat tables through the referee, two greedy and two random, seats alternating:
    greedy's share of the won games."""
    games, wins = 6, 0
    for i in range(games):
        names = ["greedy", "random"] * 2 if i % 2 == 0 else ["random", "greedy"] * 2
        bots = [(f"{n}#{k}", python_bot(n, *(("--seed", str(i * 4 + k)) if n == "random" else ())))
                for k, n in enumerate(names)]
        report = play(RummyRules.preset("rummy"), bots, f"rate-{i}".encode(), tmp_path).report
        wins += all(names[s] == "greedy" for s, p in enumerate(report.places) if p == 1)
    with capsys.disabled():
        print(f"\ngreedy processes won {wins} of {games} four-seat games against random ones (2 v 2)")
    assert wins >= games * 2 // 3
