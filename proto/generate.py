#!/usr/bin/env python3
"""Regenerate the Python code of the Gin Arena protocol from its .proto files.

    python proto/generate.py          # regenerate the *_pb2* files under proto/
    python proto/generate.py --check  # exit 1, listing the files that differ, if they are stale

The generated code (``*_pb2.py``, ``*_pb2_grpc.py`` and the mypy-protobuf stubs ``*_pb2.pyi``,
``*_pb2_grpc.pyi``) is committed next to the .proto files. It is made with ``grpc_tools.protoc``
(protoc and the gRPC plugin bundled with grpcio-tools) and the ``protoc-gen-mypy`` /
``protoc-gen-mypy_grpc`` plugins of mypy-protobuf, found next to the running Python or on PATH.
The output depends only on the .proto files and those tool versions: running this twice gives
byte-identical files.

Only the standard library and grpcio-tools / mypy-protobuf are needed.
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata, resources
from pathlib import Path

PROTO_ROOT = Path(__file__).resolve().parent
"""The directory holding the .proto tree (``gin_arena/v2/*.proto``, ``gin_arena/v2/games/*.proto``)
and the generated code."""

SOURCE_DIRS = ("gin_arena",)
"""Top-level directories of PROTO_ROOT searched for .proto files."""

GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")
"""File name endings of generated files; any such file under SOURCE_DIRS is treated as generated."""

PLUGINS = ("protoc-gen-mypy", "protoc-gen-mypy_grpc")
"""The mypy-protobuf plugins that write the .pyi stubs."""


class GenerateError(RuntimeError):
    """The code could not be generated (a tool is missing or protoc failed)."""


def proto_files(root: Path = PROTO_ROOT) -> list[str]:
    """The .proto files under ``root``, as sorted POSIX paths relative to it."""
    found: list[str] = []
    for top in SOURCE_DIRS:
        found.extend(p.relative_to(root).as_posix() for p in (root / top).rglob("*.proto"))
    return sorted(found)


def generated_files(root: Path) -> list[str]:
    """The generated files present under ``root``, as sorted POSIX paths relative to it."""
    found: list[str] = []
    for top in SOURCE_DIRS:
        base = root / top
        if not base.is_dir():
            continue
        for p in base.rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts and p.name.endswith(GENERATED_SUFFIXES):
                found.append(p.relative_to(root).as_posix())
    return sorted(found)


def package_inits(root: Path = PROTO_ROOT) -> list[str]:
    """The ``__init__.py`` files that every directory holding .proto files (and its parents
    below ``root``) needs, so that the generated modules import as ``gin_arena.v2.xxx_pb2``."""
    needed: set[str] = set()
    for rel in proto_files(root):
        parts = Path(rel).parts[:-1]
        for i in range(1, len(parts) + 1):
            needed.add(Path(*parts[:i], "__init__.py").as_posix())
    return sorted(needed)


def _find_plugin(name: str) -> str:
    """The path of a protoc plugin: next to the running interpreter (a venv's bin/), else on PATH."""
    here = shutil.which(name, path=str(Path(sys.executable).parent))
    found = here or shutil.which(name)
    if not found:
        raise GenerateError(f"{name} not found next to {sys.executable} or on PATH; install mypy-protobuf")
    return found


def tool_versions() -> str:
    """The versions of the generating tools, for messages."""
    out = []
    for dist in ("grpcio-tools", "protobuf", "mypy-protobuf"):
        try:
            out.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            out.append(f"{dist} (not installed)")
    return ", ".join(out)


def generate(out_dir: Path, root: Path = PROTO_ROOT) -> list[str]:
    """Run protoc on every .proto under ``root``, writing the generated code into ``out_dir``.

    Returns the generated files as sorted POSIX paths relative to ``out_dir``."""
    if importlib.util.find_spec("grpc_tools") is None:
        raise GenerateError("grpcio-tools is not installed")
    sources = proto_files(root)
    if not sources:
        raise GenerateError(f"no .proto files under {root}")
    well_known = resources.files("grpc_tools") / "_proto"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = str(out_dir)
    cmd = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        "-I.",
        f"-I{well_known}",
        f"--plugin=protoc-gen-mypy={_find_plugin('protoc-gen-mypy')}",
        f"--plugin=protoc-gen-mypy_grpc={_find_plugin('protoc-gen-mypy_grpc')}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        f"--mypy_out={out}",
        f"--mypy_grpc_out={out}",
        *sources,
    ]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GenerateError(f"protoc failed (exit {proc.returncode}):\n{proc.stderr}{proc.stdout}")
    return generated_files(out_dir)


def check(root: Path = PROTO_ROOT) -> list[str]:
    """Regenerate into a temporary directory and compare with the files under ``root``.

    Returns one line per problem (``differs: …``, ``missing: …``, ``extra: …``); empty if
    the committed code is up to date."""
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="gin-arena-proto-") as tmp:
        fresh = set(generate(Path(tmp), root))
        present = set(generated_files(root))
        for rel in sorted(fresh | present):
            if rel not in present:
                problems.append(f"missing: {rel}")
            elif rel not in fresh:
                problems.append(f"extra: {rel}")
            elif not filecmp.cmp(Path(tmp, rel), root / rel, shallow=False):
                problems.append(f"differs: {rel}")
    for rel in package_inits(root):
        if not (root / rel).is_file():
            problems.append(f"missing: {rel}")
    return problems


def write(root: Path = PROTO_ROOT) -> list[str]:
    """Regenerate the code under ``root``: write the files that changed, delete stale generated
    files, and add missing empty ``__init__.py`` files. Returns the paths changed."""
    changed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="gin-arena-proto-") as tmp:
        fresh = generate(Path(tmp), root)
        for rel in fresh:
            src, dst = Path(tmp, rel), root / rel
            if dst.is_file() and filecmp.cmp(src, dst, shallow=False):
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
            changed.append(rel)
        for rel in sorted(set(generated_files(root)) - set(fresh)):
            (root / rel).unlink()
            changed.append(rel)
    for rel in package_inits(root):
        if not (root / rel).is_file():
            (root / rel).write_bytes(b"")
            changed.append(rel)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 listing the generated files that are out of date",
    )
    args = parser.parse_args(argv)
    try:
        if args.check:
            problems = check()
            if problems:
                print("generated protobuf code is out of date:", file=sys.stderr)
                for line in problems:
                    print(f"  {line}", file=sys.stderr)
                print(f"run: python proto/generate.py   (tools: {tool_versions()})", file=sys.stderr)
                return 1
            print(f"generated protobuf code is up to date ({tool_versions()})")
            return 0
        changed = write()
        for rel in changed:
            print(f"wrote {rel}")
        print(f"{len(changed)} file(s) changed ({tool_versions()})")
        return 0
    except GenerateError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
