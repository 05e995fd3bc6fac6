"""structlog set-up: JSON lines off a terminal, coloured console on one; context (``match_id``,
``seat``, ``bot``) bound per task through contextvars."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog


def configure_logging(level: str = "info", *, json: bool | None = None, stream: TextIO | None = None) -> None:
    """Configure structlog once for the process. ``json=None`` picks JSON unless ``stream``
    (default stderr) is a terminal."""
    out = stream if stream is not None else sys.stderr
    use_json = not out.isatty() if json is None else json
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if use_json else structlog.dev.ConsoleRenderer(colors=out.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info if use_json else structlog.dev.set_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelNamesMapping()[level.upper()]),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )
