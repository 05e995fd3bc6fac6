"""``arena proto-gen``: a game's gencode made with gin-arena's pinned grpcio-tools and mypy-protobuf
(its ``codegen`` extra), so that it always matches the runtime. Real processes: the command is run
as a user runs it, and what it writes is imported by a fresh Python."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from arena.cli import protogen_cmd

REPO = Path(__file__).resolve().parent.parent
TOY3 = REPO / "tests" / "plugin_game" / "toy3_game"
HANG_S = 600
"""How long one command may take before the test calls it a hang (far above its time when loaded)."""


def _arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", "proto-gen", *args], capture_output=True, text=True,
                          timeout=HANG_S, cwd=cwd)


def test_the_pins_are_the_extras_and_the_installed_tools() -> None:
    """The command reads the pins from gin-arena's own metadata (its ``codegen`` extra), and the
    test extra installs exactly those."""
    pins = protogen_cmd.pins()
    assert set(pins) == {"grpcio-tools", "mypy-protobuf"}, pins
    for tool, version in pins.items():
        assert metadata.version(tool) == version
    protogen_cmd.check_tools()


def test_the_plugin_games_committed_gencode_is_what_the_pinned_tools_make(tmp_path: Path) -> None:
    done = _arena(str(TOY3), "--check", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "up to date" in done.stdout and "grpcio-tools 1.85.1" in done.stdout


def test_a_changed_proto_is_reported_then_generated_and_imports(tmp_path: Path) -> None:
    game = tmp_path / "my_game"
    game.mkdir()
    shutil.copy(TOY3 / "toy3.proto", game / "my_game.proto")
    proto = game / "my_game.proto"
    proto.write_text(proto.read_text().replace("package toy3.v1;", "package my_game.v1;"))
    stale = _arena(str(game), "--check", cwd=tmp_path)
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert f"missing: {game / 'my_game_pb2.py'}" in stale.stderr and "missing:" in stale.stderr
    assert not (game / "my_game_pb2.py").exists(), "--check wrote a file"

    made = _arena(str(game), cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    assert {p.name for p in game.iterdir()} == {"my_game.proto", "my_game_pb2.py", "my_game_pb2.pyi"}
    first = {p.name: p.read_bytes() for p in game.iterdir()}

    proto.write_text(proto.read_text().replace("uint32 card = 1;\n}\n", "uint32 card = 1;\n  string why = 2;\n}\n", 1))
    assert _arena(str(proto), "--check", cwd=tmp_path).returncode == 1
    assert _arena(str(proto), cwd=tmp_path).returncode == 0
    code = "import my_game_pb2 as m; p = m.Play(card=3, why='x'); print(m.Play.FromString(p.SerializeToString()))"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_S, cwd=game)
    assert shown.returncode == 0, shown.stderr
    assert 'why: "x"' in shown.stdout and "card: 3" in shown.stdout
    assert first["my_game_pb2.py"] != (game / "my_game_pb2.py").read_bytes()

    again = {p.name: p.read_bytes() for p in game.iterdir()}
    assert _arena(str(game), cwd=tmp_path).returncode == 0
    assert again == {p.name: p.read_bytes() for p in game.iterdir()}, "a second run changed the bytes"
    assert _arena(str(game), "--check", cwd=tmp_path).returncode == 0


def test_bad_paths_and_a_broken_proto_are_one_clear_line(tmp_path: Path) -> None:
    nothing = _arena(str(tmp_path), cwd=tmp_path)
    assert nothing.returncode == 2 and "no .proto files in" in nothing.stderr, nothing.stderr
    other = tmp_path / "notes.txt"
    other.write_text("x")
    assert "not a .proto file or a folder" in _arena(str(other), cwd=tmp_path).stderr
    (tmp_path / "bad.proto").write_text('syntax = "proto3";\nmessage {\n')
    broken = _arena(str(tmp_path / "bad.proto"), cwd=tmp_path)
    assert broken.returncode == 2 and "protoc failed on" in broken.stderr, broken.stderr
    assert not list(tmp_path.glob("bad_pb2*"))


def test_another_tools_version_is_refused_naming_the_pin(monkeypatch: pytest.MonkeyPatch) -> None:
    """A grpcio-tools other than the pin would write gencode for another runtime: refused, naming
    the pin and the extra that installs it."""
    real = metadata.version
    monkeypatch.setattr(metadata, "version",
                        lambda d: "1.99.0" if d == "grpcio-tools" else real(d))
    with pytest.raises(protogen_cmd.CodegenError, match=r"grpcio-tools 1\.99\.0 is installed but gin-arena pins "
                       r"grpcio-tools==1\.85\.1 .*pip install 'gin-arena\[codegen\]'"):
        protogen_cmd.check_tools()
