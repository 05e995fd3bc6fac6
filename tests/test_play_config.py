"""One play configuration (``PlayConfig``) for tournaments, ladders, people's tables, ``arena play``
and ``arena operator create``: one set of checks, one builder of the match spec with one set of
defaults, and a stored form that old runs still read."""

from __future__ import annotations

import tomllib

import pytest

from arena.hosted.ladder_file import LADDER_CONNECT_TIMEOUT_MS, parse_ladder
from arena.model.schedule import DEFAULT_TC, PlayConfig
from referee import TimeControl, games


def test_the_spec_has_the_play_configs_settings_and_the_matchs_own() -> None:
    play = PlayConfig(game="rummy", fault_policy="substitute", substitute_time_faults="move", repeat_illegal=True,
                      reconnect_grace_ms=0, connect_timeout_ms=2_000)
    spec = play.spec(["a", "b", "c"], match_id="m1", seed=b"s", reveal_seed=False, seat_bots=("a", "", "c"))
    assert (spec.players, spec.game, spec.rules) == (("a", "b", "c"), "rummy", play.rules)
    assert spec.time_control == DEFAULT_TC
    assert (spec.fault_policy, spec.substitute_time_faults, spec.repeat_illegal) == ("substitute", "move", True)
    assert (spec.reconnect_grace_ms, spec.connect_timeout_ms) == (0, 2_000)
    assert (spec.match_id, spec.seed, spec.reveal_seed, spec.seat_bots) == ("m1", b"s", False, ("a", "", "c"))


def test_seat_time_controls_are_kept_only_where_a_bot_has_its_own() -> None:
    play = PlayConfig()
    assert play.spec(["a", "b"], seat_time_controls=(DEFAULT_TC, DEFAULT_TC)).seat_time_controls == ()
    own = TimeControl.parse("st=2")
    assert play.spec(["a", "b"], seat_time_controls=(DEFAULT_TC, own)).seat_time_controls == (DEFAULT_TC, own)
    tokens = ("x" * 16, "y" * 16)
    assert play.spec(["a", "b"], seat_tokens=list(tokens)).seat_tokens == tokens


def test_a_runs_stored_form_keeps_its_keys_and_reads_the_new_ones() -> None:
    stored = PlayConfig().to_dict()
    assert set(stored) == {"rules", "time_control", "fault_policy", "concurrency", "connect_timeout_ms"}
    table = PlayConfig(fault_policy="substitute", substitute_time_faults="move", repeat_illegal=True,
                       reconnect_grace_ms=250)
    assert PlayConfig.from_dict(table.to_dict()) == table
    assert PlayConfig.from_dict(stored) == PlayConfig()


@pytest.mark.parametrize(("settings", "said"), [
    ({"fault_policy": "shrug"}, "fault_policy must be one of forfeit, substitute"),
    ({"substitute_time_faults": "deal"}, "substitute_time_faults must be one of game, move"),
    ({"connect_timeout_ms": 999}, "at least 1 s"),
    ({"reconnect_grace_ms": -1}, "reconnect_grace_ms >= 0"),
    ({"concurrency": 0}, "concurrency must be at least 1"),
    ({"game": "chess"}, "chess"),
])
def test_one_set_of_checks(settings: dict[str, object], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        PlayConfig(**settings)  # type: ignore[arg-type]


@pytest.mark.parametrize(("play", "said"), [
    ("fault_policy = 'shrug'", "fault_policy must be one of forfeit, substitute"),
    ("connect_timeout_ms = 10", "at least 1 s"),
    ("reconnect_grace_ms = -5", "reconnect_grace_ms >= 0"),
])
def test_a_ladders_play_is_checked_as_a_runs_is(play: str, said: str) -> None:
    with pytest.raises(ValueError, match=said) as e:
        parse_ladder(tomllib.loads(f"[[play]]\n{play}\n"))
    assert str(e.value).startswith("play[0]: ")


def test_a_ladders_play_is_a_play_config() -> None:
    ladder = parse_ladder({"play": [{"game": "rummy", "preset": games.get("rummy").game.preset_names()[-1],
                                     "tc": "st=3", "seats": 3}]})
    (kind,) = ladder.plays
    assert kind.seats == 3 and kind.play.time_control == TimeControl.parse("st=3")
    assert kind.play.connect_timeout_ms == LADDER_CONNECT_TIMEOUT_MS and kind.key == f"rummy/{kind.preset}"
    assert kind.play.rules == games.get("rummy").game.rules_preset(kind.preset)
    spec = kind.play.spec(["a", "b", "c"], seat_bots=("a", "b", "c"))
    assert spec.game == "rummy" and spec.connect_timeout_ms == LADDER_CONNECT_TIMEOUT_MS
