"""A stall probe for ``bench/web.py --probe`` (loaded as ``sitecustomize`` from ``PYTHONPATH`` by
every Python process the bench starts, active only with ``ARENA_LAG_DIR`` set): a thread that
sleeps 1 ms and records how late it wakes (how long the interpreter was held: a long step on the
loop, a collection, another thread's work), and every garbage collection's duration by generation
(``gc.callbacks``). Each process writes its figures to ``$ARENA_LAG_DIR/<pid>.json`` every second
(the bench's processes are killed, not asked to flush)."""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
import time

TICK_S = 0.001
"""How long the probe sleeps each time."""
WRITE_S = 1.0
"""Seconds between writes of the figures."""
BUCKETS_MS = (5, 20, 50, 100)
"""Lateness thresholds counted (ms)."""


def _start(folder: str) -> None:
    figures: dict[str, object] = {"argv": sys.argv[:3], "ticks": 0, "late_ms_over": {str(b): 0 for b in BUCKETS_MS},
                                  "late_max_ms": 0.0, "gc_ms": {"0": [], "1": [], "2": []}}
    gc_started = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc_started[0] = time.perf_counter()
        else:
            took = (time.perf_counter() - gc_started[0]) * 1000
            if took >= 1.0 or info["generation"] == 2:
                figures["gc_ms"][str(info["generation"])].append(round(took, 2))  # type: ignore[index]

    gc.callbacks.append(on_gc)

    def probe() -> None:
        last_write = time.monotonic()
        over: dict[str, int] = figures["late_ms_over"]  # type: ignore[assignment]
        while True:
            t = time.perf_counter()
            time.sleep(TICK_S)
            late = (time.perf_counter() - t - TICK_S) * 1000
            figures["ticks"] = int(figures["ticks"]) + 1  # type: ignore[call-overload]
            for b in BUCKETS_MS:
                if late > b:
                    over[str(b)] += 1
            figures["late_max_ms"] = max(float(figures["late_max_ms"]), round(late, 2))  # type: ignore[arg-type]
            if time.monotonic() - last_write > WRITE_S:
                last_write = time.monotonic()
                with open(os.path.join(folder, f"{os.getpid()}.json"), "w") as f:
                    json.dump(figures, f)

    threading.Thread(target=probe, name="lag-probe", daemon=True).start()


if os.environ.get("ARENA_LAG_DIR"):
    _start(os.environ["ARENA_LAG_DIR"])
