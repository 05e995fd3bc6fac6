"""The bots manifest: which programs take part and how to start them (TOML).

```toml
[[bot]]
name = "greedy"
command = ["{python}", "-m", "sample_bots.greedy_bot"]   # any language; {python} = this Python
cwd = "."                  # relative to the manifest's folder (the default)
env = { GIN_LOG_LEVEL = "WARNING" }
protocol = "grpc"          # or "stdio": run through sample_bots.stdio_bridge
tc = "st=0.5"              # this bot's own time control (default: the run's --tc)
games = ["gin", "rummy"]   # the games it plays (default ["gin"])
restart = "never"          # one process plays game after game (default); "always": a process
                           # per game; "after:N": a new process every N games
max_rss_mb = 2000          # a new process once the bot's memory exceeds this (default: no limit)

[bot.limits]               # resource limits of its process (default: none); exceeding one ends
memory_mb = 512            # the process, and its game ends with a crash fault naming the limit
cpu_seconds = 60           # (CPU time per game)

[[bot]]
name = "visitor"
remote = true              # connects by itself with the token the arena prints
max_concurrent = 1
```

Every problem is reported with the file, the bot and the field; all of them at once.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from referee import DEFAULT_GAME, ProcessLimits, TimeControl, TimeControlError
from referee.lowlevel import RESTART_HELP, restart_after

Protocol = Literal["grpc", "stdio"]
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}$")
"""Bot names: they appear in file names and match ids."""
BOT_FIELDS = (
    "name", "command", "cwd", "env", "protocol", "remote", "max_concurrent", "pass_args", "tc", "games", "restart",
    "max_rss_mb", "limits",
)
LIMIT_FIELDS = ("memory_mb", "cpu_seconds")
"""The keys of a bot's ``[bot.limits]`` (:class:`referee.ProcessLimits`)."""
DEFAULT_GAMES = (DEFAULT_GAME,)
"""The games a bot plays when its manifest entry does not say."""
PYTHON_PLACEHOLDER = "{python}"
"""In a command, replaced by the Python interpreter running the arena."""


