"""The protobuf contract (proto/gin_arena/v1): generated code up to date, buf-style rules,
and a round trip of the session messages through bytes.

Run with the generated package importable, e.g. ``PYTHONPATH=proto:. pytest tests/test_proto.py``
(or with the project installed, which maps ``gin_arena`` to ``proto/gin_arena``).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
PROTO_ROOT = REPO / "proto"
PROTO_DIR = PROTO_ROOT / "gin_arena" / "v1"

if str(PROTO_ROOT) not in sys.path:  # the generated modules import each other as gin_arena.v1.*
    sys.path.insert(0, str(PROTO_ROOT))

from gin_arena.v1 import bot_pb2, game_pb2, referee_pb2  # noqa: E402


def _load_generate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gin_arena_proto_generate", PROTO_ROOT / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _load_generate()


# ----- generated code -----


def test_generated_code_is_up_to_date() -> None:
    problems = generate.check()
    assert not problems, (
        "generated code differs from the .proto files; run `python proto/generate.py` "
        f"({generate.tool_versions()}):\n  " + "\n  ".join(problems)
    )


def test_generation_is_deterministic(tmp_path: Path) -> None:
    first = generate.generate(tmp_path / "a")
    second = generate.generate(tmp_path / "b")
    assert first == second
    assert first, "nothing was generated"
    for rel in first:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    expected = {
        f"gin_arena/v1/{name}{suffix}"
        for name in ("game", "bot", "referee")
        for suffix in generate.GENERATED_SUFFIXES
    }
    assert set(first) == expected


def test_check_reports_stale_missing_and_extra(tmp_path: Path) -> None:
    root = tmp_path / "proto"
    (root / "gin_arena" / "v1").mkdir(parents=True)
    for src in PROTO_DIR.glob("*.proto"):
        (root / "gin_arena" / "v1" / src.name).write_bytes(src.read_bytes())
    assert sorted(generate.check(root)) == sorted(
        [
            f"missing: gin_arena/v1/{n}{s}"
            for n in ("game", "bot", "referee")
            for s in generate.GENERATED_SUFFIXES
        ]
        + ["missing: gin_arena/__init__.py", "missing: gin_arena/v1/__init__.py"]
    )
    generate.write(root)
    assert generate.check(root) == []
    (root / "gin_arena" / "v1" / "old_pb2.py").write_text("# stale\n")
    bot = root / "gin_arena" / "v1" / "bot.proto"
    bot.write_text(
        bot.read_text().replace(
            "string client_info = 6;", "string client_info = 6;\n  // x.\n  uint32 x = 99;"
        )
    )
    problems = generate.check(root)
    assert "extra: gin_arena/v1/old_pb2.py" in problems
    assert "differs: gin_arena/v1/bot_pb2.py" in problems
    assert "differs: gin_arena/v1/game_pb2.py" not in problems


# ----- buf style, from the .proto text -----

_FIELD = re.compile(
    r"^(?:(?:optional|repeated)\s+)?(?:map<[^>]+>|[A-Za-z_][\w.]*)\s+([A-Za-z_]\w*)\s*=\s*(\d+)\s*(?:\[[^\]]*\])?\s*;"
)
_ENUM_VALUE = re.compile(r"^([A-Za-z_]\w*)\s*=\s*(-?\d+)\s*(?:\[[^\]]*\])?\s*;")
_BLOCK = re.compile(r"^(message|enum|service|oneof)\s+([A-Za-z_]\w*)\s*\{")
_RPC = re.compile(r"^rpc\s+([A-Za-z_]\w*)\s*\(")


@dataclass
class Decl:
    kind: str  # message, enum, service, oneof, rpc, field, value
    name: str
    parent: str  # full name of the enclosing block ("" at top level)
    line: int
    commented: bool
    number: int | None = None


@dataclass
class ProtoFile:
    path: Path
    package: str = ""
    decls: list[Decl] = field(default_factory=list)


def _parse(path: Path) -> ProtoFile:
    out = ProtoFile(path)
    stack: list[tuple[str, str]] = []  # (kind, full name)
    prev = ""
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        commented = prev.startswith("//")
        prev = line
        if not line or line.startswith("//"):
            continue
        parent_kind, parent = stack[-1] if stack else ("", "")
        if m := re.match(r"^package\s+([\w.]+)\s*;", line):
            out.package = m.group(1)
        elif m := _BLOCK.match(line):
            kind, name = m.groups()
            full = f"{parent}.{name}" if parent else name
            out.decls.append(Decl(kind, name, parent, lineno, commented))
            if not line.endswith("{}"):  # an empty message closes on its own line
                stack.append((kind, full if kind != "oneof" else parent))
        elif m := _RPC.match(line):
            out.decls.append(Decl("rpc", m.group(1), parent, lineno, commented))
        elif line.startswith("}"):
            stack.pop()
        elif re.match(r"^(syntax|import|option|reserved)\b", line):
            continue
        elif parent_kind == "enum" and (m := _ENUM_VALUE.match(line)):
            out.decls.append(Decl("value", m.group(1), parent, lineno, commented, int(m.group(2))))
        elif parent_kind in ("message", "oneof") and (m := _FIELD.match(line)):
            out.decls.append(Decl("field", m.group(1), parent, lineno, commented, int(m.group(2))))
        else:
            raise AssertionError(
                f"{path.name}:{lineno}: the test's simple parser does not understand: {line!r}"
            )
    assert not stack, f"{path.name}: unbalanced braces"
    return out


PROTO_FILES = sorted(PROTO_DIR.glob("*.proto"))
PARSED = [_parse(p) for p in PROTO_FILES]


def test_the_three_files_exist() -> None:
    assert [p.name for p in PROTO_FILES] == ["bot.proto", "game.proto", "referee.proto"]


@pytest.mark.parametrize("pf", PARSED, ids=lambda pf: pf.path.name)
def test_package_is_versioned(pf: ProtoFile) -> None:
    assert pf.package == "gin_arena.v1"
    assert pf.package.endswith(".v1")
    assert pf.path.parent.relative_to(PROTO_ROOT).as_posix() == pf.package.replace(".", "/")


@pytest.mark.parametrize("pf", PARSED, ids=lambda pf: pf.path.name)
def test_every_declaration_has_a_leading_comment(pf: ProtoFile) -> None:
    missing = [f"{pf.path.name}:{d.line}: {d.kind} {d.name}" for d in pf.decls if not d.commented]
    assert not missing, "no leading // comment:\n  " + "\n  ".join(missing)


def _upper_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


@pytest.mark.parametrize("pf", PARSED, ids=lambda pf: pf.path.name)
def test_enums_start_unspecified_and_are_prefixed(pf: ProtoFile) -> None:
    enums = [d for d in pf.decls if d.kind == "enum"]
    for enum in enums:
        full = f"{enum.parent}.{enum.name}" if enum.parent else enum.name
        values = [d for d in pf.decls if d.kind == "value" and d.parent == full]
        prefix = _upper_snake(enum.name) + "_"
        assert values, f"enum {enum.name} has no values"
        assert (values[0].name, values[0].number) == (prefix + "UNSPECIFIED", 0), enum.name
        for v in values:
            assert v.name.startswith(prefix) and re.fullmatch(r"[A-Z][A-Z0-9_]*", v.name), v.name
        assert len({v.number for v in values}) == len(values), f"enum {enum.name}: duplicate numbers"


@pytest.mark.parametrize("pf", PARSED, ids=lambda pf: pf.path.name)
def test_names_follow_buf_style(pf: ProtoFile) -> None:
    for d in pf.decls:
        if d.kind in ("message", "enum", "service", "rpc"):
            assert re.fullmatch(r"[A-Z][A-Za-z0-9]*", d.name), f"{d.kind} {d.name} is not PascalCase"
        elif d.kind in ("field", "oneof"):
            assert re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", d.name), (
                f"{d.kind} {d.name} is not lower_snake"
            )
        if d.kind == "service":
            assert d.name.endswith("Service")
    by_message: dict[str, list[Decl]] = {}
    for d in pf.decls:
        if d.kind == "field":
            by_message.setdefault(d.parent, []).append(d)
    for message, fields in by_message.items():
        numbers = [f.number for f in fields]
        assert len(set(numbers)) == len(numbers), f"message {message}: duplicate field numbers"


def _descriptor_names(module: ModuleType) -> set[tuple[str, str]]:
    """(kind, full name) of every message, enum, field, enum value, oneof and rpc in a module."""
    names: set[tuple[str, str]] = set()
    fd = module.DESCRIPTOR
    pkg = fd.package + "."

    def rel(full: str) -> str:
        return full.removeprefix(pkg)

    def enum(ed) -> None:  # type: ignore[no-untyped-def]
        names.add(("enum", rel(ed.full_name)))
        for v in ed.values:
            names.add(("value", f"{rel(ed.full_name)}.{v.name}"))

    def message(md) -> None:  # type: ignore[no-untyped-def]
        names.add(("message", rel(md.full_name)))
        for f in md.fields:
            names.add(("field", f"{rel(md.full_name)}.{f.name}"))
        for o in md.oneofs:
            if not (len(o.fields) == 1 and o.name == "_" + o.fields[0].name):  # synthetic (proto3 optional)
                names.add(("oneof", f"{rel(md.full_name)}.{o.name}"))
        for nested in md.nested_types:
            message(nested)
        for ed in md.enum_types:
            enum(ed)

    for md in fd.message_types_by_name.values():
        message(md)
    for ed in fd.enum_types_by_name.values():
        enum(ed)
    for sd in fd.services_by_name.values():
        names.add(("service", rel(sd.full_name)))
        for m in sd.methods:
            names.add(("rpc", f"{rel(sd.full_name)}.{m.name}"))
    return names


@pytest.mark.parametrize("pf", PARSED, ids=lambda pf: pf.path.name)
def test_text_parser_saw_every_declaration(pf: ProtoFile) -> None:
    """The simple parser above must not miss anything the compiler saw."""
    module = {"game.proto": game_pb2, "bot.proto": bot_pb2, "referee.proto": referee_pb2}[pf.path.name]
    parsed = {(d.kind, f"{d.parent}.{d.name}" if d.parent else d.name) for d in pf.decls}
    assert parsed == _descriptor_names(module)


# ----- round trips -----


def _sample_state() -> game_pb2.InformationState:
    return game_pb2.InformationState(
        seat=1,
        num_seats=2,
        dealer=0,
        to_move=1,
        phase=game_pb2.PHASE_DISCARD,
        hand=["As", "2s", "3s", "4h", "5h", "6h", "Td", "Jd", "Kc", "Qc", "9c"],
        my_melds=[
            game_pb2.Meld(kind=game_pb2.MELD_KIND_RUN, cards=["As", "2s", "3s"]),
            game_pb2.Meld(kind=game_pb2.MELD_KIND_RUN, cards=["4h", "5h", "6h"]),
        ],
        my_deadwood_cards=["Td", "Jd", "9c", "Qc", "Kc"],
        my_deadwood=49,
        discard_pile=["7d"],
        stock_size=30,
        hand_sizes=[10, 11],
        known_cards=[game_pb2.SeatCards(seat=0), game_pb2.SeatCards(seat=1, cards=["9c"])],
        first_upcard="8d",
        knock_limit=-1,
        forbidden_discard="9c",
        events=[
            game_pb2.PublicEvent(seat=1, kind=game_pb2.ACTION_KIND_PASS, card="8d", stock_size_after=31),
            game_pb2.PublicEvent(
                seat=0, kind=game_pb2.ACTION_KIND_TAKE_UPCARD, card="8d", stock_size_after=31
            ),
            game_pb2.PublicEvent(seat=0, kind=game_pb2.ACTION_KIND_DISCARD, card="9c", stock_size_after=31),
            game_pb2.PublicEvent(seat=1, kind=game_pb2.ACTION_KIND_DRAW_DISCARD, card="9c", think_ms=12),
        ],
        game_number=1,
        deal_number=3,
        scores=[40, 0],
        deals_won=[1, 0],
        match_scores=[0, 0],
        spade_double=False,
    )


def test_referee_message_round_trip() -> None:
    msg = bot_pb2.RefereeMessage(
        match_id="m-1",
        action_request=bot_pb2.ActionRequest(
            request_id=7,
            legal_actions=[
                game_pb2.Action(kind=game_pb2.ACTION_KIND_DISCARD, card="Kc"),
                game_pb2.Action(kind=game_pb2.ACTION_KIND_KNOCK, card="Kc"),
            ],
            clocks=[
                game_pb2.Clock(seat=0, remaining_ms=59_000, increment_ms=500),
                game_pb2.Clock(seat=1, remaining_ms=-20, increment_ms=500, running=True),
            ],
            time_for_move_ms=1000,
            state=_sample_state(),
        ),
    )
    data = msg.SerializeToString(deterministic=True)
    back = bot_pb2.RefereeMessage.FromString(data)
    assert back == msg
    assert back.WhichOneof("kind") == "action_request"
    assert back.action_request.state.known_cards[1].cards == ["9c"]
    assert back.action_request.state.knock_limit == -1
    assert back.action_request.clocks[1].remaining_ms == -20
    assert back.SerializeToString(deterministic=True) == data


def test_match_started_and_finished_round_trip() -> None:
    rules = game_pb2.RuleSet(name="classic", knock=game_pb2.KNOCK_MODE_LIMIT, knock_limit=10, gin_bonus=0)
    started = bot_pb2.RefereeMessage(
        match_id="m-1",
        match_started=bot_pb2.MatchStarted(
            match_id="m-1",
            seat=0,
            player_names=["alice", "bob"],
            rules=rules,
            time_control=game_pb2.TimeControl(
                text="tc=60+0.5 timemargin=50",
                incremental=game_pb2.Incremental(base_ms=60_000, increment_ms=500),
                margin_ms=50,
            ),
            seed_commitment=bytes(32),
            fault_policy=game_pb2.FAULT_POLICY_FORFEIT,
        ),
    )
    back = bot_pb2.RefereeMessage.FromString(started.SerializeToString())
    assert back == started
    assert back.match_started.time_control.WhichOneof("kind") == "incremental"
    # presence: a zero that was set is told apart from an unset option
    assert back.match_started.rules.HasField("gin_bonus") and back.match_started.rules.gin_bonus == 0
    assert not back.match_started.rules.HasField("target")

    finished = bot_pb2.RefereeMessage(
        match_id="m-1",
        match_finished=bot_pb2.MatchFinished(
            result=game_pb2.MatchResult(
                winner=-1,
                termination=game_pb2.TERMINATION_ABORTED,
                faulting_seat=-1,
                games=[game_pb2.GameResult(game_number=1, winner=0, final_totals=[225, 0], shutout=True)],
                seed=b"\x01" * 32,
                nonces=[b"", b"abc"],
            )
        ),
    )
    assert bot_pb2.RefereeMessage.FromString(finished.SerializeToString()) == finished


def test_bot_message_round_trip() -> None:
    for msg in (
        bot_pb2.BotMessage(
            hello=bot_pb2.Hello(bot_name="b", token="t", protocol_version=1, nonce=b"\x00" * 64)
        ),
        bot_pb2.BotMessage(
            action=bot_pb2.ActionResponse(
                match_id="m-1",
                request_id=2**64 - 1,
                action=game_pb2.Action(kind=game_pb2.ACTION_KIND_KNOCK, card="Td"),
            )
        ),
        bot_pb2.BotMessage(ping=bot_pb2.Ping(ping_id=3)),
    ):
        back = bot_pb2.BotMessage.FromString(msg.SerializeToString())
        assert back == msg
        assert back.WhichOneof("kind") == msg.WhichOneof("kind")


def test_json_form_uses_card_text() -> None:
    from google.protobuf import json_format

    msg = bot_pb2.BotMessage(
        action=bot_pb2.ActionResponse(
            match_id="m", request_id=1, action=game_pb2.Action(kind=game_pb2.ACTION_KIND_DISCARD, card="Td")
        )
    )
    text = json_format.MessageToJson(msg)
    assert '"card": "Td"' in text and '"ACTION_KIND_DISCARD"' in text
    assert json_format.Parse(text, bot_pb2.BotMessage()) == msg


def test_spectator_event_round_trip() -> None:
    ev = referee_pb2.SpectatorEvent(
        match_id="m-1",
        event=game_pb2.PublicEvent(seat=0, kind=game_pb2.ACTION_KIND_DRAW_STOCK, stock_size_after=20),
    )
    assert referee_pb2.SpectatorEvent.FromString(ev.SerializeToString()) == ev


def test_rummy_messages_round_trip() -> None:
    """The rummy messages: an action request with a rummy state and legal actions, a Hello
    declaring its games, and a deal's end for four seats."""
    lay_off = game_pb2.RummyAction(lay_off=game_pb2.RummyLayOff(card="4s", meld=0, end=game_pb2.RUMMY_LAYOFF_END_HIGH))
    state = game_pb2.RummyState(
        seat=2, num_seats=4, dealer=1, turn=2, to_move=2, phase=game_pb2.RUMMY_PHASE_PLAY,
        hand=["4s", "9h", "Kc"], hand_sizes=[7, 6, 3, 7], stock_size=20, discard_pile=["5d", "8c"],
        table=[game_pb2.RummyTableMeld(
            number=0, owner=2, kind=game_pb2.MELD_KIND_RUN, cards=["As", "2s", "3s"],
            placed=[game_pb2.RummyPlaced(card=c, seat=2, end=game_pb2.RUMMY_LAYOFF_END_LOW)
                    for c in ("As", "2s", "3s")],
        )],
        events=[game_pb2.PublicEvent(seat=2, rummy=game_pb2.RummyEvent(
            action=game_pb2.RummyAction(take_discard=game_pb2.RummyTakeDiscard(card="3s")), taken_cards=["3s", "Qd"]))],
        scores=[0, 12, 0, 40], game_number=1, deal_number=2, match_points=[0, 0, 0, 0],
    )
    msg = bot_pb2.RefereeMessage(match_id="m", action_request=bot_pb2.ActionRequest(
        request_id=3, legal_actions=[game_pb2.Action(rummy=lay_off)], rummy_state=state))
    back = bot_pb2.RefereeMessage.FromString(msg.SerializeToString())
    assert back == msg and not back.action_request.HasField("state")
    assert back.action_request.legal_actions[0].rummy.WhichOneof("kind") == "lay_off"
    assert back.action_request.legal_actions[0].kind == game_pb2.ACTION_KIND_UNSPECIFIED
    assert back.action_request.rummy_state.events[0].rummy.WhichOneof("kind") == "action"
    hello = bot_pb2.Hello(bot_name="b", token="t", protocol_version=1, games=["gin", "rummy"])
    assert list(bot_pb2.Hello.FromString(hello.SerializeToString()).games) == ["gin", "rummy"]
    assert list(bot_pb2.Hello().games) == []  # today's Gin bots: gin only
    result = game_pb2.DealResult(game_number=1, deal_number=2, winner=3, scores_after=[0, 12, 0, 70],
                                 rummy=game_pb2.RummyDealResult(
                                     reason=game_pb2.RUMMY_DEAL_END_REASON_OUT, points=[0, 0, 0, 30],
                                     hands=[game_pb2.SeatCards(seat=s) for s in range(4)]))
    assert game_pb2.DealResult.FromString(result.SerializeToString()) == result
    rules = game_pb2.RummyRuleSet(name="michigan", stop=False, target=0)
    back_rules = game_pb2.RummyRuleSet.FromString(rules.SerializeToString())
    assert back_rules.HasField("stop") and not back_rules.HasField("rummy_doubles") and back_rules.HasField("target")
