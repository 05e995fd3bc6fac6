"""The competition core: who plays whom, and what the results mean (issue 29).

Pure: no store, no trio, no I/O. It imports only the standard library and the referee's public
game facts. Everything that plans games or rates players asks this package.
"""
