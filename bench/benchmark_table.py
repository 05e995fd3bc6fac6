"""The published table of a benchmark's references (issue 33; docs/benchmark.md, "Every reference
against every other"): for every pair of the benchmark's field, ``arena benchmark NAME-vN
--reference LATER --against EARLIER`` (the later one in the field's order plays as the candidate,
on the benchmark's own deals), and of every ``--candidate`` against each reference (a bot the
game registers outside the field, benchmarked like any bot), then one Markdown table of them all
with the wall time and the cores each took.

A pair that takes one of the ``--sprt-with`` bots (slow ones: ``mc`` plays a game in seconds)
runs with ``--sprt SPEC`` and stops when the SPRT decides; every other pair plays the benchmark's
whole game count. Each pair's run folder is kept under ``--out`` (``PAIR/``), so a stopped table
is finished by running the same command again: finished pairs are read, not replayed; a stopped
pair is finished with ``arena benchmark --resume``.

Run: ``PYTHONPATH=. python bench/benchmark_table.py gin-v1 --sprt-with mc --sprt elo0=0,elo1=100
--out runs/gin-v1-table`` (``--pairs expert:greedy`` for some pairs only).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.run import benchmark as bm  # noqa: E402


def load() -> str:
    """The 1-minute load average, for the record."""
    return f"{os.getloadavg()[0]:.1f}"


def finished(run: Path) -> dict[str, Any] | None:
    """A pair's table if its run is over (every game played, or its SPRT decided); else None."""
    path = run / bm.BENCHMARK_JSON
    if not path.exists():
        return None
    report: dict[str, Any] = json.loads(path.read_text())
    decided = (report.get("sprt") or {}).get("decision")
    return report if decided or report["games_played"] >= report["games_scheduled"] else None


def play_pair(bench: str, cand: str, ref: str, run: Path, sprt: str, extra: list[str]) -> dict[str, Any]:
    """Play (or finish) one pair; its report, with the load before and after."""
    before = load()
    base = [sys.executable, "-m", "arena.cli", "benchmark"]
    if (run / "run.sqlite").exists():
        args = [*base, "--resume", str(run), "--no-progress"]
    else:
        args = [*base, bench, "--reference", cand, "--against", ref, "--out", str(run), "--no-progress", *extra]
        if sprt:
            args += ["--sprt", sprt]
    print("+", " ".join(args[1:]), flush=True)
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    print(done.stdout[-1500:], flush=True)
    report = finished(run)
    if done.returncode != 0 or report is None:
        raise SystemExit(f"{cand} against {ref}: arena benchmark exited {done.returncode}:\n{done.stderr[-3000:]}")
    report["load"] = f"{before} → {load()}"
    (run / "table-row.json").write_text(json.dumps({"load": report["load"]}) + "\n")
    return report


def row(report: dict[str, Any]) -> str:
    """One Markdown row: the candidate's Elo over the reference it played."""
    r = report["rows"][0]
    interval = bm.interval_text(r)  # (the benchmark's own text: one-sided records included)
    sprt = report.get("sprt")
    decision = (f"{sprt['decision']} after {sprt['games_played']} games (LLR {sprt['llr']:.2f})"
                if sprt and sprt.get("decision") else "—")
    penta = " ".join(str(x) for x in r["pentanomial"])
    return (f"| {report['candidate']['name']} | {r['reference']} | {interval} | {100 * r['los']:.1f}% | "
            f"{r['games']} | {penta} | {decision} | {report['wall_seconds']:.0f} s | {report['cores']} | "
            f"{report.get('load', '')} |")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("benchmark", help="NAME-vN (arena benchmark --list)")
    p.add_argument("--out", type=Path, required=True, help="the folder of every pair's run (kept)")
    p.add_argument("--sprt-with", action="append", default=[], metavar="BOT",
                   help="pairs with this bot stop on the SPRT (repeatable)")
    p.add_argument("--sprt", default="elo0=0,elo1=100", metavar="SPEC", help="the SPRT of those pairs")
    p.add_argument("--candidate", action="append", default=[], metavar="BOT",
                   help="also a registered bot outside the field, against every reference (repeatable)")
    p.add_argument("--pairs", action="append", default=[], metavar="CAND:REF", help="only these pairs")
    p.add_argument("--concurrency", default="", help="passed to arena benchmark")
    args = p.parse_args()
    bench = bm.find(bm.load_benchmarks(), args.benchmark)
    if bench.seats != 2:
        raise SystemExit(f"{bench.id}: a table of pairs needs tables of two seats")
    extra = ["--concurrency", args.concurrency] if args.concurrency else []
    pairs = [(later, earlier) for earlier, later in itertools.combinations(bench.field, 2)]
    pairs += [(cand, ref) for cand in args.candidate for ref in bench.field]
    if args.pairs:
        pairs = [pair for pair in pairs if f"{pair[0]}:{pair[1]}" in args.pairs]
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    lines = [f"Benchmark {bench.id}: {bench.game} {bench.rules}, {bench.games} games per pair (or the SPRT "
             f"{args.sprt} for pairs with {', '.join(args.sprt_with) or 'none'}), tc {bench.tc}, seed {bench.seed!r}",
             "", "| bot | against | Elo ± 95% | LOS | games | pentanomial 0 ¼ ½ ¾ 1 | SPRT | wall | where | load |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for cand, ref in pairs:
        run = args.out / f"{cand}-vs-{ref}"
        report = finished(run)
        if report is not None:
            saved = run / "table-row.json"
            report["load"] = json.loads(saved.read_text())["load"] if saved.exists() else ""
        else:
            sprt = args.sprt if {cand, ref} & set(args.sprt_with) else ""
            report = play_pair(bench.id, cand, ref, run, sprt, extra)
        lines.append(row(report))
    lines += ["", f"This command: {time.monotonic() - started:.0f} s of wall time ({os.cpu_count()} cores)."]
    table = "\n".join(lines)
    (args.out / "table.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
