"""``arena new-bot NAME --lang python|js|stdio [--dir DIR]``: a bot folder that plays at once.

The folder holds the bot (``bot.py`` or ``bot.js``), ``bots.toml`` (the bot and ``greedy``, so
that ``arena tournament --bots NAME/bots.toml`` plays it right away), ``test_bot.py`` (plays that
tournament and checks that the bot finished every game without a fault or a fallback) and a
``README.md`` with the commands. An existing folder is never touched: the files are written to
a temporary folder beside it, which is then renamed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.cli.options import UsageError
from arena.exit_codes import EXIT_OK
from arena.model.manifest import NAME_RE

LANGS = ("python", "js", "stdio")
"""The scaffolds ``--lang`` offers."""
REPO = Path(__file__).resolve().parents[2]
"""This checkout: the JavaScript scaffold loads the sample bot's session code from it."""
JS_SESSION = REPO / "sample_bots" / "js" / "bot.js"
"""The JavaScript bot's gRPC session (its packages are in ``sample_bots/js/node_modules``)."""
TEMPLATES = REPO / "sample_bots" / "templates"
"""The bots a new folder starts from, one file per ``--lang`` (``str.format`` templates: ``{name}``
and, for JavaScript, ``{name_json}``, ``{session}``, ``{js_dir}``). They play the default game."""


def template(lang: str) -> str:
    """The bot template of ``--lang LANG``."""
    return (TEMPLATES / f"{lang}_bot.{'js' if lang == 'js' else 'py'}.in").read_text(encoding="utf-8")


_TEST = '''"""{name}: plays a short tournament against greedy through the arena and checks that it
finished every game without a fault or a fallback. Run: python {folder}/test_bot.py (with the
arena's venv active; pytest is not needed, and python -m pytest {folder}/test_bot.py runs it too)."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_{ident}_plays_a_short_tournament_against_greedy(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli", "tournament", "--bots", str(HERE / "bots.toml"), "--games", "2",
         "--rules", "short", "--tc", "st=30", "--out", str(tmp_path / "run")],  # (st=30: a busy machine is no fault)
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert len(results["games"]) == 2
    for game in results["games"]:
        assert game["termination"] == "normal", game["detail"]
    mine = next(row for row in results["standings"] if row["bot"] == "{name}")
    assert mine["games"] == 2 and mine["faults"] == 0 and mine["fallbacks"] == 0, mine


if __name__ == "__main__":  # python test_bot.py: the same check without pytest (a failure exits 1)
    with tempfile.TemporaryDirectory() as tmp:
        test_{ident}_plays_a_short_tournament_against_greedy(Path(tmp))
    print("{name}: 2 games against greedy, each ended normally, no fault, no fallback: passed")
'''

_MANIFEST = '''# {name} and an opponent: arena tournament --bots {folder}/bots.toml --games 2 --rules short --tc st=30
[[bot]]
name = "{name}"
command = {command}{protocol}

[[bot]]
name = "greedy"
command = ["{{python}}", "-m", "sample_bots.greedy_bot"]
'''

_README = '''# {name}

A Gin Arena bot ({lang}), made by `arena new-bot`. Change the decision in `{bot_file}`, then:

```sh
arena tournament --bots {folder}/bots.toml --games 2 --rules short --tc st=30   # play it against greedy
python {folder}/test_bot.py                                           # the same, checked (or: python -m pytest …)
```

An exception in the bot's code resigns the match: the results show a `bot_error` fault with the
exception's last line. `--on-error fallback` answers the first legal action instead; the results
count those fallbacks per bot (docs/bots.md).
'''


