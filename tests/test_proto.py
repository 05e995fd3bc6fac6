"""The protobuf contract (proto/gin_arena/v2): generated code up to date, buf-style rules, the
envelope's game neutrality (game content only inside one ``oneof game``), the committed
baseline image that ``buf breaking`` guards, and round trips of the session messages through
bytes and the proto3 JSON mapping.

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
from google.protobuf import any_pb2, descriptor_pb2, json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor

REPO = Path(__file__).resolve().parent.parent
PROTO_ROOT = REPO / "proto"
PROTO_DIR = PROTO_ROOT / "gin_arena" / "v2"
BASELINE = PROTO_ROOT / "v2-baseline.binpb"

if str(PROTO_ROOT) not in sys.path:  # the generated modules import each other as gin_arena.v2.*
    sys.path.insert(0, str(PROTO_ROOT))

from gin_arena.v2 import arena_pb2, bot_pb2, common_pb2, referee_pb2  # noqa: E402
from gin_arena.v2.games import gin_pb2, rummy_pb2  # noqa: E402

MODULES: dict[str, ModuleType] = {
    "common.proto": common_pb2, "bot.proto": bot_pb2, "referee.proto": referee_pb2, "arena.proto": arena_pb2,
    "games/gin.proto": gin_pb2, "games/rummy.proto": rummy_pb2,
}
"""Each v2 .proto file (relative to gin_arena/v2) and its generated module."""
SINCE_BASELINE = ("arena.proto",)
"""The files added to v2 after its baseline image (each a new file: ``buf breaking`` lets v2 grow)."""
ENVELOPE = ("common.proto", "bot.proto", "referee.proto")
"""The game-neutral files."""
GAME_MEMBERS = {"gin": "gin_arena.v2.games.gin", "rummy": "gin_arena.v2.games.rummy"}
"""The first-party games' members of every ``oneof game``, with the package of their messages."""


def _load_generate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gin_arena_proto_generate", PROTO_ROOT / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _load_generate()


def _rel(path: Path) -> str:
    return path.relative_to(PROTO_DIR).as_posix()


# ----- generated code -----


def test_generated_code_is_up_to_date() -> None:
    problems = generate.check()
    assert not problems, (
        "generated code differs from the .proto files; run `python proto/generate.py` "
        f"({generate.tool_versions()}):\n  " + "\n  ".join(problems)
    )


V2_GENERATED = {
    f"gin_arena/v2/{name.removesuffix('.proto')}{suffix}" for name in MODULES for suffix in generate.GENERATED_SUFFIXES
}


def test_generation_is_deterministic(tmp_path: Path) -> None:
    first = generate.generate(tmp_path / "a")
    second = generate.generate(tmp_path / "b")
    assert first == second
    assert first, "nothing was generated"
    for rel in first:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    assert set(first) == V2_GENERATED  # v1 is retired (there was no release)


def test_check_reports_stale_missing_and_extra(tmp_path: Path) -> None:
    root = tmp_path / "proto"
    for src in PROTO_DIR.rglob("*.proto"):
        dst = root / "gin_arena" / "v2" / _rel(src)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes())
    assert sorted(generate.check(root)) == sorted(
        [f"missing: {rel}" for rel in V2_GENERATED]
        + ["missing: gin_arena/__init__.py", "missing: gin_arena/v2/__init__.py",
           "missing: gin_arena/v2/games/__init__.py"]
    )
    generate.write(root)
    assert generate.check(root) == []
    (root / "gin_arena" / "v2" / "old_pb2.py").write_text("# stale\n")
    gin = root / "gin_arena" / "v2" / "games" / "gin.proto"
    added = "  string card = 2;\n  // x.\n  uint32 x = 99;\n}"
    gin.write_text(gin.read_text().replace("  string card = 2;\n}", added, 1))
    problems = generate.check(root)
    assert "extra: gin_arena/v2/old_pb2.py" in problems
    assert "differs: gin_arena/v2/games/gin_pb2.py" in problems
    assert "differs: gin_arena/v2/bot_pb2.py" not in problems


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



PROTO_FILES = sorted(PROTO_DIR.rglob("*.proto"))
PARSED = [_parse(p) for p in PROTO_FILES]


def test_the_v2_files_exist() -> None:
    assert sorted(_rel(p) for p in PROTO_FILES) == sorted(MODULES)


