"""Gin Arena's tournament manager (the ``arena`` command): bots manifest, schedules with
duplicate deals, bot processes, the run database, results and ratings, the local ladder.

Layering: ``arena`` uses ``referee`` (and ``referee.gin``); the referee never imports the arena.
Modules: ``cli`` (commands), ``manifest``, ``schedule``, ``runner`` (plays games through
``referee.play_match_async``), ``procs`` (bots as ``referee.BotLaunch``, their logs), ``store`` (``run.sqlite``),
``tournament``, ``results``, ``stats``, ``ladder``, ``serve``, ``console`` (logs, progress),
``_testbot`` (a minimal bot with fault modes, for tests).
"""
