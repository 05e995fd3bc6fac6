"""The game seam: what the referee's plumbing asks of a game, and the registry of games by name.

A game comes in two halves. Its **engine** is pure (standard library only, randomness only
from the seed it is given) and implements :class:`Game` and :class:`GameMatch`: the rule set
and its presets, the match dealt from a seed for ``n`` seats, whose decision is awaited, the
legal actions, applying one, the built-in bot, and what happened as plain
:class:`Happening` values (actions, chance steps such as a reshuffle, deals/games beginning and
ending, with each game's result as a :class:`Ranking`). Its **wire** (one module of
``referee`` beside the pure package) implements :class:`GameWire`: the protobuf messages a seat
or a spectator is sent for each of those values, and the actions read back.

The plumbing (``_table`` and the pieces it is made of) knows nothing else of a game: it never
names one and assumes no number of seats. :func:`get` finds a game by the name a
:class:`~referee.MatchSpec` gives (``MatchSpec.game``): games are plugins, found through the
entry-point group :data:`ENTRY_POINT_GROUP` — Gin and Rummy exactly as another package's game —
each naming a :class:`GamePlugin` of :data:`PLUGIN_API` (docs/adding-a-game.md). :func:`register`
adds a game to one process (a test's). :mod:`referee.conformance` checks a game against the seam.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Callable, Collection, Container, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from referee.cardcore import places_with_forfeits as places_with_forfeits
from referee.cardcore.present import Words

if TYPE_CHECKING:
    from gin_arena.v2 import bot_pb2, common_pb2, referee_pb2


@dataclass(frozen=True, slots=True)
class Ranking:
    """A result for every seat: its place and its points."""

    places: tuple[int, ...]
    """1-based place by seat; tied seats share a place and the next place is skipped (1, 1, 3)."""
    points: tuple[int, ...]
    """Points by seat."""

    @property
    def winner(self) -> int | None:
        """The seat alone in first place, or ``None``."""
        first = [s for s, p in enumerate(self.places) if p == 1]
        return first[0] if len(first) == 1 else None

    @staticmethod
    def by_points(points: Sequence[int]) -> Ranking:
        """Places from points, highest first (equal points share a place)."""
        return Ranking(tuple(1 + sum(1 for q in points if q > p) for p in points), tuple(points))


@dataclass(frozen=True, slots=True)
class Acted:
    """A seat's action was applied."""

    seat: int
    """Who acted."""
    action: Any
    """The game's action value."""
    text: str
    """The action as the replay records it (the game's text form)."""
    revealed: str | None
    """The card (or other hidden value) the action involved, as the replay records it."""
    step: Any = None
    """What the game's wire needs to tell each seat about it."""


@dataclass(frozen=True, slots=True)
class Chance:
    """A chance step after the deal (e.g. the discard pile reshuffled into a new stock)."""

    kind: str
    """The replay record's type (e.g. ``reshuffle``)."""
    record: Mapping[str, Any]
    """The replay record's fields (plain JSON values)."""
    step: Any = None
    """What the game's wire needs to tell each seat about it."""


@dataclass(frozen=True, slots=True)
class DealBegun:
    """A deal was dealt."""

    record: Mapping[str, Any]
    """The ``deal`` record's fields: enough to rebuild the deal (its deck, dealer, key)."""


@dataclass(frozen=True, slots=True)
class DealOver:
    """A deal ended."""

    record: Mapping[str, Any]
    """The ``deal_end`` record's fields."""
    game_over: bool
    """Whether the game ended with it."""
    step: Any = None
    """What the game's wire needs to tell each seat about it."""


@dataclass(frozen=True, slots=True)
class GameOver:
    """A game of the match ended."""

    ranking: Ranking
    """The game's result by seat."""
    record: Mapping[str, Any]
    """The ``game_end`` record's fields."""
    step: Any = None
    """What the game's wire needs to tell each seat about it."""


Happening = Acted | Chance | DealBegun | DealOver | GameOver
"""What a game reports back to the plumbing, in order."""


class GameMatch(Protocol):
    """One match of a game in progress (pure: plain values only)."""

    @property
    def is_over(self) -> bool:
        """Whether the match has ended."""

    @property
    def decider(self) -> int | None:
        """The seat whose decision is awaited: the player to move, or another seat asked a
        question (e.g. whether to call "stop" on a discard); ``None`` once the match is over.
        A seat may decide several times in a row."""

    @property
    def game_number(self) -> int:
        """The current game, from 1."""

    @property
    def deal_number(self) -> int:
        """The current deal of the current game, from 1."""

    @property
    def actions_in_deal(self) -> int:
        """Steps played in the current deal (the stalling guard counts them)."""

    @property
    def scores(self) -> tuple[int, ...]:
        """The current game's points by seat."""

    @property
    def games_won(self) -> tuple[int, ...]:
        """Games won so far, by seat."""

    @property
    def outcome(self) -> Any:
        """The game's own match result (``MatchReport.outcome``): once over, the final one;
        before (a match cut short), the games finished so far, or ``None``."""

    def opening(self) -> Sequence[Happening]:
        """What happened when the match was set up (the first deal)."""

    def why_illegal(self, seat: int, action: Any) -> str:
        """Why ``action`` is not legal for ``seat`` now."""

    def apply(self, seat: int, action: Any) -> Sequence[Happening]:
        """Play a legal action of the deciding seat; returns what followed, in order (the action,
        chance steps, deal and game ends, the next deal)."""

    def substitute(self, seat: int) -> Any:
        """The built-in bot's action for ``seat`` (the decider), chosen from that seat's view."""

    def forfeit(self, seats: Sequence[int]) -> Sequence[Happening]:
        """End the match now: the game in progress is lost by ``seats`` (in the order they
        faulted). Returns the game's end."""

    def ranking(self) -> Ranking:
        """The match's result by seat (so far, while it is not over)."""


