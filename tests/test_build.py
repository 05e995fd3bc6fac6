"""The build under test is the one CI asked for: ``.ci/run`` runs the engine, wire and referee
tests a second time on the compiled build (``GIN_ARENA_COMPILE=require``) with
``GIN_ARENA_EXPECT_COMPILED=1``; everywhere else the pure-Python modules run. On both builds the
engines' values pickle (a match's description goes to Dask workers) and a rule set refuses a
value of the wrong type with its own error (compiled, mypyc's type checks must not come first)."""

from __future__ import annotations

import copy
import os
import pickle
import re
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from referee import cardcore, gin, rummy
from referee.gin import wire as gin_wire
from referee.table import clocks, digests, match_flow
from referee.wire import envelope

COMPILED_MODULES: tuple[ModuleType, ...] = (cardcore, gin, rummy, envelope, match_flow)
"""The modules with a ``COMPILED`` flag."""


def test_the_engine_and_the_encoders_are_the_build_asked_for() -> None:
    want = os.environ.get("GIN_ARENA_EXPECT_COMPILED") == "1"
    for module in COMPILED_MODULES:
        assert module.COMPILED is want, module.__name__
    for module in (*COMPILED_MODULES, gin_wire, clocks, digests):
        assert (Path(module.__file__ or "").suffix == ".so") is want, module.__file__


def test_every_package_of_the_tree_is_one_the_distribution_ships() -> None:
    """A package missing from ``[tool.setuptools] packages`` works in an editable install and
    is absent from ``pip install .`` (rummy once was)."""
    root = Path(__file__).resolve().parent.parent
    config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {".".join(init.parent.relative_to(root).parts)
             for top in ("referee", "arena", "sample_bots") for init in (root / top).rglob("__init__.py")}
    found |= {"gin_arena." + ".".join(init.parent.relative_to(root / "proto" / "gin_arena").parts)
              for init in (root / "proto" / "gin_arena").rglob("__init__.py")}
    found = {name.removesuffix(".") for name in found}
    assert found, "no packages found"
    assert found <= listed, f"packages the distribution leaves out: {sorted(found - listed)}"


def _gin_values() -> list[object]:
    match = gin.Match(gin.RuleSet.oklahoma(games=3), b"seed")
    deal = match.deal
    moves = deal.legal_actions()
    hand = gin.from_mask(deal.hands[0])
    return [
        gin.RuleSet.classic(), gin.RuleSet.straight(next_dealer="loser"), gin.DECK[17], gin.Pass(),
        gin.DrawStock(), gin.Discard(gin.DECK[3]), gin.Knock(gin.DECK[51]), gin.BigGin(), *moves,
        gin.arrange(hand), *gin.arrange(hand).melds, gin.information_state(match, 0),
    ]


def _rummy_values() -> list[object]:
    match = rummy.Match(rummy.RummyRules.preset("michigan", games=2), b"seed", 4)
    deal = match.deal
    return [
        rummy.RummyRules.preset("open"), rummy.DECK[40], rummy.DrawStock(), rummy.Discard(rummy.DECK[1]),
        rummy.LayMeld(tuple(rummy.parse_cards("4s 5s 6s"))), *deal.legal_actions(),
        rummy.deal_state(deal, 1),
    ]


@pytest.mark.parametrize("values", [_gin_values, _rummy_values], ids=["gin", "rummy"])
def test_engine_values_pickle_and_copy_to_equal_values(values: object) -> None:
    assert callable(values)
    for value in values():
        for again in (pickle.loads(pickle.dumps(value)), copy.deepcopy(value), copy.copy(value)):
            assert again == value and type(again) is type(value), value
            assert hash(again) == hash(value), value
            assert repr(again) == repr(value)


def _play(match: Any, steps: int) -> list[str]:
    """The texts of the first ``steps`` legal actions played (each the first legal one)."""
    out = []
    for _ in range(steps):
        action = match.deal.legal_actions()[0]
        match.apply(action)
        out.append(str(action))
    return out


@pytest.mark.parametrize("game", ["gin", "rummy"])
def test_a_match_in_play_copies_and_pickles_into_an_independent_equal_state(game: str) -> None:
    if game == "gin":
        match: Any = gin.Match(gin.RuleSet.classic(), b"state")
    else:
        match = rummy.Match(rummy.RummyRules.preset("rummy"), b"state", 3)
    _play(match, 5)
    copies = [copy.deepcopy(match), pickle.loads(pickle.dumps(match))]
    ahead = _play(match, 12)
    for other in copies:
        assert _play(other, 12) == ahead


BAD_OPTIONS: list[tuple[type[object], dict[str, Any], str]] = [
    (gin.RuleSet, {"target": "100"}, "target must be an integer; got '100'"),
    (gin.RuleSet, {"big_gin": 1}, "big_gin must be true or false; got 1"),
    (gin.RuleSet, {"knock": 7}, "knock must be one of limit, oklahoma, gin_only; got 7"),
    (gin.RuleSet, {"name": None}, "name must be a non-empty text; got None"),
    (rummy.RummyRules, {"games": 2.0}, "games must be an integer; got 2.0"),
    (rummy.RummyRules, {"stop": "yes"}, "stop must be true or false; got 'yes'"),
    (rummy.RummyRules, {"ace": None}, "ace must be one of low, low_or_high; got None"),
]
"""A rule set, options of the wrong type, and the message of its own error."""


@pytest.mark.parametrize(("cls", "options", "message"), BAD_OPTIONS, ids=[str(o) for _, o, _ in BAD_OPTIONS])
def test_a_wrong_type_is_the_rule_sets_own_error(cls: type[object], options: dict[str, Any], message: str) -> None:
    error = gin.RuleSetError if cls is gin.RuleSet else rummy.RuleSetError
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        cls(**options)
