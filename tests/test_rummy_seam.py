"""Rummy through the game seam (referee/wire/rummy.py): a 4-seat match of the built-in bot
plays to its end; the seam reports deciders who are not the player to move (stop), several
decisions in one turn, chance steps, deal and game ends; a forfeit puts the faulting seats last."""

from __future__ import annotations

import itertools
import random

import pytest

from referee import games
from referee.rummy.wire import RummyGame, RummyMatch


def _play(match: RummyMatch) -> list[games.Happening]:
    log: list[games.Happening] = list(match.opening())
    while not match.is_over:
        seat = match.decider
        assert seat is not None
        log += match.apply(seat, match.substitute(seat))
        assert len(log) < 200_000
    return log


@pytest.mark.parametrize("preset", ["rummy", "michigan", "bozenkill"])
def test_a_four_seat_match_of_the_substitute_bot_ends(preset: str) -> None:
    game = RummyGame()
    rules = game.rules_preset(preset).replace(target=50, stock_exhausted="reshuffle")
    match = game.new_match(rules, b"seam", 4)
    log = _play(match)
    ends = [h for h in log if isinstance(h, games.GameOver)]
    assert len(ends) == 1 and match.outcome is not None and ends[0].ranking.places == match.ranking().places
    deals = [h for h in log if isinstance(h, games.DealBegun)]
    assert len(deals) == len([h for h in log if isinstance(h, games.DealOver)])
    assert all(len(d.record["deck"]) == 52 for d in deals)
    acted = [h for h in log if isinstance(h, games.Acted)]
    assert any(a.seat == b.seat and a.text.startswith("meld") for a, b in itertools.pairwise(acted))
    assert game.result_fields(match.outcome)["totals"] == list(match.outcome.points)


def test_stop_questions_go_to_seats_that_are_not_the_player_to_move() -> None:
    game = RummyGame()
    match = game.new_match(game.rules_preset("michigan"), b"stop", 4)
    asked = []
    rng = random.Random(3)
    for _ in range(3000):
        if match.is_over:
            break
        seat = match.decider
        assert seat is not None
        if match.match.deal.phase == "stop":
            asked.append(seat != match.match.deal.turn)
        match.apply(seat, rng.choice(match.match.legal_actions()))
    assert asked and all(asked)


def test_a_forfeit_ends_the_match_with_the_faulting_seats_last() -> None:
    game = RummyGame()
    match = game.new_match(game.default_rules(), b"f", 5)
    (over,) = match.forfeit([3, 1])
    assert isinstance(over, games.GameOver) and match.is_over
    assert over.ranking.places[3] == 5 and over.ranking.places[1] == 4
    with pytest.raises(ValueError, match="2 to 6"):
        game.new_match(game.default_rules(), b"f", 7)
