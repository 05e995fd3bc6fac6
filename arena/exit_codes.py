"""The exit codes of the ``arena`` command and its subcommands (one place for all of them)."""

EXIT_OK = 0
"""Done."""
EXIT_FAILED = 1
"""The run (or check, or session) failed."""
EXIT_USAGE = 2
"""A bad command line or manifest."""
EXIT_INTERRUPTED = 130
"""Interrupted (Ctrl-C, SIGTERM); what was finished is kept."""