@pytest.mark.parametrize("pf", PARSED, ids=lambda pf: _rel(pf.path))
def test_package_is_versioned(pf: ProtoFile) -> None:
    rel = _rel(pf.path)
    if rel.startswith("games/"):  # each game its own package, named after its file
        assert pf.package == "gin_arena.v2.games." + Path(rel).stem
    else:
        assert pf.package == "gin_arena.v2"
        assert pf.path.parent.relative_to(PROTO_ROOT).as_posix() == pf.package.replace(".", "/")


@pytest.mark.parametrize("pf", PARSED, ids=lambda pf: _rel(pf.path))
def test_every_declaration_has_a_leading_comment(pf: ProtoFile) -> None:
    missing = [f"{pf.path.name}:{d.line}: {d.kind} {d.name}" for d in pf.decls if not d.commented]
    assert not missing, "no leading // comment:\n  " + "\n  ".join(missing)


def _upper_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


@pytest.mark.parametrize("pf", PARSED, ids=lambda pf: _rel(pf.path))
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


@pytest.mark.parametrize("pf", PARSED, ids=lambda pf: _rel(pf.path))
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


@pytest.mark.parametrize("pf", PARSED, ids=lambda pf: _rel(pf.path))
def test_text_parser_saw_every_declaration(pf: ProtoFile) -> None:
    """The simple parser above must not miss anything the compiler saw."""
    module = MODULES[_rel(pf.path)]
    parsed = {(d.kind, f"{d.parent}.{d.name}" if d.parent else d.name) for d in pf.decls}
    assert parsed == _descriptor_names(module)


# ----- the envelope names no game -----


def _envelope_messages() -> list[Descriptor]:
    out: list[Descriptor] = []
    for name in ENVELOPE:
        out.extend(MODULES[name].DESCRIPTOR.message_types_by_name.values())
    return out


def _game_typed(f: FieldDescriptor) -> bool:
    """Whether a field's type belongs to a game (or is the plugin games' Any)."""
    md = f.message_type
    return md is not None and (md.full_name.startswith("gin_arena.v2.games.") or md.full_name == "google.protobuf.Any")


def test_game_content_only_inside_one_oneof_game() -> None:
    """Outside one ``oneof game`` per envelope message, no field's name or type belongs to a
    game; that oneof holds exactly ``gin``, ``rummy`` and ``other`` (an Any)."""
    carriers = []
    for md in _envelope_messages():
        games = [o for o in md.oneofs if o.name == "game"]
        for f in md.fields:
            inside = f.containing_oneof is not None and f.containing_oneof.name == "game"
            if inside:
                continue
            assert not _game_typed(f), f"{md.full_name}.{f.name}: a game's type outside `oneof game`"
            words = {"gin", "rummy", "knock", "meld", "melds", "deadwood", "card", "cards"}
            assert not words & set(f.name.split("_")), (
                f"{md.full_name}.{f.name}: a game's word in an envelope field"
            )
            assert f.enum_type is None or f.enum_type.full_name.startswith("gin_arena.v2."), f.full_name
            assert f.enum_type is None or not f.enum_type.full_name.startswith("gin_arena.v2.games."), f.full_name
        if not games:
            continue
        assert len(games) == 1
        members = {f.name: f for f in games[0].fields}
        assert set(members) == {*GAME_MEMBERS, "other"}, md.full_name
        types = {name: f.message_type.full_name if f.message_type else "" for name, f in members.items()}
        for name, package in GAME_MEMBERS.items():
            assert types[name].startswith(package + "."), f"{md.full_name}.{name}"
        assert types["other"] == "google.protobuf.Any"
        carriers.append(md.name)
    assert {"Action", "Event", "DealResult", "GameResult", "MatchStarted", "DealStarted", "ActionRequest",
            "CreateMatchRequest", "SpectatorHeader", "SpectatorDeal", "SpectatorTurn"} <= set(carriers)


def test_games_do_not_import_the_envelope_or_each_other() -> None:
    for name in ("games/gin.proto", "games/rummy.proto"):
        deps = [d.name for d in MODULES[name].DESCRIPTOR.dependencies]
        assert deps == [], f"{name} imports {deps}"


# ----- buf breaking: the committed baseline image -----


def _baseline() -> descriptor_pb2.FileDescriptorSet:
    # A buf image is wire-compatible with a FileDescriptorSet.
    return descriptor_pb2.FileDescriptorSet.FromString(BASELINE.read_bytes())


