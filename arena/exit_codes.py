"""The exit codes of the ``arena`` command and its subcommands (one place for all of them)."""

EXIT_OK = 0
"""Done."""
EXIT_FAILED = 1
"""The run (or check, or session) failed."""
EXIT_USAGE = 2
"""A bad command line or manifest."""
EXIT_INTERRUPTED = 130
"""Interrupted (Ctrl-C, SIGTERM); what was finished is kept."""
EXIT_STDOUT_CLOSED = 141
"""The reader of our standard output went away (``arena report RUN | head``): the command stops
quietly with the status a shell gives a program that SIGPIPE ended (128 + 13), as ``cat`` and
``ls`` would; ``set -o pipefail`` sees the same as with them."""
