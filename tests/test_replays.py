"""Typed replays (``referee.replays``): every record of real replays reads into its dataclass and
writes back to the same bytes; a damaged file fails with the line and the field; the recorder's
typed entry point writes what the referee's calls write; the replays committed by the old code
(tests/fixtures/v0_1) still read, audit and view."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from arena.cli import main as arena_main
from arena.replays import audit
from arena.results.page import write_results_page
from referee.gin.records import GinDealEnd, GinGameEnd
from referee.model.replay import check_annotations
from referee.replays import (
    GENESIS,
    RECORD_CLASSES,
    ActionRecord,
    DealEndRecord,
    DealRecord,
    FaultRecord,
    GameEndRecord,
    HeaderRecord,
    Record,
    Replay,
    ReplayFormatError,
    ReplayRecorder,
    ReplayVisitor,
    ReshuffleRecord,
    ResultRecord,
    encode_record,
    read_replay,
)
from tests.test_audit import RunFixture, make_run

FIXTURES = Path(__file__).parent / "fixtures" / "v0_1"
OLD_REPLAYS = sorted(FIXTURES.glob("*/replays/*.jsonl"))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunFixture:
    """Replays of every record kind (faults, reshuffles, …) made by today's referee."""
    return make_run(tmp_path_factory.mktemp("run"))


def _written_again(replay: Replay) -> bytes:
    prev, out = GENESIS, []
    for seq, record in enumerate(replay.records):
        line = encode_record(record, seq, prev)
        out.append(line + b"\n")
        prev = hashlib.sha256(line).hexdigest()
    return b"".join(out)


def test_old_replays_read_and_write_back_byte_for_byte() -> None:
    assert len(OLD_REPLAYS) == 13
    kinds: Counter[str] = Counter()
    for path in OLD_REPLAYS:
        data = path.read_bytes()
        replay = read_replay(path)
        assert _written_again(replay) == data, path
        assert read_replay(data) == replay == read_replay(data.decode().splitlines(keepends=True))
        kinds.update(r.KIND for r in replay.records)
        assert isinstance(replay.result, ResultRecord) and replay.header.game == "gin"
    assert set(kinds) == {"header", "deal", "action", "deal_end", "game_end", "result"}, kinds


def test_every_record_kind_of_todays_replays_round_trips(run: RunFixture) -> None:
    kinds: set[str] = set()
    for path in run.replays.values():
        data = path.read_bytes()
        replay = read_replay(path)
        assert _written_again(replay) == data, path
        for record, line in zip(replay.records, replay.lines, strict=True):
            assert type(record) is RECORD_CLASSES[record.KIND]
            obj = json.loads(line)
            assert {**record.to_json(), "seq": obj["seq"], "prev": obj["prev"]} == obj
        kinds.update(r.KIND for r in replay.records)
    assert kinds == set(RECORD_CLASSES)


def test_the_recorder_writes_typed_records_as_the_referee_writes_them(run: RunFixture) -> None:
    """``add_record`` gives the same lines, and so the same chain, as the files the referee
    wrote; an action record given by its fields (``add_action``, the per-decision fast path)
    gives the same line as the typed one."""
    for path in run.replays.values():
        replay = read_replay(path)
        typed, fields = ReplayRecorder(), ReplayRecorder()
        for record, line in zip(replay.records, replay.lines, strict=True):
            obj = json.loads(line)
            for key in ("type", "seq", "prev"):
                del obj[key]
            typed.add_record(record)
            if isinstance(record, ActionRecord):
                fields.add_action(**obj)
            else:
                fields.add_record(record)
        assert typed.lines == fields.lines == list(replay.lines)
        assert typed.last_hash == hashlib.sha256(replay.lines[-1]).hexdigest()


