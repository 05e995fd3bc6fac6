"""``arena audit``: real replays pass every check; any single changed field fails it.

A small run of matches is played through the referee's own Table in-process on a mock clock
(normal ends, time forfeits, a substitution with mixed nonces and a time bank, a disconnect, a
crash, an operator abort, a reshuffle with a dead hand, Oklahoma), plus one match over real gRPC
streams. Then:

* the audit passes on each, on the run folder, and agrees with the run's ``results.json``;
* ≥ 200 random single-field changes (JSON kept valid, nothing recomputed) all fail the audit;
* the same kind of changes with the hash chain recomputed (a forger) are caught by the re-run,
  except for the few fields nothing depends on (``audit.CHAIN_ONLY``), which the final hash anchors;
* the information check catches a card leaked into a seat's message.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

import referee
from arena.cli import main as arena_main
from arena.replays import audit
from gin_arena.v2 import bot_pb2, common_pb2
from gin_arena.v2.games import gin_pb2
from referee import MatchReport, MatchSpec, TimeControl, resimulate
from referee.gin import DECK, RuleSet
from referee.lowlevel import Table
from referee.replays import (
    GENESIS,
    ActionRecord,
    DealEndRecord,
    DealRecord,
    FaultRecord,
    Replay,
    canonical,
    read_replay,
)
from referee.table.seats import SeatLink
from tests._wait import HANG_S

# ----------------------------------------------------------------------------------------------
# a small run of matches, in-process on a mock clock
# ----------------------------------------------------------------------------------------------
Answer = tuple[common_pb2.Action | None, int] | str
"""What a seat does with a request: (action or None for silence, think time in µs), or
``"disconnect"`` / ``"crash"`` / ``"cancel"`` (the operator aborts the match)."""
Behaviour = Callable[[int, bot_pb2.ActionRequest, random.Random], Answer]
"""(the seat's request count from 1, the request, a random source) → an answer."""

_VALUE = {r: min(i + 1, 10) for i, r in enumerate("A23456789TJQK")}


def greedy_action(req: bot_pb2.ActionRequest, *, knock: bool = True) -> common_pb2.Action:
    """Short deals: knock or go gin as soon as allowed, pass the upcard, draw from the stock,
    discard the highest deadwood card."""
    legal = list(req.legal_actions)
    ends = [a for a in legal if a.gin.kind in (gin_pb2.ACTION_KIND_KNOCK, gin_pb2.ACTION_KIND_BIG_GIN)]
    if ends and knock:
        return ends[0]
    for kind in (gin_pb2.ACTION_KIND_PASS, gin_pb2.ACTION_KIND_DRAW_STOCK):
        for a in legal:
            if a.gin.kind == kind:
                return a
    loose = set(req.gin.my_deadwood_cards)
    discards = [a for a in legal if a.gin.kind == gin_pb2.ACTION_KIND_DISCARD]
    pick = [a for a in discards if a.gin.card in loose] or discards
    return max(pick, key=lambda a: (_VALUE[a.gin.card[0]], a.gin.card)) if pick else legal[0]


def greedy(n: int, req: bot_pb2.ActionRequest, rng: random.Random) -> Answer:
    return greedy_action(req), rng.randint(200, 40_000)


def late_at(k: int, late_us: int) -> Behaviour:
    def behave(n: int, req: bot_pb2.ActionRequest, rng: random.Random) -> Answer:
        return (greedy_action(req), late_us) if n == k else greedy(n, req, rng)
    return behave


def silent_at(k: int) -> Behaviour:
    def behave(n: int, req: bot_pb2.ActionRequest, rng: random.Random) -> Answer:
        return (None, 0) if n == k else greedy(n, req, rng)
    return behave


def illegal_at(k: int) -> Behaviour:
    def behave(n: int, req: bot_pb2.ActionRequest, rng: random.Random) -> Answer:
        if n == k:
            hand = set(req.gin.hand)
            card = next(str(c) for c in DECK if str(c) not in hand)
            return common_pb2.Action(gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_DISCARD, card=card)), 3_000
        return greedy(n, req, rng)
    return behave


