"""Re-run a recorded match through the referee's own Table, from its replay alone.

The replay holds every answer with its request id and the microseconds it took, and every
fault with what caused it. Played again on a mock clock with those answers, the Table must
write the same replay byte for byte and tell each seat the same messages (same digests).
This is what ``arena audit`` checks, and how ``arena replay --seat N`` shows what a seat was sent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio
import trio.testing

from gin_arena.v1 import bot_pb2, game_pb2

from . import games
from ._seats import SeatLink
from ._spec import DEFAULT_GAME, MatchReport, MatchSpec
from ._table import Table
from ._timecontrol import TimeControl


class ReplayError(ValueError):
    """A replay that cannot be re-run (missing or malformed records)."""


@dataclass
class Resimulation:
    """What the re-run produced."""

    lines: list[bytes]
    """The replay the re-run wrote (canonical JSON lines, without newlines)."""
    seat_messages: list[list[bot_pb2.RefereeMessage]]
    """Every message of the match's story sent to each seat, in order."""
    report: MatchReport
    """The re-run's report."""


@dataclass
class _ScriptedSeat:
    """A seat's session in the re-run: answers each request as the replay says."""

    seat: int
    bot_name: str
    nonce: bytes
    skip_event_messages: bool
    script: dict[int, tuple[game_pb2.Action, int]]
    silent: set[int]
    disconnect: set[int]
    nursery: trio.Nursery
    on_request: Any
    link: SeatLink | None = None
    told: list[bot_pb2.RefereeMessage] = field(default_factory=list)

    def send(self, data: bytes, on_written: Callable[[float], None] | None = None) -> None:
        msg = bot_pb2.RefereeMessage.FromString(data)
        self.told.append(msg)
        if msg.WhichOneof("kind") != "action_request":
            return
        rid = msg.action_request.request_id
        self.on_request(self.seat, rid)
        if rid in self.disconnect and self.link is not None:
            self.link.detach(self, "disconnected (replayed)")
            return
        answer = self.script.get(rid)
        if answer is not None and rid not in self.silent:
            self.nursery.start_soon(self._answer, msg.match_id, rid, *answer)

    async def _answer(self, match_id: str, rid: int, action: game_pb2.Action, used_us: int) -> None:
        await trio.sleep(used_us / 1_000_000)
        assert self.link is not None
        self.link.deliver(bot_pb2.ActionResponse(match_id=match_id, request_id=rid, action=action),
                          trio.current_time())

    def close(self, code: str, detail: str) -> None:
        pass


def spec_from_header(header: dict[str, Any], result: dict[str, Any]) -> MatchSpec:
    """The match spec a replay's header and result describe (the seed is the revealed one)."""
    try:
        game = header.get("game", DEFAULT_GAME)
        return MatchSpec(
            players=tuple(header["players"]),
            game=game,
            rules=games.get(game).game.rules_from_dict(header["rules"]),
            time_control=TimeControl.parse(header["time_control"]),
            seat_time_controls=tuple(TimeControl.parse(t) for t in header.get("seat_time_controls", ())),
            fault_policy=header["fault_policy"],
            reconnect_grace_ms=header["reconnect_grace_ms"],
            connect_timeout_ms=header["connect_timeout_ms"],
            repeat_illegal=header["repeat_illegal"],
            seed=bytes.fromhex(result["seed"]),
            match_id=header["match_id"],
            mix_nonces=header["mix_nonces"],
            max_actions_per_deal=header["max_actions_per_deal"],
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ReplayError(f"the header cannot describe a match: {e!r}") from None


def resimulate(records: Sequence[dict[str, Any]]) -> Resimulation:
    """Play the recorded match again through a :class:`Table` on a mock clock."""
    if not records or records[0].get("type") != "header" or records[-1].get("type") != "result":
        raise ReplayError("a replay starts with a header record and ends with a result record")
    header, result = records[0], records[-1]
    spec = spec_from_header(header, result)
    game_wire = spec.game_entry.wire
    scripts: list[dict[int, tuple[game_pb2.Action, int]]] = [{} for _ in spec.players]
    silent: list[set[int]] = [set() for _ in spec.players]
    disconnect: list[set[int]] = [set() for _ in spec.players]
    missing: set[int] = set()
    crash: tuple[int, int, int, str] | None = None  # seat, decisions, after_request, detail
    try:
        for rec in records:
            kind = rec["type"]
            if kind == "action" and rec["request_id"]:
                action = game_wire.action_from_text(rec["action"])
                scripts[rec["seat"]][rec["request_id"]] = (action, rec["think_us"])
            elif kind == "fault":
                seat, term = rec["seat"], rec["termination"]
                if term == "failed_to_connect":
                    missing.update(rec["missing"])
                elif term == "crashed":
                    crash = (seat, rec["decisions"], rec["after_request"], rec["detail"])
                elif "used_us" in rec:  # the answer that faulted, as the bot sent it
                    scripts[seat][rec["request_id"]] = (game_wire.raw_action_from_record(rec), rec["used_us"])
                elif term == "disconnected":
                    disconnect[seat].add(rec["request_id"])
                else:
                    silent[seat].add(rec["request_id"])
        bots = header["bots"]
        event_messages = [bool(x) for x in header.get("event_messages", [True] * len(bots))]
        # A seat that never connected has no bot name (a connected bot always gets one).
        missing.update(seat for seat, name in enumerate(bots) if not name)
        nonces = [bytes.fromhex(n) for n in result["nonces"]]
        decisions_total = result["decisions"]
        cancel_reason = result["detail"] if result["termination"] == "aborted" and "stalling" not in result["detail"] \
            else None
    except (KeyError, TypeError, ValueError) as e:
        raise ReplayError(f"malformed record: {e!r}") from None

    async def main() -> Resimulation:
        table = Table(spec, None, lambda t: None, quiet=True)

        def on_request(seat: int, request_id: int) -> None:
            if crash is not None and table._decisions == crash[1] and request_id == crash[2]:
                table.links[crash[0]].crashed(crash[3])
            if cancel_reason is not None and table._decisions >= decisions_total:
                table.cancel(cancel_reason)

        async with trio.open_nursery() as nursery:
            sessions = []
            for seat, link in enumerate(table.links):
                s = _ScriptedSeat(seat, bots[seat], nonces[seat], not event_messages[seat], scripts[seat],
                                  silent[seat], disconnect[seat], nursery, on_request)
                s.link = link
                sessions.append(s)
                if seat not in missing:
                    link.attach(s)
            if crash is not None and crash[2] == 0 and crash[1] == 0:
                table.links[crash[0]].crashed(crash[3])
            if cancel_reason is not None and decisions_total == 0:
                table.cancel(cancel_reason)
            report = await table.run()
            nursery.cancel_scope.cancel()
        return Resimulation(list(table._replay.lines), [s.told for s in sessions], report)

    try:
        return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    except ReplayError:
        raise
    except Exception as e:  # the replay drove the table somewhere it cannot go
        raise ReplayError(f"the replay cannot be played again: {e!r}") from e
