"""Issue 12's tests on the commit before its work and on HEAD: checks the base commit out into a
temporary worktree under /tmp, copies the issue's test files there (and the test helpers the base
lacks), runs each file on both trees and prints a table of file -> failed/passed. A file that
does not even import on the base counts as failing there.

    .venv/bin/python bench/issue12_before_after.py            # base 8413415
    .venv/bin/python bench/issue12_before_after.py --base REV --timeout 300

Each run is ``pytest FILE -p no:randomly`` (and the project's ``-q``) with this checkout's interpreter; ``PYTHONPATH``
points at the tree under test, so its ``referee``/``arena`` packages (and the subprocesses the
tests start) are that tree's. Exit status 0 when every file fails on the base and passes on HEAD.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = "8413415"
TESTS: list[tuple[str, str]] = [
    ("tests/test_operator_auth.py", ""),
    ("tests/test_tls.py", ""),
    ("tests/test_referee_limits.py", ""),
    ("tests/test_list_matches_bound.py", ""),
    ("tests/test_arena_limits.py", ""),
    ("tests/test_arena_cancelled.py", ""),
    ("tests/test_referee_memory.py", ""),
    ("tests/test_referee_faults.py", "undecodable"),
    ("tests/test_journal.py", ""),
    ("tests/test_friendly_errors.py", ""),
]
"""Issue 12's test files, with a ``-k`` selector for a file that holds older tests too."""


def run(tree: Path, test: str, select: str, timeout: float, first_failure: bool) -> tuple[str, str, float]:
    """``passed``/``failed`` and pytest's summary line for ``test`` run inside ``tree``."""
    argv = [sys.executable, "-m", "pytest", test, "-p", "no:randomly", "-o", f"timeout={timeout:g}"]
    argv += ["-k", select] if select else []
    argv += ["-x"] if first_failure else []
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("GIN_ARENA_OPERATOR_TOKEN", None)
    t0 = time.monotonic()
    try:
        done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout * 4)
        out, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as e:
        out, code = str(e.stdout or "") + "\n(timed out)", 1
    lines = [ln for ln in out.splitlines() if re.search(r"\b(passed|failed|error|errors|no tests ran)\b", ln)]
    summary = lines[-1].strip("= ") if lines else out.strip().splitlines()[-1:][0] if out.strip() else "no output"
    return ("passed" if code == 0 else "failed"), summary[:90], time.monotonic() - t0


def prepare_base(base: str, folder: Path) -> Path:
    """A worktree of ``base`` in ``folder`` with the issue's tests and missing helpers copied in."""
    tree = folder / "base"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(tree), base], check=True,
                   capture_output=True)
    for test, _ in TESTS:
        shutil.copy2(ROOT / test, tree / test)
    for helper in (ROOT / "tests").glob("_*.py"):
        if not (tree / "tests" / helper.name).exists():
            shutil.copy2(helper, tree / "tests" / helper.name)
    return tree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=BASE, help=f"the commit before the issue's work (default {BASE})")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per test (default 300)")
    args = parser.parse_args()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    folder = Path(tempfile.mkdtemp(prefix="issue12-before-after-", dir="/tmp"))
    rows = []
    try:
        tree = prepare_base(args.base, folder)
        for test, select in TESTS:
            before = run(tree, test, select, args.timeout, first_failure=True)
            after = run(ROOT, test, select, args.timeout, first_failure=False)
            rows.append((test + (f" -k {select}" if select else ""), before, after))
            print(f"{rows[-1][0]}: base {before[0]} ({before[1]}); HEAD {after[0]} ({after[1]})", flush=True)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder / "base")],
                       capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
    width = max(len(r[0]) for r in rows)
    print(f"\n{'test file':<{width}} | base {args.base:<8} | HEAD {head}")
    print(f"{'-' * width}-|-{'-' * 13}-|-{'-' * 12}")
    for name, before, after in rows:
        print(f"{name:<{width}} | {before[0]:<13} | {after[0]:<8} ({after[1]})")
    ok = all(b[0] == "failed" and a[0] == "passed" for _, b, a in rows)
    print(f"\nevery file fails on {args.base} and passes on {head}: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
