"""Results: game records, statistics and ratings, the one standings engine and its reports,
the results page."""
