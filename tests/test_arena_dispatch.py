"""The runner starts a game only when its bots are free (issue 29): whenever a slot is free, the
first planned game whose bots all have a free process — not simply the next game in the list,
whose bot may be busy in another game (the old runner then started a further process of that
bot, and the game waited in its slot for the start-up). Checked with real bot processes on a
real embedded referee (the order of the runner's own reports, no clock), and the choice itself
on hand-made plans (:class:`arena.run.dispatch.BotsInPlay`)."""

from __future__ import annotations

import hashlib
import itertools
import sys
from collections import Counter
from pathlib import Path

import referee
from arena.model.manifest import BotSpec
from arena.model.records import Outcome
from arena.model.schedule import GameJob, PlayConfig
from arena.run.dispatch import BotsInPlay
from arena.run.procs import BotLogs
from arena.run.runner import Runner
from referee import TimeControl
from referee.gin import RuleSet


def job(idx: int, *players: str) -> GameJob:
    seed = hashlib.sha256(f"dispatch-{idx}".encode()).digest()
    return GameJob(idx, tuple(players), seed, "|".join(sorted(players)), 0, 0, "")


def round_robin(bots: list[str], legs: int = 1) -> list[GameJob]:
    """Every pair in the planned order of a round robin: ``b0–b1``, ``b0–b2``, … (both legs of a
    pair after each other)."""
    pairs = [p for a, b in itertools.combinations(bots, 2) for p in ((a, b), (b, a))[:legs]]
    return [job(i, *p) for i, p in enumerate(pairs)]


