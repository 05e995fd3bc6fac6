"""The bots manifest: a good one loads; every error names the file, the bot and the field, all of
them are reported at once, and the command line exits with code 2. Also the schedule: pairs with
the seats swapped, duplicate seeds, first dealers, determinism."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli import main
from arena.competition.seating import pair_seeds
from arena.model.manifest import BotSpec, ManifestError, load_manifest, parse_inline_bot, parse_manifest
from arena.model.schedule import PlayConfig, RunConfig, build_schedule, schedule_fingerprint
from referee import DEFAULT_GAME, TimeControl
from referee import games as referee_games
from referee.gin import RuleSet, first_dealer

GOOD = """
[[bot]]
name = "alpha"
command = ["{python}", "-m", "arena._testbot"]
env = { GIN_LOG_LEVEL = "WARNING" }

[[bot]]
name = "beta"
command = ["{python}", "-m", "arena._testbot", "--mode", "random"]
cwd = "sub"
protocol = "stdio"

[[bot]]
name = "visitor"
remote = true
"""


def test_good_manifest(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    path = tmp_path / "bots.toml"
    path.write_text(GOOD)
    bots = load_manifest(path)
    assert [b.name for b in bots] == ["alpha", "beta", "visitor"]
    alpha, beta, visitor = bots
    assert alpha.cwd == str(tmp_path) and alpha.env == {"GIN_LOG_LEVEL": "WARNING"}
    argv = alpha.argv("127.0.0.1:5", "t" * 32)
    assert argv[0] == sys.executable and argv[-6:] == ["--referee", "127.0.0.1:5", "--token", "t" * 32,
                                                        "--name", "alpha"]
    env = alpha.environment("127.0.0.1:5", "t" * 32)
    assert (env["GIN_REFEREE"], env["GIN_TOKEN"], env["GIN_BOT_NAME"]) == ("127.0.0.1:5", "t" * 32, "alpha")
    assert beta.cwd == str(tmp_path / "sub")
    bridge = beta.argv("h:1", "x" * 32)
    assert bridge[1:3] == ["-m", "sample_bots.stdio_bridge"] and bridge[bridge.index("--") + 1] == sys.executable
    assert visitor.remote and visitor.limit == 1 and alpha.limit == 0
    assert BotSpec.from_dict(alpha.to_dict()) == alpha


BAD = """
[[bot]]
name = "ok"
command = ["{python}", "-m", "arena._testbot"]

[[bot]]
name = "strcmd"
command = "python bot.py"

[[bot]]
name = "ok"
command = ["{python}"]

[[bot]]
command = ["{python}"]

[[bot]]
name = "proto"
command = ["{python}"]
protocol = "websocket"
colour = "red"

[[bot]]
name = "both"
command = ["{python}"]
remote = true

[[bot]]
name = "nothing"

[[bot]]
name = "bad name!"
command = ["{python}"]

[[bot]]
name = "envbad"
command = ["{python}"]
env = { N = 3 }
cwd = "no/such/folder"

[[bot]]
name = "missing"
command = ["no-such-program-xyz"]

