"""Arena statistics against hand-computed values: Elo from a score, the 95% interval, LOS, the
SPRT log-likelihood ratio and its bounds, Bradley–Terry ratings, and duplicate pairs as units."""

from __future__ import annotations

import math

import pytest

from arena.competition.ratings.bradley_terry import Rating, los_between, mle_ratings
from arena.competition.ratings.score import elo_estimate, elo_from_score, expected_score, los
from arena.competition.ratings.units import Unit, scoring_units, wdl
from arena.competition.result import Result
from arena.results.stats import SprtCounts, SprtSpec, format_elo, sprt_counts, sprt_llr, sprt_state


def _game(players: tuple[str, ...], winner: int | None, group: str, places: tuple[int, ...] = ()) -> Result:
    """A result by its winner (or its places, when given), in duplicate group ``group``."""
    return Result(players, places, (), group) if places else Result.of_winner(players, winner, group)


def _alone(games: list[Result]) -> list[Result]:
    """The games scored without duplicate deals: no groups."""
    return [Result(g.players, g.places, g.points) for g in games]


def test_elo_from_score_by_hand() -> None:
    # -400 log10(1/0.75 - 1) = -400 log10(1/3) = 400 * 0.4771213 = 190.8485
    assert elo_from_score(0.75) == pytest.approx(190.8485, abs=1e-3)
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.25) == pytest.approx(-190.8485, abs=1e-3)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf
    assert expected_score(190.8485) == pytest.approx(0.75, abs=1e-6)


def test_elo_interval_by_hand() -> None:
    # W=6 D=2 L=2: n=10, score 0.7; per-unit variance (6*0.3² + 2*0.2² + 2*0.7²)/10 = 0.16;
    # standard error sqrt(0.16/10) = 0.1264911; score ± 1.96*se = 0.452077 .. 0.947923;
    # Elo: -400 log10(3/7) = 147.1907; bounds -33.3994 and 504.0333.
    est = elo_estimate(6, 2, 2)
    assert est.n == 10 and est.score == pytest.approx(0.7)
    assert est.elo == pytest.approx(147.1907, abs=1e-3)
    assert est.low == pytest.approx(-33.3994, abs=1e-3)
    assert est.high == pytest.approx(504.0333, abs=1e-3)
    assert est.margin == pytest.approx((504.0333 + 33.3994) / 2, abs=1e-3)
    # LOS = ½(1 + erf((6-2)/sqrt(2*8))) = ½(1 + erf(1)) = 0.9213504
    assert est.los == pytest.approx(0.9213504, abs=1e-6)


def test_los_by_hand() -> None:
    assert los(0, 0) == 0.5
    assert los(5, 5) == 0.5
    assert los(2, 6) == pytest.approx(1 - 0.9213504, abs=1e-6)
    # W=9 L=1: ½(1 + erf(8/sqrt(20))) = ½(1 + erf(1.7888544)) = ½(1 + 0.9885880) = 0.9942940
    assert los(9, 1) == pytest.approx(0.9942940, abs=1e-6)


def test_perfect_and_empty_records() -> None:
    perfect = elo_estimate(4, 0, 0)
    assert perfect.elo == math.inf and perfect.margin == math.inf
    # Its interval is one-sided, not a point at +inf: 4 of 4 is at least 4 / (4 + 1.96²) (Wilson).
    assert perfect.high == math.inf and perfect.low == pytest.approx(elo_from_score(4 / (4 + 1.96**2)), rel=1e-3)
    assert 0 < perfect.low < elo_estimate(40, 0, 0).low < math.inf
    nil = elo_estimate(0, 0, 40)
    assert nil.low == -math.inf and nil.high == pytest.approx(-elo_estimate(40, 0, 0).low)
    drawn = elo_estimate(0, 6, 0)
    assert drawn.elo == 0.0 and drawn.low == pytest.approx(-drawn.high) and drawn.low < 0 < drawn.high
    assert format_elo(perfect.elo) == "+inf" and format_elo(-0.2) == "0" and format_elo(12.6) == "+13"
    empty = elo_estimate(0, 0, 0)
    assert empty.n == 0 and empty.score == 0.5 and empty.los == 0.5


