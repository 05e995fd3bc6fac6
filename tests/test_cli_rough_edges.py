"""The rough edges of issue 22: a command whose reader goes away ends quietly; a run folder that
was copied elsewhere still reports and audits (its results name replays relative to it, and
runs of earlier versions still read); an unknown ``--rules`` names the game that has it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli import main as arena_main
from arena.exit_codes import EXIT_STDOUT_CLOSED
from tests._wait import RUN_HANG_S

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
FIXTURE_RUN = ROOT / "tests" / "fixtures" / "v0_1" / "demo_run"
ARENA = [sys.executable, "-m", "arena.cli"]


def _arena(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=RUN_HANG_S)


# ----------------------------------------------------------------------------------------------
# a reader that closes early
# ----------------------------------------------------------------------------------------------
def _with_closed_stdout(cwd: Path, *args: str) -> tuple[int, str]:
    """Run ``arena ARGS`` with its stdout a pipe whose reader is gone before the command writes
    (as ``| head`` does once it has its lines): exit status and stderr."""
    read, write = os.pipe()
    os.close(read)  # nobody will read: the command's first write meets a closed pipe
    try:
        proc = subprocess.run([*ARENA, *args], cwd=cwd, env=ENV, stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=RUN_HANG_S)
    finally:
        os.close(write)
    return proc.returncode, proc.stderr


@pytest.fixture
def old_run(tmp_path: Path) -> Path:
    run = tmp_path / "demo_run"
    shutil.copytree(FIXTURE_RUN, run)
    return run


@pytest.mark.parametrize("args", [
    ("report", "{run}"), ("report", "{run}", "--json"), ("audit", "{run}"), ("replay", "{replay}"), ("--help",),
], ids=["report", "report-json", "audit", "replay", "help"])
def test_a_command_whose_reader_closed_stops_quietly(old_run: Path, args: tuple[str, ...]) -> None:
    replay = sorted((old_run / "replays").glob("*.jsonl"))[0]
    words = [a.format(run=old_run, replay=replay) for a in args]
    code, err = _with_closed_stdout(old_run.parent, *words)
    assert code == EXIT_STDOUT_CLOSED, err
    assert err == "", f"nothing on stderr (no traceback, no 'Exception ignored'): {err!r}"
    if args[0] == "report":  # what it writes besides stdout is whole
        assert json.loads((old_run / "results.json").read_text())["games_played"] == 6


def test_a_reader_that_reads_everything_sees_the_whole_output(old_run: Path) -> None:
    done = subprocess.run(f"{sys.executable} -m arena.cli report {old_run} | head -n 3", shell=True, cwd=old_run.parent,
                          env=ENV, capture_output=True, text=True, timeout=RUN_HANG_S)
    assert done.stdout.splitlines()[0].startswith("Standings") and len(done.stdout.splitlines()) == 3
    assert "Traceback" not in done.stderr and "Broken pipe" not in done.stderr, done.stderr


# ----------------------------------------------------------------------------------------------
# a copied run folder
# ----------------------------------------------------------------------------------------------
def test_a_copied_run_folder_reports_and_audits_with_its_own_replays(tmp_path: Path) -> None:
    done = _arena(tmp_path, "tournament", "--games", "2", "--rules", "short", "--tc", "st=2", "--workers", "1",
                  "--bot", 'name=a cmd="{python} -m sample_bots.greedy_bot"',
                  "--bot", 'name=b cmd="{python} -m sample_bots.greedy_bot"', "--out", "runs/t", "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((tmp_path / "runs" / "t" / "results.json").read_text())
    assert [g["replay_path"] for g in results["games"]] == [f"replays/{g['match_id']}.jsonl" for g in results["games"]]
    # copied next to the original (which stays, as the user had it), audited from the same folder
    shutil.copytree(tmp_path / "runs" / "t", tmp_path / "copy")
    audit = _arena(tmp_path, "audit", "copy")
    assert audit.returncode == 0, audit.stdout[-3000:]
    assert "2 listed replay hash(es) checked" in audit.stdout and "not listed" not in audit.stdout, audit.stdout
    # the copy's results are checked against the copy's replays: a changed copy fails, the original is not used
    replay = tmp_path / "copy" / results["games"][0]["replay_path"]
    replay.write_text(replay.read_text().replace('"seq":0', '"seq":0 ', 1))
    assert _arena(tmp_path, "audit", "copy").returncode == 1
    # elsewhere, with the original gone: report rewrites the results, the page links the copy's replays
    moved = tmp_path / "elsewhere" / "t"
    shutil.copytree(tmp_path / "runs" / "t", moved)
    shutil.rmtree(tmp_path / "runs")
    (tmp_path / "work").mkdir()
    report = _arena(tmp_path / "work", "report", str(moved))
    assert report.returncode == 0, report.stderr
    again = json.loads((moved / "results.json").read_text())
    assert [g["replay_path"] for g in again["games"]] == [g["replay_path"] for g in results["games"]]
    assert _arena(tmp_path / "work", "audit", str(moved)).returncode == 0


def test_a_run_of_an_earlier_version_with_paths_relative_to_where_it_started(old_run: Path) -> None:
    """gin-arena 0.1 wrote absolute paths (the fixture) or paths relative to the folder the run
    was started in (``runs/x/replays/…``): both are found inside a copied folder, even when the
    original still stands where the cwd-relative path points."""
    original = old_run.parent / "runs" / "x"
    shutil.copytree(old_run, original)
    data = json.loads((old_run / "results.json").read_text())
    for g in data["games"]:
        g["replay_path"] = f"runs/x/replays/{Path(g['replay_path']).name}"
    (old_run / "results.json").write_text(json.dumps(data))
    for target in (old_run, old_run / "replays"):
        audit = _arena(old_run.parent, "audit", str(target.relative_to(old_run.parent)))
        assert audit.returncode == 0, audit.stdout[-2000:]
        assert "6 listed replay hash(es) checked" in audit.stdout and "not listed" not in audit.stdout, audit.stdout


# ----------------------------------------------------------------------------------------------
# --rules of another game
# ----------------------------------------------------------------------------------------------
BOTS = ["--bot", 'name=a cmd="{python} -m sample_bots.greedy_bot"',
        "--bot", 'name=b cmd="{python} -m sample_bots.greedy_bot"']


@pytest.mark.parametrize(("args", "says"), [
    (["--rules", "michgan"], "did you mean michigan (--game rummy)?"),
    (["--rules", "michigan"], "that is a preset of rummy, not of gin; add --game rummy"),
    (["--game", "rummy", "--rules", "shrot"], "did you mean short (--game gin)?"),
    (["--game", "rummy", "--rules", "bozenkil"], "did you mean bozenkill?"),
    (["--rules", "nothing-like-it"], "gin has no such preset (presets:"),
])
def test_an_unknown_preset_names_the_game_that_has_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      args: list[str], says: str) -> None:
    out = tmp_path / "run"
    assert arena_main(["tournament", *args, *BOTS, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err, err
    assert "gin: classic, oklahoma, straight, short" in err and "rummy: rummy, open, michigan, bozenkill" in err
    assert not out.exists()
