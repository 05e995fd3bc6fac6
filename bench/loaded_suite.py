"""The test of the tests (issue 34): the test suite under load. Starts one busy-loop process per
core (at this script's niceness: 0 from a shell), or ``stress-ng --cpu`` when it is installed
and ``--stress-ng`` asks for it, runs the README's test command's two pytest steps under that load — the tests marked
serial alone, then the rest across ``--workers`` workers (``--dist worksteal``), as ``.ci/run``
does — or a chosen subset, and prints each step's pass/fail/error/skip counts (read from
pytest's JUnit XML), its wall time, the failures' names, and the 1-minute load average sampled
every few seconds through the run (min, median, max). The load is the script's own: started by
it and killed on its way out whatever happens (an exception, Ctrl-C, SIGTERM; a busy loop whose
parent is gone stops by itself too). Exits non-zero when any step failed.

    .venv/bin/python bench/loaded_suite.py [--load N] [--workers N] [--steps serial,parallel]
        [--step-timeout S] [--stress-ng] [--junit-dir DIR] [-- PYTEST_ARGS...]

With ``PYTEST_ARGS`` (paths, ``-k``) both steps run only those tests: ``-- tests/test_readme.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
"""The checkout whose tests run (the tests run from its top, as ``.ci/run`` runs them)."""

BUSY_LOOP = """
import os, sys
parent = int(sys.argv[1])
while True:
    for _ in range(1_000_000):
        pass
    if os.getppid() != parent:
        raise SystemExit(0)
"""
"""One core's load: spin, and stop once the script that started it is gone (its parent pid
changes when it dies, however it dies)."""

LOAD_SAMPLE_S = 5.0
"""How often the load average is read during the run."""


@dataclass(frozen=True, slots=True)
class Step:
    """One pytest run of the suite under load."""

    name: str
    """``serial`` or ``parallel``."""
    wall_s: float
    """Its wall time."""
    exit_code: int
    """pytest's exit code (``-9`` when ``--step-timeout`` killed it)."""
    counts: dict[str, int]
    """passed, failed, errors, skipped (from the JUnit XML)."""
    failures: tuple[str, ...]
    """The failed or erroring tests' names (``file::test``)."""


class Interrupted(Exception):
    """SIGTERM or SIGHUP arrived: unwind, killing the load on the way."""


_held: list[int] | None = None
"""While :func:`held_signals` runs: the signals that came meanwhile (``None``: none is held)."""


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    if _held is not None:
        _held.append(signum)
        return
    raise Interrupted(f"signal {signum}")


@contextlib.contextmanager
def held_signals() -> Iterator[None]:
    """Hold SIGTERM and SIGHUP over a block that must finish (starting a step: interrupted inside
    ``Popen``, after its child started but before it returned, the step would be left running,
    unkilled — it happened once under load); one that came meanwhile interrupts after it."""
    global _held
    _held = []
    try:
        yield
    finally:
        came, _held = _held, None
    if came:
        raise Interrupted(f"signal {came[0]}")


@contextlib.contextmanager
def cpu_load(n: int, use_stress_ng: bool) -> Iterator[list[int]]:
    """``n`` processes that keep ``n`` cores busy until the block exits (their pids)."""
    stress = shutil.which("stress-ng") if use_stress_ng else None
    if stress:
        cmds = [[stress, "--cpu", str(n), "--cpu-method", "loop", "--quiet"]]
    else:
        cmds = [[sys.executable, "-c", BUSY_LOOP, str(os.getpid())] for _ in range(n)]
    procs = [subprocess.Popen(c, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              start_new_session=True) for c in cmds]
    try:
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
        for p in procs:
            p.wait()


