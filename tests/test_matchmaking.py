"""The ladder's matchmaking (issue 29), pure: hand-worked waves, and whole ladders simulated on a
clock the test controls (tests/_ladder_sim.py) — every pair meets, balanced; a late bot meets
everyone soon; no bot starves; tables of three seats; the local ladder's batch plan."""

from __future__ import annotations

import itertools
import random

import pytest

from arena.competition.formats.ladder import pair_wave, plan_groups
from arena.competition.matchmaking import Matchmaking, Seeker, met_at
from tests._ladder_sim import Sim, pair_counts

BOTS = [f"b{i}" for i in range(6)]


def _met(**pairs: int) -> dict[frozenset[str], int]:
    return {frozenset(k.split("_")): n for k, n in pairs.items()}


def test_the_two_bots_a_finished_group_freed_wait_for_a_bot_they_met_less() -> None:
    """a and b just played their fourth pair; c and d are playing: a and b wait (the greedy
    pairing seated them again); one wave later c and d are free and everyone meets anew."""
    met = _met(a_b=8, c_d=8, a_c=4, a_d=4, b_c=4, b_d=4)
    first = [Seeker("a", 1.0), Seeker("b", 1.0), Seeker("c", 1.0, free=False), Seeker("d", 1.0, free=False)]
    wave = pair_wave(first, met, 2, Matchmaking(), random.Random(1))
    assert wave.tables == () and wave.retry_ms is not None  # they wait, and say for how long at most
    later = [Seeker("a", 1.0, waves=1), Seeker("b", 1.0, waves=1), Seeker("c", 1.0), Seeker("d", 1.0)]
    tables = {frozenset(t) for t in pair_wave(later, met, 2, Matchmaking(), random.Random(1)).tables}
    assert tables in ({frozenset("ac"), frozenset("bd")}, {frozenset("ad"), frozenset("bc")})


def test_the_nearest_in_the_standings_among_the_least_met_and_the_band_widens_with_waiting() -> None:
    pool = [Seeker("top", 30.0), Seeker("second", 29.0), Seeker("third", 20.0), Seeker("bottom", 10.0)]
    tables = pair_wave(pool, {}, 2, Matchmaking(), random.Random(3)).tables
    assert {frozenset(t) for t in tables} == {frozenset(("top", "second")), frozenset(("third", "bottom"))}
    far = [Seeker("top", 30.0), Seeker("mid", 20.0, free=False), Seeker("bottom", 10.0)]
    assert pair_wave(far, {}, 2, Matchmaking(band=0.5), random.Random(1)).tables == ()  # a band apart
    waited = [Seeker("top", 30.0, waves=1), Seeker("mid", 20.0, free=False), Seeker("bottom", 10.0)]
    assert len(pair_wave(waited, {}, 2, Matchmaking(band=0.5), random.Random(1)).tables) == 1
    alone = [Seeker("top", 30.0), Seeker("bottom", 10.0)]  # no bot playing: nothing to wait for
    assert len(pair_wave(alone, {}, 2, Matchmaking(band=0.5), random.Random(1)).tables) == 1


def test_a_bot_that_waited_long_enough_takes_any_table() -> None:
    """Never starving: its tolerances widen without bound, by waves sat out or by time."""
    met = _met(a_b=40, a_c=0)
    stuck = [Seeker("a", 1.0), Seeker("b", 1.0), Seeker("c", 1.0, free=False)]
    assert pair_wave(stuck, met, 2, Matchmaking(), random.Random(1)).tables == ()
    for seeker in (Seeker("a", 1.0, waves=200), Seeker("a", 1.0, waited_ms=10**7)):
        tables = pair_wave([seeker, *stuck[1:]], met, 2, Matchmaking(), random.Random(1)).tables
        assert tables and set(tables[0]) == {"a", "b"}


def test_random_pairs_at_once() -> None:
    pool = [Seeker(b, 0.0) for b in "abcde"]
    wave = pair_wave(pool, _met(a_b=100), 2, Matchmaking(rule="random"), random.Random(2))
    assert len(wave.tables) == 2 and len({b for t in wave.tables for b in t}) == 4 and wave.retry_ms is None


