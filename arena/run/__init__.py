"""Running games: the runner (games through referee.play_match_async), bot processes, tournaments,
the ladder, the Dask backend, arena serve and a person's play in the terminal (the manifest and
the schedule they run are in ``arena.model``)."""
