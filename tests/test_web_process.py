"""The live web in a process of its own (``arena.web.process``), as ``arena serve --web`` runs it:
a running match's live view and stream served through the child (the parent pushes the running
list, the child copies the live view from one subscription to the parent's stream: answered while
the parent's loop is frozen, two watchers on one subscription) with the per-client limit counting
the real client; the security headers once; the
standings following a finished match from the child's own store reads; and a child killed with
SIGKILL started again on the same address, the reason logged, its secret never in its argv or
environment."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import trio

import referee
import referee.lowlevel
from arena.web.limits import WebLimits
from tests._bots import Client
from tests._wait import HANG_S
from tests._web import fetch, served, slow, spec, until


def _stream_head(url: str, path: str, source: str) -> tuple[socket.socket, str]:
    """Open a stream of ``path`` from address ``source``: the socket and the response's head
    (with the start of its body)."""
    sock = socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=HANG_S,
                                    source_address=(source, 0))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    if head.startswith(b"HTTP/1.1 200"):
        while b"\n\n" not in rest:  # the first event (a view) came through the forward
            rest += sock.recv(65536)
    else:
        length = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
        while length is not None and len(rest) < int(length[1]):
            rest += sock.recv(65536)
        chunked = re.search(rb"transfer-encoding: chunked", head, re.IGNORECASE)
        while chunked is not None and not rest.endswith(b"0\r\n\r\n"):  # (a forwarded answer: to its last chunk)
            more = sock.recv(65536)
            if not more:
                break
            rest += more
    return sock, (head + b"\r\n\r\n" + rest).decode(errors="replace")


def _seat_players(nursery: trio.Nursery, ref: referee.Referee, table: referee.lowlevel.Table,
                  players: tuple[str, ...], seconds: float, gate: threading.Event | None = None) -> None:
    """Play ``table`` in ``nursery``: one slow bot a seat (``seconds`` a decision; with ``gate``,
    none before it is set)."""
    for seat, link in enumerate(table.links):
        nursery.start_soon(referee.aio, Client(ref.address, link.token, name=players[seat]).play(slow(seconds, gate)))


def test_the_webs_own_process_shows_a_running_match_live(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path, WebLimits(sse_per_client=1)) as s:
            u = s.url
            players = ("north", "south")
            table = s.ref.create_match(spec(players, "live-1"))
            gate = threading.Event()  # the match stays running until the streams are checked (its end
            async with trio.open_nursery() as nursery:  # ends them, and a stream ended frees its share)
                _seat_players(nursery, s.ref, table, players, 0.05, gate)

                async def listed() -> bool:  # (the running list, pushed by the parent)
                    found = (await fetch(u + "/api/matches")).json()["running"]
                    return any(m["match_id"] == "live-1" for m in found)
                await until(listed, "the running match listed by the web's own process")

                async def drawn() -> bool:  # (the live view, drawn by the parent's web)
                    one = (await fetch(u + "/api/matches/live-1")).json()
                    return one.get("state") == "running" and one.get("view") is not None
                await until(drawn, "the running match's spectator view")
                page = await fetch(u + "/matches/live-1")
                assert page.status == 200 and 'id="live"' in page.text and "north" in page.text
                front = await fetch(u + "/")
                assert front.status == 200 and "live-1" in front.text

                first, head = await trio.to_thread.run_sync(_stream_head, u, "/api/matches/live-1/events", "127.0.0.1")
                try:
                    assert head.startswith("HTTP/1.1 200") and "event: view" in head
                    assert head.lower().count("content-security-policy:") == 1  # (once, though forwarded)
                    again, refused = await trio.to_thread.run_sync(_stream_head, u, "/api/matches/live-1/events",
                                                                  "127.0.0.1")
                    again.close()
                    assert refused.startswith("HTTP/1.1 429") and "limit sse_per_client" in refused
                    other, head = await trio.to_thread.run_sync(_stream_head, u, "/api/matches/live-1/events",
                                                                "127.0.0.2")  # another client: its own share
                    other.close()
                    assert head.startswith("HTTP/1.1 200"), head[:200]
                finally:
                    first.close()
                    gate.set()
                await table.finished.wait()

            async def recorded() -> bool:  # (the child's own store reads, looked at on the pushed end)
                rows = (await fetch(u + "/api/standings")).json()["standings"]
                done = (await fetch(u + "/api/matches/live-1")).json()
                return {r["bot"] for r in rows} == set(players) and done.get("state") == "finished"
            await until(recorded, "the finished match in the standings and the matches")
            assert (await fetch(u + "/api/matches")).json()["running"] == []
    referee.run(main)


def _children(pid: int) -> list[int]:
    return [int(c) for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()]


def _web_child(pid: int) -> int | None:
    for child in _children(pid):
        try:
            if b"arena.web.process" in Path(f"/proc/{child}/cmdline").read_bytes():
                return child
        except OSError:
            continue
    return None


def test_a_forwarded_post_the_parent_refuses_unread_is_still_answered(tmp_path: Path) -> None:
    """The parent's web answers a POST to a seat link that does not exist (404) without reading
    its body, and closes: the child's forward, cut while it was still sending, must relay that
    answer, not fail (it answered 500 to about 1 in 30 such POSTs)."""
    async def main() -> None:
        async with served(tmp_path) as s:
            statuses = set()
            for _ in range(150):
                r = await fetch(s.url + "/play/t/not-a-seat/move", "POST", {"Content-Type": "application/json"},
                                json.dumps({"action": "x" * 4000}).encode())
                statuses.add(r.status)
            assert statuses == {404}, statuses

    referee.run(main)


def test_a_killed_web_process_comes_back_on_the_same_address(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_OPERATOR_TOKEN"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--listen", "127.0.0.1:0", "--dir", str(tmp_path), "--web",
         "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert proc.stdout is not None
        url = next(line.split()[3] for line in proc.stdout if line.startswith("live web on "))
        token = (tmp_path / "operator-token").read_text().strip()

        children: list[int] = []

        async def main() -> None:
            assert (await fetch(url + "/api/standings")).json() == {"standings": []}
            child = _web_child(proc.pid)
            assert child is not None
            for secret_free in ("cmdline", "environ"):  # (the token came over its stdin)
                assert token.encode() not in Path(f"/proc/{child}/{secret_free}").read_bytes()
            os.kill(child, signal.SIGKILL)

            async def back() -> bool:
                now = _web_child(proc.pid)
                if now is None or now == child:
                    return False
                try:
                    r = await fetch(url + "/api/standings")
                except OSError:
                    return False
                return r.status == 200 and r.json() == {"standings": []}
            await until(back, "the web's own process started again and serving")
            children.append(_web_child(proc.pid) or 0)
            lines = [json.loads(line) for line in (tmp_path / "serve.log").read_text().splitlines()]
            ended = [e for e in lines if e.get("event") == "web_process_ended"]
            assert [(e["pid"], e["reason"]) for e in ended] == [(child, "killed by signal 9")]
        trio.run(main)
        os.kill(proc.pid, signal.SIGKILL)  # (not asked to stop: the child must see its stdin close)
        proc.wait(timeout=30)

        async def gone() -> bool:
            return not _alive(children[0])
        trio.run(until, gone, "the web's own process ending with its parent")
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (not ended, nor a zombie waiting to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _get(url: str, path: str) -> tuple[int, dict[str, object]]:
    """One GET on a thread of the test's own (the parent's loop may be frozen meanwhile)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("GET", path)
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        conn.close()


