"""Each game's presentation (``referee.games.GamePresentation``): ``present(view)`` gives the
documented, game-neutral schema in plain JSON values, for a seat, a spectator and the replay's
viewer; a view hides what it must (a spectator's description names no card of a hand, a seat's
none of another seat's hand, until the deal's end shows them); the legal moves are labelled and
name the actions the game takes back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.replays import steps
from arena.replays import view as replay_view
from referee import games
from referee.replays import ActionRecord, read_replay

SEAT_KEYS = {"seat", "dealer", "to_move", "count", "hand", "notes"}
TOP_KEYS = {"seats", "piles", "table", "scores", "to_move", "phase", "notes", "last", "legal", "end"}


def _cards(desc: Any, key: str = "") -> Iterator[str]:
    """Every card a description names (in its card fields)."""
    if isinstance(desc, dict):
        for k, v in desc.items():
            yield from _cards(v, k)
    elif isinstance(desc, list):
        for v in desc:
            if isinstance(v, str):
                if key in ("cards", "loose", "laid_off"):
                    yield v
            else:
                yield from _cards(v, key)


def _strings(desc: Any) -> Iterator[str]:
    """Every string a description holds (keys aside)."""
    if isinstance(desc, str):
        yield desc
    elif isinstance(desc, dict):
        for v in desc.values():
            yield from _strings(v)
    elif isinstance(desc, list):
        for v in desc:
            yield from _strings(v)


def _check_texts(desc: dict[str, Any]) -> None:
    """The optional ``texts``: each is its template with its fields filled, and is a text the
    description shows (or a field of one): the translatable form adds nothing to what it shows."""
    texts = desc.get("texts", {})
    shown = set(_strings({k: v for k, v in desc.items() if k != "texts"}))
    for fields in (f for _, f in texts.values()):
        shown |= set(fields.values())
    for text, (template, fields) in texts.items():
        assert all(isinstance(v, str) for v in fields.values()) and fields, (text, fields)
        assert template.format(**fields) == text and text in shown, (text, template, fields)


TARGETS = ("from_pile", "to_pile", "to_meld")
"""A legal move's optional keys: the pile it takes from or puts on, the table's meld it lays on."""
CARD_KEYS = ("cards", "groups", "loose", "laid_off")


def _shown_cards(desc: Any, cards: bool = False) -> Iterator[str]:
    if isinstance(desc, str):
        if cards:
            yield desc
    elif isinstance(desc, dict):
        for k, v in desc.items():
            if k not in ("texts", "faces"):
                yield from _shown_cards(v, cards or k in CARD_KEYS)
    elif isinstance(desc, list):
        for v in desc:
            yield from _shown_cards(v, cards)


def _check_faces(desc: dict[str, Any]) -> None:
    """The optional ``faces``: exactly the cards the description shows, each with its rank as
    printed ("10", never "T"), its suit's symbol, its ink (0-3) and its name, a text of ``texts``."""
    if "faces" not in desc:
        return
    assert set(desc["faces"]) == set(_shown_cards(desc))
    for card, f in desc["faces"].items():
        assert set(f) == {"rank", "suit", "ink", "name"} and f["rank"] != "T" and f["ink"] in range(4), (card, f)
        assert f["rank"] == ("10" if card[0] == "T" else card[0]) and f["suit"] in "\u2660\u2665\u2666\u2663"
        assert f["name"] in desc["texts"] and " of " in f["name"], (card, f)


