"""The pure competition core against hand-worked cases: Swiss pairings (score groups, byes, no
rematch while avoidable), knockout brackets of 5, 8 and 13, the ladder's rounds, the raters (Glicko-2 against the
worked example of Glickman's paper) and the one seating module."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Sequence

import pytest

from arena.competition.formats import FORMATS, LADDER_FORMAT, Field, PlayedRound, Round, get_continuous, get_format
from arena.competition.formats.knockout import KNOCKOUT_TIEBREAK_GROUPS, bracket, bracket_order, walk
from arena.competition.formats.swiss import pair_round
from arena.competition.ratings import RATERS, get_raters
from arena.competition.ratings.glicko2 import Glicko, update
from arena.competition.ratings.score import elo_estimate
from arena.competition.result import Result
from arena.competition.seating import base_name, instance_names, rotations, seating

SWISS = get_format("swiss")
KNOCKOUT = get_format("knockout")


def _play(planned: Round, winner: Callable[[str, str, int], str | None]) -> PlayedRound:
    """Every game of a round, won as ``winner(a, b, leg)`` says (``None``: no result)."""
    results = []
    for g in planned.groups:
        for leg, players in enumerate(rotations(g.players, g.shift)):
            a, b = sorted(players)
            w = winner(a, b, leg)
            results.append(Result.of_winner(players, None if w is None else players.index(w), f"{g.key}#{g.number}"))
    return PlayedRound(planned, tuple(results))


def _pairs(planned: Round) -> list[tuple[str, ...]]:
    return sorted({tuple(sorted(g.players)) for g in planned.groups})


def _by_seed(field: Field) -> Callable[[str, str, int], str]:
    """The better seed wins every game."""
    return lambda a, b, leg: min(a, b, key=field.bots.index)


# ----- the result type -----
def test_a_result_derives_its_winner_from_its_places() -> None:
    assert Result(("a", "b", "c"), (2, 1, 3)).winner == 1
    assert Result(("a", "b", "c"), (1, 1, 3)).winner is None  # first place shared
    aborted = Result.of_winner(("a", "b"), None)
    assert aborted.places == (1, 1) and not aborted.rated and aborted.winner is None
    won = Result.of_winner(("a#2", "b", "a"), 2)
    assert won.places == (2, 2, 1) and won.bots == ("a", "b", "a")
    assert won.score_of("a", "b") == 0.75  # one seat level with b, one ahead
    with pytest.raises(ValueError, match="a place for each of its 2 seats"):
        Result(("a", "b"), (1,))


# ----- seating -----
def test_one_rotation_seats_every_player_at_every_seat_once() -> None:
    table = ("x", "y", "z")
    assert rotations(table) == [("x", "y", "z"), ("y", "z", "x"), ("z", "x", "y")]
    assert seating(table, 0, 1) == ("y", "z", "x") and rotations(("a", "b"), 1) == [("b", "a"), ("a", "b")]
    assert instance_names(("a", "a", "b")) == ("a", "a#2", "b") and base_name("a#2") == "a"


# ----- Swiss -----
def test_swiss_round_one_pairs_the_top_half_against_the_bottom_half() -> None:
    field = Field(("a", "b", "c", "d", "e", "f"), rounds=3)
    first = SWISS.plan(field, [])
    assert first is not None and first.byes == ()
    assert _pairs(first) == [("a", "d"), ("b", "e"), ("c", "f")]  # S1 = a b c, S2 = d e f


def test_swiss_an_odd_field_gives_the_bye_to_the_lowest_without_one_and_floats_down() -> None:
    field = Field(("a", "b", "c", "d", "e"), rounds=3)
    one = SWISS.plan(field, [])
    assert one is not None and one.byes == ("e",) and _pairs(one) == [("a", "c"), ("b", "d")]
    # a beats c, d beats b: a, d and e (bye) on 1, b and c on 0. The group {a, d, e} is odd:
    # a meets d (S1 v S2), e floats down to the top of the 0 group (b); c, lowest, gets the bye.
    history = [_play(one, lambda x, y, leg: "a" if {"a", "c"} == {x, y} else "d")]
    two = SWISS.plan(field, history)
    assert two is not None and two.byes == ("c",) and _pairs(two) == [("a", "d"), ("b", "e")]
    history.append(_play(two, _by_seed(field)))
    three = SWISS.plan(field, history)
    assert three is not None and three.byes not in (("c",), ("e",)), "a bye goes to a bot without one"
    assert SWISS.plan(field, [*history, _play(three, _by_seed(field))]) is None  # three rounds, then done


def test_swiss_never_rematches_while_a_pairing_avoids_it() -> None:
    field = Field(("a", "b", "c", "d"), rounds=3)
    history: list[PlayedRound] = []
    rounds = []
    while (planned := SWISS.plan(field, history)) is not None:
        rounds.append(_pairs(planned))
        history.append(_play(planned, _by_seed(field)))
    # r1 a-c b-d; r2 the winners a-b and the losers c-d; r3 a (2) has met b and c: it floats to d
    assert rounds == [[("a", "c"), ("b", "d")], [("a", "b"), ("c", "d")], [("a", "d"), ("b", "c")]]
    met = [p for r in rounds for p in r]
    assert len(met) == len(set(met)) == 6  # every pair once


def test_swiss_backtracks_rather_than_force_a_rematch_lower_down() -> None:
    scores = dict.fromkeys("abcd", 0.0)
    met = frozenset({frozenset("ac"), frozenset("bc")})
    # a's first choice (c) is a rematch; a-d would leave b-c, another: a-b and c-d it is
    assert pair_round(list("abcd"), scores, met, frozenset()) == ([("a", "b"), ("c", "d")], None)
    # only when nothing avoids every rematch are rematches allowed
    assert pair_round(list("ab"), {"a": 1.0, "b": 0.0}, frozenset({frozenset("ab")}), frozenset()) == (
        [("a", "b")], None)


def test_swiss_balances_seats_and_is_deterministic() -> None:
    field = Field(tuple("abcdefg"), games=4, rounds=4, seed="s")
    history: list[PlayedRound] = []
    while (planned := SWISS.plan(field, history)) is not None:
        assert SWISS.plan(field, list(history)) == planned  # the same history plans the same round
        assert len(planned.groups) == 2 * 3 and len(planned.byes) == 1
        history.append(_play(planned, _by_seed(field)))
    firsts = Counter(r.players[0] for p in history for r in p.results)
    seconds = Counter(r.players[1] for p in history for r in p.results)
    assert firsts == seconds  # every bot as often first as second
    assert len({b for p in history for b in p.round.byes}) == 4  # four rounds, four different byes
    keys = [r.group for p in history for r in p.results]
    assert len(set(keys)) * 2 == len(keys)  # every duplicate group unique across rounds


def test_swiss_and_knockout_refuse_fields_they_cannot_pair() -> None:
    with pytest.raises(ValueError, match="needs --seats 2"):
        SWISS.check(Field(("a", "b", "c"), seats=3, games=3))
    with pytest.raises(ValueError, match="--rounds does not apply"):
        KNOCKOUT.check(Field(("a", "b"), rounds=2))
    with pytest.raises(ValueError, match="a round robin is one round: --rounds does not apply"):
        get_format("round-robin").check(Field(("a", "b"), rounds=2))
    with pytest.raises(ValueError, match="format must be one of round-robin, gauntlet, swiss, knockout, ladder"):
        get_format("elimination")


# ----- knockout -----
def _run_knockout(field: Field, winner: Callable[[str, str, int], str | None]) -> tuple[list[Round], str | None]:
    history: list[PlayedRound] = []
    while (planned := KNOCKOUT.plan(field, history)) is not None:
        history.append(_play(planned, winner))
    slots = walk(field, history)[1]
    return [p.round for p in history], slots[0]


def test_the_bracket_order_keeps_the_top_seeds_apart() -> None:
    assert bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    assert bracket_order(4) == [1, 4, 2, 3]
    assert bracket(list("abcde")) == ["a", None, "d", "e", "b", None, "c", None]


def test_a_knockout_of_five_gives_the_top_three_seeds_byes() -> None:
    field = Field(tuple("abcde"))
    rounds, champion = _run_knockout(field, _by_seed(field))
    assert [(r.label, _pairs(r), r.byes) for r in rounds] == [
        ("quarter-final", [("d", "e")], ("a", "b", "c")),
        ("semi-final", [("a", "d"), ("b", "c")], ()),
        ("final", [("a", "b")], ()),
    ]
    assert champion == "a"


def test_a_knockout_of_eight_and_the_upset() -> None:
    field = Field(tuple("abcdefgh"))
    rounds, champion = _run_knockout(field, _by_seed(field))
    assert [_pairs(r) for r in rounds] == [
        [("a", "h"), ("b", "g"), ("c", "f"), ("d", "e")], [("a", "d"), ("b", "c")], [("a", "b")]]
    assert champion == "a" and all(r.byes == () for r in rounds)
    upset, winner = _run_knockout(field, lambda x, y, leg: "h" if "h" in (x, y) else min(x, y, key=field.bots.index))
    assert winner == "h" and _pairs(upset[1]) == [("b", "c"), ("d", "h")]


def test_a_knockout_of_thirteen() -> None:
    field = Field(tuple("abcdefghijklm"))  # 13: a bracket of 16, three byes
    rounds, champion = _run_knockout(field, _by_seed(field))
    first = rounds[0]
    assert first.byes == ("a", "b", "c") and len(_pairs(first)) == 5
    assert _pairs(first) == [("d", "m"), ("e", "l"), ("f", "k"), ("g", "j"), ("h", "i")]
    assert [r.label for r in rounds] == ["last 16", "quarter-final", "semi-final", "final"]
    assert _pairs(rounds[1]) == [("a", "h"), ("b", "g"), ("c", "f"), ("d", "e")]
    assert champion == "a"


def test_a_drawn_tie_plays_tie_breaks_then_the_higher_seed_goes_through() -> None:
    field = Field(("a", "b"), games=2)
    # each wins the game it sits first in: 1-1, a drawn tie; the tie-break (one group) likewise
    rounds, champion = _run_knockout(field, lambda x, y, leg: x if leg == 0 else y)
    assert [r.label for r in rounds] == ["final", *(f"tie-break {k + 1} of the final"
                                                    for k in range(KNOCKOUT_TIEBREAK_GROUPS))]
    assert champion == "a"
    # a tie-break won by the lower seed sends it through
    history = [_play(rounds[0], lambda x, y, leg: x if leg == 0 else y)]
    tiebreak = KNOCKOUT.plan(field, history)
    assert tiebreak is not None and len(tiebreak.groups) == 1
    history.append(_play(tiebreak, lambda x, y, leg: "b"))
    assert KNOCKOUT.plan(field, history) is None and walk(field, history)[1] == ["b"]
    numbers = [g.number for r in (rounds[0], tiebreak) for g in r.groups]
    assert len(numbers) == len(set(numbers))  # a tie-break's deck is a new one


# ----- the ladder as a format -----
LADDER = get_format("ladder")


def _ladder(field: Field, winner: Callable[[str, str, int], str | None]) -> list[PlayedRound]:
    """Every round of the ladder, the games won as ``winner`` says."""
    history: list[PlayedRound] = []
    while (planned := LADDER.plan(field, history)) is not None:
        history.append(_play(planned, winner))
    return history


def _meetings(history: Sequence[PlayedRound]) -> Counter[frozenset[str]]:
    return Counter(frozenset(p) for played in history for g in played.round.groups
                   for p in itertools.combinations(g.players, 2))


def test_the_ladder_seats_an_even_field_a_wave_a_round_the_least_met_first() -> None:
    perfect = 0
    for seed in range(20):
        field = Field(tuple("abcdef"), games=2, seed=str(seed))
        history = _ladder(field, _by_seed(field))
        assert [p.round.label for p in history] == [f"round {k} of 5" for k in range(1, 6)]
        for played in history:  # a round: every bot at one table, none sitting out
            seated = [b for g in played.round.groups for b in g.players]
            assert sorted(seated) == sorted(field.bots) and played.round.byes == ()
        met = _meetings(history)
        # a wave pairs greedily (no look-ahead): at worst one pair meets twice where two never met
        assert max(met.values()) <= 2 and len(met) >= 13
        perfect += len(met) == 15
        numbers = [(g.key, g.number) for p in history for g in p.round.groups]
        assert len(numbers) == len(set(numbers))  # every group its own deck
    assert perfect >= 10  # mostly a round robin all the same


def test_the_ladder_gives_an_odd_field_byes_in_turn_and_plans_deterministically() -> None:
    for seed in range(10):
        field = Field(tuple("abcde"), games=2, seed=f"odd{seed}")
        history = _ladder(field, lambda a, b, leg: a)
        assert len(history) == 5 and sorted(b for p in history for b in p.round.byes) == list("abcde")
        met = _meetings(history)
        assert max(met.values()) <= 2 and len(met) >= 8
    for k in range(len(history)):  # the same field and results plan the same round (a resumed run)
        assert LADDER.plan(field, history[:k]) == history[k].round
    assert LADDER.plan(Field(tuple("abcde"), games=2, seed="other"), ()) != history[0].round


def test_the_ladder_pairs_three_seats_and_refuses_what_it_cannot_plan() -> None:
    field = Field(tuple("abcdefg"), seats=3, games=3, seed="t", rounds=6)
    history: list[PlayedRound] = []
    while (planned := LADDER.plan(field, history)) is not None:
        assert len(planned.groups) == 2 and len(planned.byes) == 1
        history.append(PlayedRound(planned, tuple(Result(g.players, (1, 2, 3)) for g in planned.groups)))
    assert len(history) == 6 and len(_meetings(history)) == 21  # every pair of seven met in six rounds
    with pytest.raises(ValueError, match="--tables does not apply"):
        LADDER.check(Field(tuple("abc"), tables=2))
    with pytest.raises(ValueError, match="--instances does not apply"):
        LADDER.check(Field(tuple("abc"), instances=2))
    with pytest.raises(ValueError, match="at least 3 bots"):
        LADDER.check(Field(("a", "b"), seats=3, games=3))


def test_the_ladders_reach_the_ladder_format_through_the_registry() -> None:
    assert get_continuous() is FORMATS[LADDER_FORMAT] is LADDER
    with pytest.raises(ValueError, match="'swiss' plans whole rounds, not a continuous ladder"):
        get_continuous("swiss")
    with pytest.raises(ValueError, match="format must be one of"):
        get_continuous("elimination")


# ----- raters -----
def _games(scores: Sequence[tuple[str, str, int]]) -> list[Result]:
    """``(a, b, w)``: a game of ``a`` (first seat) and ``b`` won by seat ``w``."""
    return [Result.of_winner((a, b), w) for a, b, w in scores]


def test_the_paper_example_of_glicko2() -> None:
    # Glickman, "Example of the Glicko-2 system": 1500 / 200 / 0.06 against 1400 / 30 (won),
    # 1550 / 100 (lost), 1700 / 300 (lost), tau = 0.5.
    after = update(Glicko(1500, 200, 0.06), [(Glicko(1400, 30, 0.06), 1.0), (Glicko(1550, 100, 0.06), 0.0),
                                             (Glicko(1700, 300, 0.06), 0.0)])
    assert after.rating == pytest.approx(1464.06, abs=0.02)
    assert after.rd == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=1e-5)
    assert update(after, []).rd > after.rd  # a period without games only widens the deviation


def test_every_rater_orders_a_clear_field_and_names_itself() -> None:
    games = _games([("s", "m", 0), ("m", "s", 1), ("m", "w", 0), ("w", "m", 1), ("s", "w", 0), ("w", "s", 1)] * 3)
    assert list(RATERS) == ["elo", "bt", "openskill", "glicko2"]
    for rater in get_raters(list(RATERS)):
        rows = rater.rate(games, ("s", "m", "w", "idle"))
        order = [r.bot for r in rows if r.count]
        assert order == ["s", "m", "w"], rater.name
        assert all(r.low <= r.rating <= r.high for r in rows), rater.name
        assert rater.title and rater.name in RATERS
    with pytest.raises(ValueError, match="rater must be one of elo, bt, openskill, glicko2; got 'trueskill'"):
        get_raters(["elo", "trueskill"])


def test_the_elo_rater_is_the_estimate_against_the_field() -> None:
    games = _games([("a", "b", 0), ("a", "b", 0), ("a", "b", 0), ("a", "b", 1)])
    rows = {r.bot: r for r in RATERS["elo"].rate(games)}
    est = elo_estimate(3, 0, 1)
    assert rows["a"].rating == pytest.approx(est.elo) and rows["a"].low == pytest.approx(est.low)
    assert dict(rows["a"].extra)["los"] == pytest.approx(est.los) and rows["a"].count == 4
    assert rows["b"].rating == pytest.approx(-est.elo)


def test_glicko2_counts_a_duplicate_pair_as_one_period() -> None:
    pair = [Result.of_winner(("a", "b"), 0, "k"), Result.of_winner(("b", "a"), 1, "k")]
    split = [Result.of_winner(("a", "b"), 0, "j"), Result.of_winner(("b", "a"), 0, "j")]
    rows = {r.bot: r for r in RATERS["glicko2"].rate([*pair, *split])}
    assert rows["a"].count == 2 and rows["a"].rating > 1500 > rows["b"].rating
    assert math.isclose(rows["a"].rating - 1500, 1500 - rows["b"].rating, rel_tol=1e-9)  # symmetric


def test_every_format_is_found_by_its_name() -> None:
    assert list(FORMATS) == ["round-robin", "gauntlet", "swiss", "knockout", "ladder"]
    assert all(get_format(n).name == n for n in FORMATS)
