"""Journaled matches: the replay reaches the disk as the match goes (``referee._journal``).

A finished replay is byte for byte what the in-memory recorder writes; while a deal runs, the
journal's files (mode 0600) hold only what a spectator may see of it."""

from __future__ import annotations

import json
import random
import re
import stat
from pathlib import Path

import trio
import trio.testing

from gin_arena.v1 import bot_pb2
from referee import MatchSpec
from referee._table import Table
from referee.gin import DECK
from tests.test_audit import Answer, Behaviour, _Session, greedy, small_run


def _run(spec: MatchSpec, behaviours: tuple[Behaviour, Behaviour], replay_dir: Path | None) -> list[bytes]:
    """Play the match on a mock clock (the same answers at the same times, every run); the
    lines the recorder kept in memory (none when it journaled)."""

    async def main() -> list[bytes]:
        table = Table(spec, replay_dir, lambda t: None, quiet=True)
        async with trio.open_nursery() as nursery:
            for link, behave in zip(table.links, behaviours, strict=True):
                s = _Session(f"{link.name}-v1", bytes([link.seat + 1]) * 8, behave,
                             random.Random(link.seat), table, link, nursery)
                assert link.attach(s) is None
            await table.run()
            nursery.cancel_scope.cancel()
        return list(table._replay.lines)

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_journaled_replay_is_byte_identical_to_the_replay_kept_in_memory(tmp_path: Path) -> None:
    for name, spec, behaviours in small_run():
        in_memory = _run(spec, behaviours, None)
        assert in_memory, name
        folder = tmp_path / name
        assert _run(spec, behaviours, folder) == [], f"{name}: a journaled match keeps no lines in memory"
        replay = folder / f"{spec.match_id}.jsonl"
        assert replay.read_bytes() == b"".join(line + b"\n" for line in in_memory), name
        assert stat.S_IMODE(replay.stat().st_mode) == 0o644, "a finished replay is public, as before"
        assert sorted(p.name for p in folder.iterdir()) == [replay.name], "the journal's files are gone"


_CARD = re.compile(r"\b(?:" + "|".join(re.escape(str(c)) for c in DECK) + r")\b")


def test_while_a_deal_runs_its_journal_holds_only_what_a_spectator_sees(tmp_path: Path) -> None:
    spec = small_run()[0][1]
    snapshots: list[dict[str, bytes]] = []

    def snooping(n: int, req: bot_pb2.ActionRequest, rng: random.Random) -> Answer:
        if n in (3, 9, 17) or (req.state.deal_number == 2 and len(snapshots) < 4):
            snap = {}
            for p in sorted(tmp_path.iterdir()):
                if p.suffix in (".journal", ".live"):
                    assert stat.S_IMODE(p.stat().st_mode) == 0o600, p.name
                    snap[p.suffix] = p.read_bytes()
            snapshots.append(snap)
        return greedy(n, req, rng)

    _run(spec, (snooping, greedy), tmp_path)
    assert len(snapshots) >= 4
    replay = [json.loads(line) for line in (tmp_path / f"{spec.match_id}.jsonl").read_bytes().splitlines()]
    deals = [r for r in replay if r["type"] == "deal"]
    for snap in snapshots:
        journal = [json.loads(line) for line in snap[".journal"].splitlines()]
        live = [json.loads(line) for line in snap[".live"].splitlines()]
        assert live and live[0]["type"] == "deal", "a deal is running"
        running = next(d for d in deals if d["seq"] == live[0]["seq"])
        assert all(r["seq"] < running["seq"] for r in journal), "no line of the running deal in the journal"
        assert [r["seq"] for r in journal + live] == list(range(len(journal) + len(live))), "nothing lost"
        for r in live:
            assert not {"deck", "key", "card", "detail", "raw_card"} & set(r), r
            for card in _CARD.findall(json.dumps({k: v for k, v in r.items() if k not in ("prev",)})):
                assert r["type"] == "action" and card in r["action"], (card, r)
        text = (snap[".journal"] + snap[".live"]).decode()
        assert running["key"] not in text and ",".join(running["deck"]) not in text
        assert json.dumps(running["deck"]) not in text