def _check_schema(desc: dict[str, Any], seats: int) -> None:
    assert TOP_KEYS <= set(desc) <= TOP_KEYS | {"texts", "faces", "loose_name"}
    assert isinstance(desc.get("loose_name", ""), str)
    _check_texts(desc)
    _check_faces(desc)
    assert json.loads(json.dumps(desc)) == desc, "plain JSON values"
    assert len(desc["seats"]) == seats and [s["seat"] for s in desc["seats"]] == list(range(seats))
    for s in desc["seats"]:
        assert set(s) == SEAT_KEYS and isinstance(s["count"], int) and all(isinstance(n, str) for n in s["notes"])
        if s["hand"] is not None:
            assert set(s["hand"]) == {"groups", "loose"}
            assert sum(map(len, s["hand"]["groups"])) + len(s["hand"]["loose"]) == s["count"]
    assert sum(1 for s in desc["seats"] if s["to_move"]) == (desc["to_move"] is not None)
    for p in desc["piles"]:
        assert set(p) == {"name", "count", "cards"} and (p["cards"] is None or len(p["cards"]) == p["count"])
    assert desc["table"] is None or all(set(t) == {"label", "owner", "cards", "placed_by"}
                                        and len(t["placed_by"]) == len(t["cards"]) for t in desc["table"])
    for move in desc["legal"]:
        assert {"id", "label", "kind", "cards"} <= set(move) <= {"id", "label", "kind", "cards", *TARGETS}
        assert move["label"] and move["id"]
        for key in ("from_pile", "to_pile"):
            assert key not in move or 0 <= move[key] < len(desc["piles"]), move
        if "from_pile" in move:  # a pile a move takes from: the stock (face down) or a card shown on it
            pile = desc["piles"][move["from_pile"]]
            assert pile["cards"] is None or not move["cards"] or set(move["cards"]) & set(pile["cards"]), move
        if "to_pile" in move:
            assert len(move["cards"]) == 1, move
        if "to_meld" in move:
            assert desc["table"] and 0 <= move["to_meld"] < len(desc["table"]) and len(move["cards"]) == 1, move
    assert desc["last"] is None or set(desc["last"]) == {"seat", "text", "cards"}
    if desc["end"] is not None:
        assert {"text", "points", "seats"} <= set(desc["end"]) <= {"text", "points", "seats", "table", "totals"}
        assert len(desc["end"]["points"]) == seats


@pytest.mark.parametrize(("name", "seats"), [("gin", 2), ("rummy", 2), ("rummy", 5), ("toy3", 3)])
def test_present_gives_the_schema_and_hides_what_each_audience_may_not_see(name: str, seats: int) -> None:
    found = games.get(name)
    presentation = found.presentation
    assert presentation is not None, f"{name} has a presentation"
    game = found.game
    match = game.new_match(game.default_rules(), f"present-{name}".encode(), seats)
    audiences: list[games.Audience] = [*range(seats), games.SPECTATOR]
    checked = ends = 0
    face_up: set[str] = set()
    for _ in range(160):
        decider = match.decider
        if decider is None:
            break
        everything = presentation.present(presentation.match_view(match, games.EVERYONE))
        _check_schema(everything, seats)
        hands = [{c for g in s["hand"]["groups"] for c in g} | set(s["hand"]["loose"]) for s in everything["seats"]]
        assert all(s["hand"] is not None for s in everything["seats"])
        face_up |= {c for p in everything["piles"] for c in p["cards"] or ()}
        face_up |= {c for t in everything["table"] or () for c in t["cards"]}
        for audience in audiences:
            desc = presentation.present(presentation.match_view(match, audience))
            _check_schema(desc, seats)
            for s in desc["seats"]:
                assert (s["hand"] is not None) == (s["seat"] == audience), (audience, s)
                assert s["count"] == len(hands[s["seat"]])
            if desc["end"] is None:
                hidden = set().union(*(h for s, h in enumerate(hands) if s != audience))
                leaked = (hidden - face_up) & set(_cards(desc))
                assert not leaked, f"{name}: {audience!r} is shown {leaked}"
            else:
                ends += 1
            if audience == decider:
                ids = [m["id"] for m in desc["legal"]]
                assert ids and len(set(ids)) == len(ids)
                for i in ids:
                    assert str(presentation.action_from_text(i)) == i
            else:
                assert desc["legal"] == []
            checked += 1
        action = match.substitute(decider)
        assert str(action) in {m["id"] for m in everything["legal"]}, "the legal moves include the bot's choice"
        match.apply(decider, action)
    assert checked >= 40
    assert isinstance(presentation.rules_text(game.default_rules()), str)