def test_records_name_no_game_and_carry_the_games_content(run: RunFixture) -> None:
    replay = read_replay(run.replays["substitute"])
    ends = [r for r in replay.records if isinstance(r, DealEndRecord)]
    games = [r for r in replay.records if isinstance(r, GameEndRecord)]
    assert ends and all(isinstance(e.content, GinDealEnd) for e in ends)
    assert games and all(isinstance(g.content, GinGameEnd) for g in games)
    assert replay.result is not None and len(games) == 2
    fault = next(r for r in replay.records if isinstance(r, FaultRecord))
    assert fault.termination == "illegal_action" and fault.policy == "substitute" and fault.raw_kind is not None
    assert "kind" not in {f.name for f in dataclasses.fields(DealEndRecord)}  # Gin's outcome lives in content


class _Counter(ReplayVisitor):
    def __init__(self) -> None:
        self.seen: list[str] = []
        self.actions = 0

    def visit_record(self, record: Record) -> None:
        self.seen.append(record.KIND)

    def visit_action(self, record: ActionRecord) -> None:
        self.actions += 1


def test_the_visitor_sees_every_record_in_order(run: RunFixture) -> None:
    replay = read_replay(run.replays["reshuffle"])
    v = _Counter()
    replay.accept(v)
    assert v.seen == [r.KIND for r in replay.records]
    assert v.actions == sum(1 for r in replay.records if isinstance(r, ActionRecord)) > 0
    assert "reshuffle" in v.seen
    ReplayVisitor().visit_reshuffle(ReshuffleRecord(stock_size=3))  # the defaults do nothing


# ----------------------------------------------------------------------------------------------
# precise errors
# ----------------------------------------------------------------------------------------------
def _lines() -> list[bytes]:
    return OLD_REPLAYS[0].read_bytes().splitlines()


def _error(lines: list[bytes]) -> ReplayFormatError:
    with pytest.raises(ReplayFormatError) as e:
        read_replay(b"\n".join(lines) + b"\n")
    assert isinstance(e.value, ValueError)
    return e.value


def _with(lines: list[bytes], i: int, change: dict[str, object], drop: tuple[str, ...] = ()) -> list[bytes]:
    obj = json.loads(lines[i])
    obj.update(change)
    for key in drop:
        del obj[key]
    out = list(lines)
    out[i] = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
    return out


def test_a_truncated_line_is_named() -> None:
    lines = _lines()
    lines[7] = lines[7][:40]
    e = _error(lines)
    assert e.line == 8 and e.field == "(line)" and "truncated" in str(e) and str(e).startswith("line 8:")


def test_a_replay_cut_at_a_line_end_reads_without_a_result() -> None:
    replay = read_replay(b"\n".join(_lines()[:5]))
    assert replay.result is None and len(replay.records) == 5


def test_a_wrong_version_is_named() -> None:
    e = _error(_with(_lines(), 0, {"version": 2}))
    assert (e.line, e.field, e.found) == (1, "header.version", 2) and "version" in e.expected
    e = _error(_with(_lines(), 0, {"format": "chess-replay"}))
    assert (e.line, e.field) == (1, "header.format")


def test_a_missing_field_is_named() -> None:
    lines = _lines()
    i = next(j for j, line in enumerate(lines) if b'"type":"action"' in line)
    e = _error(_with(lines, i, {}, drop=("think_us",)))
    assert (e.line, e.field, e.found) == (i + 1, "action.think_us", "(missing)") and e.expected == "an integer"
    e = _error(_with(lines, 0, {}, drop=("players",)))
    assert (e.line, e.field) == (1, "header.players")


def test_a_field_of_the_wrong_type_or_an_extra_field_is_named() -> None:
    lines = _lines()
    i = next(j for j, line in enumerate(lines) if b'"type":"deal_end"' in line)
    e = _error(_with(lines, i, {"hands": [["As", 7]]}))
    assert (e.line, e.field, e.found) == (i + 1, "deal_end.hands[0][1]", 7)
    e = _error(_with(lines, i, {"points": True}))
    assert (e.field, e.found) == ("deal_end.points", True)  # true is not an integer
    e = _error(_with(lines, i, {"knocker": "1"}))
    assert e.field == "deal_end.knocker" and e.expected == "an integer or null"
    e = _error(_with(lines, i, {"colour": "red"}))
    assert (e.line, e.field) == (i + 1, "deal_end.colour") and "no field" in str(e)
    e = _error(_with(lines, 0, {"event_messages": None}))  # absent and null are not the same bytes
    assert e.field == "header.event_messages"


