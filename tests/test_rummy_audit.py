"""Rummy's replays: a match of 2, 4 or 6 seats re-runs byte for byte through the referee
(referee/table/resim.py) and passes every check of ``arena audit``; a replay changed anywhere fails
it (a broken chain, or — when the forger recomputes the chain — the re-run or the decks); a
card leaked to a seat is caught by the information check."""

from __future__ import annotations

import copy
import hashlib
import json
import random
from pathlib import Path

import pytest
import trio
import trio.testing

from arena.replays import audit
from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import rummy_pb2
from referee import MatchSpec, resimulate, rummy
from referee.lowlevel import Table
from referee.replays import DealRecord, canonical, read_replay
from tests._tables import Policy, seat_sessions


def _random(request: bot_pb2.ActionRequest) -> common_pb2.Action:
    return random.Random(request.request_id).choice(list(request.legal_actions))


def _illegal_at(after: int) -> Policy:
    asked = [0]

    def policy(request: bot_pb2.ActionRequest) -> common_pb2.Action:
        asked[0] += 1
        if asked[0] == after:
            return common_pb2.Action(rummy=rummy_pb2.Action(lay_meld=rummy_pb2.LayMeld(cards=["As", "Ah"])))
        return _random(request)

    return policy


_MATCHES = {
    "two": (2, "open", "forfeit", False),
    "four": (4, "michigan", "forfeit", False),
    "six": (6, "bozenkill", "forfeit", False),
    "four-substitute": (4, "rummy", "substitute", True),
}


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("rummy-replays")
    out = {}
    for name, (n, preset, policy, faulty) in _MATCHES.items():
        rules = rummy.RummyRules.preset(preset, target=70, stock_exhausted="reshuffle")
        spec = MatchSpec(players=tuple(f"p{s}" for s in range(n)), game="rummy", rules=rules,
                         fault_policy=policy, seed=name.encode(), match_id=name)  # type: ignore[arg-type]
        policies = [_illegal_at(5) if faulty and s == 1 else _random for s in range(n)]

        async def main(spec: MatchSpec = spec, policies: list[Policy] = policies) -> Table:
            table = Table(spec, folder, lambda t: None, quiet=True)
            seat_sessions(table, policies)
            await table.run()
            await table.finished.wait()
            return table

        table = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
        assert table.report is not None and table.report.replay_path
        out[name] = Path(table.report.replay_path)
    return out


@pytest.mark.parametrize("name", list(_MATCHES))
def test_a_rummy_replay_reruns_byte_for_byte_and_audits(replays: dict[str, Path], name: str) -> None:
    path = replays[name]
    replay = read_replay(path)
    assert replay.header.game == "rummy" and replay.header.seats == _MATCHES[name][0]
    assert resimulate(replay).lines == path.read_bytes().splitlines()
    a = audit.audit_file(path)
    assert a.ok, a.discrepancy
    assert a.passed == list(audit.CHECKS) and a.cards_checked > 100 and a.deals >= 1
    if name == "four-substitute":
        assert any(r.KIND == "fault" for r in replay.records) and replay.result is not None
        assert replay.result.substituted_seats == (1,)


def _rechained(lines: list[bytes], i: int, rec: dict[str, object]) -> list[bytes]:
    out = list(lines)
    out[i] = canonical(rec)
    prev = hashlib.sha256(out[i]).hexdigest()
    for j in range(i + 1, len(out)):
        r = json.loads(out[j])
        r["prev"] = prev
        out[j] = canonical(r)
        prev = hashlib.sha256(out[j]).hexdigest()
    return out


def test_a_changed_byte_breaks_the_chain(replays: dict[str, Path]) -> None:
    lines = audit.split_lines(replays["four"].read_bytes())
    rec = json.loads(lines[5])
    rec["extra"] = 1
    changed = list(lines)
    changed[5] = canonical(rec)
    a = audit.audit_lines(changed)
    assert not a.ok and a.discrepancy is not None and a.discrepancy.check == "chain"


@pytest.mark.parametrize(("kind", "check"), [("action", "rerun"), ("deal", "decks"), ("deal_end", "rerun")])
def test_a_forger_who_recomputes_the_chain_is_caught(replays: dict[str, Path], kind: str, check: str) -> None:
    lines = audit.split_lines(replays["six"].read_bytes())
    i = next(j for j, line in enumerate(lines) if json.loads(line)["type"] == kind)
    rec = json.loads(lines[i])
    if kind == "action":  # the first move answered differently
        rec["action"] = "draw_stock" if rec["action"] != "draw_stock" else "take_discard " + rec.get("card", "As")
    elif kind == "deal":  # two cards of the deck swapped
        rec["deck"][0], rec["deck"][1] = rec["deck"][1], rec["deck"][0]
    else:  # the deal's points changed
        rec["points"] = [p + 1 for p in rec["points"]]
    a = audit.audit_lines(_rechained(lines, i, rec))
    assert not a.ok and a.discrepancy is not None and a.discrepancy.check == check, a.discrepancy


def test_a_card_leaked_to_a_seat_is_caught(replays: dict[str, Path]) -> None:
    replay = read_replay(replays["four"])
    msgs = [list(m) for m in resimulate(replay).seat_messages]
    assert audit.check_information(replay, msgs) > 0
    deal = next(r for r in replay.records if isinstance(r, DealRecord))
    seat = (deal.dealer + 1) % 4  # it moves first; the next seat's first card is hidden from it
    hidden = deal.deck[1]
    i = next(j for j, m in enumerate(msgs[seat]) if m.WhichOneof("kind") == "action_request")
    leaked = copy.deepcopy(msgs)
    leaked[seat][i].action_request.rummy.hand.append(hidden)
    with pytest.raises(audit._Stop) as e:
        audit.check_information(replay, leaked)
    d = e.value.discrepancy
    assert d.check == "information" and "rummy.hand[" in d.field and d.found == hidden
