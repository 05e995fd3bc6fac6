"""What a match writes to its replay: the header, faults, what the game reported, the result.
Every record of the plumbing is written here, as a typed record of :mod:`referee.replays` (the
decisions' ``action`` records go straight to the recorder's fast path). What a game reports
crosses the seam as plain values and is read into its record class here, so a match can never
write a record that the reader refuses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from referee import games
from referee.model.replay import (
    PROTOCOL_VERSION,
    FaultRecord,
    HeaderRecord,
    ReplayRecorder,
    ResultRecord,
    decode_record,
)
from referee.model.spec import MatchSpec, Termination
from referee.table.faults import Fault
from referee.table.journal import Journal

_KIND = {games.DealBegun: "deal", games.DealOver: "deal_end", games.GameOver: "game_end"}


class MatchRecorder(ReplayRecorder):
    """The replay of one match, written as the match goes (to memory, or to its journal)."""

    journal: Journal | None = None
    """The match's journal, once :meth:`start_journal` opened it."""

    def start_journal(self, folder: Path, match_id: str, seed: bytes, nonces: Sequence[bytes]) -> None:
        """Journal every record from now on (before the first: the journal is the whole replay)."""
        assert self.count == 0 and self.journal is None
        self.journal = self.sink = Journal(folder, match_id, seed, nonces)

    def write(self, path: Path) -> None:
        """Write the replay to ``path`` atomically (a journal becomes it: fsync, rename)."""
        if self.journal is not None:
            self.journal.complete(path)
        else:
            super().write(path)

    game = "gin"
    """The game whose content the records hold (the header's; set when it is written)."""
    protocol = PROTOCOL_VERSION
    """The bot protocol the header names (a re-run of an older replay names the replay's own, so
    that its records compare with the replay's: see ``arena audit``'s check 4)."""

    def header(self, spec: MatchSpec, match_id: str, rules: Mapping[str, Any], commitment: bytes,
               bots: Sequence[str], event_messages: Sequence[bool]) -> None:
        """The first record (once: a match that ends before it begins writes it at its end)."""
        if self.count:
            return
        self.game = spec.game
        self.add_record(HeaderRecord(
            match_id=match_id, players=tuple(spec.players), bots=tuple(bots), rules=dict(rules),
            time_control=str(spec.time_control), fault_policy=spec.fault_policy,
            substitute_time_faults=spec.substitute_time_faults, seed_commitment=commitment.hex(),
            mix_nonces=spec.mix_nonces, repeat_illegal=spec.repeat_illegal,
            reconnect_grace_ms=spec.reconnect_grace_ms, connect_timeout_ms=spec.connect_timeout_ms,
            max_actions_per_deal=spec.max_actions_per_deal, event_messages=tuple(event_messages),
            game=spec.game,  # left out of the line for the default game, as before games had names
            seat_time_controls=tuple(str(tc) for tc in spec.seat_time_controls),
            protocol=self.protocol,
        ))

    def fault(self, f: Fault, policy: str, decisions: int, scope: str = "game") -> None:
        """A seat's fault, with what a re-run needs to reproduce it (``scope``: what the built-in
        bot took, :attr:`FaultRecord.scope`)."""
        evidence: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in f.evidence.items()}
        self.add_record(FaultRecord(seat=f.seat, termination=f.termination, detail=f.detail, policy=policy,
                                    decisions=decisions, scope=scope, **evidence))

    def happening(self, h: games.Happening) -> None:
        """What the game reported (an action is recorded by the caller, on the fast path)."""
        if isinstance(h, games.Chance):
            self._game_record(h.kind, h.record)
        elif not isinstance(h, games.Acted):
            self._game_record(_KIND[type(h)], h.record)

    def _game_record(self, kind: str, fields: Mapping[str, Any]) -> None:
        obj = {"type": kind, "seq": self.count, "prev": self.last_hash, **fields}
        self.add_record(decode_record(obj, self.count + 1, self.game))

    def result(self, *, winner: int | None, termination: Termination, faulting: int | None, detail: str,
               summary: Mapping[str, Any], seed: bytes, nonces: Sequence[bytes], substituted: Sequence[int],
               decisions: int, think_us: Sequence[int], digests: Sequence[str], messages: Sequence[int],
               fallbacks: Sequence[int] = ()) -> None:
        """The last record: how the match ended, the seed revealed, the story's digests."""
        given = {k: tuple(v) if isinstance(v, list) else v for k, v in summary.items()}
        self.add_record(ResultRecord(
            winner=winner, termination=termination, faulting_seat=faulting, detail=detail, **given,
            seed=seed.hex(), nonces=tuple(n.hex() for n in nonces), substituted_seats=tuple(sorted(substituted)),
            decisions=decisions, think_us=tuple(think_us), message_digests=tuple(digests), messages=tuple(messages),
            fallbacks=tuple(fallbacks),
        ))
