"""Protobuf conversion, game-neutral: the envelope (:mod:`.envelope`: sessions, clocks, match
start and end, the byte encoders' helpers and the shape every game's encoder shares). Each game's
own conversion is its package's ``wire`` module (``referee.gin.wire``, ``referee.rummy.wire``),
which the game seam's registry loads by entry point."""
