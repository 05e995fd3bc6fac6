"""The search both games' ``mc`` shares: sample a world, play every candidate out in it, keep
the candidate with the best mean — within a budget of worlds or of milliseconds.

The first candidate is a *baseline*: the choice of a good heuristic bot. Deal results are noisy
(a gin or an undercut is worth 25 points more), and with a few dozen worlds the best mean is
often luck; so another candidate replaces the baseline only when it beat it in the same worlds
(paired differences: the worlds are common to all candidates) by :data:`CONFIDENCE_Z` standard
errors. More worlds, smaller errors: the search overrules the heuristic more often."""

from __future__ import annotations

import hashlib
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Generic, TypeVar

A = TypeVar("A")
"""A candidate action."""
W = TypeVar("W")
"""A sampled world (a deal consistent with what the seat knows)."""

DEFAULT_WORLDS = 24
"""The default budget: worlds sampled per decision, each played out once per candidate. Sized
so that a decision takes well under a second on one slow core (docs/bots.md measures it): the
arena's default time control gives a decision far more, and the demos stay quick."""
TIME_SHARE = 0.25
"""Whatever the budget, the search stops sampling once it has used this share of the time the
referee gives the decision (``ActionRequest.time_for_move_ms``; 0: no limit): a short time
control or a loaded machine costs worlds, never a loss on time. Only then do the answers depend
on the machine's speed."""
CONFIDENCE_Z = 2.0
"""How many standard errors of the paired difference a candidate must beat the baseline by."""
MAX_WORLDS = 100_000
"""The largest budget in worlds accepted (a typo's guard: a bigger one would never answer)."""
MAX_MS = 600_000
"""The largest budget in milliseconds accepted."""


@dataclass(frozen=True)
class Budget:
    """How much search a decision gets: a count of worlds (deterministic for a seed), or a time."""

    worlds: int = DEFAULT_WORLDS
    """Worlds sampled per decision (each candidate is played out once in each); used when ``ms``
    is 0."""
    ms: int = 0
    """If positive: sample worlds until this many milliseconds have passed (at least one world).
    Then the decisions depend on the machine's speed, not only on the seed."""

    def __str__(self) -> str:
        return f"{self.ms}ms" if self.ms else str(self.worlds)


def parse_budget(text: str) -> Budget:
    """``"64"`` (worlds per decision) or ``"250ms"`` (a time per decision); ``ValueError``
    naming what is wrong."""
    t = text.strip().lower()
    try:
        if t.endswith("ms"):
            ms = int(t[:-2])
            if not 1 <= ms <= MAX_MS:
                raise ValueError(f"milliseconds must be 1..{MAX_MS}")
            return Budget(ms=ms)
        worlds = int(t)
        if not 1 <= worlds <= MAX_WORLDS:
            raise ValueError(f"worlds must be 1..{MAX_WORLDS}")
        return Budget(worlds=worlds)
    except ValueError as e:
        raise ValueError(f"--budget {text!r}: a count of worlds (e.g. 24) or a time (e.g. 250ms): {e}") from None


def decision_rng(seed: int, *parts: bytes) -> random.Random:
    """The random numbers of one decision: from the bot's seed and what the seat knows (the
    request's state and events, serialized), so that the same situation gets the same answer,
    whatever the bot decided before."""
    digest = hashlib.blake2b(b"".join(len(p).to_bytes(4, "big") + p for p in parts),
                             key=seed.to_bytes(16, "big", signed=True)[-16:], digest_size=16)
    return random.Random(int.from_bytes(digest.digest(), "big"))


@dataclass(frozen=True)
class Search(Generic[A, W]):
    """One decision's search."""

    candidates: Sequence[A]
    """The actions compared, the baseline first (a tie goes to the earlier one)."""
    sample: Callable[[random.Random], W]
    """Draws a world consistent with what the seat knows."""
    playout: Callable[[W, A], float]
    """The seat's result after playing the action in the world and the deal out (it must not
    change the world)."""

    def run(self, budget: Budget, rng: random.Random, time_for_move_ms: int = 0) -> tuple[int, list[float], int]:
        """The chosen candidate's index, each candidate's mean result, and the worlds sampled;
        ``time_for_move_ms`` is the referee's time for the decision (see :data:`TIME_SHARE`)."""
        results: list[list[float]] = [[] for _ in self.candidates]
        start = time.monotonic()
        deadline = start + budget.ms / 1000 if budget.ms else math.inf
        if time_for_move_ms > 0:
            deadline = min(deadline, start + TIME_SHARE * time_for_move_ms / 1000)
        worlds = 0
        while True:
            world = self.sample(rng)
            for j, action in enumerate(self.candidates):
                results[j].append(self.playout(world, action))
            worlds += 1
            if (not budget.ms and worlds >= budget.worlds) or time.monotonic() >= deadline:
                break
        means = [sum(r) / worlds for r in results]
        best = max(range(len(means)), key=lambda j: (means[j], -j))
        if best and not beats(results[best], results[0]):
            best = 0
        return best, means, worlds


def beats(challenger: Sequence[float], baseline: Sequence[float], z: float = CONFIDENCE_Z) -> bool:
    """Whether ``challenger``'s results beat ``baseline``'s, world by world, by ``z`` standard
    errors of the mean difference (never with fewer than two worlds)."""
    n = len(challenger)
    if n < 2:
        return False
    diffs = [c - b for c, b in zip(challenger, baseline, strict=True)]
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return mean > z * math.sqrt(var / n)


def _enum_prefix(type_name: str) -> str:
    """``KnockMode`` → ``KNOCK_MODE_``: the prefix of an enum's value names."""
    return "".join("_" + ch if ch.isupper() else ch.upper() for ch in type_name).lstrip("_") + "_"


def rules_from_message(msg: Any, cls: Any, presets: Sequence[str]) -> object | None:
    """A game's rule set (the dataclass ``cls``, built by ``cls.preset(name, **overrides)``) from
    its ``MatchStarted`` rules message: every message field named as a field of ``cls`` (an enum
    by its value's name: ``KNOCK_MODE_GIN_ONLY`` → ``"gin_only"``). ``None`` when there is no
    message or it does not make a valid rule set."""
    if msg is None or not msg.ListFields():
        return None
    overrides: dict[str, Any] = {}
    for f in fields(cls):
        field = msg.DESCRIPTOR.fields_by_name.get(f.name)
        if field is None or f.name == "name":
            continue
        value = getattr(msg, f.name)
        if field.enum_type is not None:
            if not value:
                continue
            name = field.enum_type.values_by_number[value].name
            value = name.removeprefix(_enum_prefix(field.enum_type.name)).lower()
        overrides[f.name] = value
    try:
        return cls.preset(msg.name if msg.name in presets else presets[0], **overrides)  # type: ignore[no-any-return]
    except ValueError:
        return None


def fill_the_rest(deck: list[int], placed: int, rng: random.Random) -> list[int]:
    """A sampled deck's last step, in every game: the cards not yet ``placed`` (a bit per card),
    shuffled by ``rng``, fill the deck's places still empty (``-1``) in order."""
    rest = [i for i in range(52) if not placed >> i & 1]
    rng.shuffle(rest)
    holes = [p for p in range(52) if deck[p] < 0]
    for pos, card in zip(holes, rest, strict=True):
        deck[pos] = card
    return deck
