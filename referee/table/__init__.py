"""One match at a table: the flow (:mod:`.flow`), seats, clocks, faults, the recorder and its
journal, message digests, the spectator log, interrupted matches' recovery and the
re-simulation of a replay. Knows no transport: the gRPC service hands it sessions."""