class Game(Protocol):
    """A game's engine as the referee reaches it (pure)."""

    name: str
    """The registry name (``MatchSpec.game``)."""
    @property
    def deal_end_content(self) -> type:
        """The frozen dataclass of a ``deal_end`` replay record's game content (standard library
        only; its fields share the record's JSON object — see :mod:`referee.replays`)."""

    @property
    def game_end_content(self) -> type:
        """The same for a ``game_end`` record."""

    def seat_counts(self) -> range:
        """The numbers of seats the game is played by."""

    def default_rules(self) -> Any:
        """The rule set a match gets when its spec names none."""

    def preset_names(self) -> Sequence[str]:
        """The names :meth:`rules_preset` knows, the default's first."""

    def rules_preset(self, name: str) -> Any:
        """The rule set a preset names (``ValueError`` naming the presets otherwise)."""

    def check_rules(self, rules: Any) -> None:
        """``ValueError`` unless ``rules`` is this game's rule-set type."""

    def rules_to_dict(self, rules: Any) -> dict[str, Any]:
        """A rule set as plain JSON values (the replay header's ``rules``)."""

    def match_size(self, rules: Any) -> Sequence[tuple[str, str, int]]:
        """The rule set's numbers that bound how long a match runs, for the referee's limits:
        each as (the ``CreateMatch`` field that sets it, ``"games"`` — games in a match — or
        ``"target"`` — points that end a game or match —, its value)."""

    def rules_from_dict(self, data: Mapping[str, Any]) -> Any:
        """The rule set a replay header's ``rules`` describes (``ValueError`` if it cannot)."""

    def commitment(self, seed: bytes) -> bytes:
        """The seed's commitment, sent before the first deal."""

    def mix_seed(self, seed: bytes, nonces: Sequence[bytes]) -> bytes:
        """The seed with the bots' nonces mixed in."""

    def new_match(self, rules: Any, seed: bytes, seats: int) -> GameMatch:
        """A match for ``seats`` seats, every deck derived from ``seed``."""

    def deal_deck(self, seed: bytes, game: int, deal: int) -> tuple[list[str], bytes]:
        """The game's documented shuffle: deal ``deal`` of game ``game``'s deck order (as its
        ``deal`` record writes it) and key, from the seed. ``arena audit`` re-derives every deck
        of a replay with it."""

    def result_fields(self, outcome: Any) -> dict[str, Any]:
        """The game's part of the replay's ``result`` record and of the finish log line (plain
        values) for a match ``outcome`` (``None``: no match was played)."""


class KnowsCards(Protocol):
    """What a seat may know, deal by deal, and where a seat's messages hold cards: a game that
    declares this (:attr:`Capabilities.knows_cards`, usually its :class:`Game`) lets ``arena
    audit`` check that no seat was sent a card it could not know (its check 6; without it that
    check is reported not checked and the audit fails unless ``--allow-unchecked``)."""

    @property
    def card_fields(self) -> Collection[str]:
        """The names of the fields of the game's messages that hold cards (a ``string`` holds a
        card's text, an integer its number: ``card_text(str(n))`` reads it), repeated or not,
        wherever they are — in the envelope's ``oneof game`` members, and in a plugin's own
        messages packed in ``other`` (the audit unpacks them through protobuf's default pool,
        where the game's generated module put them). Any other ``string`` field whose value
        reads as a card is checked too; a card in an integer field not named here is not seen,
        and a match in which the audit finds no card at all is reported *not checked*."""

    def card_text(self, text: str) -> str | None:
        """The canonical text of a card the game's messages may name, or ``None`` if ``text``
        is not one of its cards."""

    def known_cards(self, rules: Any, deal: Mapping[str, Any], moves: Sequence[tuple[int, str]],
                    seats: int) -> Sequence[Sequence[Collection[str]]]:
        """For a ``deal`` record's fields and the deal's moves as the replay records them (the
        seat and the action's text; seat ``-1`` and ``""`` for a chance step): the cards each
        seat may know, ``len(moves) + 2`` entries — after ``k`` moves at index ``k``, and last
        after the deal's end (its showdown) — of one collection per seat."""


