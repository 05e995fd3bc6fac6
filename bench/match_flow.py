"""The referee's own cost per decision, in process: matches played through the match flow alone
(``referee.table.match_flow``: no trio, no gRPC, no sockets), the bots' answers decoded from the
request bytes as a bot would (that part is timed apart and left out).

    .venv/bin/python bench/match_flow.py                      # the build this venv runs
    .venv-compiled/bin/python -P bench/match_flow.py          # the compiled build (mypyc)

Prints CPU µs per decision of the flow (the engine's move, the replay record, the request's
view and bytes, the digests), lean seats (no ``event`` messages, as the Python kit's bots) and
seats with events. Compare builds within one run of the machine (it is shared).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # `tests._bots` (after the installed referee)

from gin_arena.v2 import bot_pb2
from referee import MatchSpec, TimeControl
from referee.gin import RuleSet
from referee.table import match_flow
from referee.table.recording import MatchRecorder
from tests._bots import knock_first


def one_match(seed: int, events: bool) -> tuple[float, int]:
    """Play one match; the flow's CPU seconds and its decisions."""
    spec = MatchSpec(players=("a", "b"), rules=RuleSet.classic(target=100), match_id=f"m{seed}",
                     time_control=TimeControl(per_move_ms=10_000), seed=seed.to_bytes(32, "big"))
    flow = match_flow.MatchFlow(spec, spec.match_id, spec.seed or b"", MatchRecorder())
    for seat in range(2):
        flow.connected(seat, bytes([seat]) * 8, f"bot{seat}", events)
    pick = knock_first(random.Random(seed))
    clock = time.process_time
    spent = 0.0
    now = 0.0
    t = clock()
    flow.start(now)
    spent += clock() - t
    while flow.report is None:
        out = flow.take()
        req = None
        for _seat, data, ask in out.sends:
            if ask > 0:
                seat, req = _seat, bot_pb2.RefereeMessage.FromString(data).action_request
        assert req is not None, "no request and no result"
        action = pick(req)
        now += 0.001
        t = clock()
        flow.answer(seat, req.request_id, action, False, now)
        spent += clock() - t
    assert flow.report.termination == "normal", flow.report.detail
    return spent, flow.report.decisions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=20, help="matches per repetition (default 20)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions; the median is printed (default 3)")
    args = parser.parse_args()
    print(f"match flow compiled: {match_flow.COMPILED} · python {sys.version.split()[0]}")
    for events in (False, True):
        per: list[float] = []
        for rep in range(args.reps):
            cpu, decisions = 0.0, 0
            for i in range(args.matches):
                c, d = one_match(rep * 1000 + i, events)
                cpu, decisions = cpu + c, decisions + d
            per.append(cpu / decisions * 1e6)
        label = "seats with event messages" if events else "lean seats (no event messages)"
        print(f"{label:34} {statistics.median(per):6.1f} µs/decision (median of {args.reps}: "
              f"{', '.join(f'{p:.1f}' for p in per)}; {decisions} decisions a rep)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
