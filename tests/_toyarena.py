"""The ``arena`` command with the toy game of tests/_toygame.py registered: what a test runs as
a process (``python -m tests._toyarena tournament --game toy-high-cards …``) to play the toy
through the real command line, run folder, runner, referee and bot processes."""

from __future__ import annotations

import sys

from arena.cli import main
from tests import _toygame

if __name__ == "__main__":
    _toygame.register()
    raise SystemExit(main(sys.argv[1:]))
