"""The live web of the arena (``arena serve --web ADDR``, ``arena tournament --web ADDR``):
standings that update by themselves, running and recent matches, a live spectator view of any
running match (public information only), each finished match's replay, each bot's page, and a
JSON API with its OpenAPI document; Hypercorn's trio worker serving a Starlette app in the
caller's trio run (docs/web.md). It reads the arena and the referee; nothing imports it but
the command line."""