def _direct_llr(ll: int, ld: int, wl: int, wd: int, ww: int, elo0: float, elo1: float) -> float:
    """The pentanomial LLR written out plainly: one virtual pair spread as 0.2 on each pair score,
    the mean and variance of the pair scores, N (s1 - s0)(2m - s0 - s1) / (2v)."""
    n = ll + ld + wl + wd + ww
    c0, c1, c2, c3, c4 = ll + 0.2, ld + 0.2, wl + 0.2, wd + 0.2, ww + 0.2
    total = c0 + c1 + c2 + c3 + c4  # n + 1
    mean = (0.0 * c0 + 0.25 * c1 + 0.5 * c2 + 0.75 * c3 + 1.0 * c4) / total
    second = (0.0 * c0 + 0.0625 * c1 + 0.25 * c2 + 0.5625 * c3 + 1.0 * c4) / total
    var = second - mean * mean
    s0: float = 1.0 / (1.0 + 10.0 ** (-elo0 / 400.0))
    s1: float = 1.0 / (1.0 + 10.0 ** (-elo1 / 400.0))
    return n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)


@pytest.mark.parametrize("counts", [(0, 0, 0, 0, 20), (3, 1, 10, 2, 7), (12, 0, 30, 0, 9), (0, 0, 40, 0, 0),
                                    (1, 0, 0, 0, 0)])
def test_pentanomial_llr_against_a_direct_computation(counts: tuple[int, int, int, int, int]) -> None:
    for elo0, elo1 in ((0.0, 20.0), (-10.0, 5.0), (0.0, 200.0)):
        assert sprt_llr(SprtCounts(counts), elo0, elo1) == pytest.approx(_direct_llr(*counts, elo0, elo1), rel=1e-12)


def test_trinomial_llr_by_hand() -> None:
    # Games L-D-W 20-10-30 with ⅓ virtual game on each score: weights 20.333, 10.333, 30.333 (61);
    # mean (5.1667 + 30.3333)/61 = 0.5819672; E[x²] = (2.5833 + 30.3333)/61 = 0.5396175;
    # variance 0.5396175 - 0.3386858 = 0.2009317; s0 = 0.5, s1 = 0.5143872 (10 Elo):
    # LLR = 60 * 0.0143872 * (1.1639344 - 1.0143872) / (2 * 0.2009317) = 0.3212382
    assert sprt_llr(SprtCounts(games=(20, 10, 30)), 0.0, 10.0) == pytest.approx(0.3212382, abs=1e-6)
    spec = SprtSpec(0.0, 10.0, 0.05, 0.05)
    assert spec.lower == pytest.approx(math.log(0.05 / 0.95)) == pytest.approx(-2.9444390, abs=1e-6)
    assert spec.upper == pytest.approx(2.9444390, abs=1e-6)
    assert sprt_state(SprtCounts(games=(20, 10, 30)), spec).decision == ""
    # pairs and single games are independent samples: their LLRs add
    both = SprtCounts((3, 1, 10, 2, 7), (20, 10, 30))
    assert sprt_llr(both, 0, 10) == pytest.approx(_direct_llr(3, 1, 10, 2, 7, 0, 10) + 0.3212382, abs=1e-6)
    assert sprt_llr(SprtCounts(), 0, 10) == 0.0


def test_a_one_sided_record_decides() -> None:
    """Issue 22: 20 won pairs and none lost at elo0=0, elo1=20, α=β=0.05 accept H1 (the old
    test said "LLR 0.00 … undecided" until a pair was lost) — and 20 lost pairs accept H0."""
    spec = SprtSpec.parse("elo0=0,elo1=20,alpha=0.05,beta=0.05")
    won = sprt_state(SprtCounts((0, 0, 0, 0, 20)), spec)
    assert won.decision == "H1" and won.llr >= spec.upper
    assert sprt_state(SprtCounts((20, 0, 0, 0, 0)), spec).decision == "H0"
    assert sprt_state(SprtCounts(games=(0, 0, 20)), spec).decision == "H1"
    # The prior keeps one or two won pairs from proving anything.
    assert sprt_state(SprtCounts((0, 0, 0, 0, 2)), spec).decision == ""
    # Equal bots (each wins on the same cards) soon accept H0 at elo1 = 20.
    assert sprt_state(SprtCounts((0, 0, 40, 0, 0)), spec).decision == "H0"


def test_sprt_counts_pairs_and_leftover_games() -> None:
    games = [
        _game(("a", "b"), 0, "p1"), _game(("b", "a"), 1, "p1"),  # a won both: WW
        _game(("a", "b"), 1, "p2"), _game(("b", "a"), 1, "p2"),  # one each: WL
        _game(("a", "b"), 1, "p3"), _game(("b", "a"), 0, "p3"),  # b won both: LL
        _game(("a", "b"), 0, "p4"), _game(("b", "a"), None, "p4"),  # half aborted: a single win
        _game(("a", "b"), 1, "p5"),  # the other half not played yet: a single loss
        _game(("a", "c"), 0, "p6"),  # another opponent: not counted
    ]
    counts = sprt_counts(games, "a", "b")
    assert counts.pairs == (1, 0, 1, 0, 1) and counts.games == (1, 0, 1) and counts.units == 5
    alone = sprt_counts(_alone(games), "a", "b")
    assert alone.pairs == (0, 0, 0, 0, 0) and alone.games == (4, 0, 4)