def event_at(k: int, what: str) -> Behaviour:
    def behave(n: int, req: bot_pb2.ActionRequest, rng: random.Random) -> Answer:
        return what if n == k else greedy(n, req, rng)
    return behave


def no_knock_in_first_deal(n: int, req: bot_pb2.ActionRequest, rng: random.Random) -> Answer:
    return greedy_action(req, knock=req.gin.deal_number > 1 or req.gin.game_number > 1), rng.randint(100, 5000)


@dataclass
class _Session:
    bot_name: str
    nonce: bytes
    behave: Behaviour
    rng: random.Random
    table: Table
    link: SeatLink
    nursery: trio.Nursery
    skip_event_messages: bool = False
    requests: int = 0
    told: list[bot_pb2.RefereeMessage] = field(default_factory=list)

    def send(self, data: bytes, on_written: Callable[[float], None] | None = None) -> None:
        msg = bot_pb2.RefereeMessage.FromString(data)
        self.told.append(msg)
        if msg.WhichOneof("kind") != "action_request":
            return
        self.requests += 1
        answer = self.behave(self.requests, msg.action_request, self.rng)
        if answer == "disconnect":
            self.link.detach(self, "test: disconnected")
        elif answer == "crash":
            self.link.crashed("test: exit code -9")
        elif answer == "cancel":
            self.table.cancel("the operator stopped the run")
        elif isinstance(answer, tuple) and answer[0] is not None:
            self.nursery.start_soon(self._answer, msg.match_id, msg.action_request.request_id, answer[0], answer[1])

    async def _answer(self, match_id: str, rid: int, action: common_pb2.Action, think_us: int) -> None:
        await trio.sleep(think_us / 1_000_000)
        self.link.deliver(bot_pb2.ActionResponse(match_id=match_id, request_id=rid, action=action), trio.current_time())

    def close(self, code: str, detail: str) -> None:
        pass


def play_match(spec: MatchSpec, behaviours: tuple[Behaviour, Behaviour], replay_dir: Path,
               seed: int = 0, lean: tuple[bool, bool] = (False, False)) -> MatchReport:
    """Play one match through a real referee Table, in-process, on a mock clock; write its replay.
    A ``lean`` seat asks for no event messages (``Hello.skip_event_messages``)."""

    async def main() -> MatchReport:
        table = Table(spec, replay_dir, lambda t: None, quiet=True)
        async with trio.open_nursery() as nursery:
            for link, behave in zip(table.links, behaviours, strict=True):
                rng = random.Random(seed * 10 + link.seat)
                s = _Session(f"{link.name}-v1", bytes([link.seat + 1]) * 8, behave, rng, table, link, nursery,
                             lean[link.seat])
                assert link.attach(s) is None
            report = await table.run()
            nursery.cancel_scope.cancel()
        return report

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


ST = TimeControl.parse("st=1 timemargin=50")
SHORT = RuleSet.classic(target=30)


