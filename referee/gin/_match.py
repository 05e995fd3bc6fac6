"""Games to a target (RULES §10) and matches of several games (RULES §11), all cards from a seed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from referee.cardcore import State, Value

from ._actions import Action, IllegalActionError
from ._cards import Card
from ._deal import NUM_SEATS, Deal
from ._outcome import DealOutcome
from ._rules import RuleSet
from ._shuffle import deal_key, deck_for_deal, first_dealer
from ._view import InformationState, deal_state

DeckSource = Callable[[bytes, int, int], Sequence[Card]]
"""A deal's deck order from the match seed, the game's number and the deal's number."""


@dataclass(frozen=True, slots=True)
class GameResult(Value):
    """The end of one game."""

    game: int
    """The game's number in the match, from 1."""
    winner: int
    """The seat that won the game."""
    deal_points: tuple[int, ...]
    """Points from deals, by seat, before end-of-game bonuses."""
    deals_won: tuple[int, ...]
    """Deals won, by seat."""
    totals: tuple[int, ...]
    """Final totals by seat: deal points (doubled for a shutout when so ruled) plus line,
    game and shutout bonuses (RULES §10)."""
    shutout: bool
    """Whether the loser won no deal."""
    deals: int
    """Deals dealt in the game, dead hands included."""
    forfeit: int | None = None
    """The seat that forfeited the game (no bonuses are added then), or ``None``."""


@dataclass(frozen=True, slots=True)
class MatchOutcome(Value):
    """The end of a match."""

    winner: int | None
    """The seat that won the match, or ``None`` for a draw."""
    games_won: tuple[int, ...]
    """Games won, by seat."""
    totals: tuple[int, ...]
    """Cumulative game totals over the match, by seat."""
    games: tuple[GameResult, ...]
    """Every game's result, in order."""
    forfeit: int | None = None
    """The seat whose forfeit ended the match, or ``None``."""


@dataclass(frozen=True, slots=True)
class DealStarted(Value):
    """A new deal was dealt."""

    game: int
    """Game number, from 1."""
    deal: int
    """Deal number within the game, from 1 (dead hands count)."""
    dealer: int
    """The dealing seat."""


@dataclass(frozen=True, slots=True)
class DealEnded(Value):
    """A deal ended."""

    game: int
    """Game number."""
    deal: int
    """Deal number within the game."""
    outcome: DealOutcome
    """How it ended."""
    scores: tuple[int, ...]
    """Game scores (deal points) by seat after this deal."""


@dataclass(frozen=True, slots=True)
class GameEnded(Value):
    """A game ended."""

    result: GameResult
    """Its result."""


@dataclass(frozen=True, slots=True)
class MatchEnded(Value):
    """The match ended."""

    outcome: MatchOutcome
    """Its result."""


MatchEvent = DealStarted | DealEnded | GameEnded | MatchEnded
"""What a step of a match can lead to, besides the action itself."""


class Game(State):
    """One game: deals until a seat's deal points reach the target."""

    def __init__(
        self, rules: RuleSet, seed: bytes, number: int, dealer: int, decks: DeckSource = deck_for_deal
    ) -> None:
        self.rules = rules
        self.seed = seed
        self.decks = decks
        self.number = number
        self.first_dealer = dealer
        self.dealer = dealer
        self.scores = [0] * NUM_SEATS
        self.deals_won = [0] * NUM_SEATS
        self.deal_number = 0
        self.outcomes: list[DealOutcome] = []
        self.result: GameResult | None = None
        self.deal = self._new_deal()

    def _new_deal(self) -> Deal:
        self.deal_number += 1
        key = deal_key(self.seed, self.number, self.deal_number)
        return Deal(self.decks(self.seed, self.number, self.deal_number), self.dealer, self.rules, key)

    def finish_deal(self) -> tuple[DealEnded, GameEnded | None, DealStarted | None]:
        """Score the finished current deal; start the next deal unless the game is over."""
        outcome = self.deal.outcome
        assert outcome is not None, "finish_deal() needs a finished deal"
        self.outcomes.append(outcome)
        if outcome.winner is not None:
            self.scores[outcome.winner] += outcome.points
            self.deals_won[outcome.winner] += 1
            nd = self.rules.next_dealer
            if nd == "alternate":
                self.dealer = 1 - self.dealer
            elif nd == "winner":
                self.dealer = outcome.winner
            else:
                self.dealer = 1 - outcome.winner
        ended = DealEnded(self.number, self.deal_number, outcome, tuple(self.scores))
        if outcome.winner is not None and self.scores[outcome.winner] >= self.rules.target:
            self.result = self._final(outcome.winner, forfeit=None)
            return ended, GameEnded(self.result), None
        self.deal = self._new_deal()
        return ended, None, DealStarted(self.number, self.deal_number, self.dealer)

    def forfeit(self, seat: int) -> GameResult:
        """End the game now: ``seat`` loses it; no end-of-game bonuses are added."""
        self.result = self._final(1 - seat, forfeit=seat)
        return self.result

    def _final(self, winner: int, forfeit: int | None) -> GameResult:
        r = self.rules
        loser = 1 - winner
        shutout = self.deals_won[loser] == 0 and forfeit is None
        totals = list(self.scores)
        if forfeit is None:
            if shutout and r.shutout == "double":
                totals[winner] *= 2
            if r.game_bonuses:
                for s in range(NUM_SEATS):
                    totals[s] += r.line_bonus * self.deals_won[s]
                totals[winner] += r.game_bonus
                if shutout and r.shutout == "bonus":
                    totals[winner] += r.shutout_bonus
        return GameResult(
            game=self.number, winner=winner, deal_points=tuple(self.scores),
            deals_won=tuple(self.deals_won), totals=tuple(totals), shutout=shutout,
            deals=self.deal_number, forfeit=forfeit,
        )


