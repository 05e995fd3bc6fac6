"""High cards, pure: standard library only (and ``referee.games``, the seam's plain values).

Each game is one deal; every seat is dealt two cards from a deck 1..12 shuffled from the seed;
from the dealer's left, clockwise, each seat plays one of its cards until every hand is empty.
A seat scores the cards it played; the match is ``games`` games; places by points. A seat sees
its own hand and the cards played; the other hands and the rest of the deck stay hidden.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee import games

NAME = "toy3"
"""The game's registry name (its entry point's name)."""


class IllegalMoveError(ValueError):
    """An action the rules do not allow now."""


@dataclass(frozen=True, slots=True)
class ToyRules:
    """The toy's rule set."""

    games: int = 2
    """Games in a match."""


_DECK_SIZE = 12


def _deck(seed: bytes, game: int) -> list[int]:
    return sorted(range(1, _DECK_SIZE + 1), key=lambda c: hashlib.sha256(seed + bytes([game, c])).digest())


def _key(seed: bytes, game: int) -> bytes:
    return hashlib.sha256(seed + bytes([game])).digest()


@dataclass(frozen=True, slots=True)
class ToyOutcome(games.Ranking):
    """The toy match's result: the ranking by total points, and the games each seat won."""

    games_won: tuple[int, ...] = ()
    """Games won, by seat."""


@dataclass(frozen=True, slots=True)
class ToyDealEnd:
    """The toy's ``deal_end`` content: nothing beyond the record's own fields."""


@dataclass(frozen=True, slots=True)
class ToyGameEnd:
    """The toy's ``game_end`` content."""

    places: tuple[int, ...]
    """Each seat's place in the game."""
    points: tuple[int, ...]
    """Each seat's points in the game."""


class ToyMatch:
    """One match of the toy (pure)."""

    def __init__(self, rules: ToyRules, seed: bytes, seats: int,
                 decks: Callable[[bytes, int], list[int]] | None = None) -> None:
        self.rules, self.seed, self.seats = rules, seed, seats
        self._decks = decks or _deck
        self.totals = [0] * seats
        self.won = [0] * seats
        self.game = 0
        self.hands: list[list[int]] = []
        self.scores: tuple[int, ...] = ()
        self.turn: int | None = None
        self.steps = 0
        self.outcome: ToyOutcome | None = None
        self._deal()

    def _deal(self) -> None:
        self.game += 1
        deck = self._decks(self.seed, self.game)
        dealer = (self.game - 1) % self.seats
        self.hands = [sorted(deck[2 * s:2 * s + 2]) for s in range(self.seats)]
        self.scores = (0,) * self.seats
        self.turn = (dealer + 1) % self.seats
        self.steps = 0
        self.played: list[tuple[int, int]] = []
        """The current game's cards played, as (seat, card), in order."""
        self._record = {"game": self.game, "deal": 1, "dealer": dealer, "deck": [str(c) for c in deck],
                        "key": _key(self.seed, self.game).hex()}

    @property
    def is_over(self) -> bool:
        return self.outcome is not None

    @property
    def decider(self) -> int | None:
        return None if self.outcome is not None else self.turn

    @property
    def game_number(self) -> int:
        return self.game

    @property
    def deal_number(self) -> int:
        return 1

    @property
    def actions_in_deal(self) -> int:
        return self.steps

    @property
    def games_won(self) -> tuple[int, ...]:
        return tuple(self.won)

    def opening(self) -> list[games.Happening]:
        return [games.DealBegun(self._record)]

    def legal(self, seat: int) -> tuple[int, ...]:
        return tuple(self.hands[seat]) if seat == self.turn else ()

    def why_illegal(self, seat: int, action: Any) -> str:
        if seat != self.turn:
            return f"it is not seat {seat}'s turn"
        return f"card {action} is not in seat {seat}'s hand"

    def apply(self, seat: int, action: int) -> list[games.Happening]:
        if seat != self.turn or action not in self.hands[seat]:
            raise IllegalMoveError(self.why_illegal(seat, action))
        self.hands[seat].remove(action)
        self.played.append((seat, action))
        self.steps += 1
        scores = list(self.scores)
        scores[seat] += action
        self.scores = tuple(scores)
        out: list[games.Happening] = [games.Acted(seat, action, str(action), None, action)]
        if any(self.hands):
            self.turn = (seat + 1) % self.seats
            return out
        return out + self._game_over(games.Ranking.by_points(self.scores))

    def _game_over(self, ranking: games.Ranking) -> list[games.Happening]:
        for s, p in enumerate(ranking.points):
            self.totals[s] += p
        if ranking.winner is not None:
            self.won[ranking.winner] += 1
        out: list[games.Happening] = [
            games.DealOver({"game": self.game, "deal": 1, "scores": list(self.scores)}, True),
            games.GameOver(ranking, {"game": self.game, "winner": ranking.winner, "totals": list(self.totals),
                                     "deals": 1, "forfeit": None, "places": list(ranking.places),
                                     "points": list(ranking.points)}),
        ]
        if self.game >= self.rules.games:
            self.outcome = ToyOutcome(games.Ranking.by_points(self.totals).places, tuple(self.totals),
                                      tuple(self.won))
            self.turn = None
            return out
        self._deal()
        return [*out, games.DealBegun(self._record)]

    def substitute(self, seat: int) -> int:
        return min(self.hands[seat])

    def forfeit(self, seats: Sequence[int]) -> list[games.Happening]:
        places = games.places_with_forfeits(games.Ranking.by_points(self.scores).places, seats)
        out = self._game_over(games.Ranking(places, self.scores))
        self.outcome = ToyOutcome(games.places_with_forfeits(
            games.Ranking.by_points(self.totals).places, seats), tuple(self.totals), tuple(self.won))
        self.turn = None
        return out[:2]

    def ranking(self) -> games.Ranking:
        return self.outcome or games.Ranking.by_points(self.totals)


