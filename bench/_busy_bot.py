"""A CPU-bound bot for bench/: the greedy sample bot's choice after spinning the CPU for
``BENCH_BUSY_MS`` milliseconds of its own CPU time (default 20) per decision.

    python bench/_busy_bot.py --referee HOST:PORT --token T
"""

from __future__ import annotations

import os
import time

from gin_arena.v2 import bot_pb2, common_pb2
from sample_bots.greedy_bot import decide
from sample_bots.kit import run_bot

BUSY_S = float(os.environ.get("BENCH_BUSY_MS", "20")) / 1000


def busy_decide(request: bot_pb2.ActionRequest) -> common_pb2.Action:
    """Spin, then decide as the greedy bot does."""
    end = time.process_time() + BUSY_S
    while time.process_time() < end:
        pass
    return decide(request)


if __name__ == "__main__":
    raise SystemExit(run_bot(busy_decide, name="busy"))
