"""The console: on a terminal a progress bar (drawn by rich) with log lines printed above it;
without one, plain periodic progress lines; text tables with aligned columns."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

from arena.console import Console, Progress
from arena.results.report import table


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal_keeps_log_lines_whole() -> None:
    term = _Terminal()
    console = Console(term)
    progress = Progress(console, total=10)
    progress.update(done=3, running=2, force=True)
    console.line("a log line")
    progress.update(note="SPRT H1 accepted", force=True)
    progress.finish()
    out = term.getvalue()
    assert "a log line\n" in out
    assert "3/10" in out and "2 running" in out and "SPRT H1 accepted" in out
    assert console.live is None  # the bar is gone: lines are plain again
    console.line("after")
    assert term.getvalue().endswith("after\n")


def test_progress_lines_without_a_terminal() -> None:
    stream = io.StringIO()
    console = Console(stream)
    progress = Progress(console, total=4, every_s=3600)
    progress.update(done=1, running=1)  # not yet: once an hour, or when forced
    progress.update(done=2, running=1, force=True)
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert lines == [line for line in lines if line.startswith("progress: ")]
    assert lines[0].startswith("progress: 2/4 games  50% | 1 running")


def test_progress_never_shows_100_percent_with_games_running() -> None:
    """A game is counted done a moment before its slot is given back, and 199/200 rounds to
    100%: neither shows as "100% | 1 running" (the plain line nor the bar)."""
    stream = io.StringIO()
    progress = Progress(Console(stream), total=12, every_s=3600)
    progress.update(done=11, running=1, force=True)
    progress.update(done=12, force=True)  # the last result, its slot not given back yet
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("progress: 11/12 games  91% | 1 running"), lines
    assert lines[1].startswith("progress: 12/12 games 100% | 0 running"), lines
    stream = io.StringIO()
    progress = Progress(Console(stream), total=200, every_s=3600)
    progress.update(done=199, running=1, force=True)
    assert stream.getvalue().startswith("progress: 199/200 games  99% | 1 running"), stream.getvalue()
    term = _Terminal()
    progress = Progress(Console(term), total=200)
    progress.update(done=199, running=1, force=True)
    progress.update(done=200, force=True)
    progress.finish()
    drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", term.getvalue())  # (the bar's colours)
    assert "199/200 games  99% | 1 running" in drawn and "200/200 games 100% | 0 running" in drawn, drawn
    assert "100% | 1 running" not in drawn


def test_text_table_aligns_columns() -> None:
    text = table(["#", "bot", "Elo"], [[1, "expert", "+191"], [10, "a-long-name", "-inf"]], right=[0, 2])
    lines = text.splitlines()
    assert lines[0].split() == ["#", "bot", "Elo"] and set(lines[1]) <= {"-", " "}
    assert lines[2].split() == ["1", "expert", "+191"] and lines[3].split() == ["10", "a-long-name", "-inf"]
    assert len({len(line) for line in lines[1:]}) == 1  # right-aligned last column: every row as wide
    assert lines[2].index("expert") == lines[3].index("a-long-name")


def test_warnings_are_words_on_the_console_and_json_only_in_run_log(tmp_path: Path) -> None:
    """A bot that quits mid-match: its ``seat_faulted`` warning is on stderr in the console
    renderer's words (stderr is no terminal here, as in CI or a pipe), not as a JSON line; run.log
    has it as JSON; ``--log-json`` asks for JSON on stderr."""
    def tournament(run: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "arena.cli", "tournament", "--bot", 'name=good cmd="{python} -m arena._testbot"',
             "--bot", 'name=quitter cmd="{python} -m arena._testbot --mode quit-after --after 3"', "--games", "2",
             "--rules", "short", "--tc", "st=30", "--workers", "1", "--out", str(run), *extra],
            capture_output=True, text=True, timeout=600)

    out = tournament(tmp_path / "run")
    assert out.returncode == 0, out.stdout + out.stderr
    faulted = [line for line in out.stderr.splitlines() if "seat_faulted" in line]
    assert faulted, out.stderr
    assert all(re.match(r"\[warning *\] seat_faulted +detail=", line) and "termination=crashed" in line
               for line in faulted), faulted
    assert not [line for line in out.stderr.splitlines() if line.lstrip().startswith("{")], out.stderr
    logged = [json.loads(line) for line in (tmp_path / "run" / "run.log").read_text().splitlines()]
    assert {e["termination"] for e in logged if e["event"] == "seat_faulted"} == {"crashed"}

    as_json = tournament(tmp_path / "json", "--log-json")
    assert as_json.returncode == 0, as_json.stderr
    events = [json.loads(line) for line in as_json.stderr.splitlines() if line.startswith("{")]
    assert "seat_faulted" in {e["event"] for e in events}, as_json.stderr