@pytest.mark.parametrize("seed", range(5))
def test_six_bots_one_game_at_a_time_every_pair_meets_and_a_late_bot_meets_everyone(seed: int) -> None:
    sim = Sim(Matchmaking(), seed=seed, joins=dict.fromkeys(BOTS, 0.0))
    took = sim.run(300)
    counts = pair_counts(sim.games[:300], BOTS)
    assert min(counts.values()) > 0 and max(counts.values()) <= 2 * min(counts.values()), counts
    late = Sim(Matchmaking(), seed=seed, joins={**dict.fromkeys(BOTS, 0.0), "late": took})
    late.run(300 + 12 * 6)
    first = [g for g in late.games if "late" in g][: 2 * len(BOTS)]
    assert len(first) == 2 * len(BOTS) and {b for g in first for b in g} == {*BOTS, "late"}, first


def test_the_greedy_way_would_have_failed_the_same_simulation() -> None:
    """The check above can fail: pairing whoever is free at once (no waves) leaves pairs apart."""
    sim = Sim(Matchmaking(rule="random", wave_ms=0), seed=0, joins=dict.fromkeys(BOTS, 0.0))
    sim.run(300)
    counts = pair_counts(sim.games[:300], BOTS)
    assert min(counts.values()) == 0 or max(counts.values()) > 2 * min(counts.values())


def test_no_bot_waits_without_bound_in_a_long_ladder() -> None:
    sim = Sim(Matchmaking(), seed=7, joins={**dict.fromkeys(BOTS, 0.0), "b6": 3.0})
    sim.run(2000)
    longest_group = sim.game_s[1] * 2
    rounds = Matchmaking().patience + 1
    assert max(sim.waits.values()) <= rounds * 4 * longest_group  # (4 tables: a round's waves at most)


def test_tables_of_three_seats_meet_everyone() -> None:
    sim = Sim(Matchmaking(), seats=3, seed=3, joins=dict.fromkeys(BOTS, 0.0))
    sim.run(600)
    counts = pair_counts(sim.games[:600], BOTS)
    assert min(counts.values()) > 0 and max(counts.values()) <= 2 * min(counts.values()), counts
    assert all(len(set(g)) == 3 for g in sim.games)


@pytest.mark.parametrize("seats", [2, 3])
def test_the_local_ladders_batch_meets_everyone_in_waves_of_distinct_bots(seats: int) -> None:
    ratings = {b: float(i) for i, b in enumerate(BOTS)}
    tables = plan_groups(ratings, {}, 60, seats, Matchmaking(), random.Random(5))
    assert len(tables) == 60 and all(len(set(t)) == seats for t in tables)
    counts = met_at(tables)
    pairs = [counts[frozenset(p)] for p in itertools.combinations(BOTS, 2)]
    assert min(pairs) > 0 and max(pairs) <= 2 * min(pairs), pairs
    old = met_at([("b0", "b1")] * 30)  # a ladder whose stored games all paired b0 and b1
    later = plan_groups(ratings, old, 10, 2, Matchmaking(), random.Random(5))
    assert frozenset(("b0", "b1")) not in {frozenset(t) for t in later}
    with pytest.raises(ValueError, match="at least 3 bots"):
        plan_groups({"a": 0.0, "b": 0.0}, {}, 1, 3, Matchmaking(), random.Random(1))


@pytest.mark.parametrize(("values", "said"), [
    ({"rule": "elo"}, "pairing must be one of least-met, random"),
    ({"wave_ms": -1}, "pairing_wave_ms must be an integer >= 0"),
    ({"slack": -0.5}, "pairing_slack must be a number >= 0"),
    ({"patience": 0}, "pairing_patience must be an integer >= 1"),
    ({"band": 0}, "pairing_band must be a number above 0 and at most 1"),
])
def test_bad_settings_are_one_clear_error(values: dict[str, object], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        Matchmaking(**values)  # type: ignore[arg-type]