class ManifestError(Exception):
    """One or more problems in a manifest; ``str()`` lists them, one per line."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True, slots=True)
class BotSpec:
    """One bot of a tournament or the ladder."""

    name: str
    command: tuple[str, ...] = ()
    """The program and its arguments (empty for a remote bot)."""
    cwd: str = ""
    """Working directory (absolute); empty: the arena's."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment variables."""
    protocol: Protocol = "grpc"
    """``grpc``: the program is a bot client; ``stdio``: it is run through the stdio bridge."""
    remote: bool = False
    """The bot is not started by the arena; it connects itself with its token."""
    max_concurrent: int = 0
    """Games this bot plays at once; 0 = no limit (remote bots default to 1)."""
    pass_args: bool = True
    """Append ``--referee --token --name`` to the command (the environment variables
    ``GIN_REFEREE``, ``GIN_TOKEN``, ``GIN_BOT_NAME`` are always set)."""
    time_control: TimeControl | None = None
    """This bot's own time control (manifest ``tc = "…"``); ``None``: the run's."""
    games: tuple[str, ...] = DEFAULT_GAMES
    """The games it plays (manifest ``games = ["gin", "rummy"]``); a run of another game refuses it."""
    restart: str = "never"
    """When the bot gets a new process: ``never`` (one process plays game after game on its bot
    token), ``always`` (a process per game) or ``after:N``; also after a crash or a fault."""
    max_rss_mb: int = 0
    """A new process once the bot's resident memory exceeds this (MiB, checked after each
    game); 0: no limit."""
    limits: ProcessLimits = field(default_factory=ProcessLimits)
    """Resource limits of its process (manifest ``[bot.limits]``: ``memory_mb``,
    ``cpu_seconds``); exceeding one ends the process with a fault naming the limit."""

    def to_dict(self) -> dict[str, Any]:
        """The stored form (the time control as its text)."""
        return {
            "name": self.name,
            "command": list(self.command),
            "cwd": self.cwd,
            "env": dict(self.env),
            "protocol": self.protocol,
            "remote": self.remote,
            "max_concurrent": self.max_concurrent,
            "pass_args": self.pass_args,
            **({"tc": self.time_control.to_dict()} if self.time_control is not None else {}),
            **({"games": list(self.games)} if self.games != DEFAULT_GAMES else {}),
            "restart": self.restart,
            "max_rss_mb": self.max_rss_mb,
            **({"limits": {k: getattr(self.limits, k) for k in LIMIT_FIELDS if getattr(self.limits, k)}}
               if self.limits else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BotSpec:
        return cls(
            name=str(data["name"]),
            command=tuple(data.get("command", ())),
            cwd=str(data.get("cwd", "")),
            env=dict(data.get("env", {})),
            protocol=data.get("protocol", "grpc"),
            remote=bool(data.get("remote", False)),
            max_concurrent=int(data.get("max_concurrent", 0)),
            pass_args=bool(data.get("pass_args", True)),
            time_control=TimeControl.from_dict(data["tc"]) if data.get("tc") else None,
            games=tuple(data.get("games", DEFAULT_GAMES)),
            # a run stored before reuse started a process per game: resume it the same way
            restart=str(data.get("restart", "always")),
            max_rss_mb=int(data.get("max_rss_mb", 0)),
            limits=ProcessLimits(**{k: int(v) for k, v in dict(data.get("limits", {})).items()}),
        )

    @property
    def limit(self) -> int:
        """Games at once (0 = no limit)."""
        if self.max_concurrent:
            return self.max_concurrent
        return 1 if self.remote else 0

    def argv(self, referee: str, token: str) -> list[str]:
        """The command line that starts this bot for one seat."""
        command = [sys.executable if part == PYTHON_PLACEHOLDER else part for part in self.command]
        args = ["--referee", referee, "--token", token, "--name", self.name]
        if self.protocol == "stdio":
            return [sys.executable, "-m", "sample_bots.stdio_bridge", *args, "--", *command]
        return [*command, *args] if self.pass_args else command

    def environment(self, referee: str, token: str) -> dict[str, str]:
        """The environment of the bot's process."""
        return {
            **os.environ,
            **self.env,
            "GIN_REFEREE": referee,
            "GIN_TOKEN": token,
            "GIN_BOT_NAME": self.name,
        }


def new_token() -> str:
    """A fresh seat or bot token: 32 hex digits (never starts with '-', so that it survives any
    command-line parser as the value of --token)."""
    return secrets.token_hex(16)


def check_name(name: object) -> str | None:
    """Why ``name`` is not a valid bot name, or ``None``."""
    if not isinstance(name, str):
        return "must be a string"
    if not NAME_RE.match(name):
        return (
            f"{name!r} is not a valid name: 1 to 40 letters, digits, '_', '.', '+' or '-', "
            "starting with a letter or digit"
        )
    return None


def _parse_command(raw: Mapping[str, Any], remote: bool, bad: Callable[[str, str], None]) -> tuple[str, ...]:
    command = raw.get("command")
    if command is None:
        if not remote:
            bad("command", 'missing: give command = ["program", "arg", ...] or remote = true')
    elif remote:
        bad("command", "a remote bot has no command (it connects by itself); remove one of them")
    elif isinstance(command, str):
        bad("command", f"must be a list of strings (the program and its arguments); got the string {command!r}")
    elif not isinstance(command, list) or not command or not all(isinstance(p, str) and p for p in command):
        bad("command", f"must be a non-empty list of non-empty strings; got {command!r}")
    else:
        return tuple(command)
    return ()


def _parse_cwd(raw: Mapping[str, Any], base: Path, bad: Callable[[str, str], None]) -> str:
    cwd_raw = raw.get("cwd", "")
    if not isinstance(cwd_raw, str):
        bad("cwd", f"must be a string (a folder); got {cwd_raw!r}")
        return ""
    folder = (base / cwd_raw).resolve() if cwd_raw else base.resolve()
    if not folder.is_dir():
        bad("cwd", f"{str(folder)!r} is not a folder")
    return str(folder)


def _parse_env(raw: Mapping[str, Any], bad: Callable[[str, str], None]) -> dict[str, str]:
    env_raw = raw.get("env", {})
    env: dict[str, str] = {}
    if not isinstance(env_raw, dict):
        bad("env", f'must be a table of strings, e.g. env = {{ KEY = "value" }}; got {env_raw!r}')
        return env
    for k, v in env_raw.items():
        if not isinstance(v, str):
            bad("env", f"{k}: values must be strings; got {v!r}")
        elif not k or "=" in k:
            bad("env", f"{k!r} is not a valid variable name")
        else:
            env[k] = v
    return env


def _parse_tc(raw: Mapping[str, Any], bad: Callable[[str, str], None]) -> TimeControl | None:
    text = raw.get("tc")
    if text is None:
        return None
    if not isinstance(text, str):
        bad("tc", f'must be a time control string, e.g. tc = "st=0.5"; got {text!r}')
        return None
    try:
        return TimeControl.parse(text)
    except TimeControlError as e:
        bad("tc", f"{text!r}: {e}")
        return None


def _parse_games(raw: Mapping[str, Any], bad: Callable[[str, str], None]) -> tuple[str, ...]:
    value = raw.get("games", list(DEFAULT_GAMES))
    if isinstance(value, str):  # an inline bot's games=gin,rummy
        value = [g.strip() for g in value.split(",")]
    if not isinstance(value, list) or not value or not all(isinstance(g, str) and g for g in value):
        bad("games", f"must be a non-empty list of game names (arena games lists them), e.g. games = "
                     f'["{DEFAULT_GAME}"]; got {value!r}')
        return DEFAULT_GAMES
    return tuple(value)


def _flag(raw: Mapping[str, Any], key: str, default: bool, bad: Callable[[str, str], None]) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        bad(key, f"must be true or false; got {value!r}")
        return default
    return value


def parse_bot(raw: Mapping[str, Any], base: Path, where: str) -> tuple[BotSpec | None, list[str]]:
    """One bot table; ``where`` prefixes every problem (e.g. ``bots.toml: bot "x"``)."""
    problems: list[str] = []

    def bad(fld: str, why: str) -> None:
        problems.append(f"{where}: field {fld!r}: {why}")

    for key in raw:
        if key not in BOT_FIELDS:
            bad(key, f"unknown field (known: {', '.join(BOT_FIELDS)})")
    name = raw.get("name")
    if name is None:
        bad("name", "missing")
    elif (why := check_name(name)) is not None:
        bad("name", why)
    remote = _flag(raw, "remote", False, bad)
    argv = _parse_command(raw, remote, bad)
    cwd = _parse_cwd(raw, base, bad)
    env = _parse_env(raw, bad)
    protocol = raw.get("protocol", "grpc")
    if protocol not in ("grpc", "stdio"):
        bad("protocol", f'must be "grpc" or "stdio"; got {protocol!r}')
    if remote and "protocol" in raw and protocol == "stdio":
        bad("protocol", "a remote bot connects by itself; stdio applies only to programs the arena starts")
    max_concurrent = raw.get("max_concurrent", 0)
    if not isinstance(max_concurrent, int) or isinstance(max_concurrent, bool) or max_concurrent < 0:
        bad("max_concurrent", f"must be a whole number >= 0; got {max_concurrent!r}")
        max_concurrent = 0
    pass_args = _flag(raw, "pass_args", True, bad)
    tc = _parse_tc(raw, bad)
    plays = _parse_games(raw, bad)
    restart, max_rss_mb = _parse_restart(raw, bad)
    limits = _parse_limits(raw, bad)
    if remote and limits:
        bad("limits", "a remote bot's process is not the arena's to limit; remove [bot.limits] or remote = true")
    if argv and cwd and not problems and (why := _program_missing(argv[0], cwd)):
        bad("command", why)
    if problems:
        return None, problems
    assert isinstance(name, str)
    return BotSpec(
        name=name,
        command=argv,
        cwd=cwd if not remote else "",
        env=env,
        protocol=protocol,
        remote=remote,
        max_concurrent=max_concurrent,
        pass_args=pass_args,
        time_control=tc,
        games=plays,
        restart=restart,
        max_rss_mb=max_rss_mb,
        limits=limits,
    ), []


def _parse_limits(raw: Mapping[str, Any], bad: Callable[[str, str], None]) -> ProcessLimits:
    table = raw.get("limits", {})
    if not isinstance(table, dict):
        bad("limits", f"must be a table, e.g. [bot.limits] memory_mb = 512, cpu_seconds = 60; got {table!r}")
        return ProcessLimits()
    values: dict[str, int] = {}
    for key, value in table.items():
        if key not in LIMIT_FIELDS:
            bad("limits", f"{key!r}: unknown limit (known: {', '.join(LIMIT_FIELDS)})")
        elif isinstance(value, str) and value.isdigit():  # an inline bot's memory_mb=512
            values[key] = int(value)
        elif not isinstance(value, int) or isinstance(value, bool) or value < 1:
            unit = "MiB" if key == "memory_mb" else "seconds"
            bad("limits", f"{key}: must be a whole number of {unit} >= 1; got {value!r}")
        else:
            values[key] = value
    return ProcessLimits(**values)


def _parse_restart(raw: Mapping[str, Any], bad: Callable[[str, str], None]) -> tuple[str, int]:
    restart = raw.get("restart", "never")
    try:
        restart_after(restart if isinstance(restart, str) else "")
    except ValueError:
        bad("restart", f"must be {RESTART_HELP}; got {restart!r}")
        restart = "never"
    rss = raw.get("max_rss_mb", 0)
    if not isinstance(rss, int) or isinstance(rss, bool) or rss < 0:
        bad("max_rss_mb", f"must be a whole number of MiB >= 0; got {rss!r}")
        rss = 0
    return str(restart), rss


def _program_missing(program: str, cwd: str) -> str:
    """Why ``program`` cannot be started from ``cwd`` (``""``: it can be found)."""
    program = sys.executable if program == PYTHON_PLACEHOLDER else program
    if os.sep in program:
        if Path(cwd, program).exists():
            return ""
    elif shutil.which(program) is not None:
        return ""
    return f"program {program!r} is not found (on PATH, or relative to cwd {cwd!r})"


INLINE_KEYS = {"name": "name", "cmd": "command", "command": "command", "tc": "tc", "protocol": "protocol",
               "cwd": "cwd", "games": "games", "memory_mb": "limits", "cpu_seconds": "limits"}
"""The keys of an inline bot (``--bot name=greedy cmd="python -m …" tc=st=0.5``) and their manifest fields."""


def parse_inline_bot(text: str, base: Path) -> BotSpec:
    """A bot given on the command line: ``name=NAME cmd="PROGRAM ARGS" [tc=TC] [protocol=stdio]
    [cwd=DIR] [games=…] [memory_mb=N] [cpu_seconds=N]``; raises :class:`ManifestError`."""
    where = f"--bot {text!r}"
    raw: dict[str, Any] = {}
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise ManifestError([f"{where}: {e}"]) from None
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or key not in INLINE_KEYS:
            raise ManifestError([f"{where}: {word!r}: expected KEY=VALUE with KEY one of name, cmd, tc, protocol, cwd, "
                                 "games, memory_mb, cpu_seconds"])
        if INLINE_KEYS[key] == "limits":
            raw.setdefault("limits", {})[key] = value
        else:
            raw[INLINE_KEYS[key]] = shlex.split(value) if INLINE_KEYS[key] == "command" else value
    if "name" not in raw or "command" not in raw:
        raise ManifestError([f'{where}: give at least name=NAME and cmd="PROGRAM ARGS"'])
    bot, problems = parse_bot(raw, base, where)
    if bot is None:
        raise ManifestError(problems)
    return bot


_PYTHON_RE = re.compile(r"^python[0-9.]*$")
SCRIPT_INTERPRETERS = re.compile(r"^(python[0-9.]*|node|nodejs|deno|bun|ruby|perl|php|sh|bash|zsh|Rscript)$")
"""Programs whose first argument that is not an option is a script file they run: that file must
exist (relative to the bot's folder) before the run starts."""
_INTERPRETER_VALUE_OPTIONS = frozenset({"-W", "-X", "-Q", "-r", "--require", "-I", "--import", "--loader"})
"""Options of those interpreters that take the next argument as their value (not the script)."""
_INTERPRETER_STOP_OPTIONS = frozenset({"-m", "-c", "-e", "--eval", "-p", "--print", "-"})
"""Options after which no script file follows (a module, code given inline, or stdin)."""
_PROBE = """
import ast, importlib.util, sys
def missing(name, seen):
    spec = importlib.util.find_spec(name)
    if spec is None:
        return [name]
    if name in seen or len(seen) > 50 or not (spec.origin or "").endswith(".py"):
        return []
    seen.add(name)
    package = name if spec.submodule_search_locations else name.rpartition(".")[0]
    out = []
    for node in ast.parse(open(spec.origin, "rb").read()).body:
        if isinstance(node, ast.Import):
            out += [a.name.split(".")[0] for a in node.names if importlib.util.find_spec(a.name.split(".")[0]) is None]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.split(".")[0]
            out += [] if importlib.util.find_spec(top) else [top]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            target = base + ("." + node.module if node.module else "")
            out += missing(target, seen)
    return out
gone = sorted(set(missing(sys.argv[1], set())))
sys.exit(", ".join(gone) if gone else 0)
"""
"""Run by the bot's own interpreter: which modules ``-m MODULE`` (and its own package's modules
it imports) would fail to import — without running the bot's code."""


def not_playing(bots: Sequence[BotSpec], game: str) -> list[str]:
    """A problem for each bot whose manifest does not say it plays ``game``."""
    return [f"bot {b.name!r} does not play {game} (its games: {', '.join(b.games)}); add {game!r} to its "
            "manifest's games = [...] (or games=... of --bot)" for b in bots if game not in b.games]


def startup_problem(bot: BotSpec) -> str:
    """Why ``bot`` cannot start (``""``: no problem found) — checked before games are played
    for it, where that is cheap: the program must be found, and a ``python -m MODULE`` must find
    its module and the modules it imports (``python`` outside the arena's virtual environment
    often does not)."""
    if bot.remote or not bot.command:
        return ""
    cwd = bot.cwd or os.getcwd()
    if not Path(cwd).is_dir():
        return f"bot {bot.name!r}: its folder {cwd!r} does not exist"
    if why := _program_missing(bot.command[0], cwd):
        return f"bot {bot.name!r}: {why}"
    program = sys.executable if bot.command[0] == PYTHON_PLACEHOLDER else bot.command[0]
    args = bot.command[1:]
    if why := script_missing(program, args, cwd):
        return f"bot {bot.name!r}: {why}"
    if not (_PYTHON_RE.match(Path(program).name) and len(args) >= 2 and args[0] == "-m"):
        return ""
    try:
        done = subprocess.run([program, "-c", _PROBE, args[1]], cwd=cwd, env={**os.environ, **bot.env},
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bot {bot.name!r}: cannot run {program!r}: {e}"
    if done.returncode != 0:
        what = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "?"
        return (f"bot {bot.name!r}: {program!r} cannot import {args[1]!r} (from {cwd}; missing: {what}); use the "
                f"arena's own interpreter ({PYTHON_PLACEHOLDER} in the command, i.e. {sys.executable}) or install "
                "what is missing")
    return ""


def script_missing(program: str, args: Sequence[str], cwd: str) -> str:
    """Why an interpreter's script cannot be run (``""``: it is there, or the command runs no
    script file): ``python bot.py``, ``node bot.js``, ``sh run.sh`` … need the file, relative to
    ``cwd`` — else every game of the bot would end ``crashed``."""
    if not SCRIPT_INTERPRETERS.match(Path(program).name):
        return ""
    words = iter(args)
    for word in words:
        if word in _INTERPRETER_STOP_OPTIONS:
            return ""
        if word in _INTERPRETER_VALUE_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            if Path(cwd, word).is_file():
                return ""
            return f"{Path(program).name} would run the script {word!r}, which is not found (relative to cwd {cwd!r})"
    return ""


def load_manifest(path: Path, *, minimum: int = 2) -> list[BotSpec]:
    """Read and check a manifest; raises :class:`ManifestError` listing every problem."""
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ManifestError([f"{where}: cannot read the manifest: {e.strerror or e}"]) from None
    return parse_manifest(text, path, minimum=minimum)


def parse_manifest(text: str, path: Path, *, minimum: int = 2) -> list[BotSpec]:
    """Check a manifest's text (``path`` names it in messages and anchors relative folders)."""
    where = str(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ManifestError([f"{where}: not valid TOML: {e}"]) from None
    problems: list[str] = []
    for key in data:
        if key != "bot":
            problems.append(f"{where}: field {key!r}: unknown top-level key (bots are [[bot]] tables)")
    raw_bots = data.get("bot", [])
    if not isinstance(raw_bots, list) or not all(isinstance(b, dict) for b in raw_bots):
        raise ManifestError([*problems, f"{where}: field 'bot': write each bot as a [[bot]] table"])
    bots: list[BotSpec] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_bots, start=1):
        name = raw.get("name")
        label = f"bot {name!r}" if isinstance(name, str) else f"bot #{i}"
        spec, issues = parse_bot(raw, path.parent, f"{where}: {label} (#{i})")
        problems.extend(issues)
        if isinstance(name, str):
            if name in seen:
                problems.append(
                    f"{where}: {label} (#{i}): field 'name': duplicate; bot #{seen[name]} has the same name"
                )
            seen.setdefault(name, i)
        if spec is not None:
            bots.append(spec)
    if not problems and len(raw_bots) < minimum:
        problems.append(
            f"{where}: field 'bot': a tournament needs at least {minimum} bots; found {len(raw_bots)}"
        )
    if problems:
        raise ManifestError(problems)
    return bots
