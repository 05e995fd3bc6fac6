"""Running games: the manifest, the schedule, the runner (games through referee.play_match_async),
bot processes, tournaments, the ladder, arena serve and a person's play in the terminal."""
