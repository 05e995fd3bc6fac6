"""``arena proto-gen PATH... [--check]``: a game's generated protobuf code from its ``.proto`` files.

A game's own messages (docs/adding-a-game.md) need their ``_pb2.py`` (and, for type checkers, the
``_pb2.pyi`` stub). That code must match the protobuf runtime: gencode made by a newer protoc
than the runtime refuses to import. This command makes it with the grpcio-tools (and
mypy-protobuf) versions gin-arena pins — its ``codegen`` extra, ``pip install 'gin-arena[codegen]'``
— and refuses other versions, naming the pin, so that a game's gencode is the same bytes on every
machine and imports with the runtime gin-arena is tested with.

Each ``.proto`` file is compiled from its own folder (``-I`` that folder, plus protobuf's
well-known types from grpcio-tools, so ``import "google/protobuf/any.proto"`` works), and its
code is written beside it: ``my_game/my_game.proto`` gives ``my_game/my_game_pb2.py`` and
``my_game/my_game_pb2.pyi``. ``--check`` writes nothing and exits 1 naming every file that is
missing or differs (a test or CI step keeps committed gencode honest). The output depends only on
the ``.proto`` files and the pinned tools: running it twice gives byte-identical files.
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.util
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from arena.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE

DISTRIBUTION = "gin-arena"
"""The distribution whose ``codegen`` extra pins the tools."""
EXTRA = "codegen"
"""The extra that installs them: ``pip install 'gin-arena[codegen]'``."""
TOOLS = ("grpcio-tools", "mypy-protobuf")
"""The pinned tools: protoc (bundled with grpcio-tools) and the ``.pyi`` stub plugin."""
STUB_PLUGIN = "protoc-gen-mypy"
"""mypy-protobuf's protoc plugin, as protoc calls it."""
STUB_MODULE = "mypy_protobuf.main"
"""The module whose ``main`` is that plugin (run by the arena's own Python)."""
SUFFIXES = ("_pb2.py", "_pb2.pyi")
"""What each ``.proto`` file gives, beside it."""


class CodegenError(RuntimeError):
    """The code cannot be generated: a tool is missing or not the pinned version, or protoc failed."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one run did or found."""

    written: tuple[Path, ...]
    """Files written (``--check``: none)."""
    stale: tuple[str, ...]
    """``--check``: one line per generated file that is missing or differs."""


