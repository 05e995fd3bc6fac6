"""The hosted ladder's bosses: sample bots of a game (``referee.games.Registered.bots``) that the
ladder file names (``bosses`` of a ``[[play]]``) and the server starts itself, as always-on
participants — so that a new bot meets a known scale from its first game.

Each boss is registered in the server's registry under ``GAME-BOT`` (marked as the server's: a
bot someone registered under that name is never taken over), gets a new token at each server
start, and is started by the one launcher (``referee.run_bot``) with its limits
(``boss_memory_mb``), its token in its environment only, connecting to the server's own referee
over loopback like any registered bot, and playing match after match (``GIN_MATCHES=0``). If it
exits or dies it is started again, after a pause that doubles while it keeps dying young
(:data:`BOSS_RESTART_MIN_S` to :data:`BOSS_RESTART_MAX_S`). A boss the operator disabled (``arena
bots disable``) or the ladder suspended is not started until it is enabled again. The ladder pairs
bosses like every other bot. Docs: docs/hosted.md."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog
import trio

import referee
from arena.hosted.ladder_file import LadderConfig
from arena.hosted.registry import BotRegistry, RegistryError
from arena.model.manifest import BotSpec
from arena.run.samples import launch
from referee import ProcessLimits
from referee.games import SampleBot

log = structlog.get_logger("arena")

BOSS_RESTART_MIN_S = 1.0
"""The pause before a boss that exited is started again."""
BOSS_RESTART_MAX_S = 60.0
"""The longest pause: it doubles from the shortest while the boss keeps exiting within
:data:`BOSS_HEALTHY_S` of its start."""
BOSS_HEALTHY_S = 60.0
"""A boss that ran this long before it exited is started again after the shortest pause."""
BOSS_CONCURRENT = 2
"""Matches a boss plays at once (its hello's ``max_concurrent_matches``)."""
BOSS_IDLE_BACKOFF_S = 2
"""A boss's longest wait between reconnections while it has no match (the kit's
``GIN_IDLE_BACKOFF_MAX``)."""
BOSS_STATE_CHECK_S = 1.0
"""How often a boss that is disabled or suspended is looked at again."""


@dataclass(frozen=True, slots=True)
class Boss:
    """One boss of the ladder."""

    name: str
    """Its registered name: ``GAME-BOT``."""
    game: str
    """The game it plays."""
    bot: SampleBot
    """The sample bot, as its game registers it."""


def bosses_of(config: LadderConfig) -> tuple[Boss, ...]:
    """The ladder file's bosses, each once (several plays of one game may name the same)."""
    found: dict[str, Boss] = {}
    for play in config.plays:
        game = play.play.game
        for name in play.bosses:
            bot = next(b for b in referee.games.get(game).bots if b.name == name)  # (the file checked it)
            found.setdefault(f"{game}-{name}", Boss(f"{game}-{name}", game, bot))
    return tuple(found.values())


def local_address(address: str) -> str:
    """The referee's address as a process on this machine reaches it (a wildcard host: loopback)."""
    host, _, port = address.rpartition(":")
    return f"127.0.0.1:{port}" if host.strip("[]") in ("0.0.0.0", "::", "") else address


class Bosses:
    """Keeps the ladder's bosses running beside the ladder (``HostedLadder.run``)."""

    def __init__(self, registry: BotRegistry, bosses: Sequence[Boss], memory_mb: int, logs: Path | None) -> None:
        self.registry = registry
        self.bosses = tuple(bosses)
        self.limits = ProcessLimits(memory_mb=memory_mb)
        self.logs = logs
        self.starts: dict[str, int] = {}
        """How often each boss was started in this server run."""

    async def run(self, ref: referee.Referee) -> None:
        """Keep every boss running until cancelled (the server stops)."""
        async with trio.open_nursery() as nursery:
            for boss in self.bosses:
                try:
                    token = self.registry.boss_token(boss.name, BotSpec(name=boss.name, command=boss.bot.command,
                                                                        games=(boss.game,)))
                except RegistryError as e:
                    log.warning("boss_not_started", boss=boss.name, reason=str(e))
                    continue
                nursery.start_soon(self._keep, ref, boss, token)

    def _launch(self, boss: Boss) -> referee.BotLaunch:
        log_path = str(self.logs / f"{boss.name}.log") if self.logs is not None else ""
        base = launch(boss.bot, boss.name, log_path)
        env = (*base.env, ("GIN_MATCHES", "0"), ("GIN_CONCURRENT", str(BOSS_CONCURRENT)),
               ("GIN_IDLE_BACKOFF_MAX", str(BOSS_IDLE_BACKOFF_S)))
        return dataclasses.replace(base, env=env, limits=self.limits)

    async def _keep(self, ref: referee.Referee, boss: Boss, token: str) -> None:
        """Run ``boss`` again whenever it ends (paused as the module says)."""
        pause = BOSS_RESTART_MIN_S / 2  # (doubled at its first early exit: the shortest pause)
        never = trio.Event()
        while True:
            state = self.registry.get(boss.name)
            if state is None or state.state != "enabled":
                await trio.sleep(BOSS_STATE_CHECK_S)
                continue
            began = trio.current_time()
            self.starts[boss.name] = self.starts.get(boss.name, 0) + 1
            log.info("boss_started", boss=boss.name, starts=self.starts[boss.name])
            try:
                code = await referee.run_bot(self._launch(boss), local_address(ref.address), token, never,
                                             label=f"boss {boss.name}")
                log.warning("boss_exited", boss=boss.name, code=code)
            except OSError as e:
                log.warning("boss_failed_to_start", boss=boss.name, reason=str(e))
            pause = BOSS_RESTART_MIN_S if trio.current_time() - began >= BOSS_HEALTHY_S \
                else min(BOSS_RESTART_MAX_S, pause * 2)
            await trio.sleep(pause)
