"""Conformance checks for a game of the seam (:mod:`referee.games`): what a game plugin's author
runs in their own tests, and what Gin, Rummy and the tests' plugin game pass.

    from referee.conformance import check_game

    def test_my_game_conforms():
        report = check_game("mygame", hidden=my_hidden_variant)
        assert report.decisions > 0

:func:`check_game` plays matches of the game for every number of seats it allows, seeds given,
through its engine *and* its wire exactly as the referee's plumbing drives them (each seat's
cache, every happening told to every seat, a request for every decision), and checks:

- **seed determinism**: the same seed and the same choices give the same happenings and the same
  bytes to every seat; different seeds give different deals; the commitment and the seed mixing
  are functions of their input; each ``deal`` record's deck and key are the game's documented
  shuffle (``Game.deal_deck``, which ``arena audit`` re-derives);
- **``apply`` accepts exactly the legal actions**: every legal action applies (on a copy), an
  action legal elsewhere but not now is refused with a ``ValueError`` (the game's own error) and
  a reason from ``why_illegal``, so is a legal action played by a seat not deciding; the built-in
  bot chooses a legal action; an action's replay text reads back as the same action;
- **views hide what they must** (given ``hidden``): a seat is sent the very same bytes when what it
  cannot know (another seat's hidden cards, the stock) is different;
- **results are well formed**: every game's and the match's :class:`~referee.games.Ranking` has
  one place and one points value per seat, places 1-based with ties sharing a place; the match
  ends, its outcome and result fields are plain JSON values; a forfeit ranks the seat last; the
  rule sets (default and presets) survive ``rules_to_dict``/``rules_from_dict``;
- **capabilities are declared**: each optional part the registration declares
  (:class:`~referee.games.Capabilities`) has what it needs, and no object of the game has one
  under a capability's name without declaring it (the arena would never use it).

A failure raises :class:`ConformanceError` naming the game, the check, the seats and the seed.
The checks use only the game's own values (standard library; a match is copied through
``pickle``, or ``copy.deepcopy`` if it does not pickle).
"""

from __future__ import annotations

import copy
import json
import pickle
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from referee import games

HiddenVariant = Callable[[Any, bytes, int, int, Sequence[tuple[int, Any]]], games.GameMatch]
"""``hidden(rules, seed, seats, seat, actions)``: a new match (not yet played) that differs from
``new_match(rules, seed, seats)`` only in what ``seat`` cannot have seen once ``actions`` (each
``(seat, action)``, from the start of the match) are played — e.g. the other hands and the stock
of the current deal shuffled among themselves. The check replays ``actions`` on it and compares
what ``seat`` was sent."""

DEFAULT_SEEDS = (b"conformance-1", b"conformance-2", b"conformance-3")
"""The seeds :func:`check_game` plays by default."""
MAX_STEPS = 50_000
"""Decisions after which a match that has not ended fails the check."""
LEGAL_CHECKS = 60
"""Decisions per match at which every legal action is applied on a copy (the first ones, then a
tenth of the rest)."""
HIDDEN_CHECKS = 8
"""Decisions per match at which ``hidden``'s variant is replayed and compared."""


class ConformanceError(AssertionError):
    """A game does not do what the seam asks; the text names the game, check, seats and seed."""


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """What :func:`check_game` checked (all of it passed)."""

    game: str
    """The game's name."""
    matches: int
    """Matches played to their end (each twice, for determinism)."""
    decisions: int
    """Decisions of those matches."""
    legal_applied: int
    """Legal actions applied on copies."""
    illegal_refused: int
    """Illegal actions (or actions out of turn) refused."""
    views_compared: int
    """Positions at which a seat's messages were compared with ``hidden``'s variant."""