def small_run() -> list[tuple[str, MatchSpec, tuple[Behaviour, Behaviour]]]:
    """The matches of the test run: (name, spec, behaviours)."""
    def spec(mid: str, **kw: Any) -> MatchSpec:
        base: dict[str, Any] = {"players": ("alice", "bob"), "rules": SHORT, "time_control": ST,
                                "seed": hashlib.sha256(mid.encode()).digest(), "match_id": mid,
                                "reconnect_grace_ms": 300}
        base.update(kw)
        return MatchSpec(**base)

    return [
        ("normal", spec("run-normal"), (greedy, greedy)),
        ("late", spec("run-late", time_control=TimeControl.parse("st=0.5 timemargin=20")),
         (greedy, late_at(5, 700_000))),
        ("silent", spec("run-silent"), (silent_at(3), greedy)),
        ("substitute", spec("run-substitute", fault_policy="substitute", mix_nonces=True, players=("bob", "alice"),
                            rules=RuleSet.classic(target=15, games=2), time_control=TimeControl.parse("tc=2+0.1")),
         (illegal_at(4), greedy)),
        ("sub-late", spec("run-sub-late", fault_policy="substitute", rules=RuleSet.classic(target=15),
                          time_control=TimeControl.parse("tc=1+0.05")),
         (greedy, late_at(3, 1_500_000))),
        # A time forfeit that hands the built-in bot only that decision: the seat plays on.
        ("sub-move", spec("run-sub-move", fault_policy="substitute", substitute_time_faults="move",
                          rules=RuleSet.classic(target=15), time_control=TimeControl.parse("tc=1+0.05")),
         (greedy, late_at(3, 1_500_000))),
        ("disconnect", spec("run-disconnect", fault_policy="substitute", rules=RuleSet.classic(target=10)),
         (greedy, event_at(3, "disconnect"))),
        ("crash", spec("run-crash"), (event_at(5, "crash"), greedy)),
        ("aborted", spec("run-aborted"), (event_at(6, "cancel"), greedy)),
        ("stalled", spec("run-stalled", max_actions_per_deal=12), (no_knock_in_first_deal, no_knock_in_first_deal)),
        ("reshuffle", spec("run-reshuffle", rules=RuleSet.classic(target=10, stock_exhausted="reshuffle")),
         (no_knock_in_first_deal, no_knock_in_first_deal)),
        ("dead", spec("run-dead", rules=RuleSet.classic(target=10)), (no_knock_in_first_deal, no_knock_in_first_deal)),
        ("oklahoma", spec("run-oklahoma", rules=RuleSet.oklahoma(target=15)), (greedy, greedy)),
        # Seats that ask for no event messages (the "lean-" matches: see LEAN).
        ("lean-normal", spec("run-lean-normal"), (greedy, greedy)),
        ("lean-substitute", spec("run-lean-substitute", fault_policy="substitute", rules=RuleSet.classic(target=15),
                                 time_control=TimeControl.parse("tc=2+0.1")), (illegal_at(4), greedy)),
        ("lean-silent", spec("run-lean-silent", rules=RuleSet.classic(target=10, stock_exhausted="reshuffle")),
         (no_knock_in_first_deal, silent_at(5))),
    ]


LEAN = {"lean-normal": (True, True), "lean-substitute": (True, False), "lean-silent": (False, True)}


@dataclass
class RunFixture:
    folder: Path
    replays: dict[str, Path]
    reports: dict[str, MatchReport]


def make_run(folder: Path) -> RunFixture:
    """The small run, written like an arena run folder: replays/ and results.json."""
    replays: dict[str, Path] = {}
    reports: dict[str, MatchReport] = {}
    for i, (name, spec, behaviours) in enumerate(small_run()):
        report = play_match(spec, behaviours, folder / "replays", seed=i, lean=LEAN.get(name, (False, False)))
        replays[name] = Path(report.replay_path)
        reports[name] = report
    games = [{"idx": i, "match_id": r.match_id, "players": list(r.players),
              "winner": None if r.winner is None else r.players[r.winner], "winner_seat": r.winner,
              "termination": r.termination, "points": list(r.outcome.totals) if r.outcome else [0, 0],
              "replay_path": r.replay_path, "replay_hash": r.replay_hash}
             for i, r in enumerate(reports.values())]
    (folder / "results.json").write_text(json.dumps({"bots": ["alice", "bob"], "games": games}, indent=2))
    return RunFixture(folder, replays, reports)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunFixture:
    return make_run(tmp_path_factory.mktemp("run"))


