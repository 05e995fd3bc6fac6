"""Results: statistics and ratings, the one standings engine and its reports, the results page
(a game's record, ``Outcome``, is in ``arena.model.records``)."""
