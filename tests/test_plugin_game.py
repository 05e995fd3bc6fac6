"""A third game is one folder: tests/plugin_game is a package of its own (``gin-arena-toy3``,
its pyproject.toml registering the entry point ``toy3``), installed by pip for the tests alone
(``.ci/run``: ``pip install --target .test-site -e tests/plugin_game``; tests/_plugin.py puts it
on the tests' path), never into the user's venv. This test follows
docs/adding-a-game.md's steps with real processes: ``arena games`` lists it, a tournament of
its own bots plays it and rates it, ``arena audit`` passes, its replays show in the terminal
and as HTML through its own presentation. And the registry's failures: a broken, an incompatible and a
twice-installed plugin each get one line naming the distribution and the entry point, while
every other command still works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from referee import games
from tests import _plugin
from tests._wait import RUN_HANG_S

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "tests" / "plugin_game"


ARENA_HANG_S = 600
"""How long one ``arena`` command may take before the test calls it a hang: far above its time on
a loaded machine (tests/conftest.py shows what it had written by then)."""


def _arena(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True,
                          timeout=ARENA_HANG_S, cwd=cwd, env=env)


def test_the_plugin_is_installed_from_its_own_folder() -> None:
    """Step 1 of docs/adding-a-game.md: the package is installed (editable, by pip) from
    tests/plugin_game — into the tests' own folder, where this test process finds it."""
    dist = metadata.distribution(_plugin.DIST)
    installed_at = Path(str(dist.locate_file(""))).resolve()
    assert installed_at == _plugin.SITE, f"{_plugin.DIST} is installed at {installed_at}; run: {_plugin.INSTALL}"
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    assert direct["dir_info"] == {"editable": True} and direct["url"] == _plugin.SOURCE.as_uri(), direct
    points = [p for p in dist.entry_points if p.group == games.ENTRY_POINT_GROUP]
    assert [(p.name, p.value) for p in points] == [("toy3", "toy3_game.plugin:PLUGIN")]
    import toy3_game

    assert Path(toy3_game.__file__).resolve().parent == PLUGIN / "toy3_game"
    ours = {p.name: p.value for p in metadata.distribution("gin-arena").entry_points
            if p.group == games.ENTRY_POINT_GROUP}
    assert ours == {"gin": "referee.gin.wire:PLUGIN", "rummy": "referee.rummy.wire:PLUGIN"}


