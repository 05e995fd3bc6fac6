"""The run's values, which every layer above shares and which import nothing of the arena: the
bots (``manifest``: ``BotSpec`` and the manifest's parsing), the typed run configuration and its
schedule (``schedule``: ``RunConfig``, ``PlayConfig``, ``GameJob``, ``base_name``) and a game's
outcome (``records``: ``Outcome``)."""
