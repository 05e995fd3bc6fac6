"""The hosted ladder's bosses (issue 33): a ladder file names sample bots of its game, and a real
``arena serve`` starts them itself; a new bot that connects with its token is paired with the
boss and plays it; the boss killed is started again and plays on; the server stopped ends it.
A boss naming a bot the game does not register, and a registered bot under a boss's name, are
refused clearly."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from arena.hosted.ladder_file import LadderFileError, load_ladder
from arena.hosted.registry import BotRegistry, RegistryError
from arena.model.manifest import BotSpec
from arena.store import open_db
from tests._wait import until
from tests.test_hosted_ladder import Server, _arena, _greedy_bot

LADDER = """
boss_memory_mb = 2048

[[play]]
preset = "short"
tc = "st=30 timemargin=200"
bosses = ["expert"]
"""
BOSS = "gin-expert"


def _boss_pids(server: Server) -> list[int]:
    log = server.dir / "logs" / f"{BOSS}.log"
    return [int(p) for p in re.findall(r": pid (\d+):", log.read_text())] if log.exists() else []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


def _boss_games(server: Server, since: int = -1) -> int:
    return sum(1 for g in server.games("newbie", "normal") if g["idx"] > since
               and BOSS in {s["bot"] for s in server.db().execute("SELECT bot FROM game_seats WHERE game = ?",
                                                                  (g["idx"],))})


def test_the_server_starts_its_bosses_and_a_new_bot_plays_them(tmp_path: Path,
                                                                procs: list[subprocess.Popen[str]]) -> None:
    (tmp_path / "ladder.toml").write_text(LADDER, encoding="utf-8")
    server = Server(tmp_path)
    server.start()
    assert server.proc is not None
    procs.append(server.proc)
    added = _arena("bots", "add", "newbie", "--dir", str(server.dir), cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    newbie = _greedy_bot(server.address, added.stdout.strip(), "newbie")
    procs.append(newbie)

    until(lambda: _boss_games(server) >= 1, "the new bot to play the boss", alive=server.proc)
    assert server.state(BOSS) == ("enabled", "")
    (first,) = _boss_pids(server)
    limits = Path(f"/proc/{first}/limits").read_text()
    assert re.search(r"Max data size\s+2147483648\s", limits), limits  # boss_memory_mb = 2048

    # The boss dies: the server starts it again, and it plays on.
    os.killpg(first, signal.SIGKILL)
    until(lambda: len(_boss_pids(server)) == 2, "the boss started again", alive=server.proc)
    last = max(int(g["idx"]) for g in server.games("newbie"))
    until(lambda: _boss_games(server, since=last) >= 1, "the new bot to play the boss again", alive=server.proc)
    assert [e["starts"] for e in server.log_events("boss_started")] == [1, 2]

    # The server stopped: its boss is ended with it.
    second = _boss_pids(server)[1]
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(timeout=120)
    until(lambda: not _alive(second), "the boss to end with the server")


def test_a_boss_the_game_does_not_register_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ladder.toml"
    path.write_text(LADDER.replace('["expert"]', '["expert", "nobody"]'), encoding="utf-8")
    with pytest.raises(LadderFileError, match=r"play\[0\]: bosses: gin registers no sample bot 'nobody' \(it "
                                              r"registers: random, greedy, expert"):
        load_ladder(path)
    path.write_text(LADDER.replace("boss_memory_mb = 2048", "boss_memory_mb = -1"), encoding="utf-8")
    with pytest.raises(LadderFileError, match="boss_memory_mb must be a whole number"):
        load_ladder(path)


def test_a_registered_bot_is_never_taken_over_by_a_boss(tmp_path: Path) -> None:
    registry = BotRegistry(open_db(tmp_path / "serve.sqlite", "serve"))
    token = registry.add(BOSS)
    with pytest.raises(RegistryError, match="not the server's boss"):
        registry.boss_token(BOSS, BotSpec(name=BOSS, command=("x",)))
    assert registry.identify(token) == BOSS  # its token still works
    first = registry.boss_token("gin-greedy", BotSpec(name="gin-greedy", command=("x",)))
    second = registry.boss_token("gin-greedy", BotSpec(name="gin-greedy", command=("x",)))
    assert registry.identify(second) == "gin-greedy" and registry.identify(first) is None  # a new token each start
