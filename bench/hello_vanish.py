"""Memory of a referee that thousands of bots connect to, say hello and vanish (issue 20):
a real ``referee serve`` subprocess, its RSS and open files read from /proc after every 500
matches (two sessions each: both seats connect on their own connection, get the welcome and
the match's start, and vanish; the match ends when its reconnect grace runs out)::

    .venv/bin/python bench/hello_vanish.py [--matches 3000] [--batch 25] [--step 500]

With ``--registered N`` it is ``arena serve`` instead (the hosted arena), with N bots registered
(``arena bots add``) whose sessions connect, say hello (declaring a game the ladder does not pair,
so that no match is made), get the welcome that lists no match, and vanish: ``--matches`` such
sessions, N at once, each bot's token on one of them at a time::

    .venv/bin/python bench/hello_vanish.py --registered 20 --matches 5000

The goal: over 5,000 sessions, RSS after the last <= RSS after the first 1,000 + 10 MB, and the
open files back within 5 of where they started. The referee keeps ``finished_matches`` (1000 by
default) finished matches, as compact records (~4.5 KB each here), so from 1,000 matches on they
are all there: the summary gives the growth from both points (docs/performance.md has the
figures, and what a kept match holds).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from gin_arena.v2 import bot_pb2, bot_pb2_grpc, referee_pb2, referee_pb2_grpc

EOF = grpc.aio.EOF  # type: ignore[attr-defined]
CHANNEL_OPTIONS = [("grpc.use_local_subchannel_pool", 1)]  # one TCP connection per channel: one bot each


def rss_mb(pid: int) -> float:
    """The process's resident set, in MB (``VmRSS``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc status")


def open_files(pid: int) -> int:
    """The process's open file descriptors."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def fd_kinds(pid: int) -> str:
    """What the process's open files are, counted by kind (sockets, pipes, files by folder)."""
    kinds: dict[str, int] = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        kind = target.split(":")[0] if ":" in target else str(Path(target).parent)
        kinds[kind] = kinds.get(kind, 0) + 1
    return ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))


def start_referee(folder: Path, limits: list[str], hosted: bool = False) -> tuple[subprocess.Popen[str], str, str]:
    """``referee serve`` (``hosted``: ``arena serve --dir folder``) on a free port: the process,
    its address and its operator token."""
    token_file = folder / "operator-token"
    if hosted:
        argv = [sys.executable, "-m", "arena.cli", "serve", "--listen", "127.0.0.1:0", "--dir", str(folder),
                "--log-level", "warning", "--no-progress"]
    else:
        argv = [sys.executable, "-m", "referee.cli", "serve", "--listen", "127.0.0.1:0", "--replays",
                str(folder / "replays"), "--operator-token-file", str(token_file), "--log-level", "warning"]
    for item in limits:
        argv += ["--limit", item]
    log = (folder / "referee.log").open("w")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"referee serve exited: see {folder / 'referee.log'}")
        if line.startswith("referee listening on "):
            address = line.split()[3].rstrip(";")
            return proc, address, token_file.read_text().strip()
    raise RuntimeError("referee serve did not listen within 30 s")


async def hello_and_vanish(address: str, token: str, until: str = "match_started", games: tuple[str, ...] = ()) -> None:
    """One bot: its own connection, hello, the welcome and (``until``) the match's start, then gone."""
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        stub: Any = bot_pb2_grpc.BotServiceStub(channel)
        call: Any = stub.Play()
        await call.write(bot_pb2.BotMessage(hello=bot_pb2.Hello(bot_name="vanish", token=token, protocol_version=2,
                                                                games=list(games))))
        while True:  # (call.read(), not ``async for``: a generator left at a break keeps the connection)
            msg = await call.read()
            if msg is EOF or msg.WhichOneof("kind") in (until, "error"):
                break
        call.cancel()


def register_bots(folder: Path, n: int) -> list[str]:
    """``arena bots add`` n bots in the server's folder; their tokens."""
    return [subprocess.run([sys.executable, "-m", "arena.cli", "bots", "add", f"vanish{i}", "--dir", str(folder)],
                           check=True, capture_output=True, text=True).stdout.strip() for i in range(n)]


async def one_match(ops: Any, address: str, metadata: tuple[tuple[str, str], ...],
                    i: int) -> str:
    created = await ops.CreateMatch(referee_pb2.CreateMatchRequest(
        match_id=f"v{i:06d}", seats=[referee_pb2.SeatSpec(name="a"), referee_pb2.SeatSpec(name="b")],
        reconnect_grace_ms=1, connect_timeout_ms=5_000), metadata=metadata)
    await asyncio.gather(*(hello_and_vanish(address, t.token) for t in created.seat_tokens))
    match_id: str = created.match_id
    return match_id


