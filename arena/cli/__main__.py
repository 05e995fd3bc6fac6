"""``python -m arena.cli``."""

from . import main

raise SystemExit(main())
