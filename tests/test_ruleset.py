"""The rule set (RULES §3, §6, §8–§11): presets, validation, plain data, immutability, pickling."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from typing import Any

import pytest

from referee.gin import PRESETS, RuleSet, RuleSetError

DEFAULTS: dict[str, Any] = {
    "knock": "limit",
    "knock_limit": 10,
    "oklahoma_ace_gin_only": True,
    "oklahoma_spades_double": True,
    "big_gin": True,
    "gin_bonus": 25,
    "big_gin_bonus": 31,
    "undercut_bonus": 25,
    "target": 100,
    "game_bonuses": True,
    "line_bonus": 25,
    "game_bonus": 100,
    "shutout": "double",
    "shutout_bonus": 100,
    "next_dealer": "alternate",
    "stock_exhausted": "void",
    "first_dealer": "random",
    "games": 1,
    "match_target": 0,
}
"""The defaults RULES names: §3 alternate dealer, §6 big gin, §8 void, §9 bonuses 25/31/25,
§10 target 100, line 25, game 100, shutout doubled."""

PRESET_VALUES: dict[str, dict[str, Any]] = {
    "classic": {"knock": "limit", "knock_limit": 10, "target": 100},
    "oklahoma": {
        "knock": "oklahoma", "target": 150, "oklahoma_ace_gin_only": True, "oklahoma_spades_double": True,
    },
    "straight": {"knock": "gin_only", "target": 100},
    "short": {"knock": "limit", "knock_limit": 10, "target": 50},
}
"""RULES §11's table."""


def test_rule_11_preset_names() -> None:
    assert set(PRESETS) == {"classic", "oklahoma", "straight", "short"}


@pytest.mark.parametrize("name", sorted(PRESET_VALUES))
def test_rule_11_preset_values(name: str) -> None:
    by_method = getattr(RuleSet, name)()
    by_name = RuleSet.preset(name)
    assert by_method == by_name
    assert by_name.name == name
    expected = {**DEFAULTS, **PRESET_VALUES[name], "name": name}
    assert by_name.to_dict() == expected


def test_rule_11_default_constructor_is_classic() -> None:
    assert RuleSet() == RuleSet.classic()


def test_rule_11_knock_limit_for_each_preset() -> None:
    assert RuleSet.classic().knock_limit_for(7, False) == 10
    assert RuleSet.short().knock_limit_for(7, False) == 10
    assert RuleSet.straight().knock_limit_for(7, False) is None
    assert RuleSet.straight().knock_limit_for(1, True) is None
    ok = RuleSet.oklahoma()
    assert ok.knock_limit_for(7, False) == 7
    assert ok.knock_limit_for(10, False) == 10
    assert ok.knock_limit_for(1, True) is None, "an ace upcard allows gin only"
    assert RuleSet.oklahoma(oklahoma_ace_gin_only=False).knock_limit_for(1, True) == 1
    assert RuleSet.classic(knock_limit=0).knock_limit_for(5, False) == 0


def test_preset_overrides() -> None:
    r = RuleSet.oklahoma(target=200, undercut_bonus=10)
    assert (r.name, r.knock, r.target, r.undercut_bonus) == ("oklahoma", "oklahoma", 200, 10)
    assert RuleSet.preset("short", next_dealer="winner").next_dealer == "winner"
    assert RuleSet.classic(match_target=500).match_target == 500
    assert RuleSet.classic(stock_exhausted="reshuffle").stock_exhausted == "reshuffle"


def test_unknown_preset_is_refused() -> None:
    msg = "unknown preset 'gin'; choose one of classic, oklahoma, straight, short"
    with pytest.raises(RuleSetError, match=msg):
        RuleSet.preset("gin")


KNOCK_LIMIT_ONLY = r"knock_limit applies only with knock='limit' "
INVALID: list[tuple[dict[str, Any], str]] = [
    # choices
    ({"knock": "sometimes"}, r"knock must be one of limit, oklahoma, gin_only; got 'sometimes'"),
    ({"next_dealer": "dealer"}, r"next_dealer must be one of alternate, winner, loser; got 'dealer'"),
    ({"stock_exhausted": "redeal"}, r"stock_exhausted must be one of void, reshuffle; got 'redeal'"),
    ({"shutout": "triple"}, r"shutout must be one of double, bonus, none; got 'triple'"),
    ({"first_dealer": "winner"}, r"first_dealer must be one of random, alternate; got 'winner'"),
    ({"shutout": None}, r"shutout must be one of double, bonus, none; got None"),
    # integer fields
    ({"knock_limit": "10"}, r"knock_limit must be an integer; got '10'"),
    ({"knock_limit": 10.0}, r"knock_limit must be an integer; got 10.0"),
    ({"target": True}, r"target must be an integer; got True"),
    ({"games": None}, r"games must be an integer; got None"),
    ({"gin_bonus": 2.5}, r"gin_bonus must be an integer; got 2.5"),
    ({"match_target": "500"}, r"match_target must be an integer; got '500'"),
    # boolean fields
    ({"big_gin": 1}, r"big_gin must be true or false; got 1"),
    ({"game_bonuses": "yes"}, r"game_bonuses must be true or false; got 'yes'"),
    ({"oklahoma_ace_gin_only": None}, r"oklahoma_ace_gin_only must be true or false; got None"),
    ({"oklahoma_spades_double": 0}, r"oklahoma_spades_double must be true or false; got 0"),
    # ranges
    ({"knock_limit": -1}, r"knock_limit must be between 0 and 100; got -1"),
    ({"knock_limit": 101}, r"knock_limit must be between 0 and 100; got 101"),
    ({"target": 0}, r"target must be at least 1; got 0"),
    ({"target": -100}, r"target must be at least 1; got -100"),
    ({"games": 0}, r"games must be at least 1; got 0"),
    ({"match_target": -1}, r"match_target must be 0 \(off\) or positive; got -1"),
    *[
        ({field: -1}, rf"{field} must not be negative; got -1")
        for field in (
            "gin_bonus", "big_gin_bonus", "undercut_bonus", "line_bonus", "game_bonus", "shutout_bonus"
        )
    ],
    # combinations
    ({"knock": "oklahoma", "knock_limit": 7}, KNOCK_LIMIT_ONLY + r"\(knock is 'oklahoma'\); leave it at 10"),
    ({"knock": "gin_only", "knock_limit": 0}, KNOCK_LIMIT_ONLY + r"\(knock is 'gin_only'\); leave it at 10"),
    ({"match_target": 50}, r"match_target \(50\) must be at least the game target \(100\)"),
    ({"match_target": 500, "games": 3}, r"set either games \(a fixed number\) or match_target"),
    ({"game_bonuses": False, "shutout": "bonus"}, r"shutout='bonus' needs game_bonuses on"),
    ({"knock": "gin_only", "big_gin": False, "gin_bonus": 0}, r"gin_only with no big gin and no gin bonus"),
]


