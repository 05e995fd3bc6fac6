"""``arena audit``, ``arena replay``, ``arena replay-html`` and ``arena html``: their options (parsed
by the parsers their modules add) handed to those modules as plain values — nothing below
``arena.cli`` reads an ``argparse.Namespace``."""

from __future__ import annotations

import argparse
from typing import TextIO

from arena.replays import audit
from arena.replays import html as replay_html
from arena.replays import view as replay_view
from arena.results import page as results_page


def cmd_audit(args: argparse.Namespace) -> int:
    """``arena audit``."""
    return audit.run(args.paths, expect_hash=args.expect_hash or "", allow_unchecked=bool(args.allow_unchecked),
                     jobs=args.jobs, as_json=bool(args.json), quiet=bool(args.quiet))


def cmd_replay(args: argparse.Namespace, *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """``arena replay`` (``stdin``, ``stdout``: the terminal's, unless given)."""
    show = replay_view.Show(replay=args.replay, step=args.step, deal=args.deal, all=bool(args.all), seat=args.seat,
                            html=args.html, raw=bool(args.raw), symbols=bool(args.symbols), color=args.color)
    return replay_view.run(show, stdin=stdin, stdout=stdout)


def cmd_replay_html(args: argparse.Namespace) -> int:
    """``arena replay-html``."""
    return replay_html.run(args.replays, out=args.out, out_dir=args.out_dir)


def cmd_html(args: argparse.Namespace) -> int:
    """``arena html``."""
    return results_page.run(args.run_dir, replays=not args.no_replays)