def pins() -> dict[str, str]:
    """The tool versions gin-arena's ``codegen`` extra pins (``{"grpcio-tools": "1.85.1", ...}``)."""
    found: dict[str, str] = {}
    for req in metadata.requires(DISTRIBUTION) or []:
        m = re.match(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([^;\s]+)\s*;(.*)", req)
        if m and re.search(rf"""extra\s*==\s*["']{EXTRA}["']""", m.group(3)) and m.group(1).lower() in TOOLS:
            found[m.group(1).lower()] = m.group(2)
    return found


def check_tools() -> None:
    """:class:`CodegenError` unless every tool is installed at gin-arena's pinned version."""
    wanted = pins()
    install = f"pip install '{DISTRIBUTION}[{EXTRA}]'"
    for tool in TOOLS:
        pin = wanted.get(tool)
        if pin is None:
            raise CodegenError(f"{DISTRIBUTION}'s metadata pins no {tool} in its [{EXTRA}] extra (reinstall it)")
        try:
            have = metadata.version(tool)
        except metadata.PackageNotFoundError:
            raise CodegenError(f"{tool} is not installed; {install} installs the pinned {tool}=={pin}") from None
        if have != pin:
            raise CodegenError(f"{tool} {have} is installed but {DISTRIBUTION} pins {tool}=={pin} (the gencode "
                               f"must match the runtime it is tested with); {install}")


def proto_files(paths: list[Path]) -> list[Path]:
    """The ``.proto`` files named, or under the folders named, sorted (:class:`CodegenError` for a
    path that is neither, or if there are none)."""
    found: set[Path] = set()
    for p in paths:
        if p.is_dir():
            found.update(q for q in p.rglob("*.proto") if "__pycache__" not in q.parts)
        elif p.is_file() and p.suffix == ".proto":
            found.add(p)
        else:
            raise CodegenError(f"{p}: not a .proto file or a folder")
    if not found:
        raise CodegenError(f"no .proto files in {', '.join(map(str, paths))}")
    return sorted(q.resolve() for q in found)


def _plugin(folder: Path) -> Path:
    """mypy-protobuf's protoc plugin as an executable in ``folder``, run by this Python (so it is
    the installed, pinned one, whatever is on PATH)."""
    if importlib.util.find_spec(STUB_MODULE) is None:
        raise CodegenError(f"mypy-protobuf is not installed; pip install '{DISTRIBUTION}[{EXTRA}]'")
    path = folder / STUB_PLUGIN
    path.write_text(f"#!{sys.executable}\nimport sys\nfrom {STUB_MODULE} import main\nsys.exit(main())\n")
    path.chmod(0o700)
    return path


def _compile(proto: Path, out: Path) -> None:
    """protoc on one file, from its folder, into ``out``."""
    if importlib.util.find_spec("grpc_tools") is None:
        raise CodegenError(f"grpcio-tools is not installed; pip install '{DISTRIBUTION}[{EXTRA}]'")
    well_known = resources.files("grpc_tools") / "_proto"
    with tempfile.TemporaryDirectory(prefix="arena-proto-plugin-") as tools:
        cmd = [sys.executable, "-m", "grpc_tools.protoc", f"-I{proto.parent}", f"-I{well_known}",
               f"--plugin=protoc-gen-mypy={_plugin(Path(tools))}", f"--python_out={out}", f"--mypy_out={out}",
               proto.name]
        done = subprocess.run(cmd, cwd=proto.parent, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CodegenError(f"protoc failed on {proto} (exit {done.returncode}): "
                           f"{' '.join((done.stderr + done.stdout).split())}")


def generate(paths: list[Path], *, check: bool = False) -> Outcome:
    """Generate (or, with ``check``, compare) the code of every ``.proto`` file in ``paths``."""
    check_tools()
    written: list[Path] = []
    stale: list[str] = []
    for proto in proto_files(paths):
        with tempfile.TemporaryDirectory(prefix="arena-proto-gen-") as tmp:
            _compile(proto, Path(tmp))
            for suffix in SUFFIXES:
                fresh = Path(tmp) / (proto.stem + suffix)
                dest = proto.parent / fresh.name
                if not dest.is_file():
                    stale.append(f"missing: {dest}")
                elif filecmp.cmp(fresh, dest, shallow=False):
                    continue
                else:
                    stale.append(f"differs: {dest}")
                if not check:
                    dest.write_bytes(fresh.read_bytes())
                    written.append(dest)
    return Outcome(tuple(written), tuple(stale) if check else ())


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``proto-gen`` to the ``arena`` command's subparsers."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "proto-gen", formatter_class=argparse.RawDescriptionHelpFormatter,
        help="generate a game's _pb2.py/.pyi from its .proto files with the pinned grpcio-tools",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        epilog="Examples:\n  arena proto-gen my_game/\n  arena proto-gen my_game/my_game.proto --check",
    )
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a .proto file, or a folder searched for them")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 naming each generated file that is missing or out of date")
    return p


def run(args: argparse.Namespace) -> int:
    """``arena proto-gen``."""
    try:
        done = generate(args.paths, check=args.check)
    except CodegenError as e:
        print(f"arena proto-gen: {e}", file=sys.stderr)
        return EXIT_USAGE
    versions = ", ".join(f"{t} {metadata.version(t)}" for t in TOOLS)
    if args.check:
        if done.stale:
            print("arena proto-gen: generated code is out of date:", file=sys.stderr)
            for line in done.stale:
                print(f"  {line}", file=sys.stderr)
            print(f"run: arena proto-gen {' '.join(map(str, args.paths))}   ({versions})", file=sys.stderr)
            return EXIT_FAILED
        print(f"generated code is up to date ({versions})")
        return EXIT_OK
    for path in done.written:
        print(f"wrote {path}")
    print(f"{len(done.written)} file(s) changed ({versions})")
    return EXIT_OK
