"""The pages of docs/ work as written, and say what the code does.

Every fenced block of docs/*.md carries a ``readme-test`` marker (tests/_markdown.py: ``run``,
``file`` or ``skip`` with its reason); the pages with ``run`` blocks run them in order, each page
in a fresh copy of the repository, and ``CHECKS`` says what each must have done besides exiting 0.
The ``json`` and ``toml`` blocks of every page parse (a bots manifest also passes the arena's
manifest reader), the ``python`` blocks compile. The Python kit's reference in docs/bots.md lists
exactly the fields of the objects a bot is handed and the helpers with their real arguments, and
its claims about the discard pile and knocking hold in the engine.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.model.manifest import ManifestError, parse_manifest
from gin_arena.v2 import bot_pb2
from gin_arena.v2.games import gin_pb2
from referee.gin import Deal, DrawStock, Knock, Match, Pass, RuleSet, deck_for_deal, parse_action
from referee.gin.wire import information_state
from referee.rummy import Match as RummyMatch
from referee.rummy import RummyRules, hand_size
from referee.rummy import deck_for_deal as rummy_deck_for_deal
from referee.rummy.wire import rummy_state
from sample_bots.kit import rummy
from sample_bots.kit.gin.cards import best_discard, deadwood
from tests._markdown import (
    JS_PACKAGES,
    ROOT,
    Check,
    all_normal,
    fenced_blocks,
    games,
    has_js_packages,
    install_plugin_game,
    marker_problems,
    parse_problem,
    prepare,
    run_page,
)

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
BOTS_MD = DOCS / "bots.md"
HEX64 = re.compile(r"\b[0-9a-f]{64}\b")


# ----- what each run block must do, besides exiting 0 -----
def check_engine_example(work: Path, out: str) -> None:
    assert "DealStarted" in out and "MatchEnded" in out, out[-2000:]
    assert re.fullmatch(r"[01] \(\d+, \d+\)", out.strip().splitlines()[-1]), out[-500:]  # winner, totals


def check_js_bot(work: Path, out: str) -> None:
    all_normal(work, "js", {"mini-js", "greedy"}, 2)  # no game `crashed` or `failed_to_connect`
    log = (work / "runs" / "js" / "logs" / "mini-js.log").read_text()
    assert "my_bot.js:" not in log and "Error" not in log, log[-2000:]


def check_rummy_bot(work: Path, out: str) -> None:
    all_normal(work, "rummy", {"mine", "greedy"}, 2)
    results = json.loads((work / "runs" / "rummy" / "results.json").read_text())
    assert results["run"]["game"] == "rummy", results["run"]


def check_stdio_by_hand(work: Path, out: str) -> None:
    assert json.loads(out) == {"action": {"action": {"gin": {"kind": "ACTION_KIND_KNOCK", "card": "Kh"}}}}, out


def check_replay_to_check(work: Path, out: str) -> None:
    all_normal(work, "demo", {"greedy", "random"}, 2)


def check_by_hand(work: Path, out: str) -> None:
    lines = out.strip().splitlines()
    assert len(lines) == 4, out
    tail_hash, chain_hash, seed_hash, commitment = (HEX64.findall(line) for line in lines)
    assert lines[1].startswith("chain OK"), out
    first = sorted((work / "runs" / "demo" / "replays").glob("*.jsonl"))[0]
    published = {g["match_id"]: g["replay_hash"] for g in games(work, "demo")}
    assert tail_hash == chain_hash == [published[first.stem]], (out, published)
    assert seed_hash == commitment and len(commitment) == 1, out


def check_verify_decks(work: Path, out: str) -> None:
    deals = sum(
        json.loads(line)["type"] == "deal"
        for replay in (work / "runs" / "demo" / "replays").glob("*.jsonl")
        for line in replay.read_text().splitlines()
    )
    lines = out.strip().splitlines()
    assert deals > 0 and len(lines) == deals, (deals, out)
    assert all(line.endswith(" OK") for line in lines), out


def check_toy3_conforms(work: Path, out: str) -> None:
    assert "ConformanceReport(game='toy3', matches=15" in out, out


def check_games_listed(work: Path, out: str) -> None:
    rows = {line.split()[0]: line for line in out.strip().splitlines()[1:]}
    assert set(rows) == {"gin", "rummy", "toy3"} and all(r.endswith(" ok") for r in rows.values()), out
    page = (DOCS / "adding-a-game.md").read_text()
    assert all(line.rstrip() in page for line in out.strip().splitlines()), "the page shows other output: " + out


def check_toy3_played(work: Path, out: str) -> None:
    all_normal(work, "toy3", {"high", "low", "high2"}, 3)
    results = json.loads((work / "runs" / "toy3" / "results.json").read_text())
    assert results["run"]["game"] == "toy3" and len(results["ranking"]) == 3, results["run"]
    assert "Audited 3 matches: 3 passed, all checks passed" in out, out[-2000:]


def check_new_game(work: Path, out: str) -> None:
    folder = work / "crazy8"
    assert "wrote crazy8/: 13 files, " in out and "generated code is up to date" in out, out
    assert (folder / "crazy8_game" / "crazy8_pb2.py").is_file() and (folder / "tests" / "test_crazy8.py").is_file()
    assert 'crazy8 = "crazy8_game.plugin:PLUGIN"' in (folder / "pyproject.toml").read_text()


def check_proto_gen(work: Path, out: str) -> None:
    assert "generated code is up to date (grpcio-tools 1.85.1, mypy-protobuf 5.1.0)" in out, out


def check_sample_bots(work: Path, out: str) -> None:
    assert out.splitlines() == ["high {python} -m toy3_game.bot --strategy high",
                                "low {python} -m toy3_game.bot --strategy low",
                                "Demo(seats=3, games=3, opponent='')"], out


def check_toy3_demo(work: Path, out: str) -> None:
    """Its registration's two bots at tables of three (one of them in two seats: ``high#2``), 3 games each."""
    played = games(work, "toy3-demo")
    assert len(played) == 6 and {g["termination"] for g in played} == {"normal"}, played
    assert {name.split("#")[0] for g in played for name in g["players"]} == {"high", "low"}, played
    results = json.loads((work / "runs" / "toy3-demo" / "results.json").read_text())
    assert results["run"]["game"] == "toy3", results["run"]


