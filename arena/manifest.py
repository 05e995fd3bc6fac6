"""The bots manifest: which programs take part and how to start them (TOML).

```toml
[[bot]]
name = "greedy"
command = ["{python}", "-m", "sample_bots.greedy_bot"]   # any language; {python} = this Python
cwd = "."                  # relative to the manifest's folder (the default)
env = { GIN_LOG_LEVEL = "WARNING" }
protocol = "grpc"          # or "stdio": run through sample_bots.stdio_bridge

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
import shutil
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Protocol = Literal["grpc", "stdio"]
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}$")
"""Bot names: they appear in file names and match ids."""
BOT_FIELDS = ("name", "command", "cwd", "env", "protocol", "remote", "max_concurrent", "pass_args")
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "command": list(self.command),
            "cwd": self.cwd,
            "env": dict(self.env),
            "protocol": self.protocol,
            "remote": self.remote,
            "max_concurrent": self.max_concurrent,
            "pass_args": self.pass_args,
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
    remote = raw.get("remote", False)
    if not isinstance(remote, bool):
        bad("remote", f"must be true or false; got {remote!r}")
        remote = False
    command = raw.get("command")
    argv: tuple[str, ...] = ()
    if command is None:
        if not remote:
            bad("command", 'missing: give command = ["program", "arg", ...] or remote = true')
    elif remote:
        bad("command", "a remote bot has no command (it connects by itself); remove one of them")
    elif isinstance(command, str):
        bad(
            "command",
            f"must be a list of strings (the program and its arguments); got the string {command!r}",
        )
    elif not isinstance(command, list) or not command or not all(isinstance(p, str) and p for p in command):
        bad("command", f"must be a non-empty list of non-empty strings; got {command!r}")
    else:
        argv = tuple(command)
    cwd_raw = raw.get("cwd", "")
    cwd = ""
    if not isinstance(cwd_raw, str):
        bad("cwd", f"must be a string (a folder); got {cwd_raw!r}")
    else:
        folder = (base / cwd_raw).resolve() if cwd_raw else base.resolve()
        if not folder.is_dir():
            bad("cwd", f"{str(folder)!r} is not a folder")
        cwd = str(folder)
    env_raw = raw.get("env", {})
    env: dict[str, str] = {}
    if not isinstance(env_raw, dict):
        bad("env", f'must be a table of strings, e.g. env = {{ KEY = "value" }}; got {env_raw!r}')
    else:
        for k, v in env_raw.items():
            if not isinstance(v, str):
                bad("env", f"{k}: values must be strings; got {v!r}")
            elif not k or "=" in k:
                bad("env", f"{k!r} is not a valid variable name")
            else:
                env[k] = v
    protocol = raw.get("protocol", "grpc")
    if protocol not in ("grpc", "stdio"):
        bad("protocol", f'must be "grpc" or "stdio"; got {protocol!r}')
    if remote and "protocol" in raw and protocol == "stdio":
        bad("protocol", "a remote bot connects by itself; stdio applies only to programs the arena starts")
    max_concurrent = raw.get("max_concurrent", 0)
    if not isinstance(max_concurrent, int) or isinstance(max_concurrent, bool) or max_concurrent < 0:
        bad("max_concurrent", f"must be a whole number >= 0; got {max_concurrent!r}")
        max_concurrent = 0
    pass_args = raw.get("pass_args", True)
    if not isinstance(pass_args, bool):
        bad("pass_args", f"must be true or false; got {pass_args!r}")
        pass_args = True
    if argv and cwd and not problems:
        program = sys.executable if argv[0] == PYTHON_PLACEHOLDER else argv[0]
        found = shutil.which(program) if os.sep not in program else None
        if found is None and not (os.sep in program and Path(cwd, program).exists()):
            bad("command", f"program {program!r} is not found (on PATH, or relative to cwd {cwd!r})")
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
    ), []


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
