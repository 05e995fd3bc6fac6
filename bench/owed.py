"""What finding a duplicate group's owed games costs on a large ``serve.sqlite``: G games of the
hosted ladder (two-seat groups, all complete but the last ``--short``), written into a fresh
store; then the ladder's look at a server's start (``owed_games``: every group of earlier runs)
and the web's look before it shows a finished game's replay (``finished_match``, which asks
``group_open``), each timed.

Prints, no asserts.

    .venv/bin/python bench/owed.py [--games 50000] [--short 10] [--lookups 200]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from arena.hosted.owed import owed_games
from arena.store import open_db
from arena.web.data import finished_match

RUN = "hosted-00aa11"
"""The earlier server run that played every group."""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=50_000, help="games in the store (default 50000)")
    p.add_argument("--short", type=int, default=10, help="groups at the end with their second game owed")
    p.add_argument("--lookups", type=int, default=200, help="finished_match calls timed")
    args = p.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-owed-"))
    db = open_db(folder / "serve.sqlite", "serve")
    groups = args.games // 2
    with db:
        for i in range(args.games):
            pair, leg = divmod(i, 2)
            if leg == 1 and pair >= groups - args.short:
                continue
            key = f"{RUN}-p{pair:05d}"
            cur = db.execute(
                "INSERT INTO games (run, pair, leg, pair_key, seed, status, match_id, termination, game, rules, "
                "time_control) VALUES (?, ?, ?, ?, ?, 'done', ?, 'normal', 'gin', '{}', '{}')",
                (RUN, pair, leg, key, "00" * 32, f"{key}-l{leg}"))
            db.executemany("INSERT INTO game_seats (game, seat, bot) VALUES (?, ?, ?)",
                           [(cur.lastrowid, 0, "a"), (cur.lastrowid, 1, "b")])
    started = time.perf_counter()
    owed = owed_games(db, before_run="hosted-ffffff", duplicate_default=True)
    print(f"owed_games at a server's start: {(time.perf_counter() - started) * 1000:.0f} ms over "
          f"{args.games} games ({len(owed)} owed)")
    started = time.perf_counter()
    for i in range(args.lookups):
        finished_match(db, f"{RUN}-p{(i * 97) % groups:05d}-l0", folder)
    print(f"finished_match (with group_open): {(time.perf_counter() - started) / args.lookups * 1000:.2f} ms each")
    db.close()


if __name__ == "__main__":
    main()