@pytest.mark.parametrize(("changes", "message"), INVALID, ids=[str(c) for c, _ in INVALID])
def test_invalid_rule_sets_are_refused_with_a_clear_message(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(RuleSetError, match=message):
        RuleSet(**changes)
    with pytest.raises(RuleSetError, match=message):
        RuleSet.from_dict(changes)
    with pytest.raises(RuleSetError, match=message):
        RuleSet.classic().replace(**changes)


@pytest.mark.parametrize(
    "changes",
    [
        {"knock_limit": 0},
        {"knock_limit": 100},
        {"knock": "oklahoma", "knock_limit": 10},
        {"match_target": 100},
        {"match_target": 1000},
        {"game_bonuses": False, "shutout": "double"},
        {"game_bonuses": False, "shutout": "none"},
        {"knock": "gin_only", "big_gin": False},
        {"knock": "gin_only", "gin_bonus": 0},
        {"gin_bonus": 0, "undercut_bonus": 0, "line_bonus": 0, "game_bonus": 0, "shutout_bonus": 0},
        {"games": 7, "first_dealer": "alternate"},
        {"target": 1},
    ],
    ids=str,
)
def test_valid_edge_rule_sets_are_accepted(changes: dict[str, Any]) -> None:
    r = RuleSet(**changes)
    for key, value in changes.items():
        assert getattr(r, key) == value


def test_rule_set_error_is_a_value_error() -> None:
    assert issubclass(RuleSetError, ValueError)


def test_unknown_options_are_refused() -> None:
    msg = r"unknown rule option\(s\): knock_limt; known: .*knock_limit"
    with pytest.raises(RuleSetError, match=msg):
        RuleSet.from_dict({"knock_limt": 5})
    with pytest.raises(RuleSetError, match=msg):
        RuleSet.classic(knock_limt=5)
    with pytest.raises(RuleSetError, match=msg):
        RuleSet.classic().replace(knock_limt=5)
    with pytest.raises(RuleSetError, match=r"unknown rule option\(s\): a, b;"):
        RuleSet.from_dict({"b": 1, "a": 2, "target": 100})
    with pytest.raises(TypeError):
        RuleSet(knock_limt=5)  # type: ignore[call-arg]


def test_name_must_be_text() -> None:
    # The class promises that "the constructor validates every field"; ``name`` is one of them.
    with pytest.raises(RuleSetError, match="name"):
        RuleSet(name=5)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", PRESETS)
def test_to_dict_from_dict_round_trip(name: str) -> None:
    r = RuleSet.preset(name, next_dealer="loser", stock_exhausted="reshuffle", first_dealer="alternate")
    d = r.to_dict()
    assert set(d) == {f.name for f in dataclasses.fields(RuleSet)}
    assert RuleSet.from_dict(d) == r
    assert RuleSet.from_dict(json.loads(json.dumps(d))) == r, "to_dict is plain JSON data"
    d["target"] = 77
    assert r.target == PRESET_VALUES[name]["target"], "to_dict is a copy"


def test_from_dict_fills_defaults() -> None:
    assert RuleSet.from_dict({}) == RuleSet.classic()
    assert RuleSet.from_dict({"target": 50, "name": "short"}) == RuleSet.short()


def test_replace_returns_a_validated_copy() -> None:
    r = RuleSet.classic()
    s = r.replace(target=250, shutout="none")
    assert (s.target, s.shutout, s.name) == (250, "none", "classic")
    assert (r.target, r.shutout) == (100, "double"), "the original is unchanged"
    assert r.replace() == r
    with pytest.raises(RuleSetError, match="target must be at least 1"):
        r.replace(target=0)


def test_rule_set_is_frozen_and_hashable() -> None:
    r = RuleSet.classic()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.target = 50  # type: ignore[misc]
    assert r.target == 100
    assert hash(r) == hash(RuleSet.classic())
    assert len({RuleSet.classic(), RuleSet.classic(), RuleSet.short()}) == 2
    assert RuleSet.classic() != RuleSet.classic(target=99)


@pytest.mark.parametrize("name", PRESETS)
def test_rule_set_pickle_round_trip(name: str) -> None:
    r = RuleSet.preset(name, games=3, next_dealer="winner")
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(r, protocol=protocol))
        assert back == r and back.to_dict() == r.to_dict()
        assert type(back) is RuleSet
    assert copy.deepcopy(r) == r