# ----------------------------------------------------------------------------------------------
# real replays pass
# ----------------------------------------------------------------------------------------------
def test_the_small_run_covers_what_it_should(run: RunFixture) -> None:
    terms = {n: r.termination for n, r in run.reports.items()}
    assert terms["normal"] == terms["oklahoma"] == "normal"
    assert terms["late"] == terms["silent"] == "time_forfeit"
    assert terms["crash"] == "crashed" and terms["aborted"] == terms["stalled"] == "aborted"
    assert "stalling" in run.reports["stalled"].detail
    assert run.reports["substitute"].substituted_seats == (0,) and terms["substitute"] == "normal"
    assert run.reports["sub-late"].substituted_seats == (1,)
    assert run.reports["disconnect"].substituted_seats == (1,)
    assert run.reports["sub-move"].substituted_seats == (1,) and terms["sub-move"] == "normal"
    moved = read_replay(run.replays["sub-move"])
    assert [(f.termination, f.scope) for f in moved.records if isinstance(f, FaultRecord)] == [("time_forfeit", "move")]
    seat1 = [r.substitute for r in moved.records if isinstance(r, ActionRecord) and r.seat == 1]
    assert seat1.count(True) == 1 and seat1.index(True) < len(seat1) - 1  # one decision, then its own again
    kinds = {r.KIND for p in run.replays.values() for r in read_replay(p).records}
    assert kinds == set(audit.RECORD_TYPES), kinds
    dead = [r for r in read_replay(run.replays["reshuffle"]).records
            if isinstance(r, DealEndRecord) and r.content.kind == "dead"]
    assert dead, "the reshuffle match has a dead hand after its reshuffle"
    for name, seats in LEAN.items():
        assert read_replay(run.replays[name]).header.event_messages == tuple(not lean for lean in seats)
    assert terms["lean-normal"] == "normal" and terms["lean-silent"] == "time_forfeit"
    assert run.reports["lean-substitute"].substituted_seats == (0,)


def test_audit_passes_on_every_replay(run: RunFixture) -> None:
    for name, path in run.replays.items():
        a = audit.audit_file(path, expect_hash=run.reports[name].replay_hash)
        assert a.ok, f"{name}: {a.discrepancy and a.discrepancy.text()}"
        assert a.passed == list(audit.CHECKS)
        assert a.final_hash == run.reports[name].replay_hash
        assert a.cards_checked > 0 or name == "silent"
    notes = audit.audit_file(run.replays["disconnect"]).notes
    assert any("disconnected" in n for n in notes), "the disconnected seat's partial story is explained"


