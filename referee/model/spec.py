"""Plain, picklable descriptions of a match and of its result: what a scheduler (one machine
or many) hands the referee, and what it gets back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from referee import games
from referee.model.timecontrol import TimeControl

FaultPolicy = Literal["forfeit", "substitute"]
"""What a seat's time fault costs: the match (``forfeit``) or only the move, the built-in bot
playing it (``substitute``, :attr:`MatchSpec.substitute_time_faults`)."""
SubstituteScope = Literal["game", "move"]
"""What the built-in bot takes over when a seat loses on time under ``substitute``
(:attr:`MatchSpec.substitute_time_faults`)."""
Termination = Literal[
    "normal", "time_forfeit", "illegal_action", "malformed_message", "disconnected", "crashed",
    "failed_to_connect", "aborted", "internal_error", "interrupted", "bot_error",
]
"""Why a match ended: ``normal`` when the game decided it, else the fault or stop that ended it
(docs/protocol.md lists each)."""
TERMINATIONS: tuple[Termination, ...] = (
    "normal", "time_forfeit", "illegal_action", "malformed_message", "disconnected", "crashed",
    "failed_to_connect", "aborted", "internal_error", "interrupted", "bot_error",
)
"""Every termination reason, in the order of the protocol's ``Termination`` enum."""
DEFAULT_GAME = "gin"
"""The game a spec plays when it names none (the only one before the registry)."""


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """Everything needed to run one match. Plain values only, so it pickles (for running
    matches on other machines) and serialises to the ``CreateMatch`` request."""

    players: tuple[str, ...]
    """The players' names, by seat (as many as the game allows)."""
    rules: Any = None
    """The game's rule set; ``None``: the game's default rule set."""
    time_control: TimeControl = field(default_factory=lambda: TimeControl(per_move_ms=10_000))
    """The time control (cutechess-style)."""
    fault_policy: FaultPolicy = "forfeit"
    """What a fault (time loss, illegal action, malformed message, crash, disconnect) does:
    ``forfeit`` — the faulting seat loses the game and the match ends; ``substitute`` — a
    built-in bot plays the seat to the end of the game."""
    substitute_time_faults: SubstituteScope = "game"
    """Under ``substitute``, what a ``time_forfeit`` hands the built-in bot: ``game`` — the seat
    to the end of the game, as every fault; ``move`` — only the decision that timed out: the
    seat is told (an ``ErrorReport``, ``ERROR_CODE_TOO_LATE``) and decides again from its next
    request. Its clock stands as it did when the timed-out request was sent (neither its late
    attempt nor the bot's decision is charged). Any other fault (a ``disconnected`` seat
    included) still substitutes to the game's end; under ``forfeit`` this has no effect."""
    reconnect_grace_ms: int = 5_000
    """How long a disconnected seat may take to reconnect (its clock keeps running)."""
    connect_timeout_ms: int = 30_000
    """How long the match waits for its seats to connect before they fail to connect."""
    repeat_illegal: bool = False
    """Development option: an illegal action is answered with ``action_rejected`` and the
    request repeated (the clock keeps running), instead of a fault."""
    seed: bytes | None = None
    """The secret shuffle seed; ``None`` lets the referee draw 32 random bytes."""
    reveal_seed: bool = True
    """Whether ``MatchFinished`` (to the seats and to spectators) reveals the seed. ``False``
    when another game is dealt from the same seed and may not be over (a duplicate pair): a
    bot that kept the seed would know that game's every card. The commitment still goes out
    at the start, and the replay (and the operator's ``GetMatch``) still has the seed, so the
    audit checks it; the seats learn it from the replay once every game from it is over."""
    match_id: str = ""
    """The match's id; empty lets the referee choose one."""
    mix_nonces: bool = False
    """Mix the bots' hello nonces into the seed (commit–reveal with contributions)."""
    max_actions_per_deal: int = 2_000
    """A safety net against stalling: RULES has no limit on drawing from the discard pile, so
    two bots could pass one card back and forth for ever. A deal that reaches this many actions
    ends the match as ``aborted`` (with the reason). Random play averages about 116."""
    seat_tokens: tuple[str, ...] = ()
    """Optional bot tokens by seat (a long-lived bot session authenticated with its token
    plays every seat given that token); empty: the referee makes a fresh seat token per seat."""
    game: str = DEFAULT_GAME
    """Which game: a name in ``referee.games``' registry."""
    seat_time_controls: tuple[TimeControl, ...] = ()
    """Optional time control by seat (cutechess's per-engine tc); empty: every seat plays
    under ``time_control``."""
    seat_bots: tuple[str, ...] = ()
    """Optional registered bot by seat (``""``: a seat of its own token): a live session that the
    referee's bot directory identified as that bot, with room for another match, plays the
    seat (one that opens later or comes back takes it, while the match waits). The spec holds
    no secret; empty: no seat is a registered bot's."""

    def __post_init__(self) -> None:
        entry = games.get(self.game)
        seats = entry.game.seat_counts()
        if len(self.players) not in seats:
            allowed = str(seats.start) if len(seats) == 1 else f"{seats.start} to {seats.stop - 1}"
            raise ValueError(f"{self.game} is played by {allowed} seats; got {len(self.players)} players")
        if self.rules is None:
            object.__setattr__(self, "rules", entry.game.default_rules())
        else:
            entry.game.check_rules(self.rules)
        if self.seat_time_controls and len(self.seat_time_controls) != len(self.players):
            raise ValueError("seat_time_controls must give one time control per seat (or none)")
        if any(not p.strip() for p in self.players):
            raise ValueError("player names must not be empty")
        if self.fault_policy not in ("forfeit", "substitute"):
            raise ValueError(f"fault_policy must be forfeit or substitute; got {self.fault_policy!r}")
        if self.substitute_time_faults not in ("game", "move"):
            raise ValueError(f"substitute_time_faults must be game or move; got {self.substitute_time_faults!r}")
        if self.max_actions_per_deal < 10:
            raise ValueError("max_actions_per_deal must be at least 10")
        if self.reconnect_grace_ms < 0 or self.connect_timeout_ms <= 0:
            raise ValueError("reconnect_grace_ms must be >= 0 and connect_timeout_ms > 0")
        if self.seed is not None and not (1 <= len(self.seed) <= 1024):
            raise ValueError("seed must be 1 to 1024 bytes")
        if self.seat_tokens and len(self.seat_tokens) != len(self.players):
            raise ValueError("seat_tokens must give one token per seat (or none)")
        if any(t and len(t) < 16 for t in self.seat_tokens):
            raise ValueError("a bot token must be at least 16 characters")
        given = [t for t in self.seat_tokens if t]
        if len(set(given)) != len(given):
            raise ValueError("seat_tokens: one bot token holds at most one seat of a match")
        self._check_seat_bots()

    def _check_seat_bots(self) -> None:
        if self.seat_bots and len(self.seat_bots) != len(self.players):
            raise ValueError("seat_bots must give one registered bot (or \"\") per seat, or none")
        named = [b for b in self.seat_bots if b]
        if len(set(named)) != len(named):
            raise ValueError("seat_bots: one registered bot holds at most one seat of a match")
        if any(b and t for b, t in zip(self.seat_bots, self.seat_tokens, strict=False)):
            raise ValueError("a seat is given both a bot token (seat_tokens) and a registered bot (seat_bots)")

    @property
    def game_entry(self) -> games.Registered:
        """The game and its wire, from the registry."""
        return games.get(self.game)

    @property
    def default_game(self) -> bool:
        """Whether the spec plays the default game (whose messages and replays name no game)."""
        return self.game == DEFAULT_GAME

    def seat_time_control(self, seat: int) -> TimeControl:
        """The time control of ``seat``."""
        return self.seat_time_controls[seat] if self.seat_time_controls else self.time_control