@dataclass(frozen=True, slots=True)
class Scaffold:
    """What ``arena new-bot`` wrote."""

    folder: Path
    """The bot's new folder."""
    files: tuple[str, ...]
    """The files in it, in the order they are described."""
    try_command: str
    """The command that plays the bot against greedy."""
    test_command: str
    """The command that runs its test (plain ``python``: the arena's set-up has no pytest)."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``new-bot`` to the ``arena`` command's subparsers."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "new-bot",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="write a bot folder that plays at once (Python, JavaScript or stdio), with its test",
        description="Write DIR/NAME/: the bot, bots.toml (it and greedy), test_bot.py (plays them) and a README.\n"
                    "An existing folder is never overwritten.",
        epilog="Examples:\n  arena new-bot my-bot --lang python\n  arena new-bot fast-js --lang js --dir bots\n"
               "  arena tournament --bots my-bot/bots.toml --games 2 --rules short",
    )
    p.add_argument("name", metavar="NAME", help="the bot's name (letters, digits, _ . + -; at most 40)")
    p.add_argument("--lang", required=True, choices=LANGS, help="python (the kit), js (gRPC) or stdio (JSON lines)")
    p.add_argument("--dir", type=Path, default=Path("."), metavar="DIR", help="where the folder goes (default .)")
    return p


def _files(name: str, lang: str, shown: str) -> dict[str, str]:
    ident = "".join(c if c.isalnum() else "_" for c in name)
    if lang == "python":
        bot_file, bot, command, protocol = "bot.py", template("python").format(name=name), '["{python}", "bot.py"]', ""
    elif lang == "js":
        bot_file, command, protocol = "bot.js", '["node", "bot.js"]', ""
        bot = template("js").format(name=name, name_json=json.dumps(name), session=json.dumps(str(JS_SESSION)),
                             js_dir=JS_SESSION.parent)
    else:
        bot_file, bot, command = "bot.py", template("stdio").format(name=name), '["{python}", "bot.py"]'
        protocol = '\nprotocol = "stdio"         # run through sample_bots.stdio_bridge'
    return {
        bot_file: bot,
        "bots.toml": _MANIFEST.format(name=name, folder=shown, command=command, protocol=protocol),
        "test_bot.py": _TEST.format(name=name, ident=ident, folder=shown),
        "README.md": _README.format(name=name, lang=lang, bot_file=bot_file, folder=shown),
    }


def write_scaffold(name: str, lang: str, parent: Path) -> Scaffold:
    """Write the bot folder ``parent/name`` (raises :class:`UsageError`, writing nothing, for a
    bad name or language, or a folder that exists)."""
    if not NAME_RE.match(name):
        raise UsageError(f"bad bot name {name!r}: use letters, digits and _ . + - (at most 40 characters, "
                         "starting with a letter or digit)")
    if lang not in LANGS:
        raise UsageError(f"--lang must be one of {', '.join(LANGS)}; got {lang!r}")
    folder = parent / name
    if folder.exists() or folder.is_symlink():
        raise UsageError(f"{folder} already exists; nothing was written (choose another NAME or --dir)")
    if not parent.is_dir():
        raise UsageError(f"--dir {parent}: no such folder")
    shown = str(folder)
    files = _files(name, lang, shown)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=parent))
    try:
        for file, text in files.items():
            (staging / file).write_text(text)
        os.chmod(staging, 0o755)  # (mkdtemp's 0700 would keep the folder from others)
        try:
            staging.rename(folder)  # fails if the folder appeared meanwhile: it is never replaced
        except OSError as e:
            raise UsageError(f"{folder} could not be created ({e.strerror}); nothing was written") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    play = f"arena tournament --bots {shown}/bots.toml --games 2 --rules short --tc st=30"
    return Scaffold(folder, tuple(files), play,
                    f"python {shown}/test_bot.py")


def run(args: argparse.Namespace) -> int:
    """``arena new-bot``."""
    made = write_scaffold(args.name, args.lang, args.dir)
    print(f"wrote {made.folder}/: {', '.join(made.files)}")
    print(f"play it against greedy:  {made.try_command}")
    print(f"run its test:            {made.test_command}")
    if args.lang == "js" and not (JS_SESSION.parent / "node_modules").is_dir():
        print(f"first install the JavaScript bot's packages: (cd {JS_SESSION.parent} && npm ci)", file=sys.stderr)
    return EXIT_OK
