"""The documentation's fenced blocks, run as a new user would run them.

Every fenced block of README.md and docs/*.md carries a marker, an HTML comment on the line
before it (blank lines between are allowed):

- ``<!-- readme-test: run NAME -->``: the block runs (a ``sh``/``bash``/``console`` block with
  ``bash -euo pipefail``, a ``python`` block with the venv's Python); it must exit 0 and pass the
  test's check of that name;
- ``<!-- readme-test: file PATH -->`` (any language): the block is saved as PATH, as the page
  tells the reader to do;
- ``<!-- readme-test: skip NAME REASON -->``: the block does not run, for the reason given.

Whatever its marker, a ``json`` block must parse (``json.loads``), a ``toml`` block too
(``tomllib``) and a ``python`` block must compile. A page's blocks run in order, in one folder: a
fresh copy of the repository's files (tracked and not ignored; no ``runs/``, no ``node_modules``,
nothing beside it) with what the README's set-up makes: a venv in the copy, made offline
(:func:`make_venv`: its Python sees the copy's packages and this Python's third-party packages,
and nothing else), and the JavaScript packages linked in when this checkout has them. The venv
is active on PATH, HOME is empty (the ladder's default database lives there), and no
``PYTHONPATH`` is set: the code that runs is the copy's, and a command that needs the venv fails
without it.
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
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests import _plugin
from tests._wait import HANG_S

ROOT = Path(__file__).resolve().parent.parent
"""The repository's top folder."""
SHELL_LANGS = ("sh", "bash", "console")
"""The languages of blocks that run in a shell."""
RUNNABLE_LANGS = (*SHELL_LANGS, "python")
"""The languages a ``run`` block may have."""
BLOCK_TIMEOUT_S = HANG_S
"""How long one ``run`` block may take before it counts as failed (a hang, not slowness)."""
JS_PACKAGES = "sample_bots/js/node_modules"
"""What the JavaScript bot's ``npm ci`` makes; a copy links it in from this checkout, when it has it."""
MARKER = re.compile(r"<!--\s*readme-test:\s*(run|skip|file)\s+(\S+)(?:\s+(.*?))?\s*-->")
FENCE = re.compile(r"^\s*```(\S*)\s*$")

Check = Callable[[Path, str], None]
"""What a ``run`` block must do besides exiting 0: called with the copy's folder and the block's stdout."""


@dataclass(frozen=True)
class Marker:
    """The ``readme-test`` comment before a block."""

    kind: str
    """``run``, ``skip`` or ``file``."""
    arg: str
    """The block's name (``run``, ``skip``) or the path to save it as (``file``)."""
    reason: str
    """Why a ``skip`` block does not run (the words after its name); ``""`` if none."""


@dataclass(frozen=True)
class Block:
    """One fenced block of a Markdown file."""

    page: str
    """The file it is in, relative to the repository (``docs/bots.md``)."""
    lang: str
    """The info string after the opening fence (``sh``, ``python``, …; empty if none)."""
    text: str
    """The block's content, ending with a newline."""
    line: int
    """The 1-based line of the opening fence."""
    marker: Marker | None
    """The ``readme-test`` comment before the block, if any."""

    @property
    def where(self) -> str:
        """``page:line``, for messages."""
        return f"{self.page}:{self.line}"


class MarkdownError(ValueError):
    """A Markdown page whose fences do not pair up."""


def page_name(page: Path) -> str:
    """A page's path relative to the repository (its own path if outside it)."""
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else str(page)