class DrawsFirstDealer(Protocol):
    """A game whose first dealer is drawn from the match's seed declares this
    (:attr:`Capabilities.first_dealer`, usually its :class:`Game`): a tournament's two-seat
    tables without duplicate deals then pick each pair's second seed so
    that the same seat deals first in both games — that is, the other bot (the arena's schedule)."""

    def first_dealer(self, seed: bytes, seats: int) -> int:
        """The seat that deals the first deal of a match of ``seats`` seats from ``seed``."""


class WireError(ValueError):
    """A message that does not describe a valid domain value; the text says what is wrong."""


class GameWire(Protocol):
    """A game's protobuf conversion: what a seat or spectator is sent, what a bot sends back.

    Optional beyond these methods, declared on the registration (:class:`Capabilities`, never
    found by name): :data:`Describe` (``describe(content, card) -> str``: a message's game content
    — a plugin's ``other`` too — in the game's words, for ``arena replay --seat N`` and ``arena
    play``; without it the content is shown in protobuf's text format), :data:`EventWords`
    (``event_words(content, say) -> str``: another seat's move in the presentation's words, for
    the table page's log of moves; without it the log shows ``describe``'s line) and
    :data:`Hasty`.

    A game's ``GameResult`` member may have ``deal_points`` (by seat, the points scored in deals
    before bonuses): the table page's score sheet then shows the bonuses as ``final_totals`` less
    those (a convention of the seam, not a game's name)."""

    def start_fields(self, rules: Any) -> dict[str, Any]:
        """The game's fields of ``MatchStarted``, ``SpectatorHeader`` and ``CreateMatchRequest``
        (its rule set)."""

    def rules_from_request(self, request: referee_pb2.CreateMatchRequest) -> Any | None:
        """The rule set a ``CreateMatch`` request asks for, or ``None`` for the default
        (:class:`WireError` if malformed)."""

    def new_seat_cache(self) -> Any:
        """What a seat's messages repeat within a deal, kept encoded (one per seat)."""

    def request(
        self, match: GameMatch, seat: int, match_id: str, request_id: int, clocks: Sequence[int],
        increment_ms: int, allowance_ms: int, cache: Any,
    ) -> tuple[bytes, Container[Any]]:
        """The serialised ``RefereeMessage`` asking ``seat`` for a decision, and its legal
        actions."""

    def action_from_proto(self, msg: common_pb2.Action) -> Any:
        """A bot's action as the game's value (:class:`WireError` naming what is malformed)."""

    def raw_action(self, msg: common_pb2.Action) -> dict[str, Any]:
        """A bot's action as plain values, for a fault record (a re-run sends it again)."""

    def raw_action_from_record(self, record: Mapping[str, Any]) -> common_pb2.Action:
        """The action :meth:`raw_action` recorded."""

    def action_from_text(self, text: str) -> common_pb2.Action:
        """The action a replay's ``action`` record names, as a bot would send it."""

    def deal_started(self, match: GameMatch, seat: int, cache: Any) -> bot_pb2.DealStarted:
        """The current deal's start for ``seat`` (also sent again to a reconnecting seat)."""

    def tell(
        self, match: GameMatch, happening: Happening, seat: int, think_ms: int, cache: Any
    ) -> tuple[str, Any] | None:
        """What ``seat`` is told of ``happening``: a ``RefereeMessage`` field and its value
        (``event`` messages go only to seats that want them), or ``None``. An ``Acted`` or a
        ``Chance`` is told as an ``event`` (or not at all): the referee asks only the seats
        that want events about them."""

    def show(self, match: GameMatch, happening: Happening, match_id: str, think_ms: int) -> bytes:
        """The serialised ``SpectatorEvent`` showing ``happening`` to spectators."""

    def game_results(self, outcome: Any) -> list[common_pb2.GameResult]:
        """A match outcome's games, for ``MatchResult.games``."""

    def outcome_from_result(self, result: common_pb2.MatchResult, termination_normal: bool) -> Any:
        """A remote referee's ``MatchResult`` as the game's match outcome (or ``None``)."""


Audience = int | str
"""Who a view is for: a seat (``0``, ``1``, …), :data:`SPECTATOR` (what every seat sees: no
hand is shown until the game shows it) or :data:`EVERYONE` (complete information: a replay's
viewer, after the match)."""
SPECTATOR = "spectator"
"""The :data:`Audience` of a spectator: public information only."""
EVERYONE = "everyone"
"""The :data:`Audience` of a replay's viewer: every hand shown."""


