"""High cards (``toy3``), a toy game for two to six seats packaged as a Gin Arena game plugin:
proof that a game is one folder of its own, with no edit in ``referee/``, ``arena/`` or
``proto/`` (docs/adding-a-game.md).

- :mod:`toy3_game.engine`: the rules, pure (standard library and ``referee.games`` only);
- :mod:`toy3_game.wire`: its protobuf messages (``REGISTERED``);
- :mod:`toy3_game.plugin`: the entry point's object (cheap to import);
- :mod:`toy3_game.bot`: a bot for it, on the Python kit.
"""