@pytest.mark.parametrize(("name", "seats"), [("gin", 2), ("rummy", 3)])
def test_a_deals_end_is_described_after_the_match_dealt_the_next_one(name: str, seats: int) -> None:
    """``deal_end_view`` gives each audience the end of the deal that just ended (the match has
    dealt the next one: ``match_view`` shows that), the same description as the replay's last view
    of the deal; for any other deal it has none."""
    found = games.get(name)
    presentation = found.presentation
    assert presentation is not None
    game = found.game
    match = game.new_match(game.default_rules(), f"ends-{name}".encode(), seats)
    ends = 0
    while ends < 3 and match.decider is not None:
        decider = match.decider
        happened = match.apply(decider, match.substitute(decider))
        over = [h for h in happened if isinstance(h, games.DealOver)]
        if not over:
            continue
        ends += 1
        number = (int(over[0].record["game"]), int(over[0].record["deal"]))
        assert match.is_over or (match.game_number, match.deal_number) != number  # the next deal is dealt
        for audience in [*range(seats), games.SPECTATOR]:
            view = presentation.deal_end_view(match, audience, *number)  # type: ignore[attr-defined]
            desc = presentation.present(view)
            _check_schema(desc, seats)
            paid = over[0].record["points"]  # (Gin's: the winner's; Rummy's: by seat)
            assert desc["end"] is not None and sum(desc["end"]["points"]) == (paid if isinstance(paid, int)
                                                                               else sum(paid))
            for s in desc["seats"]:
                assert (s["hand"] is not None) == (s["seat"] == audience)
            assert presentation.deal_end_view(match, audience, number[0], number[1] + 1) is None  # type: ignore[attr-defined]
    assert ends == 3


def test_a_replays_deal_views_agree_with_the_match() -> None:
    """``deal_views`` rebuilt from a ``deal`` record and the moves gives, move by move, what the
    match in progress showed (for every audience)."""
    for name, seats in (("gin", 2), ("rummy", 4), ("toy3", 3)):
        found = games.get(name)
        presentation = found.presentation
        assert presentation is not None
        game = found.game
        rules = game.default_rules()
        match = game.new_match(rules, f"views-{name}".encode(), seats)
        record = next(h.record for h in match.opening() if isinstance(h, games.DealBegun))
        audiences: list[games.Audience] = [0, games.SPECTATOR, games.EVERYONE]
        live: dict[games.Audience, list[dict[str, Any]]] = {a: [] for a in audiences}
        moves: list[tuple[int, str]] = []
        for _ in range(40):
            decider = match.decider
            if decider is None or match.deal_number != 1 or match.game_number != 1:
                break
            for a in audiences:
                live[a].append(presentation.present(presentation.match_view(match, a)))
            action = match.substitute(decider)
            happened = match.apply(decider, action)
            moves.append((decider, next(h.text for h in happened if isinstance(h, games.Acted))))
            if any(isinstance(h, games.DealOver) for h in happened):
                break
        for a in audiences:
            views = presentation.deal_views(rules, record, moves, None, seats, a)
            assert len(views) == len(moves) + 1
            for k, desc in enumerate(live[a]):
                again = presentation.present(views[k])
                for key in ("seats", "piles", "table", "to_move", "phase", "legal"):
                    got = [{**s, "notes": []} for s in again[key]] if key == "seats" else again[key]
                    want = [{**s, "notes": []} for s in desc[key]] if key == "seats" else desc[key]
                    assert got == want, (name, a, k, key)


