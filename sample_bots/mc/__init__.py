"""``mc``: the determinized Monte Carlo reference bot, for Gin (:mod:`.gin`) and rummy
(:mod:`.rummy`); the search they share is :mod:`.search`, the bot process ``sample_bots.mc_bot``.

Per decision: sample worlds — deals the seat cannot tell from the real one, given what it was
shown — and play each candidate action out to the end of the deal in each world with a fast
greedy policy; choose the candidate with the best total. The idea is "perfect information Monte
Carlo" (determinization: Ginsberg's GIB for bridge, 2001; Long, Sturtevant, Buro & Furtak, "Understanding
the success of perfect information Monte Carlo sampling in game tree search", AAAI 2010), with
flat playouts instead of a tree search in each world.
"""