def test_a_running_matchs_live_view_is_the_childs_copy_one_subscription_for_all(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path) as s:
            u = s.url
            players = ("north", "south")
            table = s.ref.create_match(spec(players, "copied-1"))
            async with trio.open_nursery() as nursery:
                _seat_players(nursery, s.ref, table, players, 0.3)

                held = s.ref.tables["copied-1"]  # (the match as the parent's web streams it)

                async def copied() -> bool:  # (once listed as running: the child's copy, one subscription)
                    one = (await fetch(u + "/api/matches/copied-1")).json()
                    return one.get("view") is not None and len(held.spectators) == 1
                await until(copied, "the running match's view copied by the web's own process")
                first, head = await trio.to_thread.run_sync(_stream_head, u, "/api/matches/copied-1/events",
                                                            "127.0.0.1")
                second, head2 = await trio.to_thread.run_sync(_stream_head, u, "/api/matches/copied-1/events",
                                                              "127.0.0.2")
                try:
                    assert head.startswith("HTTP/1.1 200") and "event: view" in head, head[:300]
                    assert head2.startswith("HTTP/1.1 200") and "event: view" in head2, head2[:300]
                    assert len(held.spectators) == 1  # two watchers, one stream from the parent

                    # the parent's loop frozen: the child answers the running match from its copy
                    answered = threading.Event()
                    got: list[tuple[int, dict[str, object]]] = []

                    def ask() -> None:
                        got.append(_get(u, "/api/matches/copied-1"))
                        answered.set()
                    asker = threading.Thread(target=ask)
                    asker.start()
                    frozen = answered.wait(20)  # (blocks this loop: the parent's referee and web)
                    asker.join()
                    assert frozen, "the running match's view waited for the frozen parent"
                    status, one = got[0]
                    assert status == 200 and one["match_id"] == "copied-1" and one["game"] == table.spec.game
                    assert one["state"] == "running" and one["view"] is not None and one["header"] is not None
                    assert one["players"] == list(players)
                    page = await fetch(u + "/matches/copied-1")
                    assert page.status == 200 and 'id="live"' in page.text and "north" in page.text
                finally:
                    first.close()
                    second.close()
                await table.finished.wait()

            async def recorded() -> bool:  # (its final answer: the finished record, as before)
                done = (await fetch(u + "/api/matches/copied-1")).json()
                return done.get("state") == "finished" and done.get("replay") is not None
            await until(recorded, "the finished match from the store")
            assert held.spectators == []  # (the subscription ended with the match)
    referee.run(main)