class ToyGame:
    """The toy's engine side."""

    name = NAME
    deal_end_content = ToyDealEnd
    game_end_content = ToyGameEnd

    def seat_counts(self) -> range:
        return range(2, 7)

    def default_rules(self) -> ToyRules:
        return ToyRules()

    def preset_names(self) -> tuple[str, ...]:
        return ("standard", "short")

    def rules_preset(self, name: str) -> ToyRules:
        if name == "standard":
            return ToyRules()
        if name != "short":
            raise ValueError(f"unknown preset {name!r}; the toy has: standard, short")
        return ToyRules(games=1)

    def check_rules(self, rules: Any) -> None:
        if not isinstance(rules, ToyRules):
            raise ValueError("the toy needs ToyRules")

    def rules_to_dict(self, rules: ToyRules) -> dict[str, Any]:
        return {"games": rules.games}

    def match_size(self, rules: ToyRules) -> Sequence[tuple[str, str, int]]:
        return (("rules.games", "games", rules.games),)

    def rules_from_dict(self, data: Mapping[str, Any]) -> ToyRules:
        return ToyRules(games=int(data["games"]))

    def commitment(self, seed: bytes) -> bytes:
        return hashlib.sha256(seed).digest()

    def mix_seed(self, seed: bytes, nonces: Sequence[bytes]) -> bytes:
        return hashlib.sha256(seed + b"".join(nonces)).digest()

    def new_match(self, rules: ToyRules, seed: bytes, seats: int) -> ToyMatch:
        return ToyMatch(rules, seed, seats)

    def deal_deck(self, seed: bytes, game: int, deal: int) -> tuple[list[str], bytes]:
        return [str(c) for c in _deck(seed, game)], _key(seed, game)

    card_fields = frozenset({"card"})
    """The fields of ``toy3.proto``'s messages that hold a card (its number): ``Play.card``,
    ``Played.card`` (``games.KnowsCards``)."""

    def card_text(self, text: str) -> str | None:
        return text if text.isdigit() and 1 <= int(text) <= _DECK_SIZE and str(int(text)) == text else None

    def known_cards(self, rules: ToyRules, deal: Mapping[str, Any], moves: Sequence[tuple[int, str]],
                    seats: int) -> list[list[set[str]]]:
        """A seat knows its two cards and every card played; the rest of the deck stays hidden
        (nothing is shown at the end)."""
        deck = [str(c) for c in deal["deck"]]
        known = [set(deck[2 * s:2 * s + 2]) for s in range(seats)]
        out = [[set(k) for k in known]]
        for _seat, text in moves:
            for k in known:
                k.add(text)
            out.append([set(k) for k in known])
        return [*out, out[-1]]

    def result_fields(self, outcome: ToyOutcome | None) -> dict[str, Any]:
        return {"games_won": list(outcome.games_won) if outcome else [],
                "totals": list(outcome.points) if outcome else []}


def hidden_variant(rules: ToyRules, seed: bytes, seats: int, seat: int,
                   actions: Sequence[tuple[int, int]]) -> ToyMatch:
    """For ``referee.conformance.check_game``: a match whose current game's deck differs from the
    seed's only in the cards ``seat`` has not seen after ``actions`` (the other hands' unplayed
    cards and the undealt ones, shuffled among their places)."""
    now = ToyMatch(rules, seed, seats)
    for who, card in actions:
        now.apply(who, card)
    game = now.game
    deck = _deck(seed, game)
    unplayed = {c for hand in now.hands for c in hand}
    mine = set(deck[2 * seat:2 * seat + 2])
    places = [i for i, c in enumerate(deck) if c not in mine and (i >= 2 * seats or c in unplayed)]
    cards = [deck[i] for i in places]
    shuffled = cards[:]
    rng = random.Random(seed + bytes([seat, game]))
    while len(cards) > 1 and shuffled == cards:
        rng.shuffle(shuffled)
    other = list(deck)
    for i, c in zip(places, shuffled, strict=True):
        other[i] = c

    def decks(s: bytes, g: int) -> list[int]:
        return list(other) if g == game else _deck(s, g)

    return ToyMatch(rules, seed, seats, decks)
