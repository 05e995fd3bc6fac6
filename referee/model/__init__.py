"""The values every layer of the referee shares: a match's description and report
(:mod:`.spec`), time controls (:mod:`.timecontrol`), the server's limits (:mod:`.limits`) and the
replay file's records, recorder and hash chain (:mod:`.replay`). Below the match flow; imports
only the game seam."""