class Recorder:
    """A runner's sink that keeps what the runner told it, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, GameJob]] = []
        self.pids: dict[str, set[int]] = {}
        self.terminations: list[str] = []

    def started(self, job: GameJob, match_id: str) -> None:
        self.events.append(("started", job))

    def finished(self, job: GameJob, outcome: Outcome) -> None:
        self.events.append(("finished", job))
        self.terminations.append(outcome.termination)

    def abandoned(self, job: GameJob) -> None:
        self.events.append(("abandoned", job))

    def discarded(self, job: GameJob, outcome: Outcome, reason: str) -> None:
        self.events.append(("discarded", job))

    def proc_started(self, pid: int, match_id: str, bot: str) -> object:
        self.pids.setdefault(bot, set()).add(pid)
        return None

    def proc_ended(self, pid: int, ticket: object) -> None:
        pass

    def busy_starts(self) -> list[str]:
        """Every game that started while one of its bots was still in a game not finished."""
        playing: Counter[str] = Counter()
        busy = []
        for kind, g in self.events:
            if kind == "started":
                busy += [f"game {g.idx} {g.players}: {p} was busy" for p in g.players if playing[p]]
                playing.update(g.players)
            else:
                playing.subtract(g.players)
        return busy

    def most_at_once(self) -> int:
        running = most = 0
        for kind, _ in self.events:
            running += 1 if kind == "started" else -1
            most = max(most, running)
        return most


def play(tmp_path: Path, bots: list[str], jobs: list[GameJob], concurrency: int) -> Recorder:
    """``jobs`` played by a real runner on an embedded referee, each bot a real process
    (``arena._testbot``, greedy) kept from game to game."""
    specs = {n: BotSpec(name=n, command=(sys.executable, "-m", "arena._testbot"), restart="never") for n in bots}
    settings = PlayConfig(rules=RuleSet.preset("short"), time_control=TimeControl.parse("st=5"),
                          concurrency=concurrency)
    sink = Recorder()

    async def main() -> None:
        async with referee.open_match_context(replay_dir=tmp_path / "replays") as context:
            runner = Runner(context, specs, {}, settings, BotLogs(tmp_path / "logs"), sink, run_id="d")
            await runner.run([(j, 0) for j in jobs])

    (tmp_path / "logs").mkdir()
    referee.run(main)
    return sink


def test_no_game_starts_while_its_bot_plays_another_and_each_bot_keeps_one_process(tmp_path: Path) -> None:
    """Six bots, three slots: the planned order's first three games all seat b0; the runner
    starts b0–b1, b2–b3, b4–b5 instead, and every later game once its bots finished their
    last. Before, b0 got three processes at once and its later games started while it played."""
    bots = [f"b{i}" for i in range(6)]
    jobs = round_robin(bots)
    sink = play(tmp_path, bots, jobs, concurrency=3)
    assert sorted(g.idx for kind, g in sink.events if kind == "finished") == list(range(len(jobs)))
    assert [kind for kind, _ in sink.events].count("abandoned") == 0
    assert sink.busy_starts() == []
    assert {b: len(p) for b, p in sink.pids.items()} == {b: 1 for b in bots}
    assert sink.most_at_once() == 3  # (the slots were used: three games from the start)
    # (trio runs the three new tasks in any order: the set, not the order, is the runner's choice)
    assert {g.players for kind, g in sink.events[:3]} == {("b0", "b1"), ("b2", "b3"), ("b4", "b5")}


def test_two_bots_still_fill_every_slot(tmp_path: Path) -> None:
    """Where every game seats the same bots, a busy bot gets a further process (its share of the
    slots is all of them): two bots with two slots play two games at once, on two processes each."""
    sink = play(tmp_path, ["a", "b"], [job(i, *(("a", "b") if i % 2 == 0 else ("b", "a"))) for i in range(4)],
                concurrency=2)
    assert sorted(g.idx for kind, g in sink.events if kind == "finished") == [0, 1, 2, 3]
    assert sink.most_at_once() == 2
    assert {b: len(p) for b, p in sink.pids.items()} == {"a": 2, "b": 2}


def simulate(plan: BotsInPlay, jobs: list[GameJob], slots: int) -> tuple[list[list[int]], int]:
    """Play ``jobs`` in waves: start what :meth:`BotsInPlay.pick` allows, then end the oldest
    game; the indices started between two ends, and the most games at once."""
    queue = list(jobs)
    plan.plan(queue, slots)
    running: list[GameJob] = []
    waves: list[list[int]] = []
    most = 0
    while queue or running:
        wave = []
        while len(running) < slots and (i := plan.pick(queue)) is not None:
            g = queue.pop(i)
            plan.take(g)
            running.append(g)
            wave.append(g.idx)
        assert running, "nothing could start with every slot free"
        waves.append(wave)
        most = max(most, len(running))
        plan.give(running.pop(0))
    return waves, most


def test_the_choice_on_hand_made_plans() -> None:
    bots = [f"b{i}" for i in range(6)]
    plan = BotsInPlay({})
    waves, most = simulate(plan, round_robin(bots, legs=2), 3)
    assert waves[0] == [0, 18, 28]  # b0–b1, b2–b3, b4–b5: the first game of each free pair
    assert most == 3 and plan.extra_processes == 0 and max(plan.processes.values()) == 1

    # A gauntlet's challenger plays every game: its share is every slot, its opponents' one.
    gauntlet = [job(i, "c", f"o{i % 5}") for i in range(10)]
    plan = BotsInPlay({})
    waves, most = simulate(plan, gauntlet, 3)
    assert plan.shares == {"c": 3, **{f"o{i}": 1 for i in range(5)}}
    assert waves[0] == [0, 1, 2] and most == 3 and plan.processes["c"] == 3 and plan.extra_processes == 2

    # A bot's own limit bounds its share and its games at once.
    plan = BotsInPlay({"c": 2})
    waves, most = simulate(plan, gauntlet, 3)
    assert plan.shares["c"] == 2 and waves[0] == [0, 1] and most == 2

    # Instances (a bot in two seats of a table) are players of their own, limited as their bot.
    three = [job(i, "a", "a#2", "b") for i in range(3)]
    plan = BotsInPlay({"a": 2})
    waves, most = simulate(plan, three, 3)
    assert most == 1 and plan.processes == Counter({"a": 1, "a#2": 1, "b": 1})
