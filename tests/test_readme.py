"""The README's commands work as written, run as a new user would run them.

How: every fenced ``sh``/``bash``/``console`` block of README.md carries a marker, an HTML comment
on the line before it (blank lines between are allowed):

- ``<!-- readme-test: run NAME -->``: the block runs; it must exit 0 and pass ``CHECKS[NAME]``;
- ``<!-- readme-test: skip NAME -->``: the block does not run; ``SKIPS[NAME]`` says why;
- ``<!-- readme-test: file PATH -->`` (any language): the block is saved as PATH, as the README
  tells the reader to do.

A shell block without a marker, a skip without a reason here, or a reason here without its block
fails the test: nothing is skipped silently. The blocks run in README order, each with
``bash -euo pipefail``, in one folder: a fresh copy of the repository's files (tracked and
not ignored; no ``runs/``, no ``node_modules``, nothing beside it) with
what the skipped set-up block makes: a venv in the copy, made offline (``make_venv``: its Python
sees the copy's packages and this Python's third-party packages, and nothing else), and the
JavaScript bot's packages linked in when this checkout has them. The venv is active on PATH,
HOME is empty (the ladder's default database lives there), and no ``PYTHONPATH`` is set: the
code that runs is the copy's, and a command that needs the venv fails without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from tests._wait import HANG_S

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SHELL_LANGS = ("sh", "bash", "console")
MARKER = re.compile(r"<!--\s*readme-test:\s*(run|skip|file)\s+(\S+)\s*-->")
FENCE = re.compile(r"^\s*```(\S*)\s*$")

SKIPS = {
    "setup": "installs the packages from the package index and plays the full 72-game demo (minutes); "
    "`bash .ci/run` makes the same venv and node_modules before the tests, this test links them into "
    "its copy, and the tour's first step runs `arena demo`",
    "ci": "the test command itself: it runs this test",
    "cluster": "needs several machines; tests/test_arena_cluster.py starts a real `dask scheduler` and two "
    "`dask worker` processes on 127.0.0.1 and plays a tournament on them with `--scheduler`",
}


@dataclass(frozen=True)
class Block:
    """One fenced block of a Markdown file."""

    lang: str
    """The info string after the opening fence (``sh``, ``python``, …; empty if none)."""
    text: str
    """The block's content, ending with a newline."""
    line: int
    """The 1-based line of the opening fence."""
    marker: tuple[str, str] | None
    """``(kind, argument)`` of the ``readme-test`` comment before the block, if any."""


def fenced_blocks(text: str) -> list[Block]:
    """The fenced blocks of a Markdown text, each with the marker comment just before it."""
    blocks: list[Block] = []
    lines = text.splitlines()
    marker: tuple[str, str] | None = None
    i = 0
    while i < len(lines):
        found = MARKER.fullmatch(lines[i].strip())
        fence = FENCE.match(lines[i])
        if found:
            marker = (found.group(1), found.group(2))
        elif fence:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith("```")), None)
            assert end is not None, f"README.md:{i + 1}: a fenced block is never closed"
            body = "".join(line + "\n" for line in lines[i + 1 : end])
            blocks.append(Block(fence.group(1), body, i + 1, marker))
            marker, i = None, end
        elif lines[i].strip():
            marker = None
        i += 1
    return blocks


def commands(block: Block) -> str:
    """The shell text of a block: a ``console`` block's ``$ `` lines, any other block whole."""
    if block.lang != "console":
        return block.text
    return "".join(line[2:] + "\n" for line in block.text.splitlines() if line.startswith("$ "))


# ----- what each block must do, besides exiting 0 -----
def games(work: Path, run: str) -> list[dict[str, Any]]:
    """The games listed in a run folder's results.json."""
    results = json.loads((work / "runs" / run / "results.json").read_text())
    listed: list[dict[str, Any]] = results["games"]
    return listed


def all_normal(work: Path, run: str, bots: set[str], count: int) -> None:
    """The run played ``count`` games between ``bots``, every one to its normal end."""
    played = games(work, run)
    assert len(played) == count, played
    assert {name for g in played for name in g["players"]} == bots
    assert {g["termination"] for g in played} == {"normal"}, [(g["players"], g["detail"]) for g in played]
    assert len(list((work / "runs" / run / "replays").glob("*.jsonl"))) == count


def check_version(work: Path, out: str) -> None:
    assert metadata.version("gin-arena") in out, out


def check_demo(work: Path, out: str) -> None:
    played = games(work, "demo")
    assert played and {g["termination"] for g in played} == {"normal"}
    assert {"random", "greedy", "expert"} <= {n for g in played for n in g["players"]}
    assert "greedy" in out and (work / "runs" / "demo" / "index.html").is_file()


def check_bot(work: Path, out: str) -> None:
    assert "--referee" in out and "--token" in out, out  # the kit's --help
    all_normal(work, "mine", {"mine", "greedy"}, 2)


def check_tournament(work: Path, out: str) -> None:
    all_normal(work, "tour", {"mine", "greedy", "expert"}, 6)
    assert out.count("expert") >= 2, out  # the tournament's tables, then the report's


def check_audit(work: Path, out: str) -> None:
    assert {"mine", "greedy", "expert"} & set(re.findall(r"[a-z]+", out)), out  # the match is shown
    page = (work / "match.html").read_text()
    assert page.startswith("<!DOCTYPE html>") or page.lower().startswith("<!doctype html>"), page[:80]


CHECKS: dict[str, Callable[[Path, str], None]] = {
    "version": check_version,
    "tour-demo": check_demo,
    "tour-bot": check_bot,
    "tour-tournament": check_tournament,
    "tour-audit": check_audit,
}