class _Play:
    """One match driven the way the referee's plumbing drives it, keeping what each seat was sent."""

    def __init__(self, reg: games.Registered, match: games.GameMatch, seats: int, fail: Callable[[str], Exception]):
        self.reg, self.match, self.seats, self.fail = reg, match, seats, fail
        self.caches = [reg.wire.new_seat_cache() for _ in range(seats)]
        self.sent: list[list[bytes]] = [[] for _ in range(seats)]
        self.trace: list[str] = []
        self.actions: list[tuple[int, Any]] = []
        self.rankings: list[games.Ranking] = []
        self.requests = 0
        self.tell(match.opening())

    def tell(self, happenings: Iterable[games.Happening]) -> None:
        for h in happenings:
            self.trace.append(self._describe(h))
            for s in range(self.seats):
                told = self.reg.wire.tell(self.match, h, s, 0, self.caches[s])
                if told is not None:
                    field, value = told
                    self.sent[s].append(field.encode() + b":" + value.SerializeToString(deterministic=True))

    def _describe(self, h: games.Happening) -> str:
        if isinstance(h, games.Acted):
            data: Any = ["acted", h.seat, h.text, h.revealed]
        elif isinstance(h, games.Chance):
            data = ["chance", h.kind, dict(h.record)]
        elif isinstance(h, games.DealBegun):
            data = ["deal", dict(h.record)]
        elif isinstance(h, games.DealOver):
            data = ["deal_end", dict(h.record), h.game_over]
        else:
            self.rankings.append(h.ranking)
            data = ["game_end", list(h.ranking.places), list(h.ranking.points), dict(h.record)]
        try:
            return json.dumps(data, sort_keys=True)
        except (TypeError, ValueError) as e:
            raise self.fail(f"a {data[0]} record is not plain JSON values ({e}): {data!r}") from None

    def ask(self) -> tuple[int, list[Any]]:
        seat = self.match.decider
        if seat is None or not 0 <= seat < self.seats:
            raise self.fail(f"the match is not over but its decider is {seat!r}")
        self.requests += 1
        data, legal = self.reg.wire.request(self.match, seat, "conformance", self.requests, [60_000] * self.seats,
                                            0, 60_000, self.caches[seat])
        self.sent[seat].append(b"request:" + data)
        try:
            actions = list(legal)  # type: ignore[call-overload]
        except TypeError:
            raise self.fail(f"the legal actions ({type(legal).__name__}) cannot be listed") from None
        if not actions:
            raise self.fail(f"seat {seat} must decide but has no legal action")
        return seat, actions

    def play(self, seat: int, action: Any) -> Sequence[games.Happening]:
        happenings = self.match.apply(seat, action)
        self.actions.append((seat, action))
        self.tell(happenings)
        return happenings


def _check_ranking(r: games.Ranking, seats: int, what: str, fail: Callable[[str], Exception]) -> None:
    if len(r.places) != seats or len(r.points) != seats:
        raise fail(f"{what}: {len(r.places)} places and {len(r.points)} points for {seats} seats")
    want = tuple(1 + sum(1 for q in r.places if q < p) for p in r.places)
    if r.places != want or min(r.places) != 1:
        raise fail(f"{what}: places {r.places} are not 1-based with ties sharing a place (expected {want})")


def check_game(game: str | games.Registered, *, rules: Any = None, seats: Iterable[int] | None = None,
               seeds: Sequence[bytes] = DEFAULT_SEEDS, hidden: HiddenVariant | None = None) -> ConformanceReport:
    """Check ``game`` (a registry name or its :class:`~referee.games.Registered`) with ``rules``
    (default: the game's default) for each of ``seats`` (default: every number it allows) and
    each seed; :class:`ConformanceError` at the first failure."""
    reg = games.get(game) if isinstance(game, str) else game
    engine = reg.game
    name = str(getattr(engine, "name", game))
    counts = list(seats) if seats is not None else list(engine.seat_counts())
    totals = [0, 0, 0, 0, 0]  # matches, decisions, legal, illegal, views

    def fail_at(check: str, where: str = "") -> Callable[[str], Exception]:
        return lambda text: ConformanceError(f"game {name!r}, {check}{where}: {text}")

    _check_rules(engine, rules, fail_at("rules"))
    if not counts:
        raise ConformanceError(f"game {name!r}: seat_counts() is empty")
    the_rules = engine.default_rules() if rules is None else rules
    for n in counts:
        openings = set()
        for seed in seeds:
            where = f" ({n} seats, seed {seed!r})"
            first = _play_once(reg, the_rules, seed, n, hidden, totals, fail_at("play", where))
            again = _play_once(reg, the_rules, seed, n, None, None, fail_at("determinism", where))
            if again.trace != first.trace or again.sent != first.sent:
                step = next((i for i, (a, b) in enumerate(zip(first.trace, again.trace, strict=False)) if a != b),
                            min(len(first.trace), len(again.trace)))
                raise fail_at("determinism", where)(f"the same seed and choices differ at happening {step}")
            _check_seed(engine, the_rules, seed, n, first, fail_at("seed", where))
            openings.add(first.trace[0] if first.trace else "")
            totals[0] += 1
        if len(seeds) > 1 and len(openings) == 1:
            raise fail_at("seed", f" ({n} seats)")(f"{len(seeds)} different seeds deal the same first deal")
    problems = games.capability_problems(reg)
    if problems:
        raise fail_at("capabilities")("; ".join(problems))
    return ConformanceReport(name, *totals)


