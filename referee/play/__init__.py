"""One call per match: ``play_match`` and the match context (:mod:`.matches`), where a match is
hosted (embedded or remote, :mod:`.hosts`), how a seat's bot starts (:mod:`.launch`), bot
processes and the pool that reuses them."""