class LoadSampler:
    """The 1-minute load average every ``LOAD_SAMPLE_S`` seconds until stopped."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(LOAD_SAMPLE_S):
            self.samples.append(os.getloadavg()[0])

    def summary(self) -> str:
        """min / median / max of the samples so far."""
        if not self.samples:
            return "no sample"
        return (f"1-min load average min {min(self.samples):.1f}, median {statistics.median(self.samples):.1f}, "
                f"max {max(self.samples):.1f} ({len(self.samples)} samples)")


def read_junit(path: Path) -> tuple[dict[str, int], tuple[str, ...]]:
    """The counts and the failed tests' names of a JUnit XML file (empty when pytest wrote none)."""
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    if not path.exists():
        return counts, ()
    failures: list[str] = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        kinds = {child.tag for child in case}
        if "failure" in kinds:
            counts["failed"] += 1
            failures.append(name)
        elif "error" in kinds:
            counts["errors"] += 1
            failures.append(name)
        elif "skipped" in kinds:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return counts, tuple(failures)


def run_step(name: str, args: list[str], python: str, timeout: float, out: Path) -> Step:
    """One pytest step, its output going to this script's, then its counts."""
    xml = out / f"{name}.xml"
    cmd = [python, "-m", "pytest", *args, f"--junitxml={xml}", "-q"]
    print("+", " ".join(cmd), flush=True)
    start = time.monotonic()
    proc: subprocess.Popen[bytes] | None = None
    try:
        with held_signals():
            proc = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True)
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"+ {name}: still running after {timeout:.0f} s: killed", flush=True)
        code = -9
    finally:
        if proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    counts, failures = read_junit(xml)
    return Step(name, time.monotonic() - start, code, counts, failures)


def step_args(steps: list[str], workers: int, chosen: list[str]) -> list[tuple[str, list[str]]]:
    """Each step's pytest arguments, as ``.ci/run`` gives them."""
    given = {"serial": ["-m", "serial", *chosen],
             "parallel": ["-n", str(workers), "--dist", "worksteal", "-m", "not serial", *chosen]}
    return [(s, given[s]) for s in steps]


def report(steps: list[Step], sampler: LoadSampler, load: int, total_s: float) -> None:
    """Each step's counts, wall time and failures; the load through the run."""
    print(f"\n=== the suite under load: {load} busy processes on {os.cpu_count()} cores; {sampler.summary()}")
    for s in steps:
        c = s.counts
        print(f"{s.name}: {c['passed']} passed, {c['failed']} failed, {c['errors']} errors, {c['skipped']} skipped "
              f"in {s.wall_s:.0f} s (pytest exit {s.exit_code})")
        for f in s.failures:
            print(f"  FAILED {f}")
    print(f"all: {sum(s.counts['passed'] for s in steps)} passed, "
          f"{sum(s.counts['failed'] + s.counts['errors'] for s in steps)} failed or errors in {total_s:.0f} s",
          flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", type=int, default=os.cpu_count() or 1, help="busy processes (default: one per core)")
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1),
                        help="pytest-xdist workers of the parallel step (default: two per core, as .ci/run)")
    parser.add_argument("--steps", default="serial,parallel", help="which of .ci/run's pytest steps, in order")
    parser.add_argument("--step-timeout", type=float, default=3 * 3600, help="kill a step after this many seconds")
    parser.add_argument("--stress-ng", action="store_true", help="load with stress-ng --cpu when installed")
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose pytest runs the tests")
    parser.add_argument("--junit-dir", type=Path, help="keep each step's JUnit XML here (default: a temporary folder)")
    parser.add_argument("pytest_args", nargs="*", help="after --: paths or -k to run only those tests")
    a = parser.parse_args()
    steps = [s for s in a.steps.split(",") if s]
    if not set(steps) <= {"serial", "parallel"}:
        parser.error("--steps takes serial and/or parallel")
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)
    done: list[Step] = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="loaded-suite-") as scratch, cpu_load(a.load, a.stress_ng) as pids, \
            LoadSampler() as sampler:
        out = a.junit_dir or Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        print(f"+ load: {a.load} busy processes, pids {pids}", flush=True)
        try:
            for name, args in step_args(steps, a.workers, a.pytest_args):
                done.append(run_step(name, args, a.python, a.step_timeout, out))
        except (Interrupted, KeyboardInterrupt) as e:
            print(f"+ interrupted ({e or 'Ctrl-C'}): the load is killed", flush=True)
        report(done, sampler, a.load, time.monotonic() - start)
    bad = len(done) < len(steps) or any(s.exit_code != 0 or s.counts["failed"] or s.counts["errors"] for s in done)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
