"""How one seat's bot takes part in a match, as a plain value (no I/O here): the description
:func:`referee.play_match` gets, and what a scheduler ships to another process or machine."""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import dataclass
from typing import Literal

PYTHON_PLACEHOLDER = "{python}"
"""In a command, replaced by the Python interpreter of the process that starts the bot."""
BotProtocol = Literal["grpc", "stdio"]
RESTART_HELP = '"never", "always" or "after:N" (N >= 1)'
"""The restart policies :func:`restart_after` reads, as a command's help and errors spell them."""


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


CPU_HARD_GRACE_S = 1
"""A process started for one match is killed (SIGKILL, the hard limit) this many CPU seconds
after its ``cpu_seconds`` (SIGXCPU, the soft limit), should it survive SIGXCPU."""
MEMORY_MARKERS = ("MemoryError", "std::bad_alloc", "JavaScript heap out of memory", "Cannot allocate memory",
                  "out of memory")
"""What a program that ran out of memory prints (Python, C++, Node.js, libc): found in the last
output of a bot with a ``memory_mb`` limit that ended early, it names the limit in the fault."""
_APPLY_LIMITS = (
    "import os,resource as r,sys; m,c,h=(int(x) for x in sys.argv[1:4]); "
    "m and r.setrlimit(r.RLIMIT_DATA,(m<<20,m<<20)); "
    "c and r.setrlimit(r.RLIMIT_CPU,(c,c+h if h>=0 else r.RLIM_INFINITY)); "
    "os.execvp(sys.argv[4],sys.argv[4:])"
)
"""Run by the interpreter that starts a limited bot: set the limits, then become the bot (its
pid, process group and output stay those the referee watches)."""


@dataclass(frozen=True, slots=True)
class ProcessLimits:
    """Resource limits of a bot's process, set (``setrlimit``) in the process before the bot's
    program runs; the programs it starts inherit them. Exceeding one ends the process: its game
    ends with a crash fault that names the limit."""

    memory_mb: int = 0
    """The process's data memory (heap and private mappings: ``RLIMIT_DATA``) in MiB; 0: no
    limit. An allocation beyond it fails (Python: ``MemoryError``). Not its virtual size: a
    Python gRPC bot reserves ~550 MiB of address space but uses ~80 MiB of data."""
    cpu_seconds: int = 0
    """CPU time in seconds for each match (``RLIMIT_CPU``; a reused process's limit is renewed
    before each match, its start-up counts toward its first); 0: no limit. Beyond it the
    kernel sends SIGXCPU, which ends the process."""

    def __post_init__(self) -> None:
        for name in ("memory_mb", "cpu_seconds"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a whole number >= 0; got {value!r}")

    def __bool__(self) -> bool:
        return bool(self.memory_mb or self.cpu_seconds)

    def __str__(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in (("memory_mb", self.memory_mb), ("cpu_seconds", self.cpu_seconds))
                         if v) or "none"

    def wrap(self, argv: list[str], *, reused: bool = False) -> list[str]:
        """``argv`` run under these limits (unchanged without any). A reused process has no hard
        CPU limit, so that its soft one can be renewed before each match."""
        if not self:
            return argv
        hard = -1 if reused else CPU_HARD_GRACE_S
        limits = [str(self.memory_mb), str(self.cpu_seconds), str(hard)]
        return [sys.executable, "-I", "-S", "-c", _APPLY_LIMITS, *limits, *argv]

    def exceeded(self, returncode: int | None, output: bytes = b"") -> str:
        """Which limit a process that ended early (``returncode``; ``output``: the end of what it
        printed) most likely exceeded, in words (``""``: none that it shows)."""
        if self.cpu_seconds and returncode == -signal.SIGXCPU:
            return f"cpu_seconds={self.cpu_seconds} exceeded"
        if self.memory_mb:
            text = output.decode("utf-8", "replace")
            for marker in MEMORY_MARKERS:
                if marker in text:
                    return f"memory_mb={self.memory_mb} exceeded ({marker})"
        if self.cpu_seconds and returncode == -signal.SIGKILL:
            return f"cpu_seconds={self.cpu_seconds} exceeded, or the system ran out of memory"
        return ""


NO_LIMITS = ProcessLimits()
"""A process without resource limits."""


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
    token_in_argv: bool = True
    """Whether the appended arguments include ``--token`` (off: the bot reads its token from
    ``GIN_TOKEN`` alone — its environment, which only its user may read, where ``ps`` shows a
    command line to everyone; the sample bots do)."""
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
    limits: ProcessLimits = NO_LIMITS
    """The process's resource limits (memory, CPU time); exceeding one ends it with a fault
    naming the limit."""

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
        args = ["--referee", address, *(("--token", token) if self.token_in_argv else ()), "--name", name]
        if self.protocol == "stdio":
            argv = [sys.executable, "-m", "sample_bots.stdio_bridge", *args, "--", *command]
        else:
            argv = [*command, *args] if self.pass_args else command
        return self.limits.wrap(argv, reused=self.reused)

    def environment(self, address: str, token: str, name: str) -> dict[str, str]:
        """The environment of the bot's process."""
        return {**os.environ, **dict(self.env), "GIN_REFEREE": address, "GIN_TOKEN": token, "GIN_BOT_NAME": name}