def test_an_unknown_kind_is_an_error_with_its_line() -> None:
    lines = _lines()
    e = _error(_with(lines, 3, {"type": "chat"}))
    assert (e.line, e.field, e.found) == (4, "type", "chat") and "one of header, deal, action" in e.expected


def test_the_order_of_records_is_checked() -> None:
    lines = _lines()
    e = _error(_with(lines, 4, {"seq": 9}))
    assert (e.line, e.field, e.found) == (5, "action.seq", 9)
    e = _error(lines[1:])
    assert (e.line, e.field) == (1, "type") and "header" in e.expected
    e = _error([*lines, lines[1]])
    assert e.line == len(lines) + 1 and "after the result" in e.expected
    with pytest.raises(ReplayFormatError) as empty:
        read_replay(b"")
    assert empty.value.line is None and empty.value.field == "(file)"


def test_a_header_written_by_hand_encodes_like_the_referees() -> None:
    header = read_replay(OLD_REPLAYS[0]).header
    again = HeaderRecord(**{f.name: getattr(header, f.name) for f in dataclasses.fields(HeaderRecord)})
    assert encode_record(again, 0, GENESIS) == _lines()[0]
    assert "game" not in again.to_json() and again.to_json()["version"] == 1
    deal = next(r for r in read_replay(OLD_REPLAYS[0]).records if isinstance(r, DealRecord))
    assert deal.to_json()["deck"] == list(deal.deck)


# ----------------------------------------------------------------------------------------------
# the committed old run: audit and view
# ----------------------------------------------------------------------------------------------
def test_the_old_run_audits_and_views(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "demo_run"
    shutil.copytree(FIXTURES / "demo_run", run)
    assert arena_main(["audit", str(run)]) == 0
    out = capsys.readouterr().out
    assert "Audited 6 matches: 6 passed, all checks passed" in out and "6 listed replay hash(es) checked" in out
    # recorded under protocol 1: its message digests are not re-derivable, and the audit says so
    assert "digests – (not comparable, see the note)" in out and "digests ✓" not in out
    assert "(6 of an earlier bot protocol: message digests not comparable)" in out
    replay = sorted((run / "replays").glob("*.jsonl"))[0]
    assert arena_main(["replay", str(replay), "--all"]) == 0
    out = capsys.readouterr().out
    assert "Match over: " in out and read_replay(replay).header.match_id in out
    assert arena_main(["replay", str(replay), "--seat", "0"]) == 0
    # recorded under protocol 1: the seat's messages are shown as a v2 referee sends them
    assert "shown in bot protocol 2; the replay's digest" in capsys.readouterr().out
    assert arena_main(["replay", str(replay), "--html", str(tmp_path / "r.html")]) == 0
    assert "final hash" in (tmp_path / "r.html").read_text()
    index = write_results_page(run)
    assert len(list((run / "html").glob("*.html"))) == 6 and "html/run-f5e532-g0000.html" in index.read_text()


def test_the_audit_names_a_record_the_referee_never_writes() -> None:
    """A forger who keeps the chain whole but gives a field a value of the wrong type: the audit's
    typed reading names it (under the re-run check, as every record the referee would not write)."""
    lines = _lines()
    i = next(j for j, line in enumerate(lines) if b'"type":"action"' in line)
    changed = _with(lines, i, {"card": 7})
    prev = GENESIS
    for j in range(len(changed)):
        changed = _with(changed, j, {"prev": prev})
        prev = hashlib.sha256(changed[j]).hexdigest()
    a = audit.audit_lines(changed)
    assert a.discrepancy is not None and a.passed == ["chain"]
    d = a.discrepancy
    assert (d.check, d.seq, d.field, d.found) == ("rerun", i, "action.card", 7) and d.expected == "text or null"


def test_a_content_field_the_codec_cannot_carry_fails_at_once() -> None:
    @dataclasses.dataclass(frozen=True)
    class Odd:
        ratio: float

    with pytest.raises(TypeError, match=r"Odd.ratio: a replay field cannot be 'float'"):
        check_annotations(Odd)
