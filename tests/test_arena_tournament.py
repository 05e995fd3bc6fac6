"""`arena tournament` end to end: bots are separate processes started by the arena; a small
round robin with concurrency and duplicate deals (checked in the replays); bots that crash at
start, time out, never connect; the substitute fault policy; results files; cleanup."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import trio

from arena.console import Console, Progress
from arena.model.manifest import BotSpec
from arena.model.records import Outcome
from arena.model.schedule import GameJob, PlayConfig
from arena.run.procs import BotLogs
from arena.run.runner import Runner, StallMonitor
from referee import MatchContext, MatchReport, MatchSpec, TimeControl
from referee.gin import RuleSet
from referee.replays import DealEndRecord, DealRecord, FaultRecord, read_replay
from tests._wait import RUN_HANG_S

TESTBOT = '["{python}", "-m", "arena._testbot"'


def manifest(path: Path, bots: dict[str, str]) -> Path:
    """bots: name -> extra arguments of arena._testbot (as TOML list items)."""
    lines = []
    for name, extra in bots.items():
        tail = f", {extra}" if extra else ""
        lines += ["[[bot]]", f'name = "{name}"', f"command = {TESTBOT}{tail}]", ""]
    path.write_text("\n".join(lines))
    return path


def arena(*args: str, timeout: float = RUN_HANG_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def final_hash(path: str | Path) -> str:
    lines = Path(path).read_bytes().splitlines()
    return hashlib.sha256(lines[-1]).hexdigest()


def referee_port(run_dir: Path) -> str:
    for line in (run_dir / "run.log").read_text().splitlines():
        event = json.loads(line)
        if event.get("event") == "referee_listening":
            return str(event["address"])
    raise AssertionError("no referee_listening event in run.log")


def leftover_processes(marker: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd and "arena._testbot" in cmd:
            found.append(f"{pid}: {cmd}")
    return found


def test_round_robin_with_concurrency_and_duplicate_deals(tmp_path: Path) -> None:
    bots = manifest(tmp_path / "bots.toml", {"g1": "", "g2": '"--seed", "7"', "rnd": '"--mode", "random"'})
    run = tmp_path / "run"
    out = arena("tournament", "--bots", str(bots), "--games", "4", "--rules", "short", "--tc",
                "st=30", "--concurrency", "4", "--seed", "fixed", "--out", str(run))  # (no clock to lose on)
    assert out.returncode == 0, out.stderr
    assert "Standings" in out.stdout and "Crosstable" in out.stdout

    results = json.loads((run / "results.json").read_text())
    assert results["games_played"] == results["games_scheduled"] == 12
    assert results["scoring_unit"] == "pairs"
    assert {s["bot"] for s in results["standings"]} == {"g1", "g2", "rnd"}
    assert sum(s["units"] for s in results["standings"]) == 2 * 6  # 6 pairs, each counted for both bots
    assert set(results["crosstable"]["g1"]) == {"g2", "rnd"}
    with open(run / "games.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["idx"]) for r in rows] == list(range(12))
    for name in ("standings.csv", "crosstable.csv"):
        assert (run / name).stat().st_size > 0

    db = sqlite3.connect(run / "run.sqlite")
    assert db.execute("SELECT COUNT(*) FROM games WHERE status = 'done' AND attempts = 1").fetchone()[0] == 12
    spans = db.execute("SELECT started_at, finished_at FROM games").fetchall()
    overlap = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    assert overlap >= 2, "games ran one at a time"
    assert db.execute("SELECT COUNT(*) FROM procs").fetchone()[0] == 0
    db.close()

    pids = set()
    for bot in ("g1", "g2", "rnd"):
        for line in (run / "logs" / f"{bot}.log").read_text().splitlines():
            if ": pid " in line:
                pids.add(line.split(": pid ")[1].split()[0].rstrip(":"))
    # Reused processes (restart = "never", the default): a bot has at most one per game it
    # plays at once, far fewer than a process per seat per game (24).
    assert 3 <= len(pids) <= 12, pids

    by_pair: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        assert r["termination"] == "normal", r
        assert r["winner"] in (r["seat0"], r["seat1"])
        assert int(r["deals"]) >= 1 and int(r["points0"]) + int(r["points1"]) > 0
        assert final_hash(run / r["replay_path"]) == r["replay_hash"]
        by_pair.setdefault(r["pair_key"], []).append(r)
    assert len(by_pair) == 6
    for key, (a, b) in by_pair.items():
        ra, rb = read_replay(run / a["replay_path"]), read_replay(run / b["replay_path"])
        ha, hb = ra.header, rb.header
        assert ha.players == hb.players[::-1], key  # seats swapped
        deals_a = {(d.game, d.deal): d for d in ra.records if isinstance(d, DealRecord)}
        deals_b = {(d.game, d.deal): d for d in rb.records if isinstance(d, DealRecord)}
        common = sorted(set(deals_a) & set(deals_b))
        assert (1, 1) in common
        dead_a = {(d.game, d.deal) for d in ra.records if isinstance(d, DealEndRecord) and d.content.kind == "dead"}
        dead_b = {(d.game, d.deal) for d in rb.records if isinstance(d, DealEndRecord) and d.content.kind == "dead"}
        for k in common:
            # The same cards, dealt by the same seat — which is the other bot — as long as the
            # deals before ended alike (after a dead hand the same player deals again).
            assert deals_a[k].deck == deals_b[k].deck, (key, k)
            earlier = {(g, d) for g, d in dead_a ^ dead_b if (g, d) < k}
            if not earlier:
                assert deals_a[k].dealer == deals_b[k].dealer, (key, k)
        first_dealer_a = ha.players[deals_a[(1, 1)].dealer]
        first_dealer_b = hb.players[deals_b[(1, 1)].dealer]
        assert first_dealer_a != first_dealer_b
        assert ra.result is not None and rb.result is not None and ra.result.seed == rb.result.seed
    assert leftover_processes(referee_port(run)) == []


def test_faulty_bots_are_scored_by_the_fault_policy(tmp_path: Path) -> None:
    # The good bot has a clock no loaded machine runs out (its own tc) and the time to start that
    # a loaded machine needs (the connect timeout); the slow bot thinks 1.5 s on a 0.3 s clock,
    # the hanging one never connects: each fault is the bot's, whatever the machine's load.
    bots = manifest(tmp_path / "bots.toml", {
        "good": "",
        "crash": '"--mode", "crash"',
        "slow": '"--mode", "slow", "--delay", "1.5"',
        "hang": '"--mode", "hang"',
    })
    bots.write_text(bots.read_text().replace('name = "good"', 'name = "good"\ntc = "st=60"'))
    run = tmp_path / "run"
    out = arena("tournament", "--bots", str(bots), "--format", "gauntlet", "--games", "2", "--rules", "short",
                "--tc", "st=0.3 timemargin=50", "--connect-timeout", "60", "--concurrency", "3",
                "--out", str(run))
    assert out.returncode == 0, out.stderr
    with open(run / "games.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6
    expected = {"crash": "crashed", "slow": "time_forfeit", "hang": "failed_to_connect"}
    for r in rows:
        opponent = r["seat1"] if r["seat0"] == "good" else r["seat0"]
        bad_seat = [r["seat0"], r["seat1"]].index(opponent)
        assert r["termination"] == expected[opponent], r
        assert r["faulting_seat"] == str(bad_seat), r
        assert r["winner"] == "good", r
        assert (run / r["replay_path"]).exists()
    results = json.loads((run / "results.json").read_text())
    faults = {s["bot"]: s["faults"] for s in results["standings"]}
    assert faults == {"good": 0, "crash": 2, "slow": 2, "hang": 2}
    assert next(s for s in results["standings"] if s["bot"] == "slow")["time_forfeits"] == 2
    crash_log = (run / "logs" / "crash.log").read_text()
    assert "crashing at start" in crash_log and "exited with code 3" in crash_log
    assert "did not connect" in " ".join(r["detail"] for r in rows)
    assert leftover_processes(referee_port(run)) == []


def test_substitute_policy_plays_on(tmp_path: Path) -> None:
    bots = manifest(tmp_path / "bots.toml", {"good": "", "quitter": '"--mode", "quit-after", "--after", "2"'})
    run = tmp_path / "run"
    out = arena("tournament", "--bots", str(bots), "--games", "2", "--rules", "short", "--tc", "st=30",
                "--fault-policy", "substitute", "--out", str(run))
    assert out.returncode == 0, out.stderr
    results = json.loads((run / "results.json").read_text())
    for g in results["games"]:
        quitter_seat = g["players"].index("quitter")
        assert g["termination"] == "normal", g
        assert g["substituted_seats"] == [quitter_seat], g
        faults = [r for r in read_replay(run / g["replay_path"]).records if isinstance(r, FaultRecord)]
        assert faults and faults[0].termination == "crashed" and faults[0].policy == "substitute"


# ----- a time loss while the arena itself was stalled is not scored -----
class _FakeHandle:
    """A match that is over at once (a referee's handle, as ``MatchContext`` sees it)."""

    def __init__(self, report: MatchReport) -> None:
        self.match_id = report.match_id
        self.finished = trio.Event()
        self.finished.set()
        self._report = report
        self._connected = trio.Event()
        self._connected.set()

    def connected(self, seat: int) -> trio.Event:
        return self._connected

    async def follow(self) -> None:
        pass

    def crashed(self, seat: int, detail: str) -> bool:
        return True

    def bot_process(self, seat: int, pid: int) -> None:
        pass

    def stop(self, reason: str) -> None:
        pass

    async def cancel(self, reason: str) -> None:
        pass

    def report(self) -> MatchReport:
        return self._report

    async def replay(self) -> bytes:
        return b""


class _FakeBackend:
    """A referee whose first match is lost on time by seat 1, and every later one ends normally."""

    bot_address = "nowhere:1"
    description = "fake"
    remote = False
    bot_env: tuple[tuple[str, str], ...] = ()

    def __init__(self) -> None:
        self.created: list[str] = []

    async def create(self, spec: MatchSpec) -> _FakeHandle:
        self.created.append(spec.match_id)
        first = len(self.created) == 1
        report = MatchReport(
            match_id=spec.match_id, players=("a", "b"), winner=0, termination="time_forfeit" if first else "normal",
            faulting_seat=1 if first else None, detail="late" if first else "", outcome=None, substituted_seats=(),
            seed=b"", seed_commitment=b"", replay_path="", replay_hash="", decisions=3, think_ms=(1, 1),
        )
        return _FakeHandle(report)


class _Sink:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def started(self, job: GameJob, match_id: str) -> None:
        self.events.append(("started", match_id))

    def finished(self, job: GameJob, outcome: Outcome) -> None:
        self.events.append(("finished", outcome.termination))

    def abandoned(self, job: GameJob) -> None:
        self.events.append(("abandoned", ""))

    def discarded(self, job: GameJob, outcome: Outcome, reason: str) -> None:
        self.events.append(("discarded", reason))

    def proc_started(self, pid: int, match_id: str, bot: str) -> object:
        return None

    def proc_ended(self, pid: int, ticket: object) -> None:
        pass


def test_time_loss_during_an_arena_stall_is_played_again(tmp_path: Path) -> None:
    stalls = StallMonitor()
    assert stalls.stalled(0, 10) == 0.0
    settings = PlayConfig(rules=RuleSet.preset("short"), time_control=TimeControl.parse("st=0.5 timemargin=50"))
    bots = {n: BotSpec(name=n, remote=True) for n in ("a", "b")}
    job = GameJob(0, ("a", "b"), b"s" * 32, "a|b", 0, 0, "")

    async def main() -> tuple[_FakeBackend, _Sink]:
        backend, sink = _FakeBackend(), _Sink()
        runner = Runner(MatchContext(backend), bots, {"a": "t" * 32, "b": "u" * 32}, settings,
                        BotLogs(tmp_path / "logs"), sink, run_id="r", stalls=stalls)
        # The arena's loop stalled for 300 ms just now (more than the 50 ms margin).
        stalls._stalls.append((trio.current_time(), 0.3))
        await runner.run([(job, 0)])
        return backend, sink

    backend, sink = trio.run(main)
    assert backend.created == ["r-g0000", "r-g0000-r1"]
    kinds = [k for k, _ in sink.events]
    assert kinds == ["started", "discarded", "started", "finished"]
    assert "stalled for 300 ms" in sink.events[1][1]
    assert sink.events[-1] == ("finished", "normal")

    # Without a stall a time loss stands.
    async def plain() -> _Sink:
        sink = _Sink()
        runner = Runner(MatchContext(_FakeBackend()), bots, {"a": "t" * 32, "b": "u" * 32}, settings,
                        BotLogs(tmp_path / "l2"), sink, run_id="r", stalls=StallMonitor())
        await runner.run([(job, 0)])
        return sink

    assert [k for k, _ in trio.run(plain).events] == ["started", "finished"]


class _ProgressSink(_Sink):
    """A sink that moves a progress line on as the run's own sink does (``RunSink.finished``)."""

    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress
        self.done = 0

    def finished(self, job: GameJob, outcome: Outcome) -> None:
        super().finished(job, outcome)
        self.done += 1
        self.progress.update(done=self.done)


def test_the_progress_line_never_counts_a_finished_game_as_running(tmp_path: Path) -> None:
    """A game whose result is recorded no longer shows as running while its bots exit: the line
    said "2/2 games 100% | 1 running" at the end of every run (issue 34), which read as a hang."""
    out = io.StringIO()
    progress = Progress(Console(out, progress=False), total=3, every_s=0.0)  # (every change is a line)
    settings = PlayConfig(rules=RuleSet.preset("short"), time_control=TimeControl.parse("st=5"), concurrency=3)
    bots = {n: BotSpec(name=n, remote=True) for n in ("a", "b")}
    jobs = [(GameJob(i, ("a", "b"), bytes([i]) * 32, "", 0, 0, ""), 0) for i in range(3)]

    async def main() -> None:
        runner = Runner(MatchContext(_FakeBackend()), bots, {"a": "t" * 32, "b": "u" * 32}, settings,
                        BotLogs(tmp_path / "logs"), _ProgressSink(progress), progress, run_id="r")
        await runner.run(jobs)

    trio.run(main)
    lines = [line for line in out.getvalue().splitlines() if line.startswith("progress: ")]
    counts = [re.match(r"progress: (\d+)/3 games .*\| (\d+) running \|", line) for line in lines]
    assert all(counts), lines
    shown = [(int(m.group(1)), int(m.group(2))) for m in counts if m]
    assert (3, 0) in shown and all(done + running <= 3 for done, running in shown), lines


def test_inline_bots_without_a_manifest_with_their_own_time_control(tmp_path: Path) -> None:
    run = tmp_path / "run"
    out = arena("tournament", "--bot", 'name=quick cmd="{python} -m arena._testbot" tc="st=0.7 timemargin=30"',
                "--bot", 'name=plain cmd="{python} -m arena._testbot --mode first"', "--games", "2",
                "--rules", "short", "--tc", "st=1 timemargin=100", "--listen", "127.0.0.1:0", "--out", str(run))
    assert out.returncode == 0, out.stderr
    results = json.loads((run / "results.json").read_text())
    assert results["games_played"] == 2 and results["bots"] == ["quick", "plain"]
    assert results["run"]["time_control"] == "st=1 timemargin=100"
    db = sqlite3.connect(run / "run.sqlite")
    specs = {name: json.loads(spec) for name, spec in db.execute("SELECT name, spec FROM bots")}
    db.close()
    assert specs["quick"]["tc"] == {"per_move_ms": 700, "margin_ms": 30} and "tc" not in specs["plain"]
    assert BotSpec.from_dict(specs["quick"]).time_control == TimeControl.parse("st=0.7 timemargin=30")
