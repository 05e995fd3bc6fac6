"""``python -m arena.cli``."""

from arena.cli import main

raise SystemExit(main())