def test_buf_breaking_is_configured_against_the_baseline() -> None:
    buf_yaml = (PROTO_ROOT / "buf.yaml").read_text()
    breaking = buf_yaml[buf_yaml.index("\nbreaking:"):]
    assert re.search(r"- FILE\b", breaking) and re.search(r"- WIRE_JSON\b", breaking)
    ci = (REPO / ".ci" / "run").read_text()
    assert "buf lint" in ci and "buf breaking --against v2-baseline.binpb" in ci
    names = {f.name for f in _baseline().file}
    assert {f"gin_arena/v2/{n}" for n in MODULES if n not in SINCE_BASELINE} <= names
    assert not any(n.startswith("gin_arena/v1/") for n in names)


def _fields(fds: descriptor_pb2.FileDescriptorSet) -> dict[str, tuple[int, int, str, str]]:
    """Every message field of gin_arena.v2's files: full name -> (number, type, type name, label)."""
    out: dict[str, tuple[int, int, str, str]] = {}

    def walk(prefix: str, md: descriptor_pb2.DescriptorProto) -> None:
        for f in md.field:
            out[f"{prefix}{md.name}.{f.name}"] = (f.number, f.type, f.type_name, str(f.label))
        for nested in md.nested_type:
            walk(f"{prefix}{md.name}.", nested)

    for fd in fds.file:
        if fd.name.startswith("gin_arena/v2/"):
            for md in fd.message_type:
                walk(fd.package + ".", md)
    return out


def test_v2_only_grows_from_the_baseline() -> None:
    """What `buf breaking` checks in CI, in part and without buf: no field of the baseline is
    gone, renumbered or retyped (a removed one must stay `reserved` and change this test)."""
    now = descriptor_pb2.FileDescriptorSet()
    for module in MODULES.values():
        fdp = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(fdp)
        now.file.append(fdp)
    before, after = _fields(_baseline()), _fields(now)
    changed = {k: (v, after.get(k)) for k, v in before.items() if after.get(k) != v}
    assert not changed, changed


# ----- round trips -----


def _sample_state() -> gin_pb2.State:
    return gin_pb2.State(
        seat=1,
        num_seats=2,
        dealer=0,
        to_move=1,
        phase=gin_pb2.PHASE_DISCARD,
        hand=["As", "2s", "3s", "4h", "5h", "6h", "Td", "Jd", "Kc", "Qc", "9c"],
        my_melds=[
            gin_pb2.Meld(kind=gin_pb2.MELD_KIND_RUN, cards=["As", "2s", "3s"]),
            gin_pb2.Meld(kind=gin_pb2.MELD_KIND_RUN, cards=["4h", "5h", "6h"]),
        ],
        my_deadwood_cards=["Td", "Jd", "9c", "Qc", "Kc"],
        my_deadwood=49,
        discard_pile=["7d"],
        stock_size=30,
        hand_sizes=[10, 11],
        known_cards=[gin_pb2.SeatCards(seat=0), gin_pb2.SeatCards(seat=1, cards=["9c"])],
        first_upcard="8d",
        knock_limit=-1,
        forbidden_discard="9c",
        game_number=1,
        deal_number=3,
        scores=[40, 0],
        deals_won=[1, 0],
        match_scores=[0, 0],
        spade_double=False,
    )


def _gin_event(seat: int, kind: int, card: str = "", stock: int = 0, think_ms: int = 0) -> common_pb2.Event:
    return common_pb2.Event(seat=seat, think_ms=think_ms, gin=gin_pb2.Event(
        kind=kind, card=card, stock_size_after=stock))  # type: ignore[arg-type]


def test_referee_message_round_trip() -> None:
    msg = bot_pb2.RefereeMessage(
        match_id="m-1",
        action_request=bot_pb2.ActionRequest(
            request_id=7,
            legal_actions=[
                common_pb2.Action(gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_DISCARD, card="Kc")),
                common_pb2.Action(gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_KNOCK, card="Kc")),
            ],
            clocks=[
                common_pb2.Clock(seat=0, remaining_ms=59_000, increment_ms=500),
                common_pb2.Clock(seat=1, remaining_ms=-20, increment_ms=500, running=True),
            ],
            time_for_move_ms=1000,
            events=[
                _gin_event(1, gin_pb2.ACTION_KIND_PASS, "8d", 31),
                _gin_event(0, gin_pb2.ACTION_KIND_TAKE_UPCARD, "8d", 31),
                _gin_event(0, gin_pb2.ACTION_KIND_DISCARD, "9c", 31),
                _gin_event(1, gin_pb2.ACTION_KIND_DRAW_DISCARD, "9c", think_ms=12),
            ],
            gin=_sample_state(),
        ),
    )
    data = msg.SerializeToString(deterministic=True)
    back = bot_pb2.RefereeMessage.FromString(data)
    assert back == msg
    assert back.WhichOneof("kind") == "action_request"
    assert back.action_request.WhichOneof("game") == "gin"
    assert back.action_request.gin.known_cards[1].cards == ["9c"]
    assert back.action_request.gin.knock_limit == -1
    assert back.action_request.clocks[1].remaining_ms == -20
    assert back.action_request.events[3].gin.card == "9c"
    assert back.SerializeToString(deterministic=True) == data


def test_match_started_and_finished_round_trip() -> None:
    rules = gin_pb2.RuleSet(name="classic", knock=gin_pb2.KNOCK_MODE_LIMIT, knock_limit=10, gin_bonus=0)
    started = bot_pb2.RefereeMessage(
        match_id="m-1",
        match_started=bot_pb2.MatchStarted(
            match_id="m-1",
            seat=0,
            player_names=["alice", "bob"],
            game_name="gin",
            gin=rules,
            time_control=common_pb2.TimeControl(
                text="tc=60+0.5 timemargin=50",
                incremental=common_pb2.Incremental(base_ms=60_000, increment_ms=500),
                margin_ms=50,
            ),
            seed_commitment=bytes(32),
            fault_policy=common_pb2.FAULT_POLICY_FORFEIT,
        ),
    )
    back = bot_pb2.RefereeMessage.FromString(started.SerializeToString())
    assert back == started
    assert back.match_started.time_control.WhichOneof("kind") == "incremental"
    # presence: a zero that was set is told apart from an unset option
    assert back.match_started.gin.HasField("gin_bonus") and back.match_started.gin.gin_bonus == 0
    assert not back.match_started.gin.HasField("target")

    finished = bot_pb2.RefereeMessage(
        match_id="m-1",
        match_finished=bot_pb2.MatchFinished(
            result=common_pb2.MatchResult(
                winner=-1,
                termination=common_pb2.TERMINATION_ABORTED,
                faulting_seat=-1,
                games=[common_pb2.GameResult(game_number=1, winner=0, final_totals=[225, 0],
                                             gin=gin_pb2.GameResult(shutout=True))],
                seed=b"\x01" * 32,
                nonces=[b"", b"abc"],
            )
        ),
    )
    assert bot_pb2.RefereeMessage.FromString(finished.SerializeToString()) == finished


def test_bot_message_round_trip() -> None:
    for msg in (
        bot_pb2.BotMessage(
            hello=bot_pb2.Hello(bot_name="b", token="t", protocol_version=2, nonce=b"\x00" * 64)
        ),
        bot_pb2.BotMessage(
            action=bot_pb2.ActionResponse(
                match_id="m-1",
                request_id=2**64 - 1,
                action=common_pb2.Action(gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_KNOCK, card="Td")),
            )
        ),
        bot_pb2.BotMessage(ping=bot_pb2.Ping(ping_id=3)),
    ):
        back = bot_pb2.BotMessage.FromString(msg.SerializeToString())
        assert back == msg
        assert back.WhichOneof("kind") == msg.WhichOneof("kind")


def test_json_form_uses_card_text() -> None:
    msg = bot_pb2.BotMessage(
        action=bot_pb2.ActionResponse(
            match_id="m", request_id=1,
            action=common_pb2.Action(gin=gin_pb2.Action(kind=gin_pb2.ACTION_KIND_DISCARD, card="Td")),
        )
    )
    text = json_format.MessageToJson(msg)
    assert '"card": "Td"' in text and '"ACTION_KIND_DISCARD"' in text and '"gin": {' in text
    assert json_format.Parse(text, bot_pb2.BotMessage()) == msg


def test_a_plugin_game_travels_as_any() -> None:
    """An out-of-tree game's own message packed in ``other``; its JSON form names its type
    (a reader needs the message's descriptor: the referee serves it through reflection)."""
    packed = any_pb2.Any()
    packed.Pack(gin_pb2.Action(kind=gin_pb2.ACTION_KIND_DISCARD, card="7"))  # any message stands in
    action = common_pb2.Action(other=packed)
    back = common_pb2.Action.FromString(action.SerializeToString())
    assert back.WhichOneof("game") == "other"
    assert back.other.type_url == "type.googleapis.com/gin_arena.v2.games.gin.Action"
    inner = gin_pb2.Action()
    assert back.other.Unpack(inner) and inner.card == "7"
    text = json_format.MessageToJson(action)
    assert '"@type": "type.googleapis.com/gin_arena.v2.games.gin.Action"' in text
    assert json_format.Parse(text, common_pb2.Action()) == action


