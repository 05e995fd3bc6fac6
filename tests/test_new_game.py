"""``arena new-game NAME --seats 2-5``: the package it writes installs and plays as generated, with
real processes — written into a temporary folder, linted (ruff) and type-checked (mypy --strict),
installed by pip into a throwaway target folder (as ``.test-site`` holds toy3), then ``arena games
--check`` sees it, its own generated tests pass (the conformance checks and an audited round
robin), and ``arena demo --game NAME`` plays its registered sample bots, which ``arena audit``
passes. Bad names and seats are refused with nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gin_arena
import referee
from arena.cli.newgame_cmd import MAX_SEATS

HANG_S = 900
"""How long one command may take before the test calls it a hang (a loaded machine is slow, not wrong)."""
NAME = "crazy8"
EXPECTED = {"README.md", "pyproject.toml", f"tests/test_{NAME}.py", *(f"{NAME}_game/{f}" for f in (
    "__init__.py", "bot.py", "engine.py", "plugin.py", "present.py", "wire.py", "py.typed", f"{NAME}.proto",
    f"{NAME}_pb2.py", f"{NAME}_pb2.pyi"))}
"""The package's files."""


def _run(*cmd: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=HANG_S, cwd=cwd, env=env)


def _arena(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return _run(sys.executable, "-m", "arena.cli", *args, cwd=cwd, env=env)


def test_a_new_game_installs_passes_its_own_tests_and_plays(tmp_path: Path) -> None:
    made = _arena("new-game", NAME, "--seats", "2-5", "--dir", str(tmp_path), cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    folder = tmp_path / NAME
    files = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert files == EXPECTED, files ^ EXPECTED
    assert f"wrote {folder}/: {len(EXPECTED)} files, " in made.stdout
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "the staging folder was left"

    # As its author would check it: ruff and mypy --strict with the package's own settings.
    bin_dir = Path(sys.executable).parent
    lint = _run(str(bin_dir / "ruff"), "check", ".", cwd=folder)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    ours = [str(Path(referee.__file__).parent.parent), str(Path(next(iter(gin_arena.__path__))).parent)]
    typed = _run(str(bin_dir / "mypy"), ".", cwd=folder, env={**os.environ, "MYPYPATH": os.pathsep.join(ours)})
    assert typed.returncode == 0, typed.stdout + typed.stderr

    # Installed by pip into a throwaway target (not the venv), found through its entry point.
    site = tmp_path / "site"
    pip = _run(sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "--target",
               str(site), str(folder), cwd=tmp_path)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    paths = [str(site), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    listed = _arena("games", "--check", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    row = next(line.split() for line in listed.stdout.splitlines() if line.startswith(f"{NAME} "))
    assert row == [NAME, f"gin-arena-{NAME}", "0.1.0", "2-5", "standard,", "short", "1", "ok"], row
    shown = json.loads(_arena("games", "--json", cwd=tmp_path, env=env).stdout)
    assert next(g["display_name"] for g in shown if g["name"] == NAME) == "Crazy8"

    # Its own tests, as generated, run from its folder (its pyproject's pytest settings).
    tests = _run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=folder, env=env)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "2 passed" in tests.stdout, tests.stdout

    # A round robin of its registered sample bots (arena demo: no manifest, no bot named by hand), audited.
    run = tmp_path / "demo"
    demo = _arena("demo", "--game", NAME, "--games", "2", "--out", str(run), "--no-progress", cwd=tmp_path, env=env)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    results = json.loads((run / "results.json").read_text())
    assert {row["bot"] for row in results["standings"]} == {"random", "high"}, results["standings"]
    assert len(results["games"]) == 2 and all(g["termination"] == "normal" for g in results["games"])
    audit = _arena("audit", str(run), cwd=tmp_path, env=env)
    assert audit.returncode == 0, audit.stdout + audit.stderr


@pytest.mark.parametrize(("args", "says"), [
    (("Crazy", "--seats", "2-5"), "bad game name 'Crazy'"),
    (("gin",), "a game named 'gin' is installed already"),
    ((NAME, "--seats", "1-3"), f"--seats 1-3: seats go from 2 to {MAX_SEATS}"),
    ((NAME, "--seats", "5-2"), "the lower first"),
    ((NAME, "--seats", "two"), "give a number of seats or a range, e.g. 2-5"),
    ((NAME, "--display-name", " Crazy 8"), "--display-name: display name ' Crazy 8' is not one line"),
])
def test_bad_names_and_seats_write_nothing(tmp_path: Path, args: tuple[str, ...], says: str) -> None:
    done = _arena("new-game", *args, "--dir", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert not list(tmp_path.iterdir())


def test_an_existing_folder_is_never_touched(tmp_path: Path) -> None:
    (tmp_path / NAME).mkdir()
    (tmp_path / NAME / "mine.txt").write_text("keep")
    done = _arena("new-game", NAME, "--dir", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and "already exists; nothing was written" in done.stderr, done.stderr
    assert [p.name for p in (tmp_path / NAME).iterdir()] == ["mine.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [NAME]
