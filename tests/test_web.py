"""The live web's API and pages against ``arena serve`` with its web (in process, free ports; the
real referee, store, Hypercorn and Starlette): the standings' JSON, the matches, a bot's page,
404s, 405 on anything but a read, the security headers on every response, a hostile bot name
escaped everywhere, the operator's door, the live-update limits (429 and 503, naming the limit),
a reader that does not read dropped, a resumed stream, and the OpenAPI document naming every
route. ``arena serve --web`` itself runs as a subprocess in the last test."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import markupsafe
import trio

import referee
from arena.competition.ratings import LIVE_RATER
from arena.web.limits import WebLimits
from arena.web.server import CSP, ENDPOINTS, Hub, openapi_document, openapi_path
from tests._wait import RUN_HANG_S
from tests._web import HOSTILE, Reply, fetch, illegal, play, served, until


def _secured(r: Reply) -> None:
    assert r.headers["content-security-policy"] == CSP
    assert "'unsafe-inline'" not in CSP and "default-src 'self'" in CSP
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"


def _no_inline_script(page: str) -> None:
    for tag in re.findall(r"<script[^>]*>", page):
        assert "src=" in tag or 'type="application/json"' in tag, tag
    assert "<style" not in page and " style=" not in page


def test_api_pages_doors_and_escaping(tmp_path: Path) -> None:
    async def main() -> None:
        async with served(tmp_path) as s:
            u = s.url
            first = await fetch(u + "/api/standings")
            assert first.status == 200 and first.json() == {"standings": []}
            await play(s, (HOSTILE, "plain"), "m-1")
            await play(s, ("plain", "faulty"), "m-2", None, illegal)

            async def recorded() -> bool:
                return len((await fetch(u + "/api/standings")).json()["standings"]) == 3
            await until(recorded, "both matches in the standings")

            r = await fetch(u + "/api/standings")
            _secured(r)
            rows = r.json()["standings"]
            assert {row["bot"] for row in rows} == {HOSTILE, "plain", "faulty"}
            for row in rows:
                assert {"bot", "games", "rating", "uncertainty", "provisional", "rank", "low", "high", "state",
                        "reason"} <= set(row)
                assert isinstance(row["rating"], float) and row["uncertainty"] > 0 and row["provisional"] is True
                assert (row["rater"], row["rater_title"]) == (LIVE_RATER.name, LIVE_RATER.title)  # named by its rater
            assert {row["bot"]: row["games"] for row in rows} == {HOSTILE: 1, "plain": 2, "faulty": 1}
            assert [row["rank"] for row in rows] == [1, 2, 3]

            matches = (await fetch(u + "/api/matches")).json()
            assert matches["running"] == [] and [m["match_id"] for m in matches["recent"]] == ["m-2", "m-1"]
            page = (await fetch(u + "/api/matches?limit=1")).json()
            assert [m["match_id"] for m in page["recent"]] == ["m-2"] and page["next_before"] is not None
            older = (await fetch(u + f"/api/matches?limit=1&before={page['next_before']}")).json()
            assert [m["match_id"] for m in older["recent"]] == ["m-1"] and older["next_before"] is None
            assert (await fetch(u + "/api/matches?limit=x")).status == 400
            one = (await fetch(u + "/api/matches/m-2")).json()
            assert one["state"] == "finished" and one["players"] == ["plain", "faulty"]
            assert one["winner"] == "plain" and one["replay"] == "/matches/m-2"

            replay = await fetch(u + "/matches/m-1")
            assert replay.status == 200 and 'id="replay-data"' in replay.text
            _secured(replay)
            _no_inline_script(replay.text)
            assert HOSTILE not in replay.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in replay.text
            for asset in ("/static/replay.js", "/static/replay.css", "/static/web.js", "/static/web.css"):
                got = await fetch(u + asset)
                assert got.status == 200 and got.body and "charset=utf-8" in got.headers["content-type"]

            # Every page: escaped, no inline script or style, the headers.
            quoted = "%3Cscript%3Ealert%281%29%3C%2Fscript%3E"
            for path in ("/", "/matches", f"/bots/{quoted}", "/signin"):
                got = await fetch(u + path)
                assert got.status == 200, path
                _secured(got)
                _no_inline_script(got.text)
                assert HOSTILE not in got.text, path
            front = (await fetch(u + "/")).text
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in front and f'href="/bots/{quoted}"' in front
            hostile = (await fetch(u + f"/api/bots/{quoted}")).json()
            assert hostile["bot"] == HOSTILE and hostile["games"] == 1 and len(hostile["history"]) == 1

            # A bot's page: its games, the plot drawn on the server, its faults; the reason and
            # the log line only for the operator (bearer header or the sign-in cookie).
            faulty = (await fetch(u + "/api/bots/faulty")).json()
            assert [f["match_id"] for f in faulty["faults"]] == ["m-2"]
            (fault,) = faulty["faults"]
            assert fault["termination"] != "normal" and "detail" not in fault and "log_line" not in fault
            token = (tmp_path / "operator-token").read_text().strip()
            bearer = {"Authorization": f"Bearer {token}"}
            seen = (await fetch(u + "/api/bots/faulty", headers=bearer)).json()["faults"][0]
            assert seen["detail"] and "log_line" in seen
            assert (await fetch(u + "/api/bots/faulty", headers={"Authorization": "Bearer wrong-token"})
                    ).json()["faults"][0].get("detail") is None
            plain = (await fetch(u + "/bots/plain")).text
            assert '<svg id="rating-plot"' in plain and 'data-points="2"' in plain and "<polyline" in plain
            public = (await fetch(u + "/bots/faulty")).text
            detail = str(markupsafe.escape(seen["detail"]))  # (as the templates escape it)
            assert detail not in public and "shown to the operator" in public
            assert detail in (await fetch(u + "/bots/faulty", headers=bearer)).text

            refused = await fetch(u + "/signin", "POST", data=b"token=wrong-token")
            assert refused.status == 403 and "set-cookie" not in refused.headers
            signed = await trio.to_thread.run_sync(_signin, u, token)
            assert "HttpOnly" in signed and "SameSite=strict" in signed
            assert "Secure" not in signed  # clear HTTP (loopback): Secure over TLS only (tests/test_web_tls.py)
            assert "strict-transport-security" not in refused.headers
            assert token not in signed
            cookie = signed.split(";")[0]
            assert detail in (await fetch(u + "/bots/faulty", headers={"Cookie": cookie})).text
            big = await fetch(u + "/signin", "POST", data=b"token=" + b"x" * 5000)
            assert big.status == 413

            # Not found; anything but a read refused.
            for path in ("/api/bots/nobody", "/api/matches/nope", "/bots/nobody", "/matches/nope", "/nothing",
                         "/static/nope.js", "/api/matches/nope/events"):
                got = await fetch(u + path)
                assert got.status == 404, path
                _secured(got)
            for method, path in (("POST", "/api/standings"), ("PUT", "/"), ("DELETE", "/api/matches/m-1"),
                                 ("PATCH", "/bots/plain"), ("POST", "/api/events")):
                got = await fetch(u + path, method, data=b"{}")
                assert got.status == 405, (method, path)
                assert got.headers["allow"] == "GET, HEAD" and "read-only" in got.json()["error"]
                _secured(got)
            assert (await fetch(u + "/api/standings", "HEAD")).status == 200

            # The OpenAPI document names every route.
            doc = await fetch(u + "/api/openapi.json")
            spec = json.loads(doc.body)
            assert spec["openapi"].startswith("3.")
            routes = {openapi_path(e.path) for e in ENDPOINTS}
            assert set(spec["paths"]) == routes == set(openapi_document()["paths"])
            assert "/bots/{name}" in routes and "/api/matches/{match_id}/events" in routes
            for path in ("/api/standings", "/api/matches", "/api/matches/{match_id}", "/api/bots/{name}",
                         "/api/events", "/api/openapi.json"):
                assert "get" in spec["paths"][path]
            assert [p["name"] for p in spec["paths"]["/api/bots/{name}"]["get"]["parameters"]] == ["name"]

    referee.run(main)


def _signin(url: str, token: str) -> str:
    """POST the sign-in form; the Set-Cookie of its 303 (not followed)."""
    conn = socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=30)
    body = f"token={token}".encode()
    conn.sendall(b"POST /signin HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                 + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    conn.close()
    head = data.decode().split("\r\n\r\n")[0]
    assert head.startswith("HTTP/1.1 303"), head
    return next(line.split(":", 1)[1].strip() for line in head.split("\r\n") if line.lower().startswith("set-cookie"))


def _open_stream(url: str, path: str, source: str = "127.0.0.1", headers: str = "") -> tuple[socket.socket, str]:
    """Open a live-update stream from address ``source``; the socket and the response's head."""
    port = int(url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n{headers}\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
    while (b"\n\n" not in rest) if length is None else len(rest) < int(length[1]):  # the first event, or the body
        rest += sock.recv(65536)
    return sock, head.decode() + "\r\n\r\n" + rest.decode(errors="replace")


def test_live_update_streams_are_bounded_by_named_limits(tmp_path: Path) -> None:
    async def main() -> None:
        limits = WebLimits(sse_connections=3, sse_per_client=2)
        async with served(tmp_path, limits) as s:
            held: list[socket.socket] = []
            try:
                for _ in range(2):
                    sock, head = await trio.to_thread.run_sync(_open_stream, s.url, "/api/events")
                    held.append(sock)
                    assert head.startswith("HTTP/1.1 200") and "text/event-stream" in head
                    assert "event: standings" in head
                sock, head = await trio.to_thread.run_sync(_open_stream, s.url, "/api/events")
                sock.close()
                assert head.startswith("HTTP/1.1 429") and "limit sse_per_client" in head
                assert "content-security-policy" in head.lower()
                sock, head = await trio.to_thread.run_sync(_open_stream, s.url, "/api/events", "127.0.0.2")
                held.append(sock)
                assert head.startswith("HTTP/1.1 200")
                sock, head = await trio.to_thread.run_sync(_open_stream, s.url, "/api/events", "127.0.0.3")
                sock.close()
                assert head.startswith("HTTP/1.1 503") and "limit sse_connections" in head
                assert "retry-after" in head.lower()
            finally:
                for sock in held:
                    sock.close()

            # Slots come back when readers leave (seen at the stream's next write: the keep-alive
            # or an event); a finished match is one.
            await play(s, ("a", "b"), "m-1")

            async def freed() -> bool:
                r = await fetch(s.url + "/api/standings")
                sock, head = await trio.to_thread.run_sync(_open_stream, s.url, "/api/events", "127.0.0.4")
                sock.close()
                return r.status == 200 and head.startswith("HTTP/1.1 200")
            await until(freed, "the slots of the closed streams back")

    referee.run(main)


def test_a_reader_that_does_not_read_is_dropped_and_a_stream_resumes_from_its_last_event() -> None:
    hub = Hub(WebLimits(sse_queue=2, sse_backlog=3))
    slow, quick = hub.subscribe(), hub.subscribe()
    for n in range(3):
        hub.publish("match", {"n": n})
        if n < 2:
            quick.receive.receive_nowait()
    assert slow not in hub.subscribers and quick in hub.subscribers and hub.dropped == 1
    assert [json.loads(t.split("data: ")[1])["n"] for t in (slow.receive.receive_nowait(),
                                                           slow.receive.receive_nowait())] == [0, 1]
    try:
        slow.receive.receive_nowait()
        raise AssertionError("a dropped reader's stream must end")
    except trio.EndOfChannel:
        pass
    assert "data: {\"n\":2}" in quick.receive.receive_nowait()
    # Resuming: the events after the last one seen, while the backlog holds them all.
    assert hub.since(hub.event_id(3)) == []
    assert [t.split("\n")[0] for t in hub.since(hub.event_id(1)) or []] == [f"id: {hub.event_id(n)}" for n in (2, 3)]
    for n in range(3, 6):
        hub.publish("match", {"n": n})
    assert hub.since(hub.event_id(1)) is None  # fell out of the backlog: start afresh
    assert hub.since("other-instance.5") is None and hub.since("junk") is None and hub.since(None) is None


def _web_address(proc: subprocess.Popen[str]) -> str:
    """The address an ``arena`` command prints for its live web (``live web on URL``)."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("live web on "):
            url = line.split()[3]
            assert url.startswith("http://127.0.0.1:")
            return url
    raise AssertionError(f"the command ended (code {proc.wait()}) without printing its live web's address")


def test_arena_serve_with_web_in_a_subprocess(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--listen", "127.0.0.1:0", "--dir", str(tmp_path),
         "--web", "127.0.0.1:0", "--web-limit", "sse_per_client=1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = _web_address(proc)

        async def main() -> None:
            r = await fetch(url + "/api/standings")
            assert r.status == 200 and r.json() == {"standings": []}
            _secured(r)
            assert (await fetch(url + "/api/standings", "POST")).status == 405
            sock, head = await trio.to_thread.run_sync(_open_stream, url, "/api/events")
            again, refused = await trio.to_thread.run_sync(_open_stream, url, "/api/events")
            sock.close()
            again.close()
            assert head.startswith("HTTP/1.1 200") and refused.startswith("HTTP/1.1 429")
            # The corner names the ladder by its folder's name, in the page's language (once
            # "arena serve serve"; no machine path on a public page).
            home = (await fetch(url + "/?lang=bg")).text
            assert f'<span class="source">класация {tmp_path.name}</span>' in home
            assert "arena serve" not in home and str(tmp_path) not in home
        trio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    bad = subprocess.run([sys.executable, "-m", "arena.cli", "serve", "--dir", str(tmp_path / "x"), "--web",
                          "127.0.0.1:0", "--web-limit", "sse_queue=lots"], capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "sse_queue" in bad.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = f"127.0.0.1:{busy.getsockname()[1]}"
        refused = subprocess.run([sys.executable, "-m", "arena.cli", "serve", "--dir", str(tmp_path / "y"), "--web",
                                  taken], capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and f"--web {taken}: the address is in use" in refused.stderr
    assert not (tmp_path / "y").exists()  # nothing created


def test_arena_tournament_with_web_shows_the_run_while_it_plays(tmp_path: Path) -> None:
    bot = 'cmd="{python} -m arena._testbot --mode slow --delay 0.03"'
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "tournament", "--bot", f"name=a {bot}", "--bot", f"name=b {bot}",
         "--games", "2", "--rules", "short", "--concurrency", "1", "--out", str(tmp_path / "run"),
         "--web", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = _web_address(proc)

        async def main() -> None:
            seen: dict[str, Any] = {}

            async def running() -> bool:
                found = (await fetch(url + "/api/matches")).json()["running"]
                for m in found:
                    one = (await fetch(url + "/api/matches/" + m["match_id"])).json()
                    if one.get("view"):
                        seen["match"] = one
                        return True
                return False
            await until(running, "a running match with its spectator view")
            match = seen["match"]
            assert match["state"] == "running" and sorted(match["players"]) == ["a", "b"]
            assert all(seat["hand"] is None for seat in match["view"]["seats"])  # a spectator sees no hand
            header = match["header"]  # the public SpectatorHeader, in proto3 JSON
            assert header["playerNames"] == match["players"] and header["gameName"] == "gin"
            assert header["seedCommitment"] and header["gin"]["name"] == "short"

            async def standings() -> bool:
                rows = (await fetch(url + "/api/standings")).json()["standings"]
                return {r["bot"] for r in rows} == {"a", "b"} and any(r["games"] for r in rows)
            await until(standings, "the run's finished games in the standings")
        trio.run(main)
        assert proc.wait(timeout=RUN_HANG_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
