"""Where a run's games are played: this process, or Dask workers (``arena.run.cluster``, which
alone imports Dask). The values and the seam the runner needs, without Dask."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from referee import BotLaunch, MatchObserver, MatchSpec, PlayedMatch


class GameCluster(Protocol):
    """What the runner needs of a cluster (:class:`arena.run.cluster.Cluster`)."""

    @property
    def lost(self) -> bool:
        """Whether the scheduler was lost."""

    async def play(self, spec: MatchSpec, launches: Sequence[BotLaunch], observer: MatchObserver) -> PlayedMatch:
        """Play one game on a worker (``InfrastructureFailure`` if it cannot be)."""


class InfrastructureFailure(RuntimeError):
    """A game's task failed on every retry (its workers died, or the scheduler was lost): not a
    bot's loss; the game stays pending and ``--resume`` plays it."""


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """Where the games run: this process (``workers == 1``, no scheduler), a local cluster, or
    an existing one."""

    workers: int = 1
    """Local worker processes (``--workers``; ``auto``: the cores)."""
    scheduler: str = ""
    """An existing cluster's scheduler (``tcp://HOST:8786``); empty: none."""

    @property
    def distributed(self) -> bool:
        """Whether the games run on Dask workers."""
        return bool(self.scheduler) or self.workers > 1

    @staticmethod
    def parse_workers(text: str) -> int:
        """``auto`` (the cores) or a whole number >= 1."""
        if text == "auto":
            return max(1, os.cpu_count() or 1)
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"--workers must be auto or a whole number >= 1; got {text!r}")
        return int(text)
