"""stderr for people, ``run.log`` for machines: structlog configured to write every event as a
JSON line to the run's log file and the important ones to stderr, in structlog's console
rendering (coloured on a terminal; JSON only with ``--log-json``), and a progress bar that log
lines never garble."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, TextIO

import rich.console
import rich.progress
import rich.text
import structlog

_LEVELS = logging.getLevelNamesMapping()


class Console:
    """Writes to stderr; on a terminal a live progress bar (rich) stays at the bottom, below the
    log lines."""

    def __init__(self, stream: TextIO | None = None, *, progress: bool | None = None) -> None:
        self._stream = stream
        self.tty = self.stream.isatty()
        self.show_progress = self.tty if progress is None else progress
        self.live: rich.progress.Progress | None = None
        """The progress bar being shown (lines are printed above it)."""

    @property
    def stream(self) -> TextIO:
        """The stream given, or whatever ``sys.stderr`` is now."""
        return self._stream if self._stream is not None else sys.stderr

    def line(self, text: str) -> None:
        """Write a whole line (above the progress bar)."""
        if self.live is not None:
            self.live.console.print(text, markup=False, highlight=False, soft_wrap=True)
            return
        self.stream.write(text + "\n")
        self.stream.flush()


class _NamedLogger:
    """What ``structlog.get_logger(name)`` wraps: only its name matters (rendering is done by
    the last processor)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def msg(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover - events are dropped before
        pass

    debug = info = warning = warn = error = critical = exception = fatal = log = msg


class _Sink:
    """The last processor: JSON to the run log, a rendering to the console, then drop."""

    def __init__(self, console: Console, console_level: int, referee_level: int, use_json: bool) -> None:
        self.console = console
        self.console_level = console_level
        self.referee_level = referee_level
        self.use_json = use_json
        self.file: Any = None
        self.file_level = _LEVELS["INFO"]
        self._pretty = structlog.dev.ConsoleRenderer(colors=console.tty)

    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> Any:
        level = _LEVELS.get(str(event.get("level", "info")).upper(), 20)
        name = getattr(logger, "name", "arena")
        event.setdefault("logger", name)
        if self.file is not None and level >= self.file_level:
            self.file.write(json.dumps(event, default=str, ensure_ascii=False) + "\n")
            self.file.flush()
        threshold = self.referee_level if name == "referee" else self.console_level
        if level >= threshold:
            if self.use_json:
                text = json.dumps(event, default=str, ensure_ascii=False)
            else:
                shown = dict(event)
                shown.pop("logger", None)
                shown.pop("timestamp", None)  # (run.log has it)
                text = str(self._pretty(logger, method, shown))
            self.console.line(text)
        raise structlog.DropEvent


_SINK: _Sink | None = None


def configure(
    console: Console, *, verbose: int = 0, log_json: bool | None = None, file_level: str = "info"
) -> None:
    """Configure structlog for the arena process. Console: warnings and errors (``-v``: info of
    the arena, ``-vv``: also the referee's info, ``-vvv``: debug). ``file_level`` applies to
    ``run.log`` once :func:`log_to_file` is called. ``log_json``: JSON lines on the console too
    (else the console renderer's lines, terminal or not)."""
    global _SINK
    console_level = (
        _LEVELS["WARNING"] if verbose == 0 else _LEVELS["INFO"] if verbose < 3 else _LEVELS["DEBUG"]
    )
    referee_level = _LEVELS["WARNING"] if verbose < 2 else console_level
    use_json = bool(log_json)  # (people read the console, terminal or not; run.log is for machines)
    sink = _Sink(console, console_level, referee_level, use_json)
    sink.file_level = _LEVELS[file_level.upper()]
    _SINK = sink
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            sink,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            min(console_level, referee_level, sink.file_level)
        ),
        logger_factory=lambda *args: _NamedLogger(str(args[0]) if args else "arena"),
        cache_logger_on_first_use=False,
    )


def log_to_file(path: Path | None) -> None:
    """Also write every event to ``path`` as JSON lines (``None``: stop)."""
    if _SINK is None:
        return
    if _SINK.file is not None:
        _SINK.file.close()
        _SINK.file = None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        _SINK.file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by log_to_file(None)


def file_level() -> str:
    """The level of ``run.log`` (``info`` unless configured otherwise)."""
    return logging.getLevelName(_SINK.file_level).lower() if _SINK is not None else "info"