FIXTURES = sorted(Path(__file__).parent.glob("fixtures/v0_1/**/*.jsonl"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_replays_of_0_1_still_show(path: Path) -> None:
    view = steps.build(read_replay(path))
    assert view.positions and all(p.shown["seats"] for p in view.positions)
    text = replay_view.render_summary(view)
    assert f"{len(view.deals)} deal" in text and "Result: " in text
    assert "Deal over: " in replay_view.render_position(view, view.deals[0].positions[-1])


def test_a_game_without_a_presentation_is_shown_from_its_records(monkeypatch: pytest.MonkeyPatch) -> None:
    real = games.get("gin")
    monkeypatch.setattr(games, "get", lambda name: games.Registered(real.game, real.wire))
    replay = read_replay(FIXTURES[0])
    view = steps.build(replay)
    actions = [r for r in replay.records if isinstance(r, ActionRecord)]
    assert len(view.positions) == len(view.deals) + len(actions)
    moved = [p for p in view.positions if p.move is not None]
    assert [p.shown["last"]["text"] for p in moved] == [a.action for a in actions]
    text = replay_view.render_position(view, moved[0])
    assert f"Last: {view.players[actions[0].seat]}" in text and actions[0].action in text


def test_a_seats_move_is_told_in_the_presentations_words() -> None:
    """The wires' ``event_words``: an ``Event`` another seat is told, in the words of the
    presentation's last move, made translatable (each text with fields has its template)."""
    from gin_arena.v2.games import gin_pb2, rummy_pb2
    from referee.cardcore.present import Words

    gin, rummy = games.get("gin").wire, games.get("rummy").wire

    def told(wire: Any, event: Any) -> tuple[str, dict[str, list[object]]]:
        say = Words()
        return wire.event_words(event, say), say.texts
    assert told(gin, gin_pb2.Event(kind=gin_pb2.ACTION_KIND_DRAW_STOCK)) == ("draws from the stock", {})
    assert told(gin, gin_pb2.Event(kind=gin_pb2.ACTION_KIND_DISCARD, card="Kh")) == (
        "discards Kh", {"discards Kh": ["discards {card}", {"card": "Kh"}]})
    assert told(gin, gin_pb2.Event(kind=gin_pb2.ACTION_KIND_KNOCK)) == ("knocks, discarding face down", {})
    text, texts = told(gin, gin_pb2.Event(kind=gin_pb2.ACTION_KIND_DRAW_DISCARD, card="5s", reshuffled=True))
    assert text == "takes 5s from the discard pile; the discard pile is shuffled into a new stock"
    assert texts[text] == ["{move}; the discard pile is shuffled into a new stock",
                           {"move": "takes 5s from the discard pile"}]
    taken = rummy_pb2.Event(action=rummy_pb2.Action(take_discard=rummy_pb2.TakeDiscard(card="5h")),
                            taken_cards=["5h", "Qd"])
    assert told(rummy, taken)[0] == "takes 5h Qd from the discards"
    assert told(rummy, rummy_pb2.Event(action=rummy_pb2.Action(draw_stock=rummy_pb2.DrawStock())))[0] == \
        "draws from the stock"
    meld = rummy_pb2.Event(action=rummy_pb2.Action(lay_meld=rummy_pb2.LayMeld(cards=["7c", "7d", "7s"])))
    assert told(rummy, meld)[0] == "lays the meld 7c 7d 7s"
    off = rummy_pb2.Event(action=rummy_pb2.Action(lay_off=rummy_pb2.LayOff(card="8c", meld=2,
                                                                           end=rummy_pb2.LAYOFF_END_HIGH)))
    assert told(rummy, off) == ("lays off 8c on meld #3 (high)", {"lays off 8c on meld #3 (high)": [  # from 1
        "lays off {cards} on meld #{meld} ({end})", {"cards": "8c", "meld": "3", "end": "high"}]})
    again = rummy_pb2.Event(reshuffle=rummy_pb2.Reshuffle(number=1, upcard="9d"))
    assert told(rummy, again)[0] == "the discard pile is shuffled into a new stock; the new upcard is 9d"


@pytest.mark.parametrize("name", ["gin", "rummy"])
def test_the_card_games_give_each_card_its_face_and_each_move_its_pile_or_meld(name: str) -> None:
    """Gin and Rummy describe every card shown by its face (the one look of the table, the live
    view and the replay: "10" never "T", the suit's symbol, a name for screen readers), and say
    which pile a move takes from or puts on and which table meld a lay-off goes on (direct play)."""
    found = games.get(name)
    presentation = found.presentation
    assert presentation is not None
    match = found.game.new_match(found.game.default_rules(), f"faces-{name}".encode(), 2)
    seen: dict[str, set[str]] = {"from_pile": set(), "to_pile": set(), "to_meld": set()}
    tens = 0
    for _ in range(400):
        decider = match.decider
        if decider is None:
            break
        desc = presentation.present(presentation.match_view(match, decider))
        _check_faces(desc)
        assert set(desc["faces"]) == set(_shown_cards(desc)) and desc["faces"], desc["faces"]
        for card, face in desc["faces"].items():
            tens += card[0] == "T"
            assert face["name"] == f"{RANKS[card[0]]} of {SUITS[card[1]]}", (card, face)
        for move in desc["legal"]:
            for key in seen:
                if key in move:
                    seen[key].add(move["kind"])
        match.apply(decider, match.substitute(decider))  # the built-in bot's move
    assert tens, "no ten was shown"
    assert "draw_stock" in seen["from_pile"] and seen["to_pile"] == {"discard"}, seen


RANKS = {"A": "ace", "2": "two", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven", "8": "eight",
         "9": "nine", "T": "ten", "J": "jack", "Q": "queen", "K": "king"}
SUITS = {"s": "spades", "h": "hearts", "d": "diamonds", "c": "clubs"}
