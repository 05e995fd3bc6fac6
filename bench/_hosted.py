"""What the hosted-arena benches share (``bench/hosted.py``, ``bench/web.py``): ``arena serve`` as a
subprocess on free ports, registered bots, the lean test bots that play on it with their own
tokens, and a process's RSS and CPU read from ``/proc``."""

from __future__ import annotations

import itertools
import os
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena.cli"]
TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
PRESET = "short"
"""The rules every bench game is played with (short games: many finish in a window)."""
TC = "st=1 timemargin=50"
"""The time control of every bench game (the arena's default)."""
LADDER = f'[[play]]\npreset = "{PRESET}"\ntc = "{TC}"\n'
"""The ladder file: Gin ``short``, two seats, the default time control (duplicate pairs, fewest games first)."""
NO_LIMITS = ["--limit", "bot_matches_per_minute=100000"]
"""The ladder's per-bot rate limit raised past what a bench reaches (each bot still plays one match at a time)."""


def rss_kb(pid: int) -> int:
    """Resident memory of a process (KB)."""
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * PAGE // 1024


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def load_avg() -> str:
    """The machine's 1-minute load average, to print beside a figure."""
    return f"load {os.getloadavg()[0]:.2f}"


def register(folder: Path, names: Sequence[str]) -> dict[str, str]:
    """Register ``names`` on the server's folder; their tokens. The first with ``arena bots add``
    (it creates ``serve.sqlite`` and prints the token alone), the rest through the same registry
    in this process (a subprocess each would take most of a minute for 1,000 bots)."""
    from arena.hosted.registry import BotRegistry
    from arena.store import open_db

    folder.mkdir(parents=True, exist_ok=True)
    first = subprocess.run([*ARENA, "bots", "add", names[0], "--dir", str(folder)], capture_output=True,
                           text=True, check=True, cwd=ROOT)
    tokens = {names[0]: first.stdout.strip()}
    registry = BotRegistry(open_db(folder / "serve.sqlite", "serve"))
    for name in names[1:]:
        tokens[name] = registry.add(name)
    registry.db.close()
    return tokens


def start_server(folder: Path, *, ladder: bool = True, web_watchers: int = 0, env: dict[str, str] | None = None
                 ) -> tuple[subprocess.Popen[str], str, str]:
    """``arena serve`` on ``folder`` (with the bench ladder unless ``ladder`` is false; with its
    live web when ``web_watchers`` > 0, its live-update limits raised to hold that many): the
    process, its referee's address and its web's address ("" without). ``env``: its environment
    (default: this one's)."""
    argv = [*ARENA, "serve", "--listen", "127.0.0.1:0", "--dir", str(folder), *NO_LIMITS]
    if ladder:
        (folder / "ladder.toml").write_text(LADDER, encoding="utf-8")
        argv += ["--ladder", str(folder / "ladder.toml")]
    if web_watchers:
        argv += ["--web", "127.0.0.1:0", "--web-limit", f"sse_per_client={web_watchers + 10}",
                 "--web-limit", f"sse_connections={web_watchers + 10}"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT, env=env)
    assert proc.stdout is not None
    referee = web = ""
    for line in proc.stdout:
        if line.startswith("referee listening on "):
            referee = line.split()[3].rstrip(";")
            if not web_watchers:
                break
        if line.startswith("live web on "):
            web = line.split()[3]
            break
    if not referee:
        raise SystemExit(f"arena serve did not start (exit {proc.wait()})")
    return proc, referee, web


def bot_argv(referee: str, token: str, name: str) -> list[str]:
    """The lean bot that plays on the server until stopped: ``arena._testbot`` (greedy: short
    games), the same program a local tournament's ``--bot`` runs."""
    return [sys.executable, "-m", "arena._testbot", "--referee", referee, "--token", token, "--matches", "0",
            "--name", name]


def start_bots(referee: str, tokens: dict[str, str]) -> list[subprocess.Popen[bytes]]:
    """One process per registered bot, each connecting with its own token."""
    return [subprocess.Popen(bot_argv(referee, token, name), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             cwd=ROOT) for name, token in tokens.items()]


def stop(procs: Sequence[subprocess.Popen[str] | subprocess.Popen[bytes]]) -> None:
    """Terminate processes this bench started, and wait for them."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def games_finished(db: Path, since: float = 0.0) -> int:
    """Games a run or server database holds finished after ``since`` (wall-clock seconds)."""
    if not db.exists():
        return 0
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        row = conn.execute("SELECT COUNT(*) FROM games WHERE finished_at IS NOT NULL AND finished_at > ?",
                           (since,)).fetchone()
    except sqlite3.OperationalError:  # (the schema is not written yet)
        return 0
    finally:
        conn.close()
    return int(row[0])


def pair_spread(db: Path) -> tuple[int, int, int, int]:
    """The pairs of two bots that met in ``db``'s finished games, of how many possible (among the
    bots that played), and the fewest and most games one of those pairs played together."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        rows = conn.execute("SELECT s.game, s.bot FROM game_seats s JOIN games g ON g.idx = s.game "
                            "WHERE g.finished_at IS NOT NULL ORDER BY s.game, s.seat").fetchall()
    finally:
        conn.close()
    tables: dict[int, list[str]] = {}
    for game, bot in rows:
        tables.setdefault(int(game), []).append(str(bot))
    met = Counter(frozenset(p) for t in tables.values() for p in itertools.combinations(sorted(set(t)), 2))
    bots = {b for t in tables.values() for b in t}
    possible = len(bots) * (len(bots) - 1) // 2
    return len(met), possible, min(met.values(), default=0), max(met.values(), default=0)


def wait_games(db: Path, n: int, timeout: float, alive: subprocess.Popen[str]) -> None:
    """Until ``db`` holds ``n`` finished games (the warm-up), or fail plainly."""
    deadline = time.monotonic() + timeout
    while games_finished(db) < n:
        if alive.poll() is not None:
            raise SystemExit(f"the process playing into {db} ended (exit {alive.returncode})")
        if time.monotonic() > deadline:
            raise SystemExit(f"{db}: fewer than {n} games finished in {timeout:.0f} s")
        time.sleep(0.5)


def start_sessions(referee: str, tokens: dict[str, str], path: Path, *, play: bool) -> subprocess.Popen[str]:
    """The registered bots of ``tokens`` as sessions of one lean client process
    (``bench/_sessions.py``; its token file written to ``path``), once every hello is welcomed:
    playing the bench ladder's preset, or idle (declaring only ``gin/classic``, never paired).
    Closing its stdin ends it."""
    path.write_text("".join(f"{name} {token}\n" for name, token in tokens.items()), encoding="utf-8")
    client = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "_sessions.py"), "--target", referee, "--tokens", str(path),
         "--presets", f"gin/{PRESET}" if play else "gin/classic", *(["--play"] if play else [])],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    assert client.stdout is not None
    ready = client.stdout.readline().split()
    if len(ready) != 3 or ready[0] != "READY" or ready[2] != "0":
        stop([client])
        raise SystemExit(f"bench/_sessions.py: {ready or 'it ended'} (READY <welcomed> <refused>)")
    return client