def check_train_linear(work: Path, out: str) -> None:
    assert (work / "linear.npz").is_file() and "saved linear.npz" in out, out
    played = re.search(r"(\d+)/(\d+) games; endings: normal (\d+)", out)
    assert played and played[1] == played[2] == played[3] and int(played[1]) > 0, out
    assert re.search(r"^\d+\s+linear\s", out, re.M), out
    assert (work / "runs" / "linear" / "results.json").is_file()


CHECKS: dict[str, dict[str, Check]] = {
    "adding-a-game.md": {"conformance": check_toy3_conforms, "games": check_games_listed,
                         "play-toy3": check_toy3_played, "new-game": check_new_game, "proto-gen": check_proto_gen,
                         "sample-bots": check_sample_bots, "demo-toy3": check_toy3_demo},
    "engine.md": {"engine-example": check_engine_example},
    "training.md": {"train-linear": check_train_linear},
    "bots.md": {"rummy-bot": check_rummy_bot, "js-bot": check_js_bot, "stdio-by-hand": check_stdio_by_hand},
    "audit.md": {"replay-to-check": check_replay_to_check, "by-hand": check_by_hand,
                 "verify-decks": check_verify_decks},
}
"""Per page of docs/, the checks of its run blocks."""


# ----- every block, without running it -----
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_block_is_marked_and_every_run_block_has_its_check(page: Path) -> None:
    problems = marker_problems(fenced_blocks(page), CHECKS.get(page.name, {}))
    assert not problems, "\n".join(problems)


def test_every_page_with_checks_exists() -> None:
    assert set(CHECKS) <= {p.name for p in PAGES}


def test_every_json_and_toml_block_parses_and_every_python_block_compiles(tmp_path: Path) -> None:
    blocks = [b for page in [ROOT / "README.md", *PAGES] for b in fenced_blocks(page)]
    assert {"json", "toml", "python"} <= {b.lang for b in blocks}  # the test sees them
    problems = [p for b in blocks if (p := parse_problem(b))]
    for i, block in enumerate(b for b in blocks if b.lang == "toml" and "[[bot]]" in b.text):
        # A bots manifest: the arena's reader takes it, beside the folders and programs it names.
        folder = tmp_path / str(i)
        for bot in tomllib.loads(block.text)["bot"]:
            cwd = folder / bot.get("cwd", ".")
            cwd.mkdir(parents=True, exist_ok=True)
            if "/" in bot.get("command", [""])[0]:
                (cwd / bot["command"][0]).touch()
        try:
            parse_manifest(block.text, folder / "bots.toml")
        except ManifestError as e:
            problems.append(f"{block.where}: the manifest does not load: {e}")
    assert not problems, "\n".join(problems)


