"""The referee's match events (``Referee.open_match_events``): every subscriber sees each match
start and finish, in order, with its game, seats, state, termination and result summary; a
subscriber that does not read is dropped with the reason and never holds a match up; ``past``
replays the finished matches the referee holds; a subscription ends when the referee closes."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

import referee
import referee.lowlevel
from referee.gin import RuleSet
from referee.table.events import MatchEventHub
from tests._bots import Client
from tests.test_audit import Answer

SHORT = RuleSet.preset("short", target=25)


def spec(match_id: str, **kw: object) -> referee.MatchSpec:
    return referee.MatchSpec(players=("north", "south"), rules=SHORT, match_id=match_id,
                             time_control=referee.TimeControl(per_move_ms=2000), **kw)  # type: ignore[arg-type]


async def play(ref: referee.Referee, match_id: str) -> referee.MatchReport:
    table = ref.create_match(spec(match_id))
    async with trio.open_nursery() as n:
        for link in table.links:
            n.start_soon(referee.aio, Client(ref.address, link.token).play())
        await table.finished.wait()
    assert table.report is not None
    return table.report


async def take(events: referee.lowlevel.MatchEvents, n: int) -> list[referee.MatchEvent]:
    with trio.fail_after(60):
        return [await events.receive() for _ in range(n)]


def test_every_subscriber_sees_each_match_start_and_finish() -> None:
    async def main() -> None:
        async with referee.open_referee() as ref:
            async with ref.open_match_events() as first, ref.open_match_events() as second:
                reports = [await play(ref, "m-1"), await play(ref, "m-2")]
                got = await take(first, 4)
                assert got == await take(second, 4)
            assert [(e.kind, e.match_id) for e in got] == [
                ("started", "m-1"), ("finished", "m-1"), ("started", "m-2"), ("finished", "m-2")]
            started, finished = got[0], got[1]
            assert started.game == referee.DEFAULT_GAME and started.players == ("north", "south")
            assert started.state == "running" and started.termination is None and started.report is None
            assert started.spec.rules == SHORT and started.spec.time_control.per_move_ms == 2000
            assert finished.state == "finished" and finished.termination == "normal"
            assert finished.report == reports[0] and finished.report.replay_path == ""  # no replay folder
            assert finished.winner == reports[0].winner and finished.places == reports[0].places
            assert finished.points == reports[0].points and finished.summary  # the game's result fields
            assert finished.summary == ref.tables["m-1"].game.result_fields(reports[0].outcome)
            assert ref.events.subscribers == 0  # both closed with their ``async with``

            async with ref.open_match_events(past=True) as late:  # the finished ones, oldest first
                assert [(e.kind, e.match_id) for e in await take(late, 2)] == [("finished", "m-1"), ("finished", "m-2")]

    referee.run(main)


def test_a_match_that_never_starts_only_finishes() -> None:
    async def main() -> None:
        async with referee.open_referee() as ref, ref.open_match_events() as events:
            table = ref.create_match(spec("lonely", connect_timeout_ms=200))
            await table.finished.wait()
            (event,) = await take(events, 1)
            assert event.kind == "finished" and event.state == "aborted" and event.termination == "failed_to_connect"

    referee.run(main)


def test_a_subscriber_that_does_not_read_is_dropped_and_holds_no_match_up() -> None:
    async def main() -> None:
        limits = referee.Limits(match_events_queue=2)
        async with referee.open_referee(limits=limits) as ref, ref.open_match_events() as idle, \
                ref.open_match_events() as reader:
            seen: list[referee.MatchEvent] = []

            async def read() -> None:
                async for event in reader:
                    seen.append(event)

            async with trio.open_nursery() as n:
                n.start_soon(read)
                for i in range(3):  # six events: past the idle one's queue of two
                    await play(ref, f"m-{i}")
                await trio.testing.wait_all_tasks_blocked()
                n.cancel_scope.cancel()
            assert [e.match_id for e in seen if e.kind == "finished"] == ["m-0", "m-1", "m-2"]
            assert ref.events.subscribers == 1  # the reader only
            assert [(e.kind, e.match_id) for e in await take(idle, 2)] == [("started", "m-0"), ("finished", "m-0")]
            with pytest.raises(referee.MatchEventsDropped, match=r"2 match events were not read"):
                await idle.receive()

    referee.run(main)


def test_subscriptions_end_when_the_referee_closes() -> None:
    async def main() -> None:
        hub = MatchEventHub(4)
        async with hub.subscribe() as events:
            hub.close()
            assert [e async for e in events] == []
        async with hub.subscribe() as late:  # one opened after the close ends at once
            with pytest.raises(trio.EndOfChannel):
                await late.receive()
        with pytest.raises(ValueError, match="at least one event"):
            MatchEventHub(0)

    trio.run(main)


def test_past_holds_the_matches_a_killed_referee_left_as_interrupted(tmp_path: Path) -> None:
    from tests.test_audit import greedy, small_run
    from tests.test_journal import _run

    spec = small_run()[0][1]
    left = tmp_path / "left"

    def killed_here(n: int, req: Any, rng: random.Random) -> Answer:
        if n == 9 and not left.exists():  # what a SIGKILL now would leave on disk
            left.mkdir()
            for p in (tmp_path / "played").iterdir():
                if p.suffix in (".journal", ".live"):
                    shutil.copy(p, left / p.name)
        return greedy(n, req, rng)

    _run(spec, (killed_here, greedy), tmp_path / "played")
    assert any(p.suffix == ".journal" for p in left.iterdir())

    async def main() -> None:
        async with referee.open_referee(replay_dir=left) as ref, ref.open_match_events(past=True) as events:
            (event,) = await take(events, 1)
            assert (event.kind, event.match_id, event.state) == ("finished", spec.match_id, "interrupted")
            assert event.termination == "interrupted" and event.players == spec.players
            assert event.report is not None and Path(event.report.replay_path).is_file()
        async with referee.open_referee(replay_dir=left) as ref, ref.open_match_events() as events:
            with trio.move_on_after(0.2):  # without ``past``: nothing happened since it opened
                await events.receive()
                raise AssertionError("an event without ``past``")

    referee.run(main)


def test_published_events_are_numbered_and_the_backlog_keeps_the_latest() -> None:
    hub = MatchEventHub(4, backlog=2)
    other = MatchEventHub(4, backlog=2)
    assert hub.instance != other.instance and len(hub.instance) >= 16  # new at each start
    assert hub.sequence == 0 and hub.held_after(0) == [] and hub.held_after(1) is None  # 1 not yet published
    made = [referee.MatchEvent.started(spec(f"m-{i}"), f"m-{i}", "running") for i in range(3)]
    published = [hub.publish(e) for e in made]
    assert [e.sequence for e in published] == [1, 2, 3] and hub.sequence == 3
    assert all(e.time_ms > 0 for e in published) and made[0].sequence == 0  # the value is not changed
    assert [e.match_id for e in published] == ["m-0", "m-1", "m-2"]
    assert hub.held_after(3) == [] and hub.held_after(2) == published[2:]
    assert hub.held_after(1) == published[1:]  # 2 and 3: the backlog holds both
    assert hub.held_after(0) is None  # 1 was forgotten
    assert hub.held_after(4) is None and hub.held_after(-1) is None
    with pytest.raises(ValueError, match="backlog must hold at least one event"):
        MatchEventHub(1, backlog=0)
