"""Protobuf conversion: the game-neutral envelope (:mod:`.envelope`: sessions, clocks, match
start and end, the byte encoders' helpers) and one module per game (:mod:`.gin`,
:mod:`.rummy`), which the game seam's registry loads by name."""