# ----- the pages' commands -----
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_the_commands_of_the_page_work_in_a_fresh_copy(name: str, tmp_path: Path) -> None:
    blocks = fenced_blocks(DOCS / name)
    if any(b.marker and b.marker.kind == "run" and "node " in b.text for b in blocks):
        assert has_js_packages(), f"{name} runs the JavaScript bot: run `npm ci` in {Path(JS_PACKAGES).parent} first"
    work, env = prepare(tmp_path)
    if name == "adding-a-game.md":  # (its install block, skipped: it needs the package index)
        install_plugin_game(work)
    failures = run_page(blocks, work, env, CHECKS[name])
    assert not failures, "\n\n".join(failures)


# ----- the kit's reference (docs/bots.md) is the code's -----
def table_after(header: str, page: Path = BOTS_MD) -> list[str]:
    """The first cells of the rows of the table whose header row starts with ``header``."""
    lines = page.read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(f"| {header} |")]
    assert len(starts) == 1, f"{page.name}: {len(starts)} tables headed {header!r}"
    cells = []
    for line in lines[starts[0] + 2 :]:
        if not line.startswith("|"):
            break
        cells.append(line.split("|")[1].strip())
    return cells


def documented_fields(header: str) -> list[str]:
    """The field names of a reference table (its first column, one `name` per row)."""
    names = []
    for cell in table_after(header):
        found = re.fullmatch(r"`(\w+)`", cell)
        assert found, f"docs/bots.md: {header} table: {cell!r} is not one `field`"
        names.append(found.group(1))
    return names


def test_the_documented_request_and_state_fields_are_the_messages_fields() -> None:
    assert documented_fields("`request.`") == [f.name for f in bot_pb2.ActionRequest.DESCRIPTOR.fields]
    assert documented_fields("`state.`") == [f.name for f in gin_pb2.State.DESCRIPTOR.fields]


def test_the_documented_view_fields_are_the_dataclasss_fields() -> None:
    assert documented_fields("`view.`") == [f.name for f in dataclasses.fields(rummy.View)]
    rows = dict(zip(documented_fields("`view.`"), table_after("`view.`"), strict=True))
    text = BOTS_MD.read_text()
    for row, kind in (("rules", rummy.Rules), ("table", rummy.TableMeld)):
        line = next(line for line in text.splitlines() if line.startswith(f"| {rows[row]} |"))
        missing = [f.name for f in dataclasses.fields(kind) if f"`{f.name}`" not in line]
        assert not missing, f"docs/bots.md: the `{row}` row does not name {kind.__name__}'s {missing}"


def public_functions(module_name: str) -> dict[str, Callable[..., Any]]:
    """The public functions a module defines (cached ones too)."""
    module = importlib.import_module(module_name)
    out = {}
    for name, obj in vars(module).items():
        target = inspect.unwrap(obj) if callable(obj) else obj
        if not name.startswith("_") and inspect.isfunction(target) and target.__module__ == module_name:
            out[name] = obj
    return out


def documented_calls(header: str) -> dict[str, list[tuple[str, str | None]]]:
    """The calls of a helper table's first column: name → [(parameter, default text or None)]."""
    calls = {}
    for cell in table_after(header):
        for name, args in re.findall(r"`(\w+)\(([^`]*)\)`", cell):
            params = [a.strip() for a in args.split(",") if a.strip() and a.strip() != "…"]
            calls[name] = [(p.split("=")[0], p.split("=", 1)[1] if "=" in p else None) for p in params]
    return calls