def test_audit_command_on_the_run_folder(run: RunFixture, capsys: pytest.CaptureFixture[str]) -> None:
    assert arena_main(["audit", str(run.folder)]) == 0
    out = capsys.readouterr().out
    assert f"Results file {run.folder / 'results.json'}: {len(run.replays)} listed replay hash(es) checked" in out
    assert f"Audited {len(run.replays)} matches: {len(run.replays)} passed, all checks passed" in out
    for r in run.reports.values():
        assert r.replay_hash in out
    assert arena_main(["audit", str(run.replays["late"]), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and doc["summary"]["matches"] == 1 and doc["replays"][0]["passed"] == list(audit.CHECKS)
    assert doc["summary"]["final_hashes"] == {str(run.replays["late"]): run.reports["late"].replay_hash}


def test_audit_command_checks_the_results_file_and_the_expected_hash(
    run: RunFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "copy"
    (folder / "replays").mkdir(parents=True)
    names = ("silent", "late", "crash")
    for n in names:
        shutil.copy(run.replays[n], folder / "replays")
    results = json.loads((run.folder / "results.json").read_text())
    results["games"] = [g for g in results["games"] if g["match_id"] in {f"run-{n}" for n in names}]
    for g in results["games"]:
        g["replay_path"] = f"replays/{Path(g['replay_path']).name}"  # relative paths are found too
    results["games"][1]["replay_hash"] = "0" * 64
    (folder / "results.json").write_text(json.dumps(results))
    assert arena_main(["audit", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "anchor: record seq" in out and "field (final hash): expected '" + "0" * 64 in out
    results["games"][1]["replay_hash"] = run.reports["late"].replay_hash
    results["games"].append({"match_id": "gone", "replay_path": "replays/gone.jsonl", "replay_hash": "ab" * 32})
    (folder / "results.json").write_text(json.dumps(results))
    assert arena_main(["audit", str(folder), "-q", "-j", "2"]) == 1
    assert "not in the run folder" in capsys.readouterr().out
    one = run.replays["normal"]
    assert arena_main(["audit", str(one), "--expect-hash", run.reports["normal"].replay_hash]) == 0
    assert arena_main(["audit", str(one), "--expect-hash", "ab" * 32]) == 1
    capsys.readouterr()
    assert arena_main(["audit", str(tmp_path / "nothing-here")]) == 2


def test_a_match_over_real_grpc_streams_passes(tmp_path: Path) -> None:
    from tests._bots import Client

    spec = MatchSpec(players=("alice", "bob"), rules=RuleSet.classic(target=20),
                     time_control=TimeControl(per_move_ms=2000), match_id="grpc-1")

    async def main() -> MatchReport:
        async with referee.open_referee(replay_dir=tmp_path) as ref:
            table = ref.create_match(spec)
            clients = [Client(ref.address, link.token, name=f"{link.name}-bot", nonce=b"n" * (link.seat + 1))
                       for link in table.links]

            async def decide(msg: bot_pb2.RefereeMessage, _c: Client) -> common_pb2.Action | None:
                return greedy_action(msg.action_request)

            async with trio.open_nursery() as nursery:
                for c in clients:
                    nursery.start_soon(referee.aio, c.play(decide))
                await table.finished.wait()
                nursery.cancel_scope.deadline = trio.current_time() + HANG_S  # the clients end with their streams
            assert table.report is not None
            return table.report

    report = referee.run(main)
    assert report.termination == "normal"
    a = audit.audit_file(Path(report.replay_path), expect_hash=report.replay_hash)
    assert a.ok, a.discrepancy and a.discrepancy.text()


# ----------------------------------------------------------------------------------------------
# single-field changes
# ----------------------------------------------------------------------------------------------
_HEX = "0123456789abcdef"


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict) and value:
        return [p for k, v in value.items() for p in _leaves(v, (*path, k))]
    if isinstance(value, list) and value:
        return [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))]
    return [path]


def _get(rec: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        rec = rec[p]
    return rec


def _set(rec: Any, path: tuple[Any, ...], value: Any) -> None:
    for p in path[:-1]:
        rec = rec[p]
    rec[path[-1]] = value


def _changed(value: Any, rng: random.Random) -> Any:
    """A different value of the same JSON type."""
    cards = [str(c) for c in DECK]
    if isinstance(value, bool):
        return not value
    if value is None:
        return rng.choice([0, "As"])
    if isinstance(value, int):
        return value + rng.choice([-7, -1, 1, 2, 1000])
    if isinstance(value, str):
        if value in cards:
            return rng.choice([c for c in cards if c != value])
        words = value.split()
        if len(words) == 2 and words[1] in cards:
            return rng.choice([f"{words[0]} {c}" for c in cards if c != words[1]]
                              + [w for w in ("discard " + words[1], "knock " + words[1]) if w != value])
        if value in ("pass", "take_upcard", "draw_stock", "draw_discard", "big_gin"):
            kinds = ("pass", "take_upcard", "draw_stock", "draw_discard", "big_gin")
            return rng.choice([k for k in kinds if k != value])
        if value and all(ch in _HEX for ch in value):
            i = rng.randrange(len(value))
            return value[:i] + rng.choice([h for h in _HEX if h != value[i]]) + value[i + 1:]
        return value + "x" if rng.random() < 0.5 else value[:-1] or "x"
    if isinstance(value, list):  # an empty list
        return [rng.choice(cards)]
    if isinstance(value, dict):
        return {"x": 1}
    return 0.5


def _mutate(lines: list[bytes], rng: random.Random, *, rechain: bool,
            skip: tuple[str, ...] = ()) -> tuple[list[bytes], int, tuple[Any, ...]]:
    """Change one field of one record; ``rechain`` recomputes every seq/prev hash after it."""
    records = [json.loads(x) for x in lines]
    while True:
        i = rng.randrange(len(records))
        paths = [p for p in _leaves(records[i]) if p[0] not in skip]
        if paths:
            break
    path = rng.choice(paths)
    rec = copy.deepcopy(records[i])
    old = _get(rec, path)
    new = _changed(old, rng)
    assert json.dumps(new) != json.dumps(old)
    _set(rec, path, new)
    records[i] = rec
    out = list(lines)
    out[i] = canonical(rec)
    if rechain:
        prev = hashlib.sha256(out[i]).hexdigest()
        for j in range(i + 1, len(records)):
            r = records[j]
            r["prev"] = prev
            out[j] = canonical(r)
            prev = hashlib.sha256(out[j]).hexdigest()
    return out, i, path


def _by_records(run: RunFixture) -> list[tuple[str, list[bytes]]]:
    return [(n, audit.split_lines(p.read_bytes())) for n, p in run.replays.items()]


def test_every_single_field_change_fails_the_audit(run: RunFixture) -> None:
    rng = random.Random(2024)
    replays = _by_records(run)
    checks: dict[str, int] = {}
    for trial in range(240):
        name, lines = replays[trial % len(replays)]
        changed, i, path = _mutate(lines, rng, rechain=False)
        a = audit.audit_lines(changed, path=name, expect_hash=run.reports[name].replay_hash)
        assert not a.ok, f"{name}: changing record {i} field {path} went unnoticed"
        assert a.discrepancy is not None
        checks[a.discrepancy.check] = checks.get(a.discrepancy.check, 0) + 1
        if i < len(lines) - 1:  # the next record's prev no longer matches
            assert a.discrepancy.check == "chain" and a.discrepancy.seq in (i, i + 1), a.discrepancy.text()
    assert checks.get("chain", 0) > 150, checks


def _chain_only(records: list[dict[str, Any]], i: int, path: tuple[Any, ...]) -> bool:
    """Fields the re-run takes as given (``audit.CHAIN_ONLY``)."""
    rec, header, result = records[i], records[0], records[-1]
    kind, name = rec["type"], path[0]
    return (
        (kind == "header" and name in ("bots", "connect_timeout_ms", "max_actions_per_deal"))
        or (kind == "result" and name == "nonces" and not header["mix_nonces"])
        or (kind == "result" and name == "detail" and result["termination"] == "aborted")
        or (kind == "fault" and name == "used_us" and rec["termination"] == "time_forfeit")
    )


def test_a_forger_who_recomputes_the_chain_is_caught_by_the_rerun(run: RunFixture) -> None:
    rng = random.Random(7)
    replays = [(n, x) for n, x in _by_records(run) if n not in ("normal", "oklahoma", "reshuffle")]  # shorter ones
    caught: dict[str, int] = {}
    escaped: list[str] = []
    for trial in range(45):
        name, lines = replays[trial % len(replays)]
        changed, i, path = _mutate(lines, rng, rechain=True, skip=("seq", "prev"))
        records = [json.loads(x) for x in lines]
        a = audit.audit_lines(changed, path=name)
        if a.ok:
            assert _chain_only(records, i, path), f"{name}: record {i} ({records[i]['type']}) field {path} escaped"
            escaped.append(f"{records[i]['type']}.{path[0]}")
            # ... but not the published final hash
            assert not audit.audit_lines(changed, expect_hash=run.reports[name].replay_hash).ok
        else:
            assert a.discrepancy is not None, name
            # the chain itself is whole: only the record types, format and version are checked with it
            assert a.discrepancy.check != "chain" or a.discrepancy.field in ("format", "version", "type"), \
                a.discrepancy.text()
            caught[a.discrepancy.check] = caught.get(a.discrepancy.check, 0) + 1
    assert caught.get("rerun", 0) > 20, caught


@pytest.mark.parametrize(("record_type", "path", "value", "check", "field_name"), [
    ("deal", ("deck", 13), None, "decks", "deck[13]"),
    ("header", ("seed_commitment",), "ab" * 32, "commitment", "seed_commitment"),
    ("result", ("seed",), "00", "commitment", "seed_commitment"),
    ("action", ("card",), None, "rerun", "action.card"),
    ("deal_end", ("points",), 99, "rerun", "deal_end.points"),
    ("result", ("winner",), 1, "rerun", "result.winner"),
    ("action", ("think_us",), 2_000_000, "rerun", "think_us"),
    ("header", ("players", 0), "mallory", "rerun", "result.message_digests[0]"),
])
def test_forged_fields_are_named(run: RunFixture, record_type: str, path: tuple[Any, ...], value: Any,
                                 check: str, field_name: str) -> None:
    lines = audit.split_lines(run.replays["normal"].read_bytes())
    records = [json.loads(x) for x in lines]
    i = next(j for j, r in enumerate(records) if r["type"] == record_type
             and (record_type != "action" or (r["card"] is not None and r["request_id"])))
    rec = records[i]
    if value is None:
        old = _get(rec, path)
        value = "2c" if old != "2c" else "3c"
    if record_type == "result" and path == ("winner",):
        value = 1 - rec["winner"]
    _set(rec, path, value)
    prev = GENESIS
    out = []
    for r in records:
        r["prev"] = prev
        out.append(canonical(r))
        prev = hashlib.sha256(out[-1]).hexdigest()
    a = audit.audit_lines(out)
    assert a.discrepancy is not None, f"{record_type}.{path} went unnoticed"
    d = a.discrepancy
    assert d.check == check and d.field == field_name, d.text()
    if field_name == "think_us":
        assert d.seq == i and "time forfeit" in d.message


def test_the_clocks_are_checked_against_a_time_bank(run: RunFixture) -> None:
    replay = read_replay(run.replays["substitute"])
    records = list(replay.records)
    i = next(j for j, r in enumerate(records) if isinstance(r, ActionRecord) and r.request_id and j > 20)
    rec = records[i]
    assert isinstance(rec, ActionRecord)
    clocks = list(rec.clocks)
    clocks[rec.seat] += 1
    records[i] = dataclasses.replace(rec, clocks=tuple(clocks))
    with pytest.raises(audit._Stop) as e:
        audit.check_clocks(dataclasses.replace(replay, records=tuple(records)))
    assert e.value.discrepancy.seq == i and e.value.discrepancy.field == "clocks"


# ----------------------------------------------------------------------------------------------
# the information check and the digests
# ----------------------------------------------------------------------------------------------
def _rerun(path: Path) -> tuple[Replay, list[list[bot_pb2.RefereeMessage]]]:
    replay = read_replay(path)
    again = resimulate(replay)
    return replay, [list(m) for m in again.seat_messages]


def _opponent_card(replay: Replay, seat: int) -> str:
    deal = next(r for r in replay.records if isinstance(r, DealRecord))
    return str(deal.deck[0:20:2][0] if seat == deal.dealer else deal.deck[1:20:2][0])


def test_a_leaked_card_in_a_hand_is_caught(run: RunFixture) -> None:
    records, msgs = _rerun(run.replays["normal"])
    assert audit.check_information(records, msgs) > 0
    seat = 1
    i = next(j for j, m in enumerate(msgs[seat]) if m.WhichOneof("kind") == "action_request")
    leaked = copy.deepcopy(msgs)
    leaked[seat][i].action_request.gin.hand.append(_opponent_card(records, seat))
    with pytest.raises(audit._Stop) as e:
        audit.check_information(records, leaked)
    d = e.value.discrepancy
    assert d.check == "information" and "action_request" in d.field and "gin.hand[" in d.field
    assert d.found == _opponent_card(records, seat)


def test_an_opponents_stock_draw_shown_in_an_event_is_caught(run: RunFixture) -> None:
    records, msgs = _rerun(run.replays["normal"])
    draw_seq, draw = next((j, r) for j, r in enumerate(records.records)
                          if isinstance(r, ActionRecord) and r.action == "draw_stock")
    watcher = 1 - draw.seat
    # the watcher's events in that deal: find the one for this draw (same position in the deal)
    deal_seq = max(j for j, r in enumerate(records.records) if isinstance(r, DealRecord) and j < draw_seq)
    k = sum(1 for r in records.records[deal_seq:draw_seq + 1] if r.KIND in ("action", "reshuffle"))
    events = 0
    target = None
    for j, m in enumerate(msgs[watcher]):
        kind = m.WhichOneof("kind")
        if kind == "deal_started" and target is None:
            events = 0
        elif kind == "event":
            events += 1
            if events == k:
                target = j
                break
    assert target is not None and msgs[watcher][target].event.gin.card == ""
    leaked = copy.deepcopy(msgs)
    assert draw.card is not None
    leaked[watcher][target].event.gin.card = draw.card
    with pytest.raises(audit._Stop) as e:
        audit.check_information(records, leaked)
    assert e.value.discrepancy.field.endswith("(event) event.gin.card") and e.value.discrepancy.seq == draw_seq


def test_a_defender_shown_the_knock_discard_is_caught(run: RunFixture) -> None:
    for path in run.replays.values():
        records, msgs = _rerun(path)
        end_seq, end = next(((j, r) for j, r in enumerate(records.records)
                             if isinstance(r, DealEndRecord) and r.content.knock_discard), (0, None))
        if end is not None:
            break
    assert end is not None and end.content.knocker is not None
    defender = 1 - end.content.knocker
    j = next(j for j, m in enumerate(msgs[defender]) if m.WhichOneof("kind") == "deal_finished"
             and (m.deal_finished.result.game_number, m.deal_finished.result.deal_number) == (end.game, end.deal))
    assert msgs[defender][j].deal_finished.result.gin.knock_discard == ""
    leaked = copy.deepcopy(msgs)
    leaked[defender][j].deal_finished.result.gin.knock_discard = end.content.knock_discard
    with pytest.raises(audit._Stop) as e:
        audit.check_information(records, leaked)
    assert e.value.discrepancy.found == end.content.knock_discard and e.value.discrepancy.seq == end_seq


def test_a_changed_message_changes_the_digest(run: RunFixture) -> None:
    records, msgs = _rerun(run.replays["normal"])
    assert records.result is not None
    assert audit.check_digests(records, msgs, []) == list(records.result.messages)
    msgs[0][3].match_id = "other"
    with pytest.raises(audit._Stop) as e:
        audit.check_digests(records, msgs, [])
    assert e.value.discrepancy.field == "message_digests[0]"


def test_first_difference_names_the_field() -> None:
    assert audit.first_difference({"a": [1, 2], "type": "x"}, {"a": [1, 3], "type": "x"}) == ("a[1]", 2, 3)
    assert audit.first_difference({"type": "action", "z": 1}, {"type": "fault", "a": 1})[0] == "type"  # type: ignore[index]
    assert audit.first_difference({"v": 1}, {"v": True}) == ("v", 1, True)
    assert audit.first_difference({"v": 1}, {"v": 1}) is None