def test_spectator_event_round_trip() -> None:
    ev = referee_pb2.SpectatorEvent(
        match_id="m-1", event=_gin_event(0, gin_pb2.ACTION_KIND_DRAW_STOCK, stock=20),
    )
    assert referee_pb2.SpectatorEvent.FromString(ev.SerializeToString()) == ev


def test_match_events_round_trip() -> None:
    finished = referee_pb2.MatchEvent(
        sequence=7, referee_instance="r-1", time_ms=1_700_000_000_000,
        finished=referee_pb2.MatchSummary(
            match_id="m", game_name="rummy", player_names=["a", "b", "c"], state=referee_pb2.MATCH_STATE_FINISHED,
            result=common_pb2.MatchResult(match_id="m", winner=2, places=[2, 3, 1], game_name="rummy"),
        ),
    )
    back = referee_pb2.MatchEvent.FromString(finished.SerializeToString())
    assert back == finished and back.WhichOneof("kind") == "finished"
    watching = referee_pb2.MatchEvent(referee_instance="r-1", watching=referee_pb2.WatchingMatches())
    assert referee_pb2.MatchEvent.FromString(watching.SerializeToString()).WhichOneof("kind") == "watching"
    request = referee_pb2.WatchMatchesRequest(after_sequence=7, referee_instance="r-1", game_names=["gin"])
    assert json_format.Parse(json_format.MessageToJson(request), referee_pb2.WatchMatchesRequest()) == request


def test_rummy_messages_round_trip() -> None:
    """The rummy messages: an action request with a rummy state and legal actions, a Hello
    declaring its games, and a deal's end for four seats."""
    lay_off = rummy_pb2.Action(lay_off=rummy_pb2.LayOff(card="4s", meld=0, end=rummy_pb2.LAYOFF_END_HIGH))
    state = rummy_pb2.State(
        seat=2, num_seats=4, dealer=1, turn=2, to_move=2, phase=rummy_pb2.PHASE_PLAY,
        hand=["4s", "9h", "Kc"], hand_sizes=[7, 6, 3, 7], stock_size=20, discard_pile=["5d", "8c"],
        table=[rummy_pb2.TableMeld(
            number=0, owner=2, kind=rummy_pb2.MELD_KIND_RUN, cards=["As", "2s", "3s"],
            placed=[rummy_pb2.Placed(card=c, seat=2, end=rummy_pb2.LAYOFF_END_LOW) for c in ("As", "2s", "3s")],
        )],
        scores=[0, 12, 0, 40], game_number=1, deal_number=2, match_points=[0, 0, 0, 0],
    )
    events = [common_pb2.Event(seat=2, rummy=rummy_pb2.Event(
        action=rummy_pb2.Action(take_discard=rummy_pb2.TakeDiscard(card="3s")), taken_cards=["3s", "Qd"]))]
    msg = bot_pb2.RefereeMessage(match_id="m", action_request=bot_pb2.ActionRequest(
        request_id=3, legal_actions=[common_pb2.Action(rummy=lay_off)], events=events, rummy=state))
    back = bot_pb2.RefereeMessage.FromString(msg.SerializeToString())
    assert back == msg and back.action_request.WhichOneof("game") == "rummy"
    assert back.action_request.legal_actions[0].rummy.WhichOneof("kind") == "lay_off"
    assert back.action_request.legal_actions[0].WhichOneof("game") == "rummy"
    assert back.action_request.events[0].rummy.WhichOneof("kind") == "action"
    hello = bot_pb2.Hello(bot_name="b", token="t", protocol_version=2, games=["gin", "rummy"])
    assert list(bot_pb2.Hello.FromString(hello.SerializeToString()).games) == ["gin", "rummy"]
    assert list(bot_pb2.Hello().games) == []  # a Gin bot: gin only
    result = common_pb2.DealResult(game_number=1, deal_number=2, winner=3, scores_after=[0, 12, 0, 70],
                                   rummy=rummy_pb2.DealResult(
                                       reason=rummy_pb2.DEAL_END_REASON_OUT, points=[0, 0, 0, 30],
                                       hands=[rummy_pb2.SeatCards(seat=s) for s in range(4)]))
    assert common_pb2.DealResult.FromString(result.SerializeToString()) == result
    rules = rummy_pb2.RuleSet(name="michigan", stop=False, target=0)
    back_rules = rummy_pb2.RuleSet.FromString(rules.SerializeToString())
    assert back_rules.HasField("stop") and not back_rules.HasField("rummy_doubles") and back_rules.HasField("target")
