"""``arena audit`` reads every game through its plugin (issue 30): a plugin game's content, packed
in ``google.protobuf.Any`` (the envelope's ``other``), is unpacked and searched for cards as the
game says (``referee.games.KnowsCards``: ``card_fields``, ``card_text``, ``known_cards``). A
variant of the tests' plugin game (``toy3``) whose wire shows the top of the stock to every seat
fails the audit; a check the audit cannot make for a game is reported NOT CHECKED — never ✓,
never "0 cards checked" beside ✓ — and fails the audit unless ``--allow-unchecked``.

Each match is played by a real referee with gRPC bot sessions; the variants are registered in
this process (``referee.games.register``), where the audit runs too."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import any_pb2
from toy3_game import toy3_pb2
from toy3_game.engine import ToyGame, ToyMatch
from toy3_game.present import ToyPresentation
from toy3_game.wire import ToyWire

import referee
from arena.cli import main as arena_main
from arena.replays import audit
from gin_arena.v2 import bot_pb2, common_pb2
from referee import games
from tests._toy3_match import SEATS
from tests._toy3_match import play as _play


def _packed(msg: Any, type_url: str | None = None) -> any_pb2.Any:
    out = any_pb2.Any()
    out.Pack(msg)
    if type_url is not None:
        out.type_url = type_url
    return out


class LeakyWire(ToyWire):
    """toy3's wire, but each seat's ``DealStarted`` shows the top of the stock (a card no seat may
    know), packed as a ``toy3.v1.Played``."""

    def deal_started(self, match: games.GameMatch, seat: int, cache: Any) -> bot_pb2.DealStarted:
        assert isinstance(match, ToyMatch)
        deck, _key = ToyGame().deal_deck(match.seed, match.game, 1)
        top = int(deck[2 * match.seats])
        return bot_pb2.DealStarted(game_number=match.game_number, deal_number=1,
                                   other=_packed(toy3_pb2.Played(card=top)))


class OpaqueWire(ToyWire):
    """toy3's wire, but every seat is told each card played in a message type that no module
    registered (``toy3.v1.Secret``): the audit cannot read it."""

    def tell(self, match: games.GameMatch, happening: games.Happening, seat: int, think_ms: int,
             cache: Any) -> tuple[str, Any] | None:
        told = super().tell(match, happening, seat, think_ms, cache)
        if told is not None and told[0] == "event":
            event: common_pb2.Event = told[1]
            event.other.CopyFrom(_packed(toy3_pb2.Played(card=int(happening.text)),  # type: ignore[union-attr]
                                         "type.googleapis.com/toy3.v1.Secret"))
        return told


class NamedToy(ToyGame):
    """toy3's engine under another name (each variant is a game of its own)."""

    def __init__(self, name: str, card_fields: Collection[str] = ("card",)) -> None:
        self.name = name
        self.card_fields = frozenset(card_fields)


def _variant(name: str, wire: ToyWire, card_fields: Collection[str] = ("card",),
             knows: bool = True) -> Callable[[], games.Registered]:
    """A variant of toy3 under ``name`` (declaring ``KnowsCards`` unless not ``knows``)."""
    def load() -> games.Registered:
        game = NamedToy(name, card_fields)
        return games.Registered(game, wire, ToyPresentation(),
                                capabilities=games.Capabilities(knows_cards=game if knows else None))
    return load


VARIANTS = {
    "toy3-leaky": _variant("toy3-leaky", LeakyWire()),
    "toy3-blind": _variant("toy3-blind", ToyWire(), card_fields=()),
    "toy3-opaque": _variant("toy3-opaque", OpaqueWire()),
    "toy3-unknowing": _variant("toy3-unknowing", ToyWire(), knows=False),
}
"""The variants, registered in this process only while a test plays and audits one."""


@contextmanager
def _registered(name: str) -> Iterator[str]:
    games.register(name, VARIANTS[name])
    try:
        yield name
    finally:
        games.unregister(name)


def _audit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = arena_main(["audit", *args])
    return status, capsys.readouterr().out