def test_sprt_spec_errors() -> None:
    with pytest.raises(ValueError, match="elo1 > elo0"):
        SprtSpec.parse("elo0=10,elo1=5")
    with pytest.raises(ValueError, match="expected elo0"):
        SprtSpec.parse("elo2=3")
    with pytest.raises(ValueError, match="alpha and beta"):
        SprtSpec.parse("alpha=0.7")


def test_duplicate_pairs_are_scored_as_pairs() -> None:
    games = [
        # pair p1: A wins both -> 1 for A
        _game(("A", "B"), 0, "p1"), _game(("B", "A"), 1, "p1"),
        # pair p2: one each -> 0.5
        _game(("A", "B"), 0, "p2"), _game(("B", "A"), 0, "p2"),
        # pair p3: B wins both -> 0 for A
        _game(("A", "B"), 1, "p3"), _game(("B", "A"), 0, "p3"),
        # pair p4: one game without a result -> the other counts alone
        _game(("A", "B"), None, "p4"), _game(("B", "A"), 1, "p4"),
    ]
    units = scoring_units(games)
    assert sorted((u.a, u.b, u.score) for u in units) == [
        ("A", "B", 0.0), ("A", "B", 0.5), ("A", "B", 1.0), ("B", "A", 0.0)]
    assert wdl(units, "A") == (2, 1, 1)
    assert wdl(units, "B", "A") == (1, 1, 2)
    # Without duplicate deals every rated game is a unit.
    assert len(scoring_units(_alone(games))) == 7


def test_mle_two_bots_by_hand() -> None:
    # A beats B 3 times of 4: the MLE difference is 400 log10(3) = 190.8485, centred at 0.
    units = [Unit("A", "B", 1.0)] * 3 + [Unit("A", "B", 0.0)]
    ratings = {r.bot: r for r in mle_ratings(units, prior=0)}
    assert ratings["A"].elo == pytest.approx(95.4243, abs=1e-2)
    assert ratings["B"].elo == pytest.approx(-95.4243, abs=1e-2)
    # Fisher information n p (1 - p) = 4 * 0.75 * 0.25 = 0.75 -> ±1.96 * 173.7178 / sqrt(0.75) = 393.15
    assert ratings["A"].margin == pytest.approx(393.15, abs=0.1)
    assert los_between(ratings["A"], ratings["B"]) > 0.5


def test_mle_three_bots_transitive() -> None:
    # A-B 2:1 (A 2/3), B-C 2:1: with equal "ratios" BT gives A-B = B-C = 400 log10(2) = 120.41.
    units = ([Unit("A", "B", 1.0)] * 2 + [Unit("A", "B", 0.0)]
             + [Unit("B", "C", 1.0)] * 2 + [Unit("B", "C", 0.0)])
    r = {x.bot: x.elo for x in mle_ratings(units, prior=0)}
    assert r["A"] - r["B"] == pytest.approx(r["B"] - r["C"], abs=0.5)
    assert sum(r.values()) == pytest.approx(0.0, abs=1e-6)
    # A prior keeps a perfect record finite.
    finite = mle_ratings([Unit("A", "B", 1.0)] * 5)
    assert all(math.isfinite(x.elo) for x in finite)
    assert isinstance(finite[0], Rating) and finite[0].bot == "A"


def test_a_game_of_three_seats_scores_each_two_seats() -> None:
    units = scoring_units(_alone([_game(("a", "b", "c"), 1, ""), _game(("a", "b", "c"), None, "")]))
    assert units == [Unit("a", "b", 0.0), Unit("a", "c", 0.5), Unit("b", "c", 1.0)]  # no result: not rated
    # A "pair" key on a three-seat game does not make a duplicate pair of two-bot games.
    assert scoring_units([_game(("a", "b", "c"), 0, "k"), _game(("c", "b", "a"), 2, "k")]) == [
        Unit("a", "b", 1.0), Unit("a", "c", 1.0), Unit("b", "c", 0.5),
        Unit("c", "b", 0.5), Unit("c", "a", 0.0), Unit("b", "a", 0.0),
    ]