def log_only_to_file(path: Path, level: str = "info") -> None:
    """Every event of this process at ``level`` or above to ``path`` as JSON lines, none on
    stdout or stderr (a Dask worker of the run: its lines would garble the arena's progress bar,
    and the run's log folder is where they are looked for)."""
    configure(Console(stream=sys.stderr, progress=False), log_json=True, file_level=level)
    assert _SINK is not None
    _SINK.console_level = _SINK.referee_level = _LEVELS["CRITICAL"] + 1
    log_to_file(path)


def _clock(seconds: float) -> str:
    s = int(max(0, seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class _RateColumn(rich.progress.ProgressColumn):
    """Games finished per minute."""

    def render(self, task: rich.progress.Task) -> rich.text.Text:
        return rich.text.Text(f"{(task.speed or 0.0) * 60:.0f}/min |")


class Progress:
    """A progress bar on a terminal (rich), plain periodic lines otherwise."""

    def __init__(
        self, console: Console, total: int, done: int = 0, label: str = "games", every_s: float = 10.0
    ) -> None:
        self.console = console
        self.total = total
        self.done = done
        self.label = label
        self.running = 0
        self.workers = 0
        """Dask workers playing the games (0: this process plays them)."""
        self.note = ""
        self.every_s = every_s
        self._start_done = done
        self._start = time.monotonic()
        self._last_line = time.monotonic()
        self._last_shown: tuple[int, int, int, str] = (-1, -1, -1, "")
        self._bar: rich.progress.Progress | None = None
        self._task = rich.progress.TaskID(0)
        if console.show_progress and console.tty:
            self._bar = rich.progress.Progress(
                rich.progress.BarColumn(bar_width=24),
                rich.progress.MofNCompleteColumn(),
                rich.progress.TextColumn(f"{label} {{task.fields[percent]:>3d}}% | {{task.fields[workers]}}"
                                         "{task.fields[running]} running |"),
                _RateColumn(),
                rich.progress.TimeElapsedColumn(),
                rich.progress.TextColumn("ETA"),
                rich.progress.TimeRemainingColumn(),
                rich.progress.TextColumn("{task.fields[note]}"),
                console=rich.console.Console(file=console.stream, stderr=console.stream is sys.stderr),
                refresh_per_second=10,
            )
            self._task = self._bar.add_task(label, total=total, completed=done, running=0, note="", workers="",
                                            percent=self.percent())
            self._bar.start()
            console.live = self._bar

    def grow(self, games: int) -> None:
        """More games to play (a new round planned)."""
        self.total += games
        if self._bar is not None:
            self._bar.update(self._task, total=self.total)
        self.update(force=True)

    def update(
        self,
        *,
        done: int | None = None,
        running: int | None = None,
        note: str | None = None,
        force: bool = False,
    ) -> None:
        if done is not None:
            self.done = done
        if running is not None:
            self.running = running
        if note is not None:
            self.note = note
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, running=self.shown_running(),
                             workers=self._workers_text(), percent=self.percent(),
                             note=f"| {self.note}" if self.note else "", refresh=force)
            return
        now = time.monotonic()
        shown = (self.done, self.running, self.workers, self.note)
        if (force or now - self._last_line >= self.every_s) and shown != self._last_shown:
            self._last_line = now
            self._last_shown = shown
            self.console.line("progress: " + self.text(now))

    def shown_running(self) -> int:
        """The games shown as running: never more than are left (a game is counted done when its
        result is, a moment before its slot is given back)."""
        return max(0, min(self.running, self.total - self.done))

    def percent(self) -> int:
        """The whole percent done, rounded down: 100 only when every game is done (199/200 is
        99%, never 100% with a game still to end)."""
        return 100 * self.done // self.total if self.total else 100

    def _workers_text(self) -> str:
        return f"{self.workers} worker{'s' if self.workers != 1 else ''} | " if self.workers else ""

    def text(self, now: float | None = None) -> str:
        """The state as one line of text (what a log without a terminal shows)."""
        now = time.monotonic() if now is None else now
        elapsed = now - self._start
        made = self.done - self._start_done
        rate = made / elapsed * 60 if elapsed > 0 else 0.0
        left = self.total - self.done
        eta = f"ETA {_clock(left / (made / elapsed))}" if made and elapsed > 0 and left else "ETA -"
        note = f" | {self.note}" if self.note else ""
        return (
            f"{self.done}/{self.total} {self.label} {self.percent():3d}% | {self._workers_text()}"
            f"{self.shown_running()} running | "
            f"{rate:.0f}/min | {_clock(elapsed)} {eta}{note}"
        )

    def finish(self) -> None:
        self.update(force=True)
        if self._bar is not None:
            self._bar.stop()
            self.console.live = None
            self._bar = None