def fenced_blocks(page: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, each with the marker comment just before it."""
    name = page_name(page)
    blocks: list[Block] = []
    lines = page.read_text().splitlines()
    marker: Marker | None = None
    i = 0
    while i < len(lines):
        found = MARKER.fullmatch(lines[i].strip())
        fence = FENCE.match(lines[i])
        if found:
            marker = Marker(found.group(1), found.group(2), (found.group(3) or "").strip())
        elif fence:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith("```")), None)
            if end is None:
                raise MarkdownError(f"{name}:{i + 1}: a fenced block is never closed")
            body = "".join(line + "\n" for line in lines[i + 1 : end])
            blocks.append(Block(name, fence.group(1), body, i + 1, marker))
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


# ----- what the blocks must be, without running them -----
def marker_problems(blocks: list[Block], checks: Mapping[str, Check]) -> list[str]:
    """Every block without a usable marker, every repeated name, and every run block without its
    check (or check without its run block), each naming the file and line."""
    problems: list[str] = []
    names: dict[str, Block] = {}
    for block in blocks:
        m = block.marker
        if m is None:
            problems.append(
                f"{block.where}: a {block.lang or 'plain'} block needs <!-- readme-test: run NAME -->, "
                "<!-- readme-test: file PATH --> or <!-- readme-test: skip NAME REASON --> before it"
            )
            continue
        if m.kind == "skip" and not m.reason:
            problems.append(f"{block.where}: skip {m.arg!r} needs its reason after the name")
        if m.kind == "run" and block.lang not in RUNNABLE_LANGS:
            problems.append(f"{block.where}: run {m.arg!r}: a {block.lang or 'plain'} block cannot run "
                            f"(only {', '.join(RUNNABLE_LANGS)})")
        if m.kind == "run" and m.arg not in checks:
            problems.append(f"{block.where}: run {m.arg!r} has no check in its test")
        if m.kind in ("run", "skip"):
            if m.arg in names:
                problems.append(f"{block.where}: the name {m.arg!r} is also used at {names[m.arg].where}")
            names[m.arg] = block
    ran = {b.marker.arg for b in blocks if b.marker and b.marker.kind == "run"}
    problems += [f"the check {name!r} has no run block" for name in sorted(set(checks) - ran)]
    return problems


def parse_problem(block: Block) -> str | None:
    """Why a ``json``/``toml`` block does not parse or a ``python`` block does not compile; ``None``
    if it does (or is of another language)."""
    try:
        if block.lang == "json":
            json.loads(block.text)
        elif block.lang == "toml":
            tomllib.loads(block.text)
        elif block.lang == "python":
            compile(block.text, block.where, "exec")
    except (ValueError, SyntaxError) as e:
        return f"{block.where}: the {block.lang} block does not parse: {type(e).__name__}: {e}"
    return None


# ----- what run blocks made -----
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
    # (not the tests' plugin game: .ci/run installs it for the tests alone, tests/_plugin.py)
    paths = [work, work / "proto", *deps]
    Path(site, "gin_arena_checkout.pth").write_text("".join(f"{p}\n" for p in paths))
    scripts: dict[str, str] = tomllib.loads((work / "pyproject.toml").read_text())["project"]["scripts"]
    for name, target in scripts.items():
        module, function = target.split(":")
        script = venv / "bin" / name
        # As pip writes it: guarded, since a process started by spawn (Dask's local workers) imports it.
        script.write_text(f"#!{python}\nimport sys\nfrom {module} import {function}\n"
                          f"if __name__ == '__main__':\n    sys.exit({function}())\n")
        script.chmod(0o755)


def install_plugin_game(work: Path) -> None:
    """What docs/adding-a-game.md's ``.venv/bin/pip install -e tests/plugin_game`` adds to the
    copy's venv, offline: the distribution's metadata as pip wrote it for the tests (its entry
    point; tests/_plugin.py) and the copy's plugin folder on the venv's path."""
    dist = next(_plugin.SITE.glob("gin_arena_toy3-*.dist-info"), None)
    assert dist is not None, f"the tests' plugin game is not installed: run {_plugin.INSTALL}"
    site = next((work / ".venv" / "lib").glob("python*/site-packages"))
    shutil.copytree(dist, site / dist.name)
    with (site / "gin_arena_checkout.pth").open("a") as pth:
        pth.write(f"{work / 'tests' / 'plugin_game'}\n")


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


def has_js_packages() -> bool:
    """Whether this checkout has run the JavaScript bot's ``npm ci``."""
    return (ROOT / JS_PACKAGES).is_dir()


def prepare(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The user's clone after the set-up block, and their environment."""
    work = fresh_copy(tmp_path / "gin-arena")
    assert not (work.parent / "shared").exists()
    make_venv(work)
    if has_js_packages():  # the set-up's `npm ci`, when this checkout has run it
        (work / JS_PACKAGES).symlink_to(ROOT / JS_PACKAGES, target_is_directory=True)
    home = tmp_path / "home"
    home.mkdir()
    return work, user_env(work, home)


def run_page(blocks: list[Block], work: Path, env: dict[str, str], checks: Mapping[str, Check],
             only: Collection[str] | None = None) -> list[str]:
    """Save the ``file`` blocks and run the ``run`` blocks in order in ``work`` (of those, only
    the ones named in ``only``, when given); every block runs, so that one report names every
    broken one. Returns the failures."""
    failures: list[str] = []
    for block in blocks:
        if block.marker is None or block.marker.kind == "skip":
            continue
        kind, arg = block.marker.kind, block.marker.arg
        if kind == "file":
            (work / arg).parent.mkdir(parents=True, exist_ok=True)
            (work / arg).write_text(block.text)
            continue
        if only is not None and arg not in only:
            continue
        argv = (["bash", "-euo", "pipefail", "-c", commands(block)] if block.lang in SHELL_LANGS
                else [str(work / ".venv" / "bin" / "python"), "-c", block.text])
        where = f"{block.where} block {arg!r}"
        try:
            done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            failures.append(f"{where} did not end within {BLOCK_TIMEOUT_S} s")
            continue
        if done.returncode != 0:
            failures.append(
                f"{where} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n"
                f"--- stderr\n{done.stderr[-3000:]}"
            )
            continue
        try:
            checks[arg](work, done.stdout)
        except (AssertionError, OSError, KeyError, ValueError) as e:
            failures.append(f"{where}: {type(e).__name__}: {e}")
    return failures