class GamePresentation(Protocol):
    """A game's presentation (pure): views of a deal for an :data:`Audience`, and
    :meth:`present`, which turns a view into a plain, game-neutral description that every
    renderer draws (the terminal's and the HTML page's in ``arena.replays``; the arena names no
    game). The description's schema, all plain JSON values (cards are their text, ``"7h"``)::

        {"seats":  [{"seat": int, "dealer": bool, "to_move": bool, "count": int,
                     "hand": {"groups": [[card, ...], ...], "loose": [card, ...]} | None,
                     "notes": [str, ...]}, ...],        # hand None: not shown to this audience
         "piles":  [{"name": str, "count": int, "cards": [card, ...] | None}, ...],
                                                        # cards bottom first; None: face down
         "table":  [{"label": str, "owner": int | None, "cards": [card, ...],
                     "placed_by": [int, ...]}, ...] | None,
                                                        # who laid each card; None: no table
         "scores": [int, ...],                          # the game's points by seat so far
         "to_move": int | None, "phase": str,           # the decider and its question
         "notes":  [str, ...],                          # the deal's facts (dealer, limits, ...)
         "last":   {"seat": int, "text": str, "cards": [card, ...]} | None,
         "legal":  [{"id": str, "label": str, "kind": str, "cards": [card, ...]}, ...],
                                                        # id: the action's text (the replay's);
                                                        # optional "from_pile"/"to_pile": int (the
                                                        # pile it takes from / puts its card on),
                                                        # "to_meld": int (the table's meld it lays on):
                                                        # a person plays it by touching that pile or meld
         "end":    {"text": str, "points": [int, ...],  # the deal's end, or None
                    "seats": [{"seat": int, "groups": [[card, ...]], "loose": [card, ...],
                               "laid_off": [card, ...], "notes": [str, ...]}, ...],
                    # optional: "totals": [int, ...] (the game's points after the deal),
                    # "table": [...] (the melds on the table at the end, as "table" above),
                    # per seat "counted": "all" (every card left counts, not only "loose")
                    # and "pays": int (what the seat's hand pays the deal's winner)
                    } | None,
         "faces":  {card: {"rank": str, "suit": str,    # optional: how each card shown looks
                           "ink": int, "name": str}},  # ("10", "♥", 0-3, "ten of hearts")
         "loose_name": str}                             # optional: what the game calls a hand's
                                                        # cards outside its groups ("deadwood");
                                                        # absent: they are shown unlabelled

    ``faces`` (``referee.cardcore.present.with_faces`` for the 52-card deck) holds exactly the
    cards the description shows: every renderer draws a card from it — its rank as printed, its
    suit's symbol, its ink (0 black, 1 red, 2 blue, 3 green in a four-colour deck; 1 and 2 red in
    a two-colour one) — and names it for screen readers; a renderer shows a card without a face
    as its text.

    A text (``text``, ``notes``, ``label``, a pile's ``name``) names a seat as ``{N}``: the
    renderer writes seat N's player name there. The top-level ``notes`` (the deal's facts, e.g. a
    knock limit or a called suit) are shown by every viewer: the terminal, the HTML replay, the
    live spectator view and a person's table.

    The texts are English. A description may also carry ``"texts": {text: [template, {field:
    value, ...}], ...}``: each of its texts that was made from a template (a msgid of the game's
    catalogs, ``Registered.catalogs``) with the template and its fields (strings); a renderer
    that speaks another language translates such a text's template and fills each field, itself
    translated when it is a text of ``texts`` or a msgid; any other text is its own msgid
    (``referee.cardcore.present`` makes both). ``texts`` holds only texts the description shows.

    A presentation may also have ``deal_end_view(match, audience, game, deal)`` (declared:
    :attr:`Capabilities.deal_end_view`): the view of that deal's end (``game``, ``deal``: a
    ``DealResult``'s numbers) while the match still holds it —
    a match deals the next deal at once, so ``match_view`` shows that one by the time a seat reads
    the end — or ``None``; the web's tables draw the deal's end from it.

    A game without a presentation (``Registered.presentation`` is ``None``) is shown by the arena
    from its records alone (moves as text)."""

    def deal_views(self, rules: Any, deal: Mapping[str, Any], moves: Sequence[tuple[int, str]],
                   end: Mapping[str, Any] | None, seats: int, audience: Audience) -> Sequence[Any]:
        """The ``audience``'s views of a deal rebuilt from its ``deal`` record's fields and its
        moves as the replay records them (each action's seat and text; chance steps are redone
        by the engine from the deal's key): ``len(moves) + 1`` views, after ``k`` moves at index
        ``k``; the last one shows the deal's end once it is over (``end``: the ``deal_end``
        record's fields, if any). A move the engine refuses raises ``ValueError`` naming it."""

    def match_view(self, match: GameMatch, audience: Audience) -> Any:
        """The ``audience``'s view of a match in progress (for ``arena play``)."""

    def present(self, view: Any) -> dict[str, Any]:
        """A view as the plain, JSON-able description above."""

    def action_from_text(self, text: str) -> Any:
        """The game's action named by a description's ``legal[].id`` (the replay's text of an
        action); ``ValueError`` if it names none."""

    def rules_text(self, rules: Any) -> str:
        """A rule set in a few words (``classic, target 100``)."""

    def game_end_notes(self, record: Mapping[str, Any]) -> list[str]:
        """What a ``game_end`` record's game content adds to its common fields, in words
        (``shutout``, places, ...)."""


