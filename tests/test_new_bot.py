"""`arena new-bot NAME --lang python|js|stdio`: each scaffold plays at once — its own test file
(a short tournament against greedy through the arena, real processes) passes — and the command
refuses a bad name or an existing folder without writing anything."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import sysconfig
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
        assert test == ["python", f"bots/mine-{lang}/test_bot.py"]
        done = subprocess.run([sys.executable, "-m", "pytest", test[1], "-q", "-p", "no:cacheprovider"],
                              capture_output=True, text=True, timeout=600, cwd=tmp_path)
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


def venv_without_pytest(where: Path) -> Path:
    """The Python of the README's main set-up (``pip install -e .``, no test extras), offline: a
    real venv that sees this checkout and the third-party packages of this Python, except
    pytest and its plugins (a folder of links to the others)."""
    site = Path(sysconfig.get_paths()["purelib"])
    deps = where / "deps"
    deps.mkdir(parents=True)
    for entry in site.iterdir():
        if not entry.name.lower().startswith(("pytest", "_pytest", "xdist", "py.py", "__editable__")):
            (deps / entry.name).symlink_to(entry)
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    own = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True).stdout.strip()
    Path(own, "checkout.pth").write_text("".join(f"{p}\n" for p in (ROOT, ROOT / "proto", deps)))
    return python


def test_the_scaffolds_test_runs_with_plain_python_without_pytest(tmp_path: Path) -> None:
    """The README's set-up installs no pytest: the printed test command runs there as printed,
    plays the games and says so; a bot that fails makes it exit 1."""
    python = venv_without_pytest(tmp_path / "env")
    plain = subprocess.run([python, "-c", "import pytest"], capture_output=True, text=True)
    assert plain.returncode == 1 and "No module named 'pytest'" in plain.stderr, "the venv has pytest"
    out = subprocess.run([python, "-m", "arena.cli", "new-bot", "mine", "--lang", "python"], capture_output=True,
                         text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    commands = dict(line.split(":  ", 1) for line in out.stdout.splitlines()[1:])
    test = shlex.split(commands["run its test"].strip())
    assert test[0] == "python", test
    done = subprocess.run([python, *test[1:]], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mine: 2 games against greedy, each ended normally, no fault, no fallback: passed" in done.stdout
    bot = tmp_path / "mine" / "bot.py"  # a bot whose every decision raises: the same command fails
    bot.write_text(bot.read_text().replace("def decide(request):", "def decide(request):\n    raise RuntimeError('x')"))
    failed = subprocess.run([python, *test[1:]], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert failed.returncode == 1 and "AssertionError" in failed.stderr, failed.stdout + failed.stderr
