"""One match of the tests' plugin game (``toy3``, or a variant registered in process) on a real
referee, each seat a gRPC bot session: the replay the audit and the viewers read."""

from __future__ import annotations

from pathlib import Path

import trio
from toy3_game.engine import ToyRules

import referee
from gin_arena.v2 import bot_pb2, common_pb2
from referee import MatchSpec, TimeControl
from tests._bots import Client

SEATS = 3
"""The seats of the match."""


def play(game: str, folder: Path) -> Path:
    """One game of ``game`` for :data:`SEATS` seats, each playing its first legal card; returns
    the replay (written under ``folder``)."""
    spec = MatchSpec(players=("a", "b", "c"), game=game, rules=ToyRules(games=1), seed=b"audit " + game.encode(),
                     time_control=TimeControl(per_move_ms=60_000))

    async def first_legal(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action:
        return msg.action_request.legal_actions[0]

    async def main() -> str:
        async with referee.open_referee(replay_dir=folder) as ref:
            table = ref.create_match(spec)
            clients = [Client(ref.address, link.token, name=link.name, games=(game,)) for link in table.links]
            async with trio.open_nursery() as nursery:
                for client in clients:
                    nursery.start_soon(referee.aio, client.play(first_legal))
                await table.finished.wait()
            assert table.report is not None and table.report.termination == "normal", table.report
            return str(table.report.replay_path)

    return Path(referee.run(main))
