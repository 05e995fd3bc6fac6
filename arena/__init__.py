"""Gin Arena's tournament manager (the ``arena`` command), grouped by job.

Layering: ``arena`` uses ``referee`` (and its games); the referee never imports the arena.
Imports point down: ``cli`` → ``run`` → ``results``, ``replays`` → ``store``, ``model`` →
``console``, ``exit_codes`` (tests/test_structure.py); the arena imports only the referee's
public surface (``referee``'s names and its public modules).

- ``cli/``: the command line (parser, shared options, commands).
- ``run/``: running games — ``runner`` (games through ``referee.play_match_async``), ``procs``
  (bots as ``referee.BotLaunch``, their logs), ``tournament``, ``ladder``, ``serve``, ``play`` (a
  person at the terminal), ``cluster`` and ``placement`` (Dask).
- ``results/``: ``stats`` (ratings), ``report`` (the one standings engine and its text, CSV and
  JSON), ``page`` (the results page).
- ``replays/``: ``audit``, ``view`` (terminal), ``html``, ``model`` (what the viewers share).
- ``store``: the one storage schema of runs, the ladder and ``arena serve``.
- ``model/``: the run's values — ``manifest`` (``BotSpec``, the manifest), ``schedule`` (the
  typed run configuration and the schedule), ``records`` (``Outcome``).
- ``console`` (logs, progress), ``exit_codes``, ``_testbot`` (a minimal bot with fault modes,
  for tests).
"""
