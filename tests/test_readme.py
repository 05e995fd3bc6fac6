"""The README's commands work as written, run as a new user would run them.

How (tests/_markdown.py): every fenced block of README.md carries a ``readme-test`` marker
(``run NAME``, ``file PATH`` or ``skip NAME REASON``); the run blocks must exit 0 and pass
``CHECKS[NAME]``. They run in chains (``CHAINS``, two tests side by side), each in README order
in a fresh copy of the repository with a venv made offline, as the set-up block would make it.
A block without a marker, a skip without a reason, or a check without its block fails the test:
nothing is skipped silently.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest

from tests._markdown import ROOT, Check, all_normal, fenced_blocks, games, marker_problems, prepare, run_page

README = ROOT / "README.md"
DOCS = ROOT / "docs"


# ----- what each block must do, besides exiting 0 -----
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


CHECKS: dict[str, Check] = {
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
of its own (in README order, with every ``file`` block saved), beside the other on another
core. A block that reads what another wrote is in that block's chain."""


# ----- the tests -----
def test_every_block_is_marked_and_every_run_block_has_its_check() -> None:
    problems = marker_problems(fenced_blocks(README), CHECKS)
    assert not problems, "\n".join(problems)
    chained = [name for chain in CHAINS.values() for name in chain]
    assert sorted(chained) == sorted(CHECKS), f"every run block in exactly one chain: {CHAINS}"


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_the_readme_commands_work_in_a_fresh_copy(tmp_path: Path, chain: str) -> None:
    work, env = prepare(tmp_path)
    failures = run_page(fenced_blocks(README), work, env, CHECKS, only=CHAINS[chain])
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