class Match(State):
    """A match between two seats: games as the rule set says (``games`` or ``match_target``),
    every deck derived from ``seed`` (see ``_shuffle``). ``apply`` plays the current deal and
    moves on to the next deal and game by itself, returning what happened. ``decks`` gives each
    deal's deck from the seed and the game and deal numbers (the SHA-256 shuffle; a test may pass
    its own)."""

    def __init__(self, rules: RuleSet, seed: bytes, *, decks: DeckSource = deck_for_deal) -> None:
        if not isinstance(seed, bytes):  # compiled by mypyc, its own TypeError comes first
            raise TypeError(f"a match's seed must be bytes; got {type(seed).__name__}")
        if not seed:
            raise ValueError("a match needs a non-empty seed (bytes)")
        self.rules = rules
        self.seed = seed
        self.decks = decks
        self.results: list[GameResult] = []
        self.outcome: MatchOutcome | None = None
        self.game = Game(rules, seed, 1, first_dealer(seed, 1, NUM_SEATS), decks)
        self._tally_games = 0
        self._tally: tuple[tuple[int, ...], tuple[int, ...]] = ((0,) * NUM_SEATS, (0,) * NUM_SEATS)

    @property
    def deal(self) -> Deal:
        """The current (or, once the match is over, the last) deal."""
        return self.game.deal

    @property
    def is_over(self) -> bool:
        """Whether the match has ended."""
        return self.outcome is not None

    @property
    def to_move(self) -> int | None:
        """The seat to act, or ``None`` once the match is over."""
        return None if self.outcome is not None else self.game.deal.to_move

    @property
    def totals(self) -> tuple[int, ...]:
        """Cumulative totals of the finished games, by seat."""
        return self._tallies()[0]

    @property
    def games_won(self) -> tuple[int, ...]:
        """Games won so far, by seat."""
        return self._tallies()[1]

    def _tallies(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        # Asked on every view; recounted only when a game has ended since.
        if self._tally_games != len(self.results):
            self._tally = (
                tuple(sum(g.totals[s] for g in self.results) for s in range(NUM_SEATS)),
                tuple(sum(1 for g in self.results if g.winner == s) for s in range(NUM_SEATS)),
            )
            self._tally_games = len(self.results)
        return self._tally

    def view(self, seat: int) -> InformationState:
        """What ``seat`` may know now (RULES §12), scores included."""
        return information_state(self, seat)

    def legal_actions(self) -> list[Action]:
        """The current deal's legal actions (none once the match is over)."""
        return [] if self.outcome is not None else self.game.deal.legal_actions()

    def apply(self, action: Action, seat: int | None = None) -> list[MatchEvent]:
        """Play an action in the current deal; returns the deal/game/match ends and the next
        deal's start that followed, in order."""
        if self.outcome is not None:
            raise IllegalActionError("the match is over")
        deal = self.game.deal
        deal.apply(action, seat)
        if not deal.is_over:
            return []
        ended, game_ended, started = self.game.finish_deal()
        events: list[MatchEvent] = [ended]
        if game_ended is not None:
            events.append(game_ended)
            events.extend(self._after_game(game_ended.result))
        elif started is not None:
            events.append(started)
        return events

    def forfeit(self, seat: int) -> list[MatchEvent]:
        """``seat`` forfeits: it loses the current game and the match ends."""
        if self.outcome is not None:
            raise IllegalActionError("the match is over")
        result = self.game.forfeit(seat)
        self.results.append(result)
        self.outcome = self._outcome(forfeit=seat)
        return [GameEnded(result), MatchEnded(self.outcome)]

    def _after_game(self, result: GameResult) -> list[MatchEvent]:
        self.results.append(result)
        r = self.rules
        done = (
            max(self.totals) >= r.match_target if r.match_target else len(self.results) >= r.games
        )
        if done:
            self.outcome = self._outcome(forfeit=None)
            return [MatchEnded(self.outcome)]
        number = len(self.results) + 1
        if r.first_dealer == "alternate":
            dealer = 1 - self.game.first_dealer
        else:
            dealer = first_dealer(self.seed, number, NUM_SEATS)
        self.game = Game(r, self.seed, number, dealer, self.decks)
        return [DealStarted(number, 1, dealer)]

    def _outcome(self, forfeit: int | None) -> MatchOutcome:
        won = self.games_won
        totals = self.totals
        winner: int | None
        if forfeit is not None:
            winner = 1 - forfeit
        elif won[0] != won[1] and not self.rules.match_target:
            winner = 0 if won[0] > won[1] else 1
        elif totals[0] != totals[1]:
            winner = 0 if totals[0] > totals[1] else 1
        else:
            winner = None
        return MatchOutcome(winner, won, totals, tuple(self.results), forfeit)


def information_state(match: Match, seat: int) -> InformationState:
    """The information state of ``seat`` in the match's current deal (``seat = -1``: a
    spectator, who sees only public information)."""
    game = match.game
    return deal_state(
        game.deal, seat,
        game_number=game.number, deal_number=game.deal_number,
        scores=tuple(game.scores), deals_won=tuple(game.deals_won),
        games_won=match.games_won, match_totals=match.totals,
    )
