"""Gin Arena's tournament manager (the ``arena`` command): bots manifest, schedules with
duplicate deals, bot processes, the run database, results and ratings, the local ladder.

Layering: ``arena`` uses ``referee`` (and ``referee.gin``); the referee never imports the arena.
Modules: ``cli/`` (the command line: parser, shared options, commands), ``manifest``,
``schedule`` (the typed run configuration and the schedule), ``runner`` (plays games through
``referee.play_match_async``), ``procs`` (bots as ``referee.BotLaunch``, their logs), ``store``
(the one storage schema of runs, the ladder and ``arena serve``), ``tournament``, ``results``
(the one standings engine), ``stats``, ``ladder``, ``serve``, ``console`` (logs, progress),
``exit_codes``, ``_testbot`` (a minimal bot with fault modes, for tests).
"""