Describe = Callable[[Any, Callable[[str], str]], str]
"""``describe(content, card)``: a message's game content (an envelope's ``oneof game`` member; a
plugin's is ``other``, its own message packed in ``google.protobuf.Any``) in the game's words, one
line (``card`` writes a card), for ``arena replay --seat N`` and ``arena play``."""
EventWords = Callable[[Any, Words], str]
"""``event_words(content, say)``: an ``Event``'s game content (a seat's move, as another seat is
told it) in the presentation's words, made with ``say`` (so a page translates it with the game's
catalogs), for the table page's log of moves."""
Hasty = Callable[["bot_pb2.ActionRequest"], "common_pb2.Action"]
"""``hasty(request)``: a legal action of the request that ends the deal soon (the arena's test bot,
``arena._testbot`` mode ``greedy``, plays it)."""
DealEndView = Callable[[GameMatch, Audience, int, int], Any]
"""``deal_end_view(match, audience, game, deal)``: the audience's view of that deal's end while
the match still holds it (a match deals the next deal at once), or ``None``; the web's tables
draw the deal's end from it (its ``present``)."""


@dataclass(frozen=True, slots=True)
class Capabilities:
    """The optional parts of the seam a game has, declared once on its registration
    (:attr:`Registered.capabilities`): the arena reads them here and never probes a game's objects
    for a method's name. ``arena games --check`` and :func:`referee.conformance.check_game` check
    the declaration (:func:`capability_problems`). ``None``: the game has not that part, and each
    viewer or check says what it does without it."""

    knows_cards: KnowsCards | None = None
    """What each seat may know and where its messages hold cards: ``arena audit``'s information
    check. Without it that check is reported *not checked* and the audit fails (unless
    ``--allow-unchecked``)."""
    first_dealer: DrawsFirstDealer | None = None
    """A game whose first dealer is drawn from the seed: a tournament's two-seat pairs then deal
    first once each."""
    describe: Describe | None = None
    """The wire's words for a message's content (:data:`Describe`); without it, protobuf's text."""
    event_words: EventWords | None = None
    """The wire's words for another seat's move (:data:`EventWords`); without it, ``describe``'s."""
    hasty: Hasty | None = None
    """An action ending the deal soon (:data:`Hasty`); without it the test bot plays the first."""
    deal_end_view: DealEndView | None = None
    """The presentation's view of a deal's end (:data:`DealEndView`)."""
    result_words: tuple[str, ...] = ()
    """The fields of the game's result messages (its ``DealResult`` and ``GameResult`` members,
    each key in words: ``deadwoodCards`` is ``deadwood cards``) that a person's table labels in
    the game's words — msgids of its catalogs (``Registered.catalogs``), marked with ``T`` so that
    they are extracted — and whose flags get a row on its score sheet. Any other field is shown by
    its key (the arena has no word of a game's own)."""
    encodings: str = ""
    """The module (a dotted name, e.g. ``my_game.encode``) that registers the game's observation
    encodings for the training environment when imported (``sample_bots.kit.encodings.register``;
    docs/training.md): ``train_env`` imports it, and nothing else does (it may need NumPy). ``""``:
    the game is no training environment (Gin's and rummy's encodings come with the kit)."""


_CAPABILITY_MEMBERS: dict[str, tuple[str, ...]] = {
    "knows_cards": ("card_fields", "card_text", "known_cards"),
    "first_dealer": ("first_dealer",),
}
"""The members a capability's object must have (the others are one callable each)."""


@dataclass(frozen=True, slots=True)
class SampleBot:
    """A bot that comes with a game: the arena seats it wherever it needs a player of that game —
    ``arena demo --game NAME`` plays the game's sample bots against each other, ``arena play --game
    NAME --bot BOT`` seats one against a person in the terminal, and the live web's tables (``/play``
    and people's tables) offer them as the computer's players. Nothing in the arena names a game's
    bots: a plugin lists its own on its :class:`Registered`."""

    name: str
    """Its name where the arena offers it (``random``, ``greedy``): letters, digits, ``_``, ``-``."""
    command: tuple[str, ...]
    """Its command line; ``{python}`` stands for the arena's own Python (e.g. ``("{python}", "-m",
    "my_game.bot")``). The arena appends ``--referee HOST:PORT --name NAME`` and gives the seat's
    token in the environment, ``GIN_TOKEN`` (never on the command line, which every user of the
    machine may read): the Python kit's ``run_bot`` reads all three."""
    level: str = ""
    """How hard a player it is for a person, one of :data:`LEVELS` (``easy``, ``medium``,
    ``hard``): the live web's "play the computer" offers the game's levels and seats the first of
    its bots with the level chosen; ``""``: none said (it is offered by name only)."""

    def __post_init__(self) -> None:
        if self.level not in ("", *LEVELS):
            raise ValueError(f"sample bot {self.name!r}: level {self.level!r} is not one of {', '.join(LEVELS)}")


LEVELS = ("easy", "medium", "hard")
"""The levels a sample bot may have (:attr:`SampleBot.level`), easiest first."""


