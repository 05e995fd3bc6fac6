"""Rummy (2–6 seats) through the game seam: the engine's side (:class:`RummyGame`,
:class:`RummyMatch`). The protobuf conversion (the ``GameWire``) is still to be written; until
then rummy is not in the registry's built-ins."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee import games, rummy
from referee.rummy.records import RummyDealEnd, RummyGameEnd

_SEAT_COUNTS = range(2, 7)


class RummyGame:
    """Rummy for two to six seats."""

    name = "rummy"
    deal_end_content = RummyDealEnd
    game_end_content = RummyGameEnd

    def seat_counts(self) -> range:
        """Two to six seats."""
        return _SEAT_COUNTS

    def default_rules(self) -> rummy.RummyRules:
        """The ``rummy`` preset."""
        return rummy.RummyRules.preset("rummy")

    def rules_preset(self, name: str) -> rummy.RummyRules:
        """A preset of the rules."""
        return rummy.RummyRules.preset(name)

    def check_rules(self, rules: Any) -> None:
        """``ValueError`` unless a rummy rule set."""
        if not isinstance(rules, rummy.RummyRules):
            raise ValueError(f"rummy needs a RummyRules; got {type(rules).__name__}")

    def rules_to_dict(self, rules: rummy.RummyRules) -> dict[str, Any]:
        """The rule set as plain values."""
        return rules.to_dict()

    def rules_from_dict(self, data: Mapping[str, Any]) -> rummy.RummyRules:
        """A rule set from plain values."""
        return rummy.RummyRules.from_dict(dict(data))

    def commitment(self, seed: bytes) -> bytes:
        """SHA-256 of the seed."""
        return rummy.commitment(seed)

    def mix_seed(self, seed: bytes, nonces: Sequence[bytes]) -> bytes:
        """The seed with the nonces mixed in."""
        return rummy.mix_seed(seed, list(nonces))

    def new_match(self, rules: rummy.RummyRules, seed: bytes, seats: int) -> RummyMatch:
        """A match of ``seats`` seats."""
        if seats not in _SEAT_COUNTS:
            raise ValueError(f"rummy is played by 2 to 6 seats; got {seats}")
        return RummyMatch(rummy.Match(rules, seed, seats))

    def deal_from_deck(self, rules: rummy.RummyRules, deck: Sequence[str], dealer: int, seats: int,
                       key: bytes) -> rummy.Deal:
        """The deal a deck order and dealer give (R3)."""
        return rummy.Deal.from_deck([rummy.parse_card(c) for c in deck], dealer, rules, seats, key=key)

    def result_fields(self, outcome: rummy.MatchOutcome | None) -> dict[str, Any]:
        """Points and places (empty lists when no match was played)."""
        return {"points": list(outcome.points) if outcome else [], "places": list(outcome.places) if outcome else []}


class RummyMatch:
    """One rummy match, driven through the seam. ``match`` is the engine's :class:`rummy.Match`."""

    __slots__ = ("match",)

    def __init__(self, match: rummy.Match) -> None:
        self.match = match

    @property
    def is_over(self) -> bool:
        """Whether the match has ended."""
        return self.match.is_over

    @property
    def decider(self) -> int | None:
        """The seat whose decision is awaited: the player to move or a seat asked about stop."""
        return self.match.to_move

    @property
    def game_number(self) -> int:
        """The current game."""
        return self.match.game.number

    @property
    def deal_number(self) -> int:
        """The current deal of the game."""
        return self.match.game.deal_number

    @property
    def actions_in_deal(self) -> int:
        """Steps of the current deal."""
        return len(self.match.deal.steps)

    @property
    def scores(self) -> tuple[int, ...]:
        """The current game's totals."""
        return tuple(self.match.game.totals)

    @property
    def games_won(self) -> tuple[int, ...]:
        """Games won (first places) so far."""
        return tuple(sum(1 for r in self.match.results if r.places[s] == 1) for s in range(self.match.seats))

    @property
    def outcome(self) -> rummy.MatchOutcome | None:
        """The engine's match outcome once over."""
        return self.match.outcome

    def _deal_begun(self) -> games.DealBegun:
        deal, game = self.match.deal, self.match.game
        return games.DealBegun({
            "game": game.number, "deal": game.deal_number, "dealer": deal.dealer, "seats": deal.seats,
            "deck": [str(c) for c in deal.deck], "key": deal.key.hex(),
        })

    def opening(self) -> list[games.Happening]:
        """The first deal."""
        return [self._deal_begun()]

    def why_illegal(self, seat: int, action: rummy.Action) -> str:
        """The engine's reason (``apply`` refuses before changing anything)."""
        try:
            if seat != self.match.to_move:
                return f"it is seat {self.match.to_move}'s decision, not seat {seat}'s"
            if action in self.match.legal_actions():
                return "legal"
            self.match.deal.apply(action, seat)
        except rummy.IllegalActionError as e:
            return str(e)
        raise AssertionError("an action outside legal_actions was accepted")  # pragma: no cover

    def apply(self, seat: int, action: rummy.Action) -> list[games.Happening]:
        """Play the action; a reshuffle it triggers is a chance step after it, then the deal's
        and game's ends and the next deal."""
        match = self.match
        deal, game = match.deal, match.game
        before = len(deal.steps)
        outcome = match.apply(action, seat)
        drawn = deal.step_cards[before]
        revealed = str(drawn[0]) if isinstance(action, rummy.DrawStock) else None
        out: list[games.Happening] = [games.Acted(seat, action, str(action), revealed, deal.steps[before])]
        for step in deal.steps[before + 1:]:
            if isinstance(step, rummy.Reshuffle):
                record = {"number": step.number, "upcard": str(step.upcard), "stock_size": step.stock_size}
                out.append(games.Chance("reshuffle", record, step))
        if outcome is None:
            return out
        game_over = game.result is not None
        out.append(games.DealOver(self._deal_record(game, outcome), game_over, (deal, outcome)))
        if game.result is not None:
            out.append(self._game_over(game.result))
        if not match.is_over:
            out.append(self._deal_begun())
        return out

    @staticmethod
    def _deal_record(game: rummy.Game, o: rummy.RummyOutcome) -> dict[str, Any]:
        return {
            "game": game.number, "deal": game.deal_number if game.result else game.deal_number - 1,
            "reason": o.reason, "winner": o.winner, "points": list(o.points), "rummy": o.rummy,
            "hands": [[str(c) for c in h] for h in o.hands], "hand_values": list(o.hand_values),
            "table_points": list(o.table_points), "scores": list(game.totals),
        }

    @staticmethod
    def _game_over(result: rummy.GameResult) -> games.GameOver:
        record = {
            "game": result.number, "totals": list(result.totals), "places": list(result.places),
            "deals": result.deals, "finished": result.finished, "forfeited": list(result.forfeited),
        }
        return games.GameOver(games.Ranking(result.places, result.totals), record, result)

    def substitute(self, seat: int) -> rummy.Action:
        """The built-in bot's choice for the deciding seat."""
        if seat != self.match.to_move:
            raise ValueError(f"seat {seat} is not deciding now")
        return rummy.substitute_action(self.match.deal)

    def forfeit(self, seats: Sequence[int]) -> list[games.Happening]:
        """End the match: the game in progress is lost by ``seats``, the first to fault last."""
        return [self._game_over(self.match.forfeit(tuple(seats)))]

    def ranking(self) -> games.Ranking:
        """The match's result by seat (so far, while it is not over)."""
        outcome = self.match.outcome
        if outcome is not None:
            return games.Ranking(outcome.places, outcome.points)
        points = [sum(r.totals[s] for r in self.match.results) + self.match.game.totals[s]
                  for s in range(self.match.seats)]
        return games.Ranking.by_points(points)
