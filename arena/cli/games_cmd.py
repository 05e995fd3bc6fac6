"""``arena games``: the games installed (found by entry point in the group ``gin_arena.games``,
docs/adding-a-game.md) — name, distribution and version, seats, presets, plugin API — and
each one's problem (broken, incompatible, installed twice) as the one-line error a command
asking for that game gets, and what is wrong with its declared capabilities."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from referee import games


def add_parser(sub: Any) -> None:
    """The ``games`` subcommand's options."""
    g = sub.add_parser(
        "games",
        help="list the installed games (name, package, seats, presets, plugin API, problems)",
        description="List the games the arena can play: Gin and Rummy and every game another package "
        f"registers through the entry-point group {games.ENTRY_POINT_GROUP!r} (docs/adding-a-game.md). "
        "Each is imported to show its seats and presets; a game that is broken, written for another "
        f"plugin API (this arena speaks {games.PLUGIN_API}) or installed twice is listed with its problem, "
        "and only commands that ask for it fail; so is a game whose declared optional capabilities "
        "(referee.games.Capabilities) are unsound or that declares no display name. Exits 0; 1 with --check "
        "if any game has a problem.",
    )
    g.add_argument("--json", action="store_true", help="print the list as JSON")
    g.add_argument("--check", action="store_true", help="exit 1 if any installed game has a problem")


def _seats(seats: range | None) -> str:
    if seats is None or len(seats) == 0:
        return "?"
    return str(seats[0]) if len(seats) == 1 else f"{seats[0]}-{seats[-1]}"


def _as_json(g: games.Installed) -> dict[str, Any]:
    return {"name": g.name, "origin": g.origin, "entry_point": g.entry_point, "plugin_api": g.plugin_api,
            "seats": list(g.seats) if g.seats is not None else None, "presets": list(g.presets),
            "problem": g.problem, "display_name": g.display_name, "capabilities": list(g.capabilities),
            "capability_problems": list(g.capability_problems)}


def run(args: argparse.Namespace) -> int:
    """List the games; problems also go to stderr, one line each."""
    found = games.installed()
    if args.json:
        print(json.dumps([_as_json(g) for g in found], indent=2))
    else:
        header = ("game", "package", "seats", "presets", "api", "status")
        rows = [(g.name, g.origin, _seats(g.seats), ", ".join(g.presets) or "-",
                 "?" if g.plugin_api is None else str(g.plugin_api), "ok" if _sound(g) else "PROBLEM")
                for g in found]
        widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
        for r in (header, *rows):
            print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        if not found:
            print(f"(no game is installed: the entry-point group {games.ENTRY_POINT_GROUP!r} is empty)")
    for g in found:
        for problem in (g.problem, *g.capability_problems):
            if problem is not None:
                print(f"arena: warning: {problem}", file=sys.stderr)
    return 1 if args.check and not all(_sound(g) for g in found) else 0


def _sound(g: games.Installed) -> bool:
    """Whether a game loads and declares its optional parts soundly (``--check``)."""
    return g.problem is None and not g.capability_problems