@dataclass(frozen=True, slots=True)
class Demo:
    """How the arena shows a game with its sample bots (``arena demo --game NAME``, ``arena play``,
    the web's forms)."""

    seats: int = 0
    """Seats at each of the demo's tables (0: the fewest the game allows). Two seats: a round robin of
    every pairing; more: the bots rotated round tables of that many. Also the seat count the web's
    forms offer first."""
    games: int = 0
    """Games per table (0: the arena's default spread of about 72 games over the pairings)."""
    opponent: str = ""
    """The sample bot ``arena play`` seats against a person when ``--bot`` is not given ("": the first
    of :attr:`Registered.bots`)."""


@dataclass(frozen=True, slots=True)
class Registered:
    """A game and its wire, as the registry holds them."""

    game: Game
    """The engine's side."""
    wire: GameWire
    """The protobuf conversion."""
    presentation: GamePresentation | None = None
    """How its views are described to people (optional: without one the viewers show the
    replay's records as text)."""
    catalogs: Path | None = None
    """The folder of the presentation's gettext catalogs (``LANG/LC_MESSAGES/game.po``, the
    msgids its English texts and templates), with which the live web shows the game's words in
    a page's language; ``None``: the game's words stay English."""
    bots: tuple[SampleBot, ...] = ()
    """Its sample bots (the first is the web's first choice); empty: the arena offers none, and a
    person plays it only against a bot whose command they give (``arena play --command``)."""
    demo: Demo = Demo()
    """How its demo seats the sample bots."""
    help: Path | None = None
    """The folder of the game's rules and help pages, one per language (``LANG.md``: CommonMark,
    its first line a ``# title``; ``en.md`` at least), which the live web shows at ``/rules/GAME``
    in a page's language (English where the game has none in it); ``None``: no rules page."""
    capabilities: Capabilities = Capabilities()
    """The optional parts of the seam it has, declared (:class:`Capabilities`)."""
    display_name: str = ""
    """The game's name as people read it ("Gin", "Rummy"), where the viewers and the web show a
    game (the registry's name stays the key: ``MatchSpec.game``, ``--game``). English, one line of
    at most :data:`DISPLAY_NAME_MAX` characters, marked with ``T`` so that it is a msgid of the
    game's catalogs (the web shows it in a page's language). ``""``: none declared — the viewers
    show the registry's name and ``arena games --check`` fails (:func:`display_name_problem`)."""


DISPLAY_NAME_MAX = 40
"""The longest a game's display name may be (characters): it sits in a page's title line."""


def check_display_name(text: str) -> str | None:
    """What is wrong with ``text`` as a game's display name (empty, blank around, several lines,
    longer than :data:`DISPLAY_NAME_MAX`), or ``None``."""
    if not text:
        return "no display name"
    if text != text.strip() or "\n" in text or "\r" in text or len(text) > DISPLAY_NAME_MAX:
        return f"display name {text!r} is not one line of 1-{DISPLAY_NAME_MAX} characters without blanks around it"
    return None


def display_name_problem(found: Registered) -> str | None:
    """What is wrong with a registration's display name (:func:`check_display_name`), or ``None``."""
    problem = check_display_name(found.display_name)
    if problem is None:
        return None
    return f'{problem} (games.Registered(display_name=T("…")); the viewers show its registry name instead)'


def display_name(name: str) -> str:
    """The display name of the game registered as ``name`` (:attr:`Registered.display_name`), in
    English; the registry's name itself for a game that declares none, does not load or is not
    installed (an old run folder's game): a viewer never fails on it."""
    try:
        found = get(name)
    except ValueError:
        return name
    return name if display_name_problem(found) else found.display_name


def capability_problems(found: Registered) -> list[str]:
    """What is wrong with a registration's declared capabilities: one that lacks a member it needs
    or is not callable, and an optional part its objects have under a capability's name but do
    not declare (the arena would never use it). Empty: the declaration is sound."""
    problems = []
    declared = found.capabilities
    module = declared.encodings
    if module and not (isinstance(module, str) and all(part.isidentifier() for part in module.split("."))):
        problems.append(f"capability encodings is declared with {module!r}, not a module's dotted name")
    for name in ("knows_cards", "first_dealer", "describe", "event_words", "hasty", "deal_end_view"):
        value = getattr(declared, name)
        members = _CAPABILITY_MEMBERS.get(name)
        if value is not None:
            missing = [m for m in members if not hasattr(value, m)] if members else ([] if callable(value) else [name])
            if missing:
                problems.append(f"capability {name} is declared with a {type(value).__name__}, which has no "
                                f"{', '.join(missing)}")
            continue
        holders = [found.game, found.wire, found.presentation]
        has = [h for h in holders if h is not None and all(hasattr(h, m) for m in (members or (name,)))]
        if has:
            problems.append(f"its {type(has[0]).__name__} has {name} but its registration does not declare it "
                            f"(games.Capabilities({name}=…)): the arena never uses it")
    return problems


def catalogs_in(package: str, folder: str = "locale") -> Path:
    """The folder ``folder`` of an imported package, for ``Registered.catalogs`` (a game's
    catalogs are package data beside its modules; the game's own modules do no I/O)."""
    return Path(str(importlib.resources.files(package) / folder))