def _check_rules(engine: games.Game, rules: Any, fail: Callable[[str], Exception]) -> None:
    candidates = [engine.default_rules(), *(engine.rules_preset(p) for p in engine.preset_names())]
    if rules is not None:
        candidates.append(rules)
    for r in candidates:
        engine.check_rules(r)
        data = engine.rules_to_dict(r)
        try:
            back = engine.rules_from_dict(json.loads(json.dumps(data)))
        except (TypeError, ValueError) as e:
            raise fail(f"rules_to_dict gives {data!r}, which does not read back: {e}") from None
        if back != r:
            raise fail(f"rules_from_dict(rules_to_dict(r)) is {back!r}, not {r!r}")
    try:
        engine.check_rules(object())
    except ValueError:
        pass
    else:
        raise fail("check_rules accepts an object that is not a rule set")
    try:
        engine.rules_preset("no such preset, surely")
    except ValueError:
        pass
    else:
        raise fail("rules_preset accepts an unknown name")


def _check_seed(engine: games.Game, rules: Any, seed: bytes, seats: int, play: _Play,
                fail: Callable[[str], Exception]) -> None:
    if engine.commitment(seed) != engine.commitment(seed) or engine.commitment(seed) == engine.commitment(seed + b"x"):
        raise fail("the commitment is not a function of the seed")
    nonces = [bytes([s]) * 8 for s in range(seats)]
    if engine.mix_seed(seed, nonces) != engine.mix_seed(seed, nonces) or engine.mix_seed(seed, nonces) == seed:
        raise fail("mix_seed is not a function of the seed and nonces, or leaves the seed as it was")
    for line in play.trace:
        data = json.loads(line)
        if data[0] != "deal":
            continue
        rec = data[1]
        deck, key = engine.deal_deck(seed, int(rec["game"]), int(rec["deal"]))
        if list(rec.get("deck", [])) != list(deck) or rec.get("key") != key.hex():
            raise fail(f"game {rec['game']} deal {rec['deal']}: the deal record's deck and key are not "
                       "deal_deck(seed, game, deal)")


def _play_once(reg: games.Registered, rules: Any, seed: bytes, seats: int, hidden: HiddenVariant | None,
               totals: list[int] | None, fail: Callable[[str], Exception]) -> _Play:
    """Play one match to its end, half the choices the built-in bot's and half random (from the
    seed); with ``totals``, check every decision's legal actions along the way."""
    engine, wire = reg.game, reg.wire
    rng = random.Random(seed)  # the choices: the same in both plays of a seed
    sampler = random.Random(seed + b"/checks")  # where to check: the first play only
    play = _Play(reg, engine.new_match(rules, seed, seats), seats, fail)
    pool: list[Any] = []
    seen: set[Any] = set()
    decisions = 0
    forfeited = False
    views_before = totals[4] if totals is not None else 0
    while not play.match.is_over:
        if decisions >= MAX_STEPS:
            raise fail(f"the match has not ended after {MAX_STEPS} decisions")
        seat, legal = play.ask()
        decisions += 1
        if totals is not None:
            totals[1] += 1
            if decisions <= LEGAL_CHECKS or sampler.random() < 0.1:
                totals[2:4] = _check_decision(play, seat, legal, pool, fail, totals[2:4])
            if hidden is not None and totals[4] - views_before < HIDDEN_CHECKS \
                    and (decisions <= 2 or sampler.random() < 0.05):
                totals[4] += _check_hidden(reg, rules, seed, seats, seat, play, hidden, fail)
            if not forfeited and decisions == 30:
                _check_forfeit(play, seat, fail)
                forfeited = True
        bot = play.match.substitute(seat)
        if bot not in legal:
            raise fail(f"the built-in bot's action {bot!r} for seat {seat} is not among the legal actions")
        choice = bot if rng.random() < 0.5 else rng.choice(legal)
        for a in legal:
            if a not in seen:
                seen.add(a)
                pool.append(a)
        happenings = play.play(seat, choice)
        acted = happenings[0] if happenings else None
        if not isinstance(acted, games.Acted) or acted.seat != seat:
            raise fail(f"apply({seat}, {choice!r}) does not report the action first: {acted!r}")
        if wire.action_from_proto(wire.action_from_text(acted.text)) != choice:
            raise fail(f"the replay text {acted.text!r} does not read back as the action {choice!r}")
    if play.match.decider is not None:
        raise fail(f"the match is over but seat {play.match.decider} is asked to decide")
    for i, r in enumerate(play.rankings):
        _check_ranking(r, seats, f"game {i + 1}'s ranking", fail)
    if not play.rankings:
        raise fail("the match ended without a game ending")
    _check_ranking(play.match.ranking(), seats, "the match's ranking", fail)
    outcome = play.match.outcome
    if outcome is None:
        raise fail("the match is over but its outcome is None")
    try:
        json.dumps(engine.result_fields(outcome))
        json.dumps(engine.result_fields(None))
    except (TypeError, ValueError) as e:
        raise fail(f"result_fields are not plain JSON values: {e}") from None
    wire.game_results(outcome)
    return play