@dataclass(frozen=True, slots=True)
class MatchReport:
    """How a match ended, as the scheduler records it."""

    match_id: str
    """The match's id."""
    players: tuple[str, ...]
    """The players' names, by seat."""
    winner: int | None
    """The winning seat, or ``None`` (a draw, or aborted)."""
    termination: Termination
    """Why the match ended."""
    faulting_seat: int | None
    """The seat whose fault ended or changed the match, or ``None``."""
    detail: str
    """A human-readable explanation."""
    outcome: Any
    """The game's own match result (games, totals), or ``None`` if no game was played."""
    substituted_seats: tuple[int, ...]
    """Seats a built-in bot played for (fault policy ``substitute``): to the end of a game, or
    for single decisions only (``substitute_time_faults="move"``): such a seat stays listed."""
    seed: bytes
    """The revealed shuffle seed (after any nonce mixing: the seed the decks came from)."""
    seed_commitment: bytes
    """SHA-256 of the operator's seed, sent before the first deal."""
    replay_path: str
    """Where the replay was written ("" if none)."""
    replay_hash: str
    """The final hash of the replay's hash chain (hex)."""
    decisions: int
    """Decisions (actions) played."""
    think_ms: tuple[int, ...]
    """Total thinking time used, by seat, in milliseconds."""
    places: tuple[int, ...] = ()
    """1-based finishing place by seat; tied seats share a place (1, 1, 3)."""
    points: tuple[int, ...] = ()
    """The match's points by seat (the game's own measure)."""
    fallbacks: tuple[int, ...] = ()
    """By seat: the answers its bot marked as fallbacks (``ActionResponse.fallback``: its own
    code failed and its client answered the first legal action); empty when none did."""

