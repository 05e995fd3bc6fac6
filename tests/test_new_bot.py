"""`arena new-bot NAME --lang python|js|stdio`: each scaffold plays at once — its own test file
(a short tournament against greedy through the arena, real processes) passes — and the command
refuses a bad name or an existing folder without writing anything."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HAS_JS = shutil.which("node") is not None and (ROOT / "sample_bots" / "js" / "node_modules" / "@grpc").is_dir()


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, timeout=600,
                          cwd=cwd)


@pytest.mark.parametrize("lang", [
    "python", pytest.param("js", marks=pytest.mark.skipif(not HAS_JS, reason="node or its packages missing")),
    "stdio",
])
def test_each_scaffold_plays_at_once_and_its_own_test_passes(tmp_path: Path, lang: str) -> None:
    (tmp_path / "bots").mkdir()
    out = arena("new-bot", f"mine-{lang}", "--lang", lang, "--dir", "bots", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    folder = tmp_path / "bots" / f"mine-{lang}"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["bots.toml", "test_bot.py", "README.md", "bot.js" if lang == "js" else "bot.py"])
    assert not [p for p in (tmp_path / "bots").iterdir() if p.name.startswith(".")]  # no staging left
    commands = dict(line.split(":  ", 1) for line in out.stdout.splitlines()[1:])
    play = shlex.split(commands["play it against greedy"].strip())
    assert play[:3] == ["arena", "tournament", "--bots"]
    if lang == "python":  # the printed command, as printed, from where new-bot ran
        done = arena(*play[1:], "--out", "run", cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        results = json.loads((tmp_path / "run" / "results.json").read_text())
        mine = next(r for r in results["standings"] if r["bot"] == "mine-python")
        assert mine["games"] == 2 and mine["faults"] == 0 and mine["fallbacks"] == 0
        assert all(g["termination"] == "normal" for g in results["games"])
    else:  # the scaffold's own test: the same tournament, checked by it
        test = shlex.split(commands["run its test"].strip())
        assert test[:3] == ["python", "-m", "pytest"]
        done = subprocess.run([sys.executable, *test[1:], "-q", "-p", "no:cacheprovider"], capture_output=True,
                              text=True, timeout=600, cwd=tmp_path)
        assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


def test_new_bot_refuses_an_existing_folder_and_a_bad_name(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("keep me")
    out = arena("new-bot", "taken", "--lang", "python", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr == "arena: taken already exists; nothing was written " \
        "(choose another NAME or --dir)\n"
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["mine.txt"]
    for bad in ("two words", ".hidden", "x" * 41, "a/b", "../up"):
        out = arena("new-bot", bad, "--lang", "js", cwd=tmp_path)
        assert out.returncode == 2 and out.stderr.startswith(f"arena: bad bot name {bad!r}"), out.stderr
    out = arena("new-bot", "fine", "--lang", "rust", cwd=tmp_path)
    assert out.returncode == 2 and "invalid choice: 'rust'" in out.stderr
    out = arena("new-bot", "fine", "--lang", "stdio", "--dir", "nowhere", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr == "arena: --dir nowhere: no such folder\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
