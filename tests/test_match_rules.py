"""RULES §3 (who deals), §10 (a game: target, line/game bonuses, shutout) and §11 (a match of
several games, tournament format, first dealer), played through ``Match.apply``.

Two kinds of tests: matches played out by a simple seeded policy (checking every event against
the rule), and hand-checked numbers where a crafted deal (``tests/_decks.make_deck``) is put in
place of the current deal, with the game's scores set, and played through ``Match.apply``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import pytest

from referee.gin import (
    Action,
    BigGin,
    Deal,
    DealEnded,
    DealStarted,
    GameEnded,
    GameResult,
    IllegalActionError,
    Knock,
    Match,
    MatchEnded,
    MatchEvent,
    RuleSet,
    TakeUpcard,
    deal_key,
    deck_for_deal,
    first_dealer,
    parse_card,
)
from tests._decks import make_deck

C = parse_card
T = TypeVar("T")
Policy = Callable[[Sequence[Action]], Action]


def seeded_policy(seed: int, end_bias: float = 0.6) -> Policy:
    """Random legal actions; knocks and big gin (when legal) are chosen with probability
    ``end_bias``, so that deals end by knocks, gins, undercuts and dead hands alike."""
    rng = random.Random(seed)

    def act(legal: Sequence[Action]) -> Action:
        enders = [a for a in legal if isinstance(a, Knock | BigGin)]
        if enders and rng.random() < end_bias:
            return rng.choice(enders)
        return rng.choice(list(legal))

    return act


@dataclass
class Played:
    """A played match: its events in order, each with the dealer and number of the deal
    that was being played when they were returned."""

    match: Match
    first_dealer: int
    events: list[tuple[int, MatchEvent]] = field(default_factory=list)
    """(dealer of the deal just played, event)"""
    batches: list[list[MatchEvent]] = field(default_factory=list)
    """Every non-empty return of ``Match.apply``."""


def play(
    rules: RuleSet, seed: bytes, policy_seed: int = 0, end_bias: float = 0.6, max_steps: int = 200_000
) -> Played:
    match = Match(rules, seed)
    policy = seeded_policy(policy_seed, end_bias)
    played = Played(match, match.deal.dealer)
    for _ in range(max_steps):
        if match.is_over:
            return played
        dealer = match.deal.dealer
        events = match.apply(policy(match.legal_actions()))
        if events:
            played.batches.append(events)
            played.events.extend((dealer, e) for e in events)
    raise AssertionError("match did not end")


def of_type(played: Played, kind: type[T]) -> list[T]:
    return [e for _, e in played.events if isinstance(e, kind)]


SEEDS = [bytes([i]) * 8 + b"match" for i in range(12)]


# ----- crafted deals (RULES §3 deck convention; dealer is seat 0, so seat 1 moves first) -----

@dataclass(frozen=True)
class Crafted:
    non_dealer: str
    dealer: str
    upcard: str
    actions: tuple[Action, ...]
    winner: int
    points: int


GIN_1 = Crafted(  # seat 1 takes Td, knocks Tc face down: gin, 25 + 59
    "As 2s 3s 4h 5h 6h 7d 8d 9d Tc", "Ts Th Kd 9c 8c 7c Qh Qd 5c 4c", "Td",
    (TakeUpcard(), Knock(C("Tc"))), winner=1, points=84,
)
KNOCK_1 = Crafted(  # seat 1 takes 2c, knocks Kc: deadwood 2 against 29
    "As 2s 3s 4h 5h 6h 7d 8d 9d Kc", "Ts Th Td 9c 8c 7c Qh Qd 5c 4c", "2c",
    (TakeUpcard(), Knock(C("Kc"))), winner=1, points=27,
)
UNDERCUT_0 = Crafted(  # seat 1 knocks with 10, seat 0 has 10: undercut, 0 + 25 to seat 0
    "As 2s 3s 4h 5h 6h 7d 8d 9d Tc", "Jh Jd Jc Qs Qh Qc Ks Kh Kc Th", "Kd",
    (TakeUpcard(), Knock(C("Tc"))), winner=0, points=25,
)
BIG_GIN_1 = Crafted(  # seat 1 takes Jd: 11 cards melded, 31 + 59
    "As 2s 3s 4s 5h 6h 7h 8d 9d Td", "Ts Th Kd 9c 8c 7c Qh Qd 5c 4c", "Jd",
    (TakeUpcard(), BigGin()), winner=1, points=90,
)


def play_crafted(
    match: Match, crafted: Crafted, scores: Sequence[int], deals_won: Sequence[int]
) -> list[MatchEvent]:
    """Set the current game's scores, put the crafted deal in place of the current one and
    play it through ``Match.apply``; return the events of its last action."""
    game = match.game
    game.scores = list(scores)
    game.deals_won = list(deals_won)
    game.dealer = 0
    game.deal = Deal.from_deck(
        make_deck(crafted.non_dealer, crafted.dealer, crafted.upcard), dealer=0, rules=match.rules
    )
    events: list[MatchEvent] = []
    for action in crafted.actions:
        events = match.apply(action)
    out = game.outcomes[-1]
    assert (out.winner, out.points) == (crafted.winner, crafted.points), "crafted deal as described"
    return events


def ended_game(events: Sequence[MatchEvent]) -> GameResult:
    results = [e.result for e in events if isinstance(e, GameEnded)]
    assert len(results) == 1
    return results[0]


# =============================== RULES §3: dealing ===============================


def test_rule_3_first_dealer_is_random_from_the_match_seed_and_deterministic() -> None:
    dealers = []
    for i in range(200):
        seed = i.to_bytes(4, "big") + b"seed"
        m = Match(RuleSet.classic(), seed)
        assert m.deal.dealer == first_dealer(seed, 1) == Match(RuleSet.classic(), seed).deal.dealer
        assert m.deal.to_move == 1 - m.deal.dealer, "the non-dealer is offered the upcard first"
        dealers.append(m.deal.dealer)
    # Both seats deal first, roughly half the time each (fixed seeds: a deterministic check).
    assert 70 <= dealers.count(0) <= 130


def test_rule_3_every_deck_comes_from_the_seed() -> None:
    played = play(RuleSet.short(games=2), SEEDS[0], policy_seed=1)
    match = Match(RuleSet.short(games=2), SEEDS[0])
    assert match.deal.deck == tuple(deck_for_deal(SEEDS[0], 1, 1))
    assert match.deal.key == deal_key(SEEDS[0], 1, 1)
    # Replaying the same policy, check each new deal's deck, key and dealer against its DealStarted.
    policy = seeded_policy(1)
    starts = iter(of_type(played, DealStarted))
    while not match.is_over:
        for e in match.apply(policy(match.legal_actions())):
            if isinstance(e, DealStarted):
                assert e == next(starts)
                assert (match.game.number, match.game.deal_number) == (e.game, e.deal)
                assert match.deal.dealer == e.dealer
                assert match.deal.deck == tuple(deck_for_deal(SEEDS[0], e.game, e.deal))
                assert match.deal.key == deal_key(SEEDS[0], e.game, e.deal)
                assert match.deal.to_move == 1 - e.dealer
    assert next(starts, None) is None


@pytest.mark.parametrize("next_dealer", ["alternate", "winner", "loser"])
def test_rule_3_next_dealer_and_same_dealer_after_a_dead_hand(next_dealer: str) -> None:
    rules = RuleSet.short(next_dealer=next_dealer, games=3)
    seen = {"dead": 0, "won": 0, "winner_was_dealer": 0, "winner_was_non_dealer": 0}
    for i, seed in enumerate(SEEDS):
        played = play(rules, seed, policy_seed=i, end_bias=0.5)
        last_end: DealEnded | None = None
        for dealer, e in played.events:
            if isinstance(e, DealEnded):
                last_end = e
                out = e.outcome
                if out.winner is None:
                    seen["dead"] += 1
                else:
                    seen["won"] += 1
                    seen["winner_was_dealer" if out.winner == dealer else "winner_was_non_dealer"] += 1
                prev_dealer = dealer
            elif isinstance(e, DealStarted) and e.deal > 1:
                assert last_end is not None and last_end.game == e.game and last_end.deal == e.deal - 1
                winner = last_end.outcome.winner
                if winner is None:
                    expected = prev_dealer
                elif next_dealer == "alternate":
                    expected = 1 - prev_dealer
                elif next_dealer == "winner":
                    expected = winner
                else:
                    expected = 1 - winner
                assert e.dealer == expected, (seed, e, last_end.outcome.kind, prev_dealer)
    # The check above was exercised on every branch.
    assert seen["dead"] >= 5 and seen["winner_was_dealer"] >= 5 and seen["winner_was_non_dealer"] >= 5, seen


def test_rule_3_dead_hand_keeps_the_dealer_and_counts_as_a_deal() -> None:
    # Always drawing and discarding, never knocking: every deal is dead (RULES §8).
    match = Match(RuleSet.classic(), b"dead hands")
    dealer = match.deal.dealer
    ends = 0
    while ends < 5:
        legal = match.legal_actions()
        action = next((a for a in legal if a.kind in ("pass", "draw_stock")), None) or next(
            a for a in legal if a.kind == "discard"
        )
        events = match.apply(action)
        if events:
            assert [type(e) for e in events] == [DealEnded, DealStarted]
            end, start = events
            assert isinstance(end, DealEnded) and isinstance(start, DealStarted)
            ends += 1
            assert end.outcome.kind == "dead" and end.outcome.winner is None and end.outcome.points == 0
            assert end.scores == (0, 0)
            assert start == DealStarted(1, ends + 1, dealer)
            assert match.game.deals_won == [0, 0]


# =============================== RULES §10: a game ===============================


def test_rule_10_game_ends_when_a_total_reaches_the_target_after_a_deal() -> None:
    for rules in (RuleSet.short(games=3), RuleSet.classic(games=2), RuleSet.oklahoma()):
        for i, seed in enumerate(SEEDS[:6]):
            played = play(rules, seed, policy_seed=100 + i)
            scores = [0, 0]
            last: DealEnded | None = None
            for _, e in played.events:
                if isinstance(e, DealEnded):
                    out = e.outcome
                    if out.winner is not None:
                        scores[out.winner] += out.points
                    assert e.scores == tuple(scores), "scores add up deal by deal"
                    last = e
                elif isinstance(e, GameEnded):
                    r = e.result
                    assert last is not None
                    assert r.deal_points == last.scores
                    assert last.outcome.winner == r.winner
                    assert r.deal_points[r.winner] >= rules.target
                    assert r.deal_points[1 - r.winner] < rules.target
                    assert r.deals == last.deal
                    scores = [0, 0]
                elif isinstance(e, DealStarted):
                    assert max(scores) < rules.target, "no deal starts after the target was reached"


def expected_totals(rules: RuleSet, r: GameResult) -> tuple[int, ...]:
    """RULES §10 written out."""
    w, loser = r.winner, 1 - r.winner
    totals = list(r.deal_points)
    shutout = r.deals_won[loser] == 0
    if shutout and rules.shutout == "double":
        totals[w] *= 2
    if rules.game_bonuses:
        totals = [t + rules.line_bonus * n for t, n in zip(totals, r.deals_won, strict=True)]
        totals[w] += rules.game_bonus
        if shutout and rules.shutout == "bonus":
            totals[w] += rules.shutout_bonus
    return tuple(totals)


@pytest.mark.parametrize(
    "rules",
    [
        RuleSet.short(games=4),
        RuleSet.short(games=4, shutout="bonus"),
        RuleSet.short(games=4, shutout="none"),
        RuleSet.short(games=4, game_bonuses=False),
        RuleSet.short(games=4, game_bonuses=False, shutout="none"),
        RuleSet.short(games=4, line_bonus=20, game_bonus=50, shutout="bonus", shutout_bonus=75),
    ],
    ids=["double", "bonus", "none", "no-bonuses-double", "no-bonuses-none", "custom"],
)
def test_rule_10_final_totals_of_played_games(rules: RuleSet) -> None:
    shutouts = plain = 0
    for i, seed in enumerate(SEEDS[:8]):
        played = play(rules, seed, policy_seed=200 + i, end_bias=0.8)
        won = [0, 0]
        for _, e in played.events:
            if isinstance(e, DealEnded) and e.outcome.winner is not None:
                won[e.outcome.winner] += 1
            if isinstance(e, GameEnded):
                r = e.result
                assert r.deals_won == tuple(won)
                assert r.shutout == (won[1 - r.winner] == 0)
                assert r.forfeit is None
                assert r.totals == expected_totals(rules, r)
                shutouts += r.shutout
                plain += not r.shutout
                won = [0, 0]
    assert shutouts >= 3 and plain >= 3, (shutouts, plain)


@pytest.mark.parametrize(
    ("rules", "totals"),
    [
        # seat 1: 60 + 84 = 144 deal points, 3 deals won, seat 0 none: a shutout.
        (RuleSet.classic(), (0, 144 * 2 + 3 * 25 + 100)),
        (RuleSet.classic(shutout="bonus"), (0, 144 + 3 * 25 + 100 + 100)),
        (RuleSet.classic(shutout="none"), (0, 144 + 3 * 25 + 100)),
        (RuleSet.classic(game_bonuses=False, shutout="none"), (0, 144)),
        (RuleSet.classic(game_bonuses=False), (0, 288)),
        (
            RuleSet.classic(line_bonus=10, game_bonus=50, shutout="bonus", shutout_bonus=30),
            (0, 144 + 3 * 10 + 50 + 30),
        ),
    ],
    ids=["double", "bonus", "none", "no-bonuses", "no-bonuses-double", "custom-bonuses"],
)
def test_rule_10_shutout_hand_checked(rules: RuleSet, totals: tuple[int, int]) -> None:
    match = Match(rules, b"hand checked")
    events = play_crafted(match, GIN_1, scores=(0, 60), deals_won=(0, 2))
    r = ended_game(events)
    assert (r.winner, r.shutout, r.deal_points, r.deals_won) == (1, True, (0, 144), (0, 3))
    assert r.totals == totals


def test_rule_10_line_and_game_bonus_hand_checked() -> None:
    match = Match(RuleSet.classic(), b"hand checked")
    r = ended_game(play_crafted(match, GIN_1, scores=(40, 60), deals_won=(2, 2)))
    assert (r.winner, r.shutout, r.deal_points, r.deals_won) == (1, False, (40, 144), (2, 3))
    assert r.totals == (40 + 2 * 25, 144 + 3 * 25 + 100)


def test_rule_10_undercut_can_win_the_game_for_the_defender() -> None:
    match = Match(RuleSet.classic(), b"hand checked")
    r = ended_game(play_crafted(match, UNDERCUT_0, scores=(80, 10), deals_won=(1, 1)))
    assert (r.winner, r.deal_points, r.deals_won) == (0, (105, 10), (2, 1))
    assert r.totals == (105 + 2 * 25 + 100, 10 + 25)


def test_rule_10_big_gin_and_short_target_hand_checked() -> None:
    match = Match(RuleSet.short(shutout="none"), b"hand checked")
    r = ended_game(play_crafted(match, BIG_GIN_1, scores=(45, 0), deals_won=(3, 0)))
    assert (r.winner, r.shutout, r.deal_points) == (1, False, (45, 90))
    assert r.totals == (45 + 75, 90 + 25 + 100)


def test_rule_10_target_is_reached_not_passed() -> None:
    # 15 + 84 = 99: the game goes on; 16 + 84 = 100: the target is reached.
    match = Match(RuleSet.classic(), b"hand checked")
    events = play_crafted(match, GIN_1, scores=(0, 15), deals_won=(0, 0))
    assert [type(e) for e in events] == [DealEnded, DealStarted]
    assert events[0] == DealEnded(1, 1, match.game.outcomes[-1], (0, 99))
    assert match.game.result is None and not match.is_over
    events = play_crafted(match, GIN_1, scores=(0, 16), deals_won=(0, 0))
    assert [type(e) for e in events] == [DealEnded, GameEnded, MatchEnded]
    assert ended_game(events).deal_points == (0, 100)


def test_rule_10_knock_points_hand_checked() -> None:
    match = Match(RuleSet.classic(shutout="none"), b"hand checked")
    r = ended_game(play_crafted(match, KNOCK_1, scores=(30, 73), deals_won=(1, 4)))
    assert r.deal_points == (30, 100)
    assert r.totals == (30 + 25, 100 + 5 * 25 + 100)


# =============================== RULES §11: a match ===============================


def test_events_come_in_order() -> None:
    for i, seed in enumerate(SEEDS[:6]):
        played = play(RuleSet.short(games=3), seed, policy_seed=300 + i)
        for batch in played.batches:
            kinds = [type(e) for e in batch]
            assert kinds in (
                [DealEnded, DealStarted],
                [DealEnded, GameEnded, DealStarted],
                [DealEnded, GameEnded, MatchEnded],
            ), kinds
            if kinds[1] is GameEnded and kinds[2] is DealStarted:
                end, started = batch[1], batch[2]
                assert isinstance(end, GameEnded) and isinstance(started, DealStarted)
                assert (started.game, started.deal) == (end.result.game + 1, 1)
            if kinds[1] is DealStarted:
                ended, started = batch[0], batch[1]
                assert isinstance(ended, DealEnded) and isinstance(started, DealStarted)
                assert (started.game, started.deal) == (ended.game, ended.deal + 1)
        assert isinstance(played.events[-1][1], MatchEnded)
        assert played.match.is_over and played.match.to_move is None and played.match.legal_actions() == []
        with pytest.raises(IllegalActionError, match="the match is over"):
            played.match.apply(TakeUpcard())


@pytest.mark.parametrize("games", [1, 2, 3, 5])
def test_rule_11_games_n_plays_n_games(games: int) -> None:
    rules = RuleSet.short(games=games)
    for i, seed in enumerate(SEEDS[:3]):
        played = play(rules, seed, policy_seed=400 + i)
        results = [e.result for e in of_type(played, GameEnded)]
        assert [r.game for r in results] == list(range(1, games + 1))
        (ended,) = of_type(played, MatchEnded)
        out = ended.outcome
        assert out.games == tuple(results) == tuple(played.match.results)
        assert out.games_won == tuple(sum(r.winner == s for r in results) for s in (0, 1))
        assert out.totals == tuple(sum(r.totals[s] for r in results) for s in (0, 1))
        assert out.forfeit is None
        assert played.match.outcome == out


def test_rule_11_match_winner_by_games_won_then_totals_in_played_matches() -> None:
    by_games = by_totals = 0
    for games in (2, 3, 4):
        for i, seed in enumerate(SEEDS):
            out = play(RuleSet.short(games=games), seed, policy_seed=500 + i).match.outcome
            assert out is not None
            g, t = out.games_won, out.totals
            if g[0] != g[1]:
                assert out.winner == (0 if g[0] > g[1] else 1)
                by_games += 1
            elif t[0] != t[1]:
                assert out.winner == (0 if t[0] > t[1] else 1)
                by_totals += 1
            else:
                assert out.winner is None
    assert by_games >= 5 and by_totals >= 2, (by_games, by_totals)


def test_rule_11_more_games_won_beats_more_points_hand_checked() -> None:
    rules = RuleSet.classic(games=3, game_bonuses=False, shutout="none")
    match = Match(rules, b"hand checked")
    play_crafted(match, KNOCK_1, scores=(99, 73), deals_won=(1, 1))  # seat 1: 100 to 99
    play_crafted(match, KNOCK_1, scores=(99, 73), deals_won=(1, 1))  # seat 1 again
    events = play_crafted(match, UNDERCUT_0, scores=(99, 0), deals_won=(1, 0))  # seat 0: 124 to 0
    assert [type(e) for e in events] == [DealEnded, GameEnded, MatchEnded]
    out = match.outcome
    assert out is not None
    assert out.games_won == (1, 2)
    assert out.totals == (99 + 99 + 124, 100 + 100 + 0)
    assert out.winner == 1


@pytest.mark.parametrize(
    ("game1_seat0", "game2_seat1", "totals", "winner"),
    [(99, 99, (199, 199), None), (99, 98, (199, 198), 0), (50, 60, (150, 160), 1)],
)
def test_rule_11_equal_games_won_then_totals_decide_or_draw(
    game1_seat0: int, game2_seat1: int, totals: tuple[int, int], winner: int | None
) -> None:
    rules = RuleSet.classic(games=2, game_bonuses=False, shutout="none")
    match = Match(rules, b"hand checked")
    play_crafted(match, KNOCK_1, scores=(game1_seat0, 73), deals_won=(1, 1))  # seat 1 reaches 100
    events = play_crafted(match, UNDERCUT_0, scores=(75, game2_seat1), deals_won=(1, 1))  # seat 0 reaches 100
    assert [type(e) for e in events] == [DealEnded, GameEnded, MatchEnded]
    out = match.outcome
    assert out is not None
    assert out.games_won == (1, 1)
    assert out.totals == totals
    assert out.winner == winner


def test_rule_11_tournament_format_plays_to_a_cumulative_total() -> None:
    rules = RuleSet.short(match_target=300)
    counts = set()
    for i, seed in enumerate(SEEDS):
        played = play(rules, seed, policy_seed=600 + i)
        cumulative = [0, 0]
        results = [e.result for e in of_type(played, GameEnded)]
        for n, r in enumerate(results, start=1):
            cumulative = [c + t for c, t in zip(cumulative, r.totals, strict=True)]
            if n < len(results):
                assert max(cumulative) < 300, "the match went on after the match target was reached"
        assert max(cumulative) >= 300
        out = played.match.outcome
        assert out is not None and out.totals == tuple(cumulative)
        assert out.winner == (0 if cumulative[0] > cumulative[1] else 1)
        counts.add(len(results))
    assert max(counts) > 1, "some tournament matches take several games"


def test_rule_11_tournament_hand_checked() -> None:
    rules = RuleSet.classic(match_target=200, game_bonuses=False, shutout="none")
    match = Match(rules, b"hand checked")
    events = play_crafted(match, KNOCK_1, scores=(99, 73), deals_won=(1, 1))  # seat 1: 100 to 99
    assert [type(e) for e in events] == [DealEnded, GameEnded, DealStarted]
    assert match.totals == (99, 100) and not match.is_over
    events = play_crafted(match, UNDERCUT_0, scores=(75, 99), deals_won=(1, 1))  # seat 0: 100 to 99
    assert [type(e) for e in events] == [DealEnded, GameEnded, DealStarted], "199 is below 200"
    assert match.totals == (199, 199) and match.games_won == (1, 1) and not match.is_over
    assert match.game.number == 3
    events = play_crafted(match, GIN_1, scores=(10, 16), deals_won=(1, 0))  # seat 1: 100 → (209, 299)
    assert [type(e) for e in events] == [DealEnded, GameEnded, MatchEnded]
    out = match.outcome
    assert out is not None and out.totals == (209, 299) and out.winner == 1 and out.games_won == (1, 2)


def test_rule_11_tournament_winner_is_the_higher_total_not_more_games() -> None:
    rules = RuleSet.classic(match_target=300, game_bonuses=False, shutout="none")
    match = Match(rules, b"hand checked")
    play_crafted(match, KNOCK_1, scores=(99, 73), deals_won=(1, 1))  # (99, 100)
    play_crafted(match, KNOCK_1, scores=(99, 73), deals_won=(1, 1))  # (198, 200)
    events = play_crafted(match, BIG_GIN_1, scores=(0, 0), deals_won=(0, 0))  # seat 1 alone: 90
    assert [type(e) for e in events] == [DealEnded, DealStarted]
    events = play_crafted(match, UNDERCUT_0, scores=(99, 0), deals_won=(0, 0))  # seat 0: 124 → (322, 200)
    assert [type(e) for e in events] == [DealEnded, GameEnded, MatchEnded]
    out = match.outcome
    assert out is not None and out.games_won == (1, 2) and out.totals == (322, 200)
    assert out.winner == 0


@pytest.mark.parametrize("mode", ["random", "alternate"])
def test_rule_11_first_dealer_of_each_game(mode: str) -> None:
    rules = RuleSet.short(games=6, first_dealer=mode)
    for i, seed in enumerate(SEEDS[:4]):
        played = play(rules, seed, policy_seed=700 + i)
        firsts = [played.first_dealer] + [e.dealer for e in of_type(played, DealStarted) if e.deal == 1]
        assert len(firsts) == 6
        assert firsts[0] == first_dealer(seed, 1)
        for n, d in enumerate(firsts, start=1):
            if mode == "random":
                assert d == first_dealer(seed, n)
            else:
                assert d == (firsts[0] + n - 1) % 2


def test_rule_11_random_first_dealers_differ_between_games() -> None:
    firsts = [first_dealer(b"some seed", n) for n in range(1, 41)]
    assert 0 in firsts and 1 in firsts


# =============================== forfeit ===============================


def test_forfeit_ends_the_match_without_bonuses() -> None:
    match = Match(RuleSet.classic(games=3), b"forfeit")
    match.apply(match.legal_actions()[0])
    match.game.scores = [40, 70]
    match.game.deals_won = [1, 2]
    events = match.forfeit(1)
    assert [type(e) for e in events] == [GameEnded, MatchEnded]
    ge, me = events
    assert isinstance(ge, GameEnded) and isinstance(me, MatchEnded)
    r = ge.result
    assert (r.winner, r.forfeit, r.game) == (0, 1, 1)
    assert (r.totals, r.deal_points, r.shutout) == ((40, 70), (40, 70), False)
    out = me.outcome
    assert (out.winner, out.forfeit, out.games_won, out.totals, out.games) == (0, 1, (1, 0), (40, 70), (r,))
    assert match.is_over and match.outcome == out and match.to_move is None and match.legal_actions() == []
    with pytest.raises(IllegalActionError, match="the match is over"):
        match.forfeit(0)
    with pytest.raises(IllegalActionError, match="the match is over"):
        match.apply(TakeUpcard())


def test_forfeit_loses_the_match_even_when_ahead() -> None:
    rules = RuleSet.short(games=3)
    played = play(rules, SEEDS[3], policy_seed=800)
    first_winner = played.match.results[0].winner
    match = Match(rules, SEEDS[3])
    policy = seeded_policy(800)
    while len(match.results) < 1:
        match.apply(policy(match.legal_actions()))
    assert match.results[0].winner == first_winner
    events = match.forfeit(first_winner)
    me = events[-1]
    assert isinstance(me, MatchEnded)
    assert me.outcome.winner == 1 - first_winner
    assert me.outcome.games_won[first_winner] == 1
    assert len(me.outcome.games) == 2 and me.outcome.games[1].forfeit == first_winner


def test_match_needs_a_non_empty_byte_seed() -> None:
    with pytest.raises(ValueError, match="non-empty seed"):
        Match(RuleSet.classic(), b"")
    # A wrong type is a TypeError on both builds (compiled, mypyc's own check raises it).
    with pytest.raises(TypeError, match="bytes"):
        Match(RuleSet.classic(), "text")  # type: ignore[arg-type]