[[bot]]
name = "slowclock"
command = ["{python}"]
tc = "st=abc"
"""


def test_manifest_errors_name_file_bot_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bots.toml"
    path.write_text(BAD)
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    problems = info.value.problems
    text = "\n".join(problems)
    assert all(p.startswith(str(path)) for p in problems), text
    expected = [
        ("bot 'strcmd'", "'command'", "list of strings"),
        ("bot 'ok' (#3)", "'name'", "duplicate"),
        ("bot #4", "'name'", "missing"),
        ("bot 'proto'", "'protocol'", "websocket"),
        ("bot 'proto'", "'colour'", "unknown field"),
        ("bot 'both'", "'command'", "remote bot has no command"),
        ("bot 'nothing'", "'command'", "missing"),
        ("bot 'bad name!'", "'name'", "not a valid name"),
        ("bot 'envbad'", "'env'", "must be strings"),
        ("bot 'envbad'", "'cwd'", "not a folder"),
        ("bot 'missing'", "'command'", "not found"),
        ("bot 'slowclock'", "'tc'", "not a number"),
    ]
    for bot, fld, why in expected:
        assert any(bot in p and f"field {fld}" in p and why in p for p in problems), (bot, fld, why, text)
    assert len(problems) == len(expected)


def test_a_bot_has_its_own_time_control(tmp_path: Path) -> None:
    path = tmp_path / "bots.toml"
    path.write_text(GOOD.replace('protocol = "stdio"\n', 'protocol = "stdio"\ntc = "tc=60+0.5"\n').replace(
        'cwd = "sub"\n', ""))
    alpha, beta, _ = load_manifest(path)
    assert alpha.time_control is None and beta.time_control == TimeControl.parse("tc=60+0.5")
    assert beta.to_dict()["tc"] == {"base_ms": 60_000, "increment_ms": 500}
    assert BotSpec.from_dict(beta.to_dict()) == beta
    # a bot stored before the canonical form kept the text: it still reads
    assert BotSpec.from_dict({**beta.to_dict(), "tc": "tc=60+0.5"}) == beta


def test_inline_bots(tmp_path: Path) -> None:
    bot = parse_inline_bot('name=greedy cmd="{python} -m sample_bots.greedy_bot --x 1" tc=st=0.25 protocol=stdio',
                           tmp_path)
    assert bot.name == "greedy" and bot.command == ("{python}", "-m", "sample_bots.greedy_bot", "--x", "1")
    assert bot.time_control == TimeControl.parse("st=0.25") and bot.protocol == "stdio" and bot.cwd == str(tmp_path)
    with pytest.raises(ManifestError, match="give at least name=NAME"):
        parse_inline_bot("name=x", tmp_path)
    with pytest.raises(ManifestError, match="'colour=red': expected KEY=VALUE"):
        parse_inline_bot('name=x cmd="{python}" colour=red', tmp_path)
    with pytest.raises(ManifestError, match="field 'tc'"):
        parse_inline_bot('name=x cmd="{python}" tc=fast', tmp_path)


def test_run_config_is_typed_and_stored_flat() -> None:
    play = PlayConfig(rules=RuleSet.preset("short"), time_control=TimeControl.parse("tc=30+1 timemargin=20"),
                      fault_policy="substitute", concurrency=3, connect_timeout_ms=5000)
    cfg = RunConfig(run_id="r", bots=("a", "b"), games=4, seed="s", play=play)
    stored = cfg.to_dict()
    assert stored["time_control"] == {"base_ms": 30_000, "increment_ms": 1000, "margin_ms": 20}
    assert stored["rules"]["name"] == "short"
    assert stored["fault_policy"] == "substitute" and "play" not in stored  # gin-arena 0.1's keys
    assert RunConfig.from_dict(stored) == cfg
    assert RunConfig.from_dict({**stored, "time_control": "tc=30+1 timemargin=20"}) == cfg  # a 0.1 run's text
    with pytest.raises(ValueError, match="concurrency"):
        PlayConfig(concurrency=0)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("arena (gin-arena) 0.")
    from referee import cardcore, gin, rummy
    from referee.wire import envelope
    for what, module in (("gin engine", gin), ("rummy engine", rummy), ("card core", cardcore),
                         ("wire encoders", envelope)):
        assert f"{what} {'compiled (mypyc)' if module.COMPILED else 'pure Python'}" in out, out


def test_manifest_syntax_and_top_level(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"x\.toml: not valid TOML"):
        parse_manifest("[[bot]\nname=", tmp_path / "x.toml")
    with pytest.raises(ManifestError, match=r"x\.toml: field 'bots': unknown top-level key"):
        parse_manifest('[[bots]]\nname = "a"\n', tmp_path / "x.toml")
    with pytest.raises(ManifestError, match="at least 2 bots"):
        parse_manifest('[[bot]]\nname = "a"\nremote = true\n', tmp_path / "x.toml")


def test_cli_exit_code_2_with_the_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bots.toml"
    path.write_text(BAD)
    assert main(["tournament", "--bots", str(path), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "the manifest has 12 problem(s)" in err
    assert f"{path}: bot 'strcmd' (#2): field 'command'" in err
    assert not (tmp_path / "run").exists()
    # Other bad options exit with 2 as well.
    (tmp_path / "ok.toml").write_text(GOOD.replace('cwd = "sub"\n', ""))
    assert main(["tournament", "--bots", str(tmp_path / "ok.toml"), "--games", "3"]) == 2
    assert "even" in capsys.readouterr().err
    assert main(["tournament", "--bots", str(tmp_path / "ok.toml"), "--tc", "st=abc"]) == 2
    assert main(["tournament", "--bots", str(tmp_path / "ok.toml"), "--rule", "target=-5"]) == 2
    assert "target" in capsys.readouterr().err
    assert main(["tournament", "--resume", str(tmp_path / "nothing-here")]) == 2
    capsys.readouterr()
    assert main(["tournament", "--bot", 'name=a cmd="{python}"', "--bot", 'name=a cmd="{python}"']) == 2
    assert "'a' is given twice" in capsys.readouterr().err
    assert main(["tournament", "--bot", 'name=a cmd="{python}"']) == 2
    assert "at least 2 bots" in capsys.readouterr().err
    assert main(["tournament", "--bot", 'name=a cmd="{python}"', "--bot", "name=b cmd=no-such-prog",
                 "--out", str(tmp_path / "run2")]) == 2
    assert "'no-such-prog' is not found" in capsys.readouterr().err and not (tmp_path / "run2").exists()



@pytest.mark.parametrize("how", ["inline", "manifest"])
def test_a_missing_script_is_refused_before_any_run_folder_exists(tmp_path: Path, how: str) -> None:
    """``{python} no_such_file.py`` would start (the interpreter is there) and every game would
    end ``crashed``: an inline bot and a manifest's bot are both refused, exit 2, one line naming
    the bot and the file, and no run folder is made. ``python -m`` and options before the script
    (``-u``, ``-X dev``) are understood; a script that is there is taken."""
    (tmp_path / "real.py").write_text("raise SystemExit(0)\n")
    good = 'name=good cmd="{python} -u -X dev real.py"'
    bad = 'name=broken cmd="{python} -u no_such_file.py"'
    if how == "inline":
        bots = ["--bot", good, "--bot", bad]
    else:
        (tmp_path / "bots.toml").write_text(
            '[[bot]]\nname = "good"\ncommand = ["{python}", "-u", "-X", "dev", "real.py"]\n\n'
            '[[bot]]\nname = "broken"\ncommand = ["{python}", "-u", "no_such_file.py"]\n')
        bots = ["--bots", str(tmp_path / "bots.toml")]
    run = tmp_path / "run"
    out = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", *bots, "--games", "2", "--workers", "1",
                          "--out", str(run)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    problems = [line.strip() for line in out.stderr.splitlines() if "no_such_file.py" in line]
    assert len(problems) == 1 and "bot 'broken'" in problems[0] and "not found" in problems[0], out.stderr
    assert "bot 'good'" not in out.stderr
    assert not run.exists() and not (tmp_path / "runs").exists()

def test_help_lists_the_commands() -> None:
    out = subprocess.run([sys.executable, "-m", "arena.cli", "--help"], capture_output=True, text=True, check=True)
    for word in ("demo", "tournament", "serve", "report", "ladder"):
        assert word in out.stdout
    out = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "--help"], capture_output=True,
                         text=True, check=True)
    for opt in ("--format", "--games", "--rules", "--rule", "--tc", "--concurrency", "--seed", "--out",
                "--fault-policy", "--duplicate", "--no-duplicate", "--resume", "--sprt", "--referee", "--bot",
                "--listen"):
        assert opt in out.stdout


# ----- the schedule -----
def _config(**kw: object) -> RunConfig:
    base: dict[str, object] = {"run_id": "t", "bots": ("a", "b", "c"), "games": 4, "seed": "s"}
    base.update(kw)
    return RunConfig(**base)  # type: ignore[arg-type]


def test_round_robin_schedule() -> None:
    jobs = build_schedule(_config())
    assert len(jobs) == 3 * 4
    assert [j.idx for j in jobs] == list(range(12))
    for pairing in ("a|b", "a|c", "b|c"):
        mine = [j for j in jobs if j.pairing == pairing]
        assert len(mine) == 4
        for pair in (0, 1):
            g0, g1 = (j for j in mine if j.pair == pair)
            assert g0.players == g1.players[::-1]  # seats swapped
            assert g0.seed == g1.seed and g0.pair_key == g1.pair_key == f"{pairing}#{pair}"
    # Interleaved: the first pair of every pairing comes before any second pair.
    assert [j.pair for j in jobs[:6]] == [0] * 6
    assert schedule_fingerprint(jobs) == schedule_fingerprint(build_schedule(_config()))
    assert schedule_fingerprint(jobs) != schedule_fingerprint(build_schedule(_config(seed="other")))


def test_non_duplicate_seeds_keep_the_first_dealer_swapped() -> None:
    draws = referee_games.get(DEFAULT_GAME).game
    assert hasattr(draws, "first_dealer")  # referee.games.DrawsFirstDealer
    for pair in range(20):
        s0, s1 = pair_seeds("run", "a|b", pair, duplicate=False, first_dealer=lambda s: first_dealer(s, 1))
        assert s0 != s1
        # Same dealing seat with the bots swapped = the other bot deals first.
        assert first_dealer(s0, 1) == first_dealer(s1, 1)
    assert pair_seeds("run", "a|b", 0, duplicate=False)[0] == pair_seeds("run", "a|b", 0, duplicate=True)[0]
    jobs = build_schedule(_config(duplicate=False))
    assert all(j.pair_key == "" for j in jobs)
    # The schedule reaches the first dealer through the game seam: its pairs are the ones above.
    for j0, j1 in zip(jobs[::2], jobs[1::2], strict=True):
        assert (j0.seed, j1.seed) == pair_seeds("s", j0.pairing, j0.pair, duplicate=False,
                                                first_dealer=lambda s: draws.first_dealer(s, 2))


def test_gauntlet_schedule() -> None:
    jobs = build_schedule(_config(format="gauntlet", challenger="b", games=2))
    assert {j.pairing for j in jobs} == {"b|a", "b|c"}
    with pytest.raises(ValueError, match="a multiple of the 2 seats"):
        _config(games=3)


def test_rule_overrides_work_through_every_games_rule_set() -> None:
    from arena.cli.options import UsageError, game_rules_from_args

    for name in referee_games.names():
        engine = referee_games.get(name).game
        plain = engine.rules_to_dict(engine.default_rules())
        assert engine.rules_to_dict(game_rules_from_args(name, "", ["games=3"]))["games"] == 3
        assert game_rules_from_args(name, "", []) == engine.default_rules()
        with pytest.raises(UsageError, match="unknown rule option"):
            game_rules_from_args(name, "", ["colour=red"])
        with pytest.raises(UsageError, match="expected KEY=VALUE"):
            game_rules_from_args(name, "", ["games"])
        assert "games" in plain
    short = game_rules_from_args(DEFAULT_GAME, "short", ["target=40", "big_gin=off"])
    assert short == RuleSet.preset("short", target=40, big_gin=False)