@pytest.mark.parametrize("module", ["deck", "gin.cards", "gin.masks", "gin.actions", "games", "rummy"])
def test_the_documented_helpers_are_the_modules_with_their_arguments(module: str) -> None:
    documented = documented_calls(f"`kit.{module}`")
    real = public_functions(f"sample_bots.kit.{module}")
    assert sorted(documented) == sorted(real), f"docs/bots.md's kit.{module} table vs the module"
    for name, params in documented.items():
        signature = inspect.signature(real[name])
        actual = [(p.name, p.default) for p in signature.parameters.values()]
        shown = [(p, inspect.Parameter.empty if d is None else ast.literal_eval(d)) for p, d in params]
        assert shown == actual, f"kit.{module}.{name}: documented {params}, real {signature}"


def test_the_upcard_is_in_the_discard_pile_and_take_upcard_takes_it() -> None:
    match = Match(RuleSet.preset("short"), seed=bytes(32))
    seat = match.to_move
    assert seat is not None
    start = information_state(match.view(seat))  # what a request's `state` holds
    assert start.phase == gin_pb2.PHASE_UPCARD_OFFER
    assert list(start.discard_pile) == [start.first_upcard]  # the upcard is the pile's one card
    match.apply(parse_action("take_upcard"), seat)
    taken = information_state(match.view(seat))
    assert list(taken.discard_pile) == [] and start.first_upcard in taken.hand
    assert taken.forbidden_discard == start.first_upcard


def test_knock_x_discards_x_face_down() -> None:
    for number in range(1, 21):  # deals until one offers a knock: stock draws, the best discard
        deal = Deal.from_deck(deck_for_deal(bytes(32), 1, number), dealer=0)
        while not deal.is_over:
            legal = deal.legal_actions()
            knocks = [a for a in legal if isinstance(a, Knock)]
            hand = [str(c) for c in deal.hand(deal.to_move)]
            if len(hand) == 11:  # a knock of each X leaving at most the limit (gin only: 0)
                limit = 0 if deal.knock_limit is None else deal.knock_limit
                assert {str(a.card) for a in knocks} == {c for c in hand if deadwood(set(hand) - {c}) <= limit}
            if knocks:
                seat, card, pile = deal.to_move, knocks[0].card, deal.discard_pile
                assert len(deal.hand(seat)) == 11 and card in deal.hand(seat)
                deal.apply(knocks[0])
                assert deal.is_over and len(deal.hand(seat)) == 10 and card not in deal.hand(seat)
                assert deal.discard_pile == pile  # face down: not on the pile
                return
            draws = [a for a in legal if isinstance(a, DrawStock | Pass)]
            if draws:
                deal.apply(draws[0])
            else:
                best = best_discard([str(c) for c in deal.hand(deal.to_move)])
                deal.apply(next(a for a in legal if str(a) == f"discard {best}"))
    pytest.fail("no knock was offered in 20 deals")


def test_a_rummy_deal_starts_with_the_upcard_as_its_discard_pile() -> None:
    seats = 4
    match = RummyMatch(RummyRules.preset("rummy"), seed=bytes(32), seats=seats)
    upcard = str(rummy_deck_for_deal(bytes(32), 1, 1)[seats * hand_size(seats)])  # R3: after the hands
    state = rummy_state(match.view(match.to_move), [0] * seats)  # what a request's `rummy` holds
    view = rummy.view_of(bot_pb2.ActionRequest(rummy=state), rummy.Rules())
    assert view.discard_pile == (upcard,) and upcard not in view.hand


# ----- the set-up's `npm ci` is quiet -----
@pytest.mark.parametrize("folder", ["sample_bots/js", "proto"])
def test_every_install_script_of_the_locked_packages_is_allowed_or_denied(folder: str) -> None:
    # npm 11 runs a dependency's install script only if package.json's allowScripts allows it, and
    # warns about every one it neither allows nor denies: each must have its entry.
    package = json.loads((ROOT / folder / "package.json").read_text())
    lock = json.loads((ROOT / folder / "package-lock.json").read_text())
    scripted = {path.rsplit("node_modules/", 1)[1] for path, entry in lock["packages"].items()
                if entry.get("hasInstallScript")}
    declared = {re.sub(r"(?<=.)@[^@/]*$", "", name) for name in package.get("allowScripts", {})}  # pkg@1.2.3
    assert declared == scripted, f"{folder}/package.json: allowScripts names {sorted(declared)}; "\
        f"the packages with install scripts are {sorted(scripted)}"
