"""What a match writes to its replay: the header, faults, what the game reported, the result.
Every record of the plumbing is written here (the decisions' ``action`` records go straight to
the recorder's fast path); the record kinds and fields are those of ``_replay``'s format."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import games
from ._faults import Fault
from ._journal import Journal
from ._replay import REPLAY_FORMAT, REPLAY_VERSION, ReplayRecorder
from ._spec import MatchSpec, Termination

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

    def header(self, spec: MatchSpec, match_id: str, rules: Mapping[str, Any], commitment: bytes,
               bots: Sequence[str], event_messages: Sequence[bool]) -> None:
        """The first record (once: a match that ends before it begins writes it at its end)."""
        if self.count:
            return
        extra: dict[str, Any] = {}
        if not spec.default_game:  # the default game's replays name none, as before games had names
            extra["game"] = spec.game
        if spec.seat_time_controls:
            extra["seat_time_controls"] = [str(tc) for tc in spec.seat_time_controls]
        self.add(
            "header", format=REPLAY_FORMAT, version=REPLAY_VERSION, match_id=match_id,
            players=list(spec.players), bots=list(bots), rules=dict(rules), time_control=str(spec.time_control),
            fault_policy=spec.fault_policy, seed_commitment=commitment.hex(),
            mix_nonces=spec.mix_nonces, repeat_illegal=spec.repeat_illegal,
            reconnect_grace_ms=spec.reconnect_grace_ms, connect_timeout_ms=spec.connect_timeout_ms,
            max_actions_per_deal=spec.max_actions_per_deal, event_messages=list(event_messages), **extra,
        )

    def fault(self, f: Fault, policy: str, decisions: int) -> None:
        """A seat's fault, with what a re-run needs to reproduce it."""
        self.add("fault", seat=f.seat, termination=f.termination, detail=f.detail, policy=policy,
                 decisions=decisions, **f.evidence)

    def happening(self, h: games.Happening) -> None:
        """What the game reported (an action is recorded by the caller, on the fast path)."""
        if isinstance(h, games.Chance):
            self.add(h.kind, **h.record)
        elif not isinstance(h, games.Acted):
            self.add(_KIND[type(h)], **h.record)

    def result(self, *, winner: int | None, termination: Termination, faulting: int | None, detail: str,
               summary: Mapping[str, Any], seed: bytes, nonces: Sequence[bytes], substituted: Sequence[int],
               decisions: int, think_us: Sequence[int], digests: Sequence[str], messages: Sequence[int]) -> None:
        """The last record: how the match ended, the seed revealed, the story's digests."""
        self.add(
            "result", winner=winner, termination=termination, faulting_seat=faulting, detail=detail, **summary,
            seed=seed.hex(), nonces=[n.hex() for n in nonces], substituted_seats=sorted(substituted),
            decisions=decisions, think_us=list(think_us), message_digests=list(digests), messages=list(messages),
        )
