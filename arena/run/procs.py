"""How the arena starts its bots: a manifest's :class:`BotSpec` as the referee's
:class:`referee.BotLaunch` (the process handling itself is ``referee.play_match``'s), each
bot's output in one log file of the run folder."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from arena.run.manifest import BotSpec
from referee import BotLaunch


class BotLogs:
    """One log file per bot in the run folder (``logs/<bot>.log``): each line of a process's
    stdout and stderr, prefixed with its match and seat (the processes append to it)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, bot: str) -> str:
        """The log file of a bot."""
        return str(self.folder / f"{bot}.log")


def launch_for(bot: BotSpec, logs: BotLogs, bot_tokens: Mapping[str, str], instance: str = "") -> BotLaunch:
    """How a seat of ``bot`` is played: its program started for the game, or (a remote bot)
    its bot token, with which it connects by itself. ``instance``: the seat's player when the bot
    fills several seats (``greedy#2``): its own process, or its own token, under that name (the
    log file stays the bot's)."""
    name = instance or bot.name
    if bot.remote:
        return BotLaunch(remote_token=bot_tokens[name], name=name)
    return BotLaunch(
        command=bot.command,
        cwd=bot.cwd,
        env=tuple(sorted({"GIN_GAMES": ",".join(bot.games), **bot.env}.items())),  # Hello.games of a bot that asks
        protocol=bot.protocol,
        pass_args=bot.pass_args,
        log_path=logs.path(bot.name),
        name=name,
        restart=bot.restart,
        max_rss_mb=bot.max_rss_mb,
        limits=bot.limits,
    )