# ----- the registry: games found by entry point, and games registered in process -----
PLUGIN_API = 1
"""The version of this seam a game plugin is written for (:attr:`GamePlugin.plugin_api`). It
changes when :class:`Game`, :class:`GameMatch` or :class:`GameWire` change incompatibly; a
plugin written for another version is refused with a one-line error naming it."""

ENTRY_POINT_GROUP = "gin_arena.games"
"""The entry-point group games are found by: each entry point's name is the game's name
(``MatchSpec.game``), its value an object of :class:`GamePlugin`, e.g. in a ``pyproject.toml``::

    [project.entry-points."gin_arena.games"]
    toy3 = "toy3_game.plugin:PLUGIN"
"""


@dataclass(frozen=True, slots=True)
class GamePlugin:
    """What a game's entry point names: cheap to import (the engine is imported by ``load``,
    only when the game is first used)."""

    plugin_api: int
    """The seam's version the game is written for (:data:`PLUGIN_API` when it was built)."""
    load: Callable[[], Registered]
    """Imports the game and returns its engine and wire (called once per process)."""


class GamePluginError(ValueError):
    """A game that cannot be used: unknown, broken (it fails to import or load), incompatible
    (another plugin API version) or installed twice. The text is one line naming the game, its
    distribution and its entry point."""


@dataclass(frozen=True, slots=True)
class Installed:
    """One installed game as ``arena games`` lists it."""

    name: str
    """The game's registry name."""
    origin: str
    """Where it comes from: ``distribution version`` (``+`` between several), or ``in process``."""
    entry_point: str
    """The entry point (``name = module:object``), or ``""`` for a game registered in process."""
    plugin_api: int | None
    """The plugin API version it declares (``None`` if that could not be read)."""
    seats: range | None
    """The numbers of seats it is played by (``None`` if it did not load)."""
    presets: tuple[str, ...]
    """Its rule-set presets (empty if it did not load)."""
    problem: str | None
    """Why it cannot be used (the one-line error a command asking for it gets), or ``None``."""
    capabilities: tuple[str, ...] = ()
    """The optional parts of the seam it declares (:class:`Capabilities`' field names)."""
    display_name: str = ""
    """Its display name (:attr:`Registered.display_name`; empty if it declares none or did not load)."""
    capability_problems: tuple[str, ...] = ()
    """What is wrong with that declaration (:func:`capability_problems`) or with its display name
    (:func:`display_name_problem`): ``arena games --check`` fails on it."""


@dataclass(frozen=True, slots=True)
class _Entry:
    """An entry point of the group, with what names it."""

    dist: str
    """Its distribution's name and version."""
    point: Any
    """The ``importlib.metadata.EntryPoint``."""

    @property
    def where(self) -> str:
        return f"entry point '{self.point.name} = {self.point.value}' of {self.dist}"


_LOADERS: dict[str, Callable[[], Registered]] = {}
"""Games registered in process (:func:`register`)."""
_LOADED: dict[str, Registered] = {}
_FOUND: dict[str, list[_Entry]] | None = None


def _found() -> dict[str, list[_Entry]]:
    """The group's entry points by game name (read once per process from the installed
    distributions' metadata: no game is imported)."""
    global _FOUND
    if _FOUND is None:
        from importlib import metadata

        found: dict[str, list[_Entry]] = {}
        for point in metadata.entry_points(group=ENTRY_POINT_GROUP):
            dist = point.dist
            label = f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"
            found.setdefault(point.name, []).append(_Entry(label, point))
        _FOUND = found
    return _FOUND


def register(name: str, loader: Callable[[], Registered]) -> None:
    """Add a game under ``name`` in this process only (``loader`` is called once, when the game
    is first needed): a test's game. Installed games are found by entry point instead."""
    if name in _LOADERS or name in _found():
        raise ValueError(f"a game named {name!r} is registered already")
    _LOADERS[name] = loader


def unregister(name: str) -> None:
    """Remove a game :func:`register` added to this process (a test's, once the test is done with
    it: other tests in the process then see only the installed games)."""
    if name not in _LOADERS:
        raise ValueError(f"no game named {name!r} is registered in process")
    del _LOADERS[name]
    _LOADED.pop(name, None)


def _plugin(name: str, entry: _Entry) -> GamePlugin:
    """The entry point's object, checked (:class:`GamePluginError` if broken or incompatible)."""
    try:
        obj = entry.point.load()
    except Exception as e:
        raise GamePluginError(f"game {name!r} is broken: {entry.where} fails to import: "
                              f"{type(e).__name__}: {_one_line(e)}") from e
    api = getattr(obj, "plugin_api", None)
    if not isinstance(api, int) or not callable(getattr(obj, "load", None)):
        raise GamePluginError(f"game {name!r} is broken: {entry.where} names a {type(obj).__name__}, "
                              "not a referee.games.GamePlugin")
    if api != PLUGIN_API:
        raise GamePluginError(f"game {name!r} is incompatible: {entry.where} is written for plugin API {api}; "
                              f"this referee speaks plugin API {PLUGIN_API}")
    return GamePlugin(api, obj.load)


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or "(no message)"