async def wait_over(ops: Any, metadata: tuple[tuple[str, str], ...],
                    match_ids: list[str]) -> None:
    over = (referee_pb2.MATCH_STATE_FINISHED, referee_pb2.MATCH_STATE_ABORTED)
    for match_id in match_ids:
        while True:
            status = await ops.GetMatch(referee_pb2.GetMatchRequest(match_id=match_id), metadata=metadata)
            if status.match.state in over:
                break
            await asyncio.sleep(0.02)


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="hello-vanish-") as tmp:
        folder = Path(tmp)
        tokens = register_bots(folder, args.registered) if args.registered else []
        limits = [f"finished_matches={args.finished_matches}", *args.limit]
        proc, address, token = start_referee(folder, limits, hosted=bool(args.registered))
        per_step = 1 if args.registered else 2  # sessions per unit counted (a session, or a match's two)
        try:
            metadata = (("authorization", f"Bearer {token}"),)
            async with grpc.aio.insecure_channel(address) as channel:
                ops: Any = referee_pb2_grpc.RefereeServiceStub(channel)
                await asyncio.sleep(0.5)
                rss0, fds0 = rss_mb(proc.pid), open_files(proc.pid)
                unit = "sessions" if args.registered else "matches"
                print(f"{unit:>8} {'sessions':>8} {'RSS MB':>8} {'fds':>5}   (pid {proc.pid})")
                print(f"{0:>8} {0:>8} {rss0:>8.1f} {fds0:>5}", flush=True)
                figures: dict[int, tuple[float, int]] = {}
                started = time.monotonic()
                batch = args.registered or args.batch
                for first in range(0, args.matches, batch):
                    todo = range(first, min(first + batch, args.matches))
                    if args.registered:  # each bot on one session at a time; a game the ladder does not pair
                        await asyncio.gather(*(hello_and_vanish(address, tokens[i % len(tokens)], "welcome",
                                                                (args.game,)) for i in todo))
                    else:
                        ids = await asyncio.gather(*(one_match(ops, address, metadata, i) for i in todo))
                        await wait_over(ops, metadata, list(ids))
                    done = first + len(todo)
                    if done % args.step == 0 or done == args.matches:
                        await asyncio.sleep(args.settle)  # the last replays written, the last connections closed
                        figures[done] = rss_mb(proc.pid), open_files(proc.pid)
                        print(f"{done:>8} {per_step * done:>8} {figures[done][0]:>8.1f} {figures[done][1]:>5}",
                              flush=True)
                elapsed = time.monotonic() - started
            last = max(figures)
            base = min((n for n in figures if per_step * n >= 1_000), default=last)
            full = min((n for n in figures if args.registered or n >= args.finished_matches), default=last)
            rss_last, fds_last = figures[last]
            print(f"open files now: {fd_kinds(proc.pid)}")
            print(f"{per_step * last} sessions in {elapsed:.0f} s; RSS after the last {rss_last:.1f} MB: "
                  f"{rss_last - figures[base][0]:+.1f} MB from after {per_step * base} sessions (goal <= +10), "
                  f"{rss_last - figures[full][0]:+.1f} MB from when the {args.finished_matches} finished matches "
                  f"the referee keeps were all there ({per_step * full} sessions); open files {fds0} -> {fds_last} "
                  f"({fds_last - fds0:+d}, goal within 5)")
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--matches", type=int, default=3_000, help="matches (two sessions each; default %(default)s)")
    p.add_argument("--batch", type=int, default=25, help="matches at once (default %(default)s)")
    p.add_argument("--step", type=int, default=500, help="print the figures every N matches (default %(default)s)")
    p.add_argument("--settle", type=float, default=0.5,
                   help="seconds to let the referee settle before each reading (default %(default)s)")
    p.add_argument("--registered", type=int, default=0, metavar="N",
                   help="arena serve with N registered bots whose sessions get no match; --matches counts sessions")
    p.add_argument("--game", default="rummy",
                   help="with --registered: the game the hellos declare (default %(default)s: one the default "
                   "ladder does not pair)")
    p.add_argument("--finished-matches", type=int, default=1_000,
                   help="the referee's finished_matches limit (default %(default)s, its default)")
    p.add_argument("--limit", action="append", default=[], metavar="KEY=VALUE", help="a referee limit")
    asyncio.run(run(p.parse_args()))


if __name__ == "__main__":
    main()