def test_the_plugin_games_cards_are_read_from_its_own_messages(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """toy3's cards travel only as numbers in its own messages packed in ``other``: the audit
    finds them there (each seat's hand in its requests, every card played in the events)."""
    replay = _play("toy3", tmp_path)
    a = audit.audit_file(replay)
    assert a.ok and a.passed == list(audit.CHECKS) and not a.unchecked, a.discrepancy and a.discrepancy.text()
    # each of the 6 requests offers the seat's cards (2, then 1): 9; each of the 6 plays is told to
    # the 3 seats: 18
    assert a.cards_checked == 9 + 18
    status, out = _audit(capsys, str(replay))
    assert status == 0 and "information ✓" in out and "27 cards checked" in out, out


def test_a_wire_that_shows_the_top_of_the_stock_fails_the_audit(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    with _registered("toy3-leaky") as game:
        replay = _play(game, tmp_path)
        deal = next(r for r in referee.read_replay(replay).records if isinstance(r, referee.replays.DealRecord))
        top = deal.deck[2 * SEATS]
        status, out = _audit(capsys, str(replay))
        assert status == 1, out
        assert "FAIL" in out and "information ✓" not in out, out
        where = "field seat 0 message #1 (deal_started) deal_started.other<toy3.v1.Played>.card"
        assert f"information: record seq 1, {where}" in out, out
        assert f"found '{top}'" in out and f"{top} is hidden from seat 0" in out, out
        # --allow-unchecked does not excuse a leak
        status, out = _audit(capsys, str(replay), "--allow-unchecked")
        assert status == 1 and "FAIL" in out, out


@pytest.mark.parametrize(("game", "why"), [
    ("toy3-blind", "no card found in the 33 messages sent to the seats: the game 'toy3-blind' names no field"),
    ("toy3-opaque", "a message holds a 'toy3.v1.Secret' packed in google.protobuf.Any"),
    ("toy3-unknowing", "the game 'toy3-unknowing' does not say what each seat may know (it declares no "
                "referee.games.Capabilities.knows_cards"),
])
def test_a_check_that_cannot_run_is_not_checked_and_fails_closed(
        game: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A game whose cards the audit cannot find (no card field named), whose content it cannot
    decode, or that does not say what a seat may know: the information check is NOT CHECKED —
    never ✓, never "0 cards checked" — and the audit exits 1 unless ``--allow-unchecked``."""
    with _registered(game):
        _check_not_checked(game, why, _play(game, tmp_path), capsys)


def _check_not_checked(game: str, why: str, replay: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = audit.audit_file(replay)
    assert not a.ok and a.discrepancy is None and "information" not in a.passed
    assert list(a.unchecked) == ["information"] and why in a.unchecked["information"], a.unchecked
    assert a.passed == [c for c in audit.CHECKS if c != "information"]
    status, out = _audit(capsys, str(replay))
    assert status == 1, out
    assert "information ✓" not in out and "0 cards checked" not in out and "cards not checked" in out, out
    assert "NOT CHECKED" in out and f"not checked: information: {why}" in out, out
    assert "1 FAILED; 1 NOT fully CHECKED (fails the audit unless --allow-unchecked)" in out, out
    status, out = _audit(capsys, str(replay), "--allow-unchecked")
    assert status == 0, out
    assert "OK, NOT CHECKED" in out and "information ✗ NOT CHECKED" in out and "information ✓" not in out, out
    assert "all checks made passed; 1 NOT fully CHECKED (allowed: --allow-unchecked)" in out, out
    status, out = _audit(capsys, str(replay), "--json")
    assert status == 1 and '"unchecked": {\n        "information"' in out, out


def test_no_card_read_never_prints_beside_a_tick() -> None:
    """The report itself never puts "0 cards checked" beside "information ✓": an audit that
    claims the information check passed having read no card is shown NOT CHECKED."""
    a = audit.ReplayAudit(path="r.jsonl", ok=True, passed=list(audit.CHECKS), cards_checked=0, match_id="m",
                          players=["a", "b"])
    out = audit.render([a], [])
    assert "information ✓" not in out and "0 cards checked" not in out, out
    assert "information ✗ NOT CHECKED" in out and "not checked: information: no card was read" in out, out
    a.cards_checked = 5
    out = audit.render([a], [])
    assert "information ✓" in out and "5 cards checked" in out and "NOT CHECKED" not in out, out