def test_the_users_venv_does_not_list_the_plugin_game(tmp_path: Path) -> None:
    """The venv the tests run in is the user's (``.ci/run`` and the README make ``.venv``): there,
    with the user's environment, ``arena games`` lists the games of gin-arena and nothing of the
    tests'; and an unknown game's message names only those."""
    env = _plugin.without(dict(os.environ))
    listed = _arena("games", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    names = {line.split()[0] for line in listed.stdout.splitlines()[1:]}
    assert names == {"gin", "rummy"}, (
        f"arena games in the user's venv lists {sorted(names)}: {_plugin.DIST} is installed in the venv "
        f"({sys.prefix}); uninstall it (.venv/bin/pip uninstall {_plugin.DIST}): the tests take it from "
        f"{_plugin.SITE.name}/ ({_plugin.INSTALL})\n{listed.stdout}")
    unknown = _arena("play", "--game", "chess", cwd=tmp_path, env=env)
    assert unknown.returncode == 2 and "unknown game 'chess'; known: gin, rummy" in unknown.stderr, unknown.stderr
    assert "toy3" not in unknown.stderr


def test_discovery_imports_no_game() -> None:
    """Listing the games reads metadata only; a game is imported when first used."""
    code = ("import sys; from referee import games; names = games.names(); "
            "loaded = sorted(m for m in sys.modules if m.startswith(('toy3_game', 'referee.gin', 'referee.rummy', "
            "'referee.gin.wire', 'referee.rummy.wire', 'gin_arena'))); "
            "games.get('toy3'); print(names, loaded, 'toy3_game.engine' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=RUN_HANG_S, check=True)
    assert out.stdout.strip() == "['gin', 'rummy', 'toy3'] [] True", out.stdout + out.stderr


def test_arena_games_lists_what_is_installed(tmp_path: Path) -> None:
    out = _arena("games", cwd=tmp_path)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    rows = {line.split()[0]: line for line in out.stdout.splitlines()[1:]}
    assert set(rows) == {"gin", "rummy", "toy3"}
    assert "gin-arena-toy3 0.1.0" in rows["toy3"] and "2-6" in rows["toy3"] and "standard, short" in rows["toy3"]
    assert rows["toy3"].split()[-1] == "ok" and "classic, oklahoma" in rows["gin"]
    listed = json.loads(_arena("games", "--json", cwd=tmp_path).stdout)
    toy = next(g for g in listed if g["name"] == "toy3")
    assert toy == {"name": "toy3", "origin": "gin-arena-toy3 0.1.0", "entry_point": "toy3 = toy3_game.plugin:PLUGIN",
                   "plugin_api": games.PLUGIN_API, "seats": [2, 3, 4, 5, 6], "presets": ["standard", "short"],
                   "problem": None, "display_name": "High cards",
                   "capabilities": ["knows_cards", "describe", "event_words", "encodings"],
                   "capability_problems": []}
    assert _arena("games", "--check", cwd=tmp_path).returncode == 0


def test_a_tournament_of_the_plugin_game_is_rated_and_audited(tmp_path: Path) -> None:
    """Steps 4 and 5: the plugin's own bots play ``arena tournament --game toy3``; the run is
    rated, every replay passes ``arena audit``, and the viewers show its replays."""
    bots = tmp_path / "bots.toml"
    bots.write_text("".join(
        f'[[bot]]\nname = "{name}"\ngames = ["toy3"]\n'
        f'command = ["{{python}}", "-m", "toy3_game.bot", "--strategy", "{strategy}"]\n'
        for name, strategy in (("high", "high"), ("low", "low"), ("high2", "high"))))
    run = tmp_path / "run"
    out = _arena("tournament", "--bots", str(bots), "--game", "toy3", "--seats", "3", "--games", "3",
                 "--rules", "short", "--concurrency", "2", "--tc", "st=5", "--seed", "plugin", "--out", str(run),
                 cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "toy3, round-robin, 3 bots, 3 seats" in out.stdout and "Ranking (3 seats" in out.stdout
    results = json.loads((run / "results.json").read_text())
    assert results["games_played"] == 3 and results["terminations"] == {"normal": 3}
    ranking = {r["bot"]: r for r in results["ranking"]}
    assert set(ranking) == {"high", "low", "high2"}
    assert all(r["rated_games"] == 3 and r["sigma"] > 0 and r["low"] < r["mu"] < r["high"] for r in ranking.values())
    replays = sorted((run / "replays").glob("*.jsonl"))
    assert len(replays) == 3
    for path in replays:
        header = json.loads(path.read_text().splitlines()[0])
        assert header["game"] == "toy3" and header["rules"] == {"games": 1} and len(header["players"]) == 3

    audit = _arena("audit", str(run), cwd=tmp_path)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert audit.stdout.count("OK ") == 3 and "Audited 3 matches: 3 passed, all checks passed" in audit.stdout
    assert "chain ✓  commitment ✓  decks ✓  re-run ✓  digests ✓  information ✓" in audit.stdout
    # a replay with one card changed fails the audit (its chain first)
    lines = replays[0].read_text().splitlines()
    deal = next(i for i, line in enumerate(lines) if json.loads(line).get("type") == "deal")
    rec = json.loads(lines[deal])
    rec["deck"][0], rec["deck"][1] = rec["deck"][1], rec["deck"][0]
    lines[deal] = json.dumps(rec, separators=(",", ":"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    assert _arena("audit", str(bad), cwd=tmp_path).returncode == 1

    # The viewers are game-neutral: they draw the game's own presentation (toy3_game/present.py)
    # in the terminal and as an HTML page; the results page links every game to its page.
    index = (run / "index.html").read_text()
    assert "id='ranking'" in index
    first = [json.loads(line) for line in replays[0].read_text().splitlines()]
    deal = next(r for r in first if r["type"] == "deal")
    plays = [r for r in first if r["type"] == "action"]
    summary = _arena("replay", str(replays[0]), cwd=tmp_path)
    assert summary.returncode == 0, summary.stderr
    assert "(High cards, 3 seats): high (seat 0), low (seat 1), high2 (seat 2) · high cards, 1 game" in summary.stdout
    assert "1 deal, 7 positions" in summary.stdout and "every card is played" in summary.stdout
    every = _arena("replay", str(replays[0]), "--all", cwd=tmp_path)
    assert every.returncode == 0 and every.stdout.count("position ") == 7
    blocks = every.stdout.split("\n\n")[1:]
    for seat in range(3):  # the replay's viewer sees every hand: the deal's two cards of each seat
        cards = sorted(deal["deck"][2 * seat:2 * seat + 2], key=int)
        assert f" {' '.join(cards)} · 0 points" in blocks[0], blocks[0]
    for k, play in enumerate(plays, start=1):
        assert f"Last: {first[0]['players'][play['seat']]} plays {play['action']}" in blocks[k]
    assert "Match over: " in blocks[-1] and "Game 1 over: " in blocks[-1]
    page = tmp_path / "replay.html"
    made = _arena("replay", str(replays[0]), "--html", str(page), cwd=tmp_path)
    assert made.returncode == 0 and page.is_file(), made.stderr
    assert all(f"href='html/{p.stem}.html'" in index and (run / "html" / f"{p.stem}.html").is_file()
               for p in replays)
    from tests.test_rummy_viewers import _open

    dom = _open(page, "step=2", tmp_path / "profile")
    assert dom.body["data-position"] == "2"
    assert dom.attrs["pile-played"]["data-cards"] == " ".join(p["action"] for p in plays[:2])
    played = {p["action"] for p in plays[:2]}
    for seat in range(3):
        left = [c for c in sorted(deal["deck"][2 * seat:2 * seat + 2], key=int) if c not in played]
        assert dom.attrs[f"hand-{seat}"]["data-cards"] == " ".join(left)
    dom = _open(page, "step=0&keys=End", tmp_path / "profile")
    assert dom.body["data-position"] == "6" and "hidden" not in dom.attrs["deal-end"]["class"]
    assert dom.attrs["deal-end"]["data-points"] == ",".join(str(p) for p in first[-1]["totals"])


def _fake_dist(site: Path, name: str, points: dict[str, str], modules: dict[str, str]) -> None:
    """An installed distribution as importlib.metadata reads one: its dist-info with METADATA and
    entry_points.txt, and its modules."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = "".join(f"{k} = {v}\n" for k, v in points.items())
    (info / "entry_points.txt").write_text(f"[{games.ENTRY_POINT_GROUP}]\n{lines}")
    for module, text in modules.items():
        (site / f"{module}.py").write_text(text)


PLUGIN_OF = "from referee.games import GamePlugin\n"


def test_broken_incompatible_and_duplicate_plugins_are_named_and_the_rest_works(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _fake_dist(site, "broken-game", {"broken": "broken_game:PLUGIN"},
               {"broken_game": "import no_such_module_anywhere\n"})
    _fake_dist(site, "future-game", {"future": "future_game:PLUGIN"},
               {"future_game": PLUGIN_OF + "PLUGIN = GamePlugin(plugin_api=99, load=lambda: None)\n"})
    _fake_dist(site, "failing-game", {"failing": "failing_game:PLUGIN"},
               {"failing_game": PLUGIN_OF + "def _load():\n    raise RuntimeError('engine\\nmissing')\n"
                                           "PLUGIN = GamePlugin(plugin_api=1, load=_load)\n"})
    _fake_dist(site, "other-toy3", {"toy3": "other_toy3:PLUGIN"}, {"other_toy3": "PLUGIN = 42\n"})
    env = {"PYTHONPATH": os.pathsep.join([str(site), *_plugin.paths()]), "PATH": "/usr/bin:/bin",
           "HOME": str(tmp_path)}

    listed = _arena("games", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    status = {line.split()[0]: line.split()[-1] for line in listed.stdout.splitlines()[1:]}
    assert status == {"broken": "PROBLEM", "failing": "PROBLEM", "future": "PROBLEM", "gin": "ok", "rummy": "ok",
                      "toy3": "PROBLEM"}
    warnings = listed.stderr.splitlines()
    assert len(warnings) == 4 and all(w.startswith("arena: warning: game '") for w in warnings), warnings
    text = listed.stderr
    assert ("game 'broken' is broken: entry point 'broken = broken_game:PLUGIN' of broken-game 1.0 fails to "
            "import: ModuleNotFoundError: No module named 'no_such_module_anywhere'") in text
    assert ("game 'future' is incompatible: entry point 'future = future_game:PLUGIN' of future-game 1.0 is "
            f"written for plugin API 99; this referee speaks plugin API {games.PLUGIN_API}") in text
    assert ("game 'failing' is broken: loading entry point 'failing = failing_game:PLUGIN' of failing-game 1.0 "
            "fails: RuntimeError: engine missing") in text
    assert "game 'toy3' is installed more than once (" in text
    assert "toy3_game.plugin:PLUGIN' of gin-arena-toy3 0.1.0" in text and "other_toy3:PLUGIN' of other-toy3 1.0" in text
    assert _arena("games", "--check", cwd=tmp_path, env=env).returncode == 1

    # a command asking for a game with a problem gets its one line (exit 2, nothing written) ...
    for game, says in (("broken", "is broken"), ("future", "is incompatible"), ("toy3", "installed more than once")):
        run = tmp_path / f"run-{game}"
        out = _arena("tournament", "--game", game, "--seats", "3", "--games", "3", "--out", str(run),
                     *(a for n in "abc" for a in ("--bot", f'name={n} cmd="{{python}}"')), cwd=tmp_path, env=env)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and says in out.stderr, out.stderr
        assert f"game '{game}'" in out.stderr and not run.exists()
    # ... and every other command still works: the version, and a game of Gin (greedy bots: two
    # random bots play some 10,000 decisions a game, minutes on a loaded machine; no clock to lose on)
    assert _arena("--version", cwd=tmp_path, env=env).returncode == 0
    gin = _arena("tournament", "--games", "2", "--rules", "short", "--tc", "st=60", "--out", str(tmp_path / "gin"),
                 "--bot", 'name=g1 cmd="{python} -m sample_bots.greedy_bot"', "--bot",
                 'name=g2 cmd="{python} -m sample_bots.greedy_bot"', cwd=REPO, env=env)
    assert gin.returncode == 0, gin.stdout + gin.stderr
    assert json.loads((tmp_path / "gin" / "results.json").read_text())["games_played"] == 2


def test_register_adds_a_game_in_process_and_refuses_a_taken_name() -> None:
    from toy3_game.wire import REGISTERED

    with pytest.raises(ValueError, match="'gin' is registered already"):
        games.register("gin", lambda: REGISTERED)
    with pytest.raises(ValueError, match="'toy3' is registered already"):
        games.register("toy3", lambda: REGISTERED)
    games.register("toy3-in-process", lambda: REGISTERED)
    assert "toy3-in-process" in games.names() and games.get("toy3-in-process") is REGISTERED
    origin = next(g for g in games.installed() if g.name == "toy3-in-process")
    assert origin.origin == "in process" and origin.problem is None and origin.presets == ("standard", "short")
    with pytest.raises(games.GamePluginError, match=r"unknown game 'chess'; known: gin, rummy, toy3, toy3-in-process"):
        games.get("chess")


def test_the_plugin_games_messages_are_served_through_reflection() -> None:
    """The toy's content travels packed in the envelope's Any: a generic client finds the
    descriptor of its message type through the referee's gRPC reflection (once the game is
    loaded), and unpacks what the referee sent with it."""
    import grpc
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    import referee

    wire = games.get("toy3").wire
    action = wire.action_from_text("7")
    assert action.WhichOneof("game") == "other" and action.other.type_url.endswith("/toy3.v1.Play")

    async def ask(address: str) -> list[bytes]:
        async with grpc.aio.insecure_channel(address) as ch:
            stub = reflection_pb2_grpc.ServerReflectionStub(ch)
            call = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(
                file_containing_symbol="toy3.v1.Play")]))
            async for reply in call:
                return list(reply.file_descriptor_response.file_descriptor_proto)
        return []

    async def main() -> list[bytes]:
        async with referee.open_referee() as ref:
            found: list[bytes] = await referee.aio(ask(ref.address))
            return found

    files = referee.run(main)
    assert files, "reflection knows no file declaring toy3.v1.Play"
    pool = descriptor_pool.DescriptorPool()
    for raw in files:
        pool.Add(descriptor_pb2.FileDescriptorProto.FromString(raw))
    play_type = message_factory.GetMessageClass(pool.FindMessageTypeByName("toy3.v1.Play"))
    decoded = play_type.FromString(action.other.value)
    assert decoded.card == 7  # type: ignore[attr-defined]