def _copy(match: games.GameMatch) -> games.GameMatch:
    """A copy of ``match`` to try an action on: through pickle (much faster), else deepcopy."""
    try:
        return pickle.loads(pickle.dumps(match, pickle.HIGHEST_PROTOCOL))  # type: ignore[no-any-return]
    except (pickle.PicklingError, TypeError, AttributeError):
        return copy.deepcopy(match)


def _check_decision(play: _Play, seat: int, legal: list[Any], pool: list[Any], fail: Callable[[str], Exception],
                    counts: list[int]) -> list[int]:
    applied, refused = counts
    match = play.match
    for action in legal:
        trial = _copy(match)
        try:
            trial.apply(seat, action)
        except Exception as e:
            raise fail(f"seat {seat}'s legal action {action!r} is refused by apply: {type(e).__name__}: {e}") from None
        applied += 1
    others = [a for a in pool if a not in legal][-3:]
    tries = [(seat, a) for a in others] + [((seat + 1) % play.seats, legal[0])] * (play.seats > 1)
    for who, action in tries:
        if who != seat and match.decider == who:
            continue
        trial = _copy(match)
        try:
            trial.apply(who, action)
        except ValueError:
            reason = match.why_illegal(who, action)
            if not isinstance(reason, str) or not reason.strip():
                raise fail(f"why_illegal({who}, {action!r}) gives no reason: {reason!r}") from None
            refused += 1
            continue
        except Exception as e:
            raise fail(f"apply({who}, {action!r}), not legal now, raises {type(e).__name__} rather than the "
                       f"game's ValueError: {e}") from None
        raise fail(f"apply({who}, {action!r}) accepts an action that is not among the legal actions {legal!r}")
    return [applied, refused]


def _check_forfeit(play: _Play, seat: int, fail: Callable[[str], Exception]) -> None:
    trial = _copy(play.match)
    ends = trial.forfeit([seat])
    if not any(isinstance(h, games.GameOver) for h in ends) or not trial.is_over:
        raise fail(f"forfeit([{seat}]) does not end the game and the match")
    ranking = trial.ranking()
    _check_ranking(ranking, play.seats, "the ranking after a forfeit", fail)
    if play.seats > 1 and ranking.places[seat] != max(ranking.places):
        raise fail(f"forfeit([{seat}]) does not rank seat {seat} last: places {ranking.places}")


def _check_hidden(reg: games.Registered, rules: Any, seed: bytes, seats: int, seat: int, play: _Play,
                  hidden: HiddenVariant, fail: Callable[[str], Exception]) -> int:
    variant = _Play(reg, hidden(rules, seed, seats, seat, list(play.actions)), seats, fail)
    for i, (who, action) in enumerate(play.actions):
        variant.ask()
        try:
            variant.play(who, action)
        except ValueError as e:
            raise fail(f"the hidden variant for seat {seat} refuses action {i}, {action!r}: {e}") from None
    asked, _ = variant.ask()
    if asked != seat or variant.sent[seat] != play.sent[seat]:
        mine = play.sent[seat]
        i = next((i for i, (a, b) in enumerate(zip(mine, variant.sent[seat], strict=False)) if a != b),
                 min(len(mine), len(variant.sent[seat])))
        raise fail(f"seat {seat}'s message {i} depends on what it cannot know (after {len(play.actions)} actions)")
    return int(variant.trace != play.trace)  # compared only if something hidden was different
