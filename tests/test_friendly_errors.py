"""Friendly errors of the servers and the arena: a busy port is one line naming the address and
the flag to change, exit 2, and nothing is created; ``--resume`` honours a new ``--listen``; a
remote referee that refuses the operator token is one clear line."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests._wait import RUN_HANG_S

TOKEN_ENV = "GIN_ARENA_OPERATOR_TOKEN"
"""(``referee.lowlevel.OPERATOR_TOKEN_ENV``, spelled out: the environment a user sets.)"""
ROOT = str(Path(__file__).resolve().parent.parent)
ENV = {**{k: v for k, v in os.environ.items() if k != TOKEN_ENV}, "PYTHONPATH": ROOT}
BOT = 'name=local cmd="{python} -m arena._testbot"'


@contextmanager
def busy_port() -> Iterator[str]:
    """An address another program is listening on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield f"127.0.0.1:{s.getsockname()[1]}"


def free_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=RUN_HANG_S, cwd=cwd,
                          env=ENV)


def _one_line(done: subprocess.CompletedProcess[str], address: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert address in lines[0] and "--listen" in lines[0] and "in use" in lines[0], lines[0]


def test_a_busy_port_is_one_line_exit_2_and_nothing_is_created(tmp_path: Path) -> None:
    with busy_port() as address:
        _one_line(_run("referee.cli", "serve", "--listen", address, cwd=tmp_path), address)
        assert list(tmp_path.iterdir()) == [], "no token file, no replays folder"
        _one_line(_run("arena.cli", "serve", "--listen", address, "--dir", "srv", cwd=tmp_path), address)
        assert list(tmp_path.iterdir()) == []
        for command in ("tournament", "demo"):
            args = ["--bot", BOT, "--bot", BOT.replace("local", "other")] if command == "tournament" else ["--no-js"]
            done = _run("arena.cli", command, *args, "--listen", address, "--out", "run", cwd=tmp_path)
            _one_line(done, address)
            assert list(tmp_path.iterdir()) == [], f"{command}: no run folder left behind"


def _until(proc: subprocess.Popen[str], prefix: str) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith(prefix) or not line:
            return line
    raise AssertionError(f"no line starting with {prefix!r}")


def _interrupt(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)


def test_resume_honours_a_new_listen_address(tmp_path: Path) -> None:
    (tmp_path / "bots.toml").write_text(
        '[[bot]]\nname = "local"\ncommand = ["{python}", "-m", "arena._testbot"]\n\n'
        '[[bot]]\nname = "visitor"\nremote = true\n')
    first, second = free_address(), free_address()
    base = [sys.executable, "-m", "arena.cli", "tournament"]
    opts = dict(cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    proc = subprocess.Popen([*base, "--bots", "bots.toml", "--games", "2", "--listen", first, "--out", "run"],
                            **opts)  # type: ignore[call-overload]
    try:
        assert _until(proc, "Remote bots must connect to").startswith(f"Remote bots must connect to {first} ")
    finally:
        _interrupt(proc)
    proc = subprocess.Popen([*base, "--resume", "run", "--listen", second], **opts)  # type: ignore[call-overload]
    try:
        assert _until(proc, "Remote bots must connect to").startswith(f"Remote bots must connect to {second} ")
    finally:
        _interrupt(proc)
    conn = sqlite3.connect(tmp_path / "run" / "run.sqlite")
    config = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
    conn.close()
    assert config["listen"] == second


def test_a_remote_referee_that_refuses_the_token_is_one_clear_line(tmp_path: Path) -> None:
    address = free_address()
    serve = subprocess.Popen([sys.executable, "-m", "arena.cli", "serve", "--listen", address, "--dir", "srv"],
                             cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert _until(serve, "referee listening on")
        (tmp_path / "wrong").write_text("0123456789abcdef0123\n")
        for extra in ([], ["--operator-token-file", "wrong"]):
            done = _run("arena.cli", "tournament", "--bot", BOT, "--bot", BOT.replace("local", "other"),
                        "--referee", address, "--out", f"run{len(extra)}", *extra, cwd=tmp_path)
            assert done.returncode == 2, done.stderr  # (the command line must change)
            assert "refused the operator token" in done.stderr and "--operator-token-file" in done.stderr
            assert "Traceback" not in done.stderr
            assert not (tmp_path / f"run{len(extra)}").exists()  # (checked before the run folder is made)
    finally:
        _interrupt(serve)
