"""How one seat's bot takes part in a match, as a plain value (no I/O here): the description
:func:`referee.play_match` gets, and what a scheduler ships to another process or machine."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Literal

PYTHON_PLACEHOLDER = "{python}"
"""In a command, replaced by the Python interpreter of the process that starts the bot."""
BotProtocol = Literal["grpc", "stdio"]
RESTART_HELP = '"never", "always" or "after:N" (N >= 1)'


def restart_after(restart: str) -> int | None:
    """A restart policy's games per process: ``never`` → ``None`` (no limit), ``always`` → 1,
    ``after:N`` → N; ``ValueError`` for anything else."""
    if restart == "never":
        return None
    if restart == "always":
        return 1
    head, _, n = restart.partition(":")
    if head == "after" and n.isdigit() and int(n) >= 1:
        return int(n)
    raise ValueError(f"restart must be {RESTART_HELP}; got {restart!r}")


@dataclass(frozen=True, slots=True)
class BotLaunch:
    """How one seat's bot takes part in a match: a program started for the match, or a remote
    token (a bot that connects by itself). Plain values only, so it pickles (a match shipped
    to another process or machine) and hashes."""

    command: tuple[str, ...] = ()
    """The program and its arguments; ``{python}`` stands for the Python interpreter of the
    process that starts the bot. Empty for a remote seat."""
    cwd: str = ""
    """Working directory; empty: that of the process that starts the bot."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment variables as (name, value) pairs, on top of the starting process's
    environment (``GIN_REFEREE``, ``GIN_TOKEN`` and ``GIN_BOT_NAME`` are always set)."""
    protocol: BotProtocol = "grpc"
    """``grpc``: the program is a bot client; ``stdio``: it is run through
    ``sample_bots.stdio_bridge``."""
    pass_args: bool = True
    """Append ``--referee --token --name`` to the command (a stdio program never gets them: the
    bridge does)."""
    log_path: str = ""
    """A file the process's stdout and stderr are appended to, each line prefixed with the match
    and the seat, with a line when it starts and when it ends; empty: the output is dropped."""
    remote_token: str = ""
    """A remote seat: its bot is not started, it connects by itself with this token."""
    name: str = ""
    """The name the bot is told (``--name``); empty: the seat's player name."""
    restart: str = "always"
    """When a match context starts a new process for this bot: ``always`` (a process per
    match), ``never`` (one process plays match after match on its bot token, kept by the
    context's :class:`BotPool`), or ``after:N`` (a new process every N matches). A reused
    process is also replaced after it crashes, faults in a match or exceeds ``max_rss_mb``."""
    max_rss_mb: int = 0
    """A reused process whose resident memory exceeds this many MiB after a match is
    replaced; 0: no limit."""

    def __post_init__(self) -> None:
        if self.remote_token and self.command:
            raise ValueError("a seat has a command or a remote token, not both")
        if not self.remote_token and not self.command:
            raise ValueError("a seat needs a command (the bot to start) or a remote token")
        if self.remote_token and len(self.remote_token) < 16:
            raise ValueError("a remote token must be at least 16 characters")
        if self.protocol not in ("grpc", "stdio"):
            raise ValueError(f"protocol must be grpc or stdio; got {self.protocol!r}")
        restart_after(self.restart)
        if self.max_rss_mb < 0:
            raise ValueError("max_rss_mb must be >= 0")
        if any(not k or "=" in k for k, _ in self.env):
            raise ValueError(f"invalid environment variable names in {self.env!r}")

    @property
    def remote(self) -> bool:
        """Whether the seat's bot connects by itself."""
        return bool(self.remote_token)

    @property
    def reused(self) -> bool:
        """Whether a match context keeps this bot's process for more than one match (a stdio
        program speaks for one match: the bridge starts it per match)."""
        return not self.remote and self.protocol == "grpc" and self.restart != "always"

    def argv(self, address: str, token: str, name: str) -> list[str]:
        """The command line that starts this bot for one seat."""
        command = [sys.executable if part == PYTHON_PLACEHOLDER else part for part in self.command]
        args = ["--referee", address, "--token", token, "--name", name]
        if self.protocol == "stdio":
            return [sys.executable, "-m", "sample_bots.stdio_bridge", *args, "--", *command]
        return [*command, *args] if self.pass_args else command

    def environment(self, address: str, token: str, name: str) -> dict[str, str]:
        """The environment of the bot's process."""
        return {**os.environ, **dict(self.env), "GIN_REFEREE": address, "GIN_TOKEN": token, "GIN_BOT_NAME": name}
