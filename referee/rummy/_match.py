"""Games and matches (R7): deals until the target, games of a match."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from referee.cardcore import State, Value

from ._actions import Action
from ._cards import Card
from ._deal import Deal
from ._outcome import RummyOutcome
from ._rules import RummyRules
from ._shuffle import deal_key, deck_for_deal, first_dealer
from ._view import InformationState, deal_state

DeckSource = Callable[[bytes, int, int], Sequence[Card]]
"""Gives the deck order of a deal from the match seed, the game and the deal number."""


def places(totals: tuple[int, ...]) -> tuple[int, ...]:
    """A ranking by totals, highest first; equal totals share a place and the next is skipped
    (1, 1, 3), R7."""
    return tuple(1 + sum(1 for t in totals if t > mine) for mine in totals)


@dataclass(frozen=True, slots=True)
class GameResult(Value):
    """The end of one game (R7)."""

    number: int
    """The game's number in the match, from 1."""
    totals: tuple[int, ...]
    """Final totals by seat."""
    places: tuple[int, ...]
    """Each seat's place (1 best; equal totals share a place)."""
    deals: int
    """Deals played, void ones included."""
    finished: bool
    """Whether the target was reached (``False``: ``max_deals_per_game`` or a forfeit ended it)."""
    forfeited: tuple[int, ...] = ()
    """The seats that forfeited the game (in the order they faulted); they take the last places."""


@dataclass(frozen=True, slots=True)
class MatchOutcome(Value):
    """The end of a match: every game's result and the points summed over the games."""

    games: tuple[GameResult, ...]
    """Each game's result, in order."""
    points: tuple[int, ...]
    """Game totals summed over the match, by seat."""
    places: tuple[int, ...]
    """Each seat's place by ``points``."""


class Game(State):
    """One game of a match: deals until a total reaches the target after a deal (R7)."""

    def __init__(self, rules: RummyRules, seed: bytes, number: int, seats: int, dealer: int | None = None,
                 decks: DeckSource = deck_for_deal) -> None:
        self.rules = rules
        self.decks = decks
        """Where the deals' deck orders come from (the seed's shuffle; a test passes others in)."""
        self.seed = seed
        self.number = number
        self.seats = seats
        self.totals = [0] * seats
        self.deal_number = 1
        self.result: GameResult | None = None
        self.dealer = first_dealer(seed, number, seats) if dealer is None else dealer
        self.deal = self._new_deal()

    def _new_deal(self) -> Deal:
        deck = self.decks(self.seed, self.number, self.deal_number)
        key = deal_key(self.seed, self.number, self.deal_number)
        return Deal(deck, self.dealer, self.rules, self.seats, key)

    def view(self, seat: int | None) -> InformationState:
        """The information state of ``seat`` (``None``: a spectator) now."""
        return deal_state(
            self.deal, seat, scores=tuple(self.totals), game_number=self.number, deal_number=self.deal_number,
        )

    def finish_deal(self) -> RummyOutcome:
        """Score the finished deal; start the next one unless the game is over."""
        outcome = self.deal.outcome
        if outcome is None:
            raise ValueError("the deal is not over")
        for s, p in enumerate(outcome.points):
            self.totals[s] += p
        top = max(self.totals)
        reached = top >= self.rules.target and self.totals.count(top) == 1
        if reached or self.deal_number >= self.rules.max_deals_per_game:
            totals = tuple(self.totals)
            self.result = GameResult(self.number, totals, places(totals), self.deal_number, reached)
            return outcome
        if outcome.winner is not None:
            self.dealer = outcome.winner if self.rules.next_dealer == "winner" else (self.dealer + 1) % self.seats
        self.deal_number += 1
        self.deal = self._new_deal()
        return outcome


class Match(State):
    """A match: ``rules.games`` games between the same seats; each game's first dealer is drawn
    from the seed (R3). ``decks`` gives each deal's deck order (the seed's shuffle)."""

    def __init__(self, rules: RummyRules, seed: bytes, seats: int, *, decks: DeckSource = deck_for_deal) -> None:
        self.rules = rules
        self.decks = decks
        """Where the deals' deck orders come from."""
        self.seed = seed
        self.seats = seats
        self.results: list[GameResult] = []
        self.game = Game(rules, seed, 1, seats, decks=decks)
        self.outcome: MatchOutcome | None = None

    @property
    def deal(self) -> Deal:
        """The deal being played (the last one once the match is over)."""
        return self.game.deal

    @property
    def is_over(self) -> bool:
        """Whether the match has ended."""
        return self.outcome is not None

    @property
    def to_move(self) -> int | None:
        """The seat to decide now, ``None`` once over."""
        return None if self.outcome is not None else self.game.deal.to_move

    def view(self, seat: int | None) -> InformationState:
        """The information state of ``seat`` (``None``: a spectator) now."""
        return self.game.view(seat)

    def forfeit(self, seats: tuple[int, ...]) -> GameResult:
        """End the match now: the game in progress is lost by ``seats`` (in the order they
        faulted: the first to fault takes the last place); the match's places are that game's."""
        if self.outcome is not None:
            raise ValueError("the match is over")
        game = self.game
        totals = tuple(game.totals)
        others = [s for s in range(self.seats) if s not in seats]
        order = [0] * self.seats
        for s in others:
            order[s] = 1 + sum(1 for o in others if totals[o] > totals[s])
        for i, s in enumerate(reversed(seats)):
            order[s] = len(others) + 1 + i
        result = GameResult(game.number, totals, tuple(order), game.deal_number, False, tuple(seats))
        self.results.append(result)
        points = tuple(sum(r.totals[s] for r in self.results) for s in range(self.seats))
        self.outcome = MatchOutcome(tuple(self.results), points, result.places)
        return result

    def legal_actions(self) -> list[Action]:
        """What the seat to move may do now."""
        return [] if self.outcome is not None else self.game.deal.legal_actions()

    def apply(self, action: Action, seat: int | None = None) -> RummyOutcome | None:
        """Play an action; returns the deal's outcome when it ended the deal (the next deal, or
        game, has then begun unless the match is over)."""
        if self.outcome is not None:
            raise ValueError("the match is over")
        self.game.deal.apply(action, seat)
        if not self.game.deal.is_over:
            return None
        outcome = self.game.finish_deal()
        if self.game.result is not None:
            self.results.append(self.game.result)
            if len(self.results) == self.rules.games:
                points = tuple(sum(r.totals[s] for r in self.results) for s in range(self.seats))
                self.outcome = MatchOutcome(tuple(self.results), points, places(points))
            else:
                self.game = Game(self.rules, self.seed, len(self.results) + 1, self.seats, decks=self.decks)
        return outcome