CHAINS: dict[str, tuple[str, ...]] = {
    "demo": ("version", "tour-demo"),
    "tour": ("tour-bot", "tour-tournament", "tour-audit"),
}
"""The run blocks in chains that share nothing but the set-up: each chain runs in a fresh copy
of its own (in README order, with every ``file`` block saved), beside the others on another
core. A block that reads what another wrote is in that block's chain."""


# ----- the fresh copy -----
def fresh_copy(dest: Path) -> Path:
    """Copy the repository's files (tracked, and new ones not ignored) to ``dest``."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the work tree is left out
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def make_venv(work: Path) -> None:
    """What the set-up block's ``python3 -m venv .venv && .venv/bin/pip install -e .`` makes, offline.

    A real venv in the copy whose Python sees the copy's packages (the editable install) and the
    third-party packages this Python has (the downloads), and the console scripts of
    pyproject.toml. A Python outside it sees none of them, as on a user's machine.
    """
    venv = work / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    deps = sorted({sysconfig.get_paths()[kind] for kind in ("purelib", "platlib")})
    Path(site, "gin_arena_checkout.pth").write_text("".join(f"{p}\n" for p in [work, work / "proto", *deps]))
    scripts: dict[str, str] = tomllib.loads((work / "pyproject.toml").read_text())["project"]["scripts"]
    for name, target in scripts.items():
        module, function = target.split(":")
        script = venv / "bin" / name
        # As pip writes it: guarded, since a process started by spawn (Dask's local workers) imports it.
        script.write_text(f"#!{python}\nimport sys\nfrom {module} import {function}\n"
                          f"if __name__ == '__main__':\n    sys.exit({function}())\n")
        script.chmod(0o755)


def user_env(work: Path, home: Path) -> dict[str, str]:
    """A new user's environment, with the copy's venv active."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIN_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(
        PATH=f"{work / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(work / ".venv"),
        HOME=str(home),
        COLUMNS="120",
    )
    return env


def prepare(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The user's clone after the set-up block, and their environment."""
    work = fresh_copy(tmp_path / "gin-arena")
    assert not (work.parent / "shared").exists()
    make_venv(work)
    node_modules = ROOT / "sample_bots" / "js" / "node_modules"
    if node_modules.is_dir():  # the set-up's `npm ci`, when this checkout has run it
        (work / "sample_bots" / "js" / "node_modules").symlink_to(node_modules, target_is_directory=True)
    home = tmp_path / "home"
    home.mkdir()
    return work, user_env(work, home)


# ----- the tests -----
def test_every_shell_block_is_marked_and_every_skip_has_a_reason() -> None:
    blocks = fenced_blocks(README.read_text())
    names: list[str] = []
    for block in blocks:
        if block.lang in SHELL_LANGS:
            assert block.marker and block.marker[0] in ("run", "skip"), (
                f"README.md:{block.line}: a {block.lang} block needs <!-- readme-test: run NAME --> "
                "or <!-- readme-test: skip NAME --> before it"
            )
            names.append(block.marker[1])
    assert len(names) == len(set(names)), f"block names repeat: {names}"
    skipped = {b.marker[1] for b in blocks if b.marker and b.marker[0] == "skip"}
    ran = {b.marker[1] for b in blocks if b.marker and b.marker[0] == "run"}
    assert skipped == set(SKIPS), f"skip markers {sorted(skipped)} vs reasons in this test {sorted(SKIPS)}"
    assert ran == set(CHECKS), f"run blocks {sorted(ran)} vs checks in this test {sorted(CHECKS)}"
    chained = [name for chain in CHAINS.values() for name in chain]
    assert sorted(chained) == sorted(ran), f"every run block in one chain: {CHAINS}"


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_the_readme_commands_work_in_a_fresh_copy(tmp_path: Path, chain: str) -> None:
    work, env = prepare(tmp_path)
    failures: list[str] = []  # every block runs, so that one report names every broken block
    for block in fenced_blocks(README.read_text()):
        if block.marker is None or block.marker[0] == "skip":
            continue
        kind, arg = block.marker
        if kind == "file":
            (work / arg).write_text(block.text)
            continue
        if arg not in CHAINS[chain]:
            continue
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", commands(block)],
            cwd=work, env=env, capture_output=True, text=True, timeout=HANG_S,
        )
        where = f"README.md:{block.line} block {arg!r}"
        if done.returncode != 0:
            failures.append(
                f"{where} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n"
                f"--- stderr\n{done.stderr[-3000:]}"
            )
            continue
        try:
            CHECKS[arg](work, done.stdout)
        except (AssertionError, OSError, KeyError, ValueError) as e:
            failures.append(f"{where}: {type(e).__name__}: {e}")
    assert not failures, "\n\n".join(failures)


def prose(page: Path) -> str:
    """A Markdown page without its fenced blocks."""
    return re.sub(r"^\s*```.*?^\s*```", "", page.read_text(), flags=re.DOTALL | re.MULTILINE)


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings, as GitHub makes them."""
    headings = re.findall(r"^#+ (.+)$", prose(page), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_the_readme_is_short_and_its_links_resolve() -> None:
    assert len(README.read_text().splitlines()) <= 300
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", prose(page)):
            if "://" in target:
                continue
            linked = (page.parent / target).resolve() if target else page
            where = f"{page.relative_to(ROOT)} links to {target}#{anchor}"
            assert linked.exists(), f"{where}: no such file"
            if anchor and linked.suffix == ".md":
                assert anchor in anchors(linked), f"{where}: no such heading"
