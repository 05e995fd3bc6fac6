"""referee.gin is pure: importing it loads no transport, concurrency or logging library."""

import subprocess
import sys

FORBIDDEN = ("grpc", "trio", "structlog", "google.protobuf", "asyncio", "socket", "random")


def test_importing_the_engine_loads_no_io_or_concurrency_modules() -> None:
    code = (
        "import sys, referee.gin\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r} or m in {FORBIDDEN!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"referee.gin pulled in: {out.stdout.strip()}"


def test_the_engine_sources_import_only_the_standard_library() -> None:
    import ast
    import pathlib

    import referee.gin

    root = pathlib.Path(referee.gin.__file__).parent
    allowed = set(sys.stdlib_module_names)
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed | {"__future__"} or name.startswith("referee.gin"), (
                    f"{path.name} imports {name}"
                )