def _duplicate(name: str, entries: Sequence[_Entry]) -> GamePluginError:
    places = "; ".join(e.where for e in entries)
    return GamePluginError(f"game {name!r} is installed more than once ({places}): uninstall all but one")


def _load(name: str) -> Registered:
    if name in _LOADERS:
        found = _LOADERS[name]()
        why = samples_problem(found)
        if why:
            raise GamePluginError(f"game {name!r} is broken: registered in process: {why}")
        return found
    entries = _found().get(name)
    if not entries:
        known = ", ".join(names()) or "none"
        raise GamePluginError(f"unknown game {name!r}; known: {known} (`arena games` lists them)")
    if len(entries) > 1:
        raise _duplicate(name, entries)
    entry = entries[0]
    plugin = _plugin(name, entry)
    try:
        found = plugin.load()
    except Exception as e:
        raise GamePluginError(f"game {name!r} is broken: loading {entry.where} fails: "
                              f"{type(e).__name__}: {_one_line(e)}") from e
    if not isinstance(found, Registered):
        raise GamePluginError(f"game {name!r} is broken: {entry.where} loads a {type(found).__name__}, "
                              "not a referee.games.Registered")
    if getattr(found.game, "name", None) != name:
        raise GamePluginError(f"game {name!r} is broken: {entry.where} loads a game named "
                              f"{getattr(found.game, 'name', None)!r}")
    why = samples_problem(found)
    if why:
        raise GamePluginError(f"game {name!r} is broken: {entry.where}: {why}")
    return found


def samples_problem(reg: Registered) -> str:
    """What is wrong with a registration's sample bots and demo ("" if nothing): every bot a
    :class:`SampleBot` with a unique name of letters, digits, ``_`` and ``-`` and a command; the
    demo's seats ones the game allows; its opponent one of the bots."""
    names: list[str] = []
    for bot in reg.bots:
        if not isinstance(bot, SampleBot):
            return f"its bots hold a {type(bot).__name__}, not a referee.games.SampleBot"
        if not bot.name or not all(c.isalnum() or c in "_-" for c in bot.name) or not bot.name.isascii():
            return f"sample bot {bot.name!r}: a name is letters, digits, _ and -"
        if bot.name in names:
            return f"sample bot {bot.name!r} is listed twice"
        if not bot.command or not all(isinstance(part, str) and part for part in bot.command):
            return f"sample bot {bot.name!r}: its command is empty"
        names.append(bot.name)
    demo = reg.demo
    if demo.seats and demo.seats not in reg.game.seat_counts():
        return f"its demo's seats {demo.seats} are not among the game's seat counts"
    if demo.games < 0:
        return f"its demo's games {demo.games} are negative"
    if demo.opponent and demo.opponent not in names:
        return f"its demo's opponent {demo.opponent!r} is not one of its sample bots ({', '.join(names) or 'none'})"
    return ""


def get(name: str) -> Registered:
    """The game named ``name``, imported when first asked for (:class:`GamePluginError`, a
    ``ValueError``, in one line naming the game and where it comes from: unknown — naming the
    known games —, broken, incompatible or installed twice)."""
    found = _LOADED.get(name)
    if found is None:
        found = _LOADED[name] = _load(name)
    return found


def names() -> list[str]:
    """Every game's name: installed (whether or not it loads) and registered in process."""
    return sorted({*_found(), *_LOADERS})


def installed() -> list[Installed]:
    """Every game with where it comes from and whether it loads (this imports each game)."""
    out = []
    for name in names():
        entries = [] if name in _LOADERS else _found()[name]
        api: int | None = None
        if len(entries) == 1:
            api = getattr(_safe_load_point(entries[0]), "plugin_api", None)
        elif not entries:
            api = PLUGIN_API
        seats: range | None = None
        presets: tuple[str, ...] = ()
        problem = None
        declared: tuple[str, ...] = ()
        unsound: tuple[str, ...] = ()
        shown = ""
        try:
            found = get(name)
            seats, presets, shown = found.game.seat_counts(), tuple(found.game.preset_names()), found.display_name
            declared = tuple(f for f in Capabilities.__dataclass_fields__
                             if getattr(found.capabilities, f) not in (None, (), ""))
            unsound = tuple(f"game {name!r}: {p}" for p in (*capability_problems(found), display_name_problem(found))
                            if p is not None)
        except ValueError as e:
            problem = str(e)
        out.append(Installed(
            name=name,
            origin=" + ".join(e.dist for e in entries) if entries else "in process",
            entry_point="; ".join(f"{e.point.name} = {e.point.value}" for e in entries),
            plugin_api=api if isinstance(api, int) else None,
            seats=seats, presets=presets, problem=problem, capabilities=declared, capability_problems=unsound,
            display_name=shown,
        ))
    return out


def _safe_load_point(entry: _Entry) -> object:
    try:
        return entry.point.load()
    except Exception:
        return None
