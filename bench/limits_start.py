"""What a bot's resource limits cost at its start: the median time to start and end a program
directly and through the limits' wrapper (an isolated ``python -I -S`` that calls ``setrlimit``
and ``exec``s it), as a ratio to one plain Python interpreter start (what every Python bot pays):

    .venv/bin/python bench/limits_start.py [--runs 30]

The wrapper runs once per process: with ``restart = "never"`` (the default) once per bot and
run, not per game.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from referee import ProcessLimits


def median_s(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True)
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=30)
    args = p.parse_args()
    python = median_s([sys.executable, "-c", "pass"], args.runs)
    true = median_s(["true"], args.runs)
    wrapped = median_s(ProcessLimits(memory_mb=512, cpu_seconds=60).wrap(["true"]), args.runs)
    print(f"wrapper cost (limited `true` minus `true`) / one `python -c pass` start: "
          f"{(wrapped - true) / python:.2f}")


if __name__ == "__main__":
    main()
