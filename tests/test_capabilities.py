"""A game's optional parts are declared, not probed (issue 30): one frozen
``referee.games.Capabilities`` on the registration, which the arena reads — no ``getattr`` for a
method's name in any arena module — and which ``arena games --check`` and
``referee.conformance.check_game`` check (:func:`referee.games.capability_problems`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from toy3_game.engine import ToyGame, hidden_variant
from toy3_game.present import ToyPresentation
from toy3_game.wire import ToyWire

from arena.cli import main as arena_main
from referee import games
from referee.conformance import ConformanceError, check_game

ARENA = Path(__file__).resolve().parent.parent / "arena"
CAPABILITIES = ("knows_cards", "first_dealer", "describe", "event_words", "hasty", "deal_end_view")
MEMBERS = (*CAPABILITIES, "card_fields", "card_text", "known_cards")


class _Undeclared(ToyGame):
    name = "toy3-undeclared"


def _undeclared() -> games.Registered:
    """toy3 as it was registered before capabilities were declared: its wire has ``describe`` and
    ``event_words``, its engine ``KnowsCards``, and the registration says nothing of them."""
    return games.Registered(_Undeclared(), ToyWire(), ToyPresentation())


@pytest.fixture
def undeclared() -> Iterator[str]:
    """The undeclared toy3, registered in this process while the test runs."""
    games.register("toy3-undeclared", _undeclared)
    try:
        yield "toy3-undeclared"
    finally:
        games.unregister("toy3-undeclared")


def test_the_games_declare_what_they_have() -> None:
    declared = {name: {c for c in CAPABILITIES if getattr(games.get(name).capabilities, c) is not None}
                for name in ("gin", "rummy", "toy3")}
    assert declared == {"gin": set(CAPABILITIES), "rummy": {"knows_cards", "describe", "event_words", "deal_end_view"},
                        "toy3": {"knows_cards", "describe", "event_words"}}
    for name in ("gin", "rummy", "toy3"):
        assert games.capability_problems(games.get(name)) == [], name
    assert games.get("toy3").capabilities.encodings == "toy3_game.encode"  # the training environment's
    odd = games.Registered(_Undeclared(), ToyWire(), capabilities=games.Capabilities(encodings="toy3 game/encode"))
    assert games.capability_problems(odd)[0] == \
        "capability encodings is declared with 'toy3 game/encode', not a module's dotted name"
    with pytest.raises(ValueError, match="no game named 'gin' is registered in process"):
        games.unregister("gin")  # an installed game is not the process's to remove


def test_an_undeclared_or_unsound_capability_is_a_problem() -> None:
    problems = games.capability_problems(_undeclared())
    assert [p.split(" has ")[1].split(" but ")[0] for p in problems] == ["knows_cards", "describe", "event_words"]
    assert all("does not declare it (games.Capabilities(" in p for p in problems), problems
    wire = ToyWire()
    unsound = games.Registered(_Undeclared(), wire, ToyPresentation(), capabilities=games.Capabilities(
        knows_cards=wire, describe=wire.describe, event_words=wire.event_words))  # type: ignore[arg-type]
    assert games.capability_problems(unsound) == [
        "capability knows_cards is declared with a ToyWire, which has no card_fields, card_text, known_cards"]


@pytest.mark.usefixtures("undeclared")
def test_arena_games_check_fails_on_an_undeclared_capability(capsys: pytest.CaptureFixture[str]) -> None:
    assert arena_main(["games", "--check"]) == 1
    err = capsys.readouterr().err
    assert "arena: warning: game 'toy3-undeclared': its ToyWire has describe but its registration does not " \
           "declare it" in err, err
    assert "game 'gin'" not in err and "game 'toy3':" not in err, err
    assert arena_main(["games", "--json"]) == 0
    out = capsys.readouterr().out
    names = ["knows_cards", "describe", "event_words", "encodings"]
    assert '"capabilities": [\n' + ",\n".join(f'      "{n}"' for n in names) + "\n    ]" in out, out


def test_conformance_checks_the_declaration() -> None:
    with pytest.raises(ConformanceError, match=r"game 'toy3-undeclared', capabilities: .* has knows_cards but"):
        check_game(_undeclared(), seats=[2], hidden=hidden_variant)
    check_game("toy3", seats=[2], hidden=hidden_variant)


def test_no_arena_module_probes_a_game_for_a_capability() -> None:
    """The arena reads ``Registered.capabilities``; a ``getattr``/``hasattr`` naming one of their
    members would find an undeclared one behind the declaration's back."""
    probe = re.compile(r"\b(?:getattr|hasattr)\([^)]*[\"'](?:" + "|".join(MEMBERS) + r")[\"']")
    found = [f"{p.relative_to(ARENA.parent)}:{n}" for p in sorted(ARENA.rglob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if probe.search(line)]
    assert found == [], found
