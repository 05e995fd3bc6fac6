"""Results of a run: standings (Elo ± 95%, LOS), crosstable, SPRT; printed as tables and written
as JSON and CSV (atomically: a temporary file, fsync, rename)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee import write_atomic

from .records import Outcome
from .stats import (
    GameFacts,
    SprtSpec,
    elo_estimate,
    finite_or_none,
    format_elo,
    los_between,
    mle_ratings,
    scoring_units,
    sprt_state,
    wdl,
)

FAULTS = (
    "time_forfeit",
    "illegal_action",
    "malformed_message",
    "disconnected",
    "crashed",
    "failed_to_connect",
)


@dataclass(frozen=True, slots=True)
class PlayedGame:
    """A finished game with what the tables need."""

    idx: int
    pair_key: str
    outcome: Outcome


def build_report(
    bots: Sequence[str],
    games: Sequence[PlayedGame],
    *,
    duplicate: bool,
    sprt: SprtSpec | None = None,
    scheduled: int | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything about a set of finished games, as plain JSON-able data."""
    facts = [GameFacts(g.outcome.players, g.outcome.winner, g.pair_key) for g in games]
    units = scoring_units(facts, duplicate)
    unit_name = "pairs" if duplicate else "games"
    standings: list[dict[str, Any]] = []
    for bot in bots:
        mine = [g.outcome for g in games if bot in g.outcome.players]
        seat = [o.players.index(bot) for o in mine]
        won = sum(1 for o, s in zip(mine, seat, strict=True) if o.winner == s)
        lost = sum(1 for o, s in zip(mine, seat, strict=True) if o.winner is not None and o.winner != s)
        w, d, lo = wdl(units, bot)
        est = elo_estimate(w, d, lo)
        standings.append(
            {
                "bot": bot,
                "elo": finite_or_none(est.elo),
                "elo_text": format_elo(est.elo),
                "elo_low": finite_or_none(est.low),
                "elo_high": finite_or_none(est.high),
                "elo_margin": finite_or_none(est.margin),
                "los": round(est.los, 4),
                "units": est.n,
                "unit_wins": w,
                "unit_draws": d,
                "unit_losses": lo,
                "score": round(est.score, 4),
                "games": len(mine),
                "wins": won,
                "losses": lost,
                "no_result": len(mine) - won - lost,
                "points_for": sum(o.points[s] for o, s in zip(mine, seat, strict=True)),
                "points_against": sum(o.points[1 - s] for o, s in zip(mine, seat, strict=True)),
                "faults": sum(
                    1
                    for o, s in zip(mine, seat, strict=True)
                    if o.faulting_seat == s and o.termination in FAULTS
                ),
                "time_forfeits": sum(
                    1
                    for o, s in zip(mine, seat, strict=True)
                    if o.faulting_seat == s and o.termination == "time_forfeit"
                ),
            }
        )
    standings.sort(key=lambda r: (-(r["score"] if r["units"] else 0.5), -r["wins"], r["bot"]))
    for rank, row in enumerate(standings, start=1):
        row["rank"] = rank
    cross: dict[str, dict[str, Any]] = {}
    for a in bots:
        cross[a] = {}
        for b in bots:
            if a == b:
                continue
            between = [g.outcome for g in games if set(g.outcome.players) == {a, b}]
            if not between:
                continue
            gw = sum(1 for o in between if o.winner_name == a)
            gl = sum(1 for o in between if o.winner_name == b)
            w, d, lo = wdl(units, a, b)
            cross[a][b] = {
                "games": len(between),
                "wins": gw,
                "losses": gl,
                "no_result": len(between) - gw - gl,
                "units": w + d + lo,
                "unit_score": w + 0.5 * d,
            }
    ratings = mle_ratings(units, bots)
    mle = []
    for i, r in enumerate(ratings):
        mle.append(
            {
                "bot": r.bot,
                "elo": round(r.elo, 1),
                "margin": finite_or_none(r.margin),
                "units": r.units,
                "los_next": round(los_between(r, ratings[i + 1]), 4) if i + 1 < len(ratings) else None,
            }
        )
    terminations: dict[str, int] = {}
    for g in games:
        terminations[g.outcome.termination] = terminations.get(g.outcome.termination, 0) + 1
    report: dict[str, Any] = {
        "bots": list(bots),
        "scoring_unit": unit_name,
        "games_played": len(games),
        "games_scheduled": scheduled if scheduled is not None else len(games),
        "terminations": dict(sorted(terminations.items())),
        "standings": standings,
        "crosstable": cross,
        "ratings_mle": mle,
        "sprt": None,
        "games": [
            {"idx": g.idx, "pair_key": g.pair_key, **g.outcome.to_dict()}
            for g in sorted(games, key=lambda g: g.idx)
        ],
    }
    if sprt is not None and len(bots) == 2:
        w, d, lo = wdl(units, bots[0], bots[1])
        st = sprt_state(w, d, lo, sprt)
        report["sprt"] = {
            "spec": str(sprt),
            "bot": bots[0],
            "opponent": bots[1],
            "wins": w,
            "draws": d,
            "losses": lo,
            "llr": round(st.llr, 4),
            "lower": round(st.lower, 4),
            "upper": round(st.upper, 4),
            "decision": st.decision,
        }
    if extra:
        report.update(extra)
    return report


# ----- text -----
def table(headers: Sequence[str], rows: Iterable[Sequence[object]], right: Iterable[int] = ()) -> str:
    """A plain text table; columns in ``right`` are right-aligned."""
    body = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(headers)]
    ra = set(right)

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in ra else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    lines = [fmt(list(headers)), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in body]
    return "\n".join(lines)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def render_text(report: dict[str, Any]) -> str:
    """Standings, crosstable and SPRT as text."""
    unit = report["scoring_unit"]
    out = []
    rows = []
    for r in report["standings"]:
        margin = r["elo_margin"]
        rows.append(
            [
                r["rank"],
                r["bot"],
                r["elo_text"],
                "inf" if margin is None else f"{margin:.0f}",
                _pct(r["los"]),
                r["units"],
                f"{r['unit_wins'] + 0.5 * r['unit_draws']:g}/{r['units']}",
                _pct(r["score"]),
                r["games"],
                f"{r['wins']}-{r['losses']}" + (f" ({r['no_result']} n/r)" if r["no_result"] else ""),
                r["faults"],
            ]
        )
    out.append(f"Standings (Elo vs the field, 95% interval, LOS; scored by {unit}):")
    out.append(
        table(
            ["#", "bot", "Elo", "±95%", "LOS", unit, "score", "%", "games", "W-L", "faults"],
            rows,
            right=[0, 2, 3, 4, 5, 6, 7, 8, 10],
        )
    )
    bots = [r["bot"] for r in report["standings"]]
    cross = report["crosstable"]
    if len(bots) > 1:
        crow = []
        for a in bots:
            cells: list[str] = []
            for b in bots:
                c = cross.get(a, {}).get(b)
                if a == b:
                    cells.append("-")
                elif c is None:
                    cells.append("")
                elif unit == "pairs":
                    cells.append(f"{c['wins']}-{c['losses']} ({c['unit_score']:g}/{c['units']})")
                else:
                    cells.append(f"{c['wins']}-{c['losses']}")
            crow.append([a, *cells])
        note = " (pair score in brackets)" if unit == "pairs" else ""
        out.append("")
        out.append(f"Crosstable (row bot's game wins-losses against the column bot{note}):")
        out.append(table(["", *bots], crow))
    if report.get("ratings_mle") and len(bots) > 2:
        out.append("")
        out.append("Maximum-likelihood ratings (Bradley–Terry, mean 0):")
        out.append(
            table(
                ["bot", "Elo", "±95%", "LOS vs next"],
                [
                    [
                        m["bot"],
                        f"{m['elo']:+.0f}",
                        "inf" if m["margin"] is None else f"{m['margin']:.0f}",
                        "" if m["los_next"] is None else _pct(m["los_next"]),
                    ]
                    for m in report["ratings_mle"]
                ],
                right=[1, 2, 3],
            )
        )
    s = report.get("sprt")
    if s:
        verdict = {"H1": "H1 accepted (elo >= elo1)", "H0": "H0 accepted (elo <= elo0)"}.get(
            s["decision"], "undecided"
        )
        out.append("")
        out.append(
            f"SPRT {s['spec']} for {s['bot']} vs {s['opponent']}: {s['wins']}-{s['draws']}-{s['losses']} "
            f"({unit}), LLR {s['llr']:.2f} [{s['lower']:.2f}, {s['upper']:.2f}] — {verdict}"
        )
    terms = report.get("terminations", {})
    if terms:
        out.append("")
        out.append(
            f"{report['games_played']}/{report['games_scheduled']} games; endings: "
            + ", ".join(f"{k} {v}" for k, v in terms.items())
        )
    return "\n".join(out)


# ----- files -----
GAME_COLUMNS = (
    "idx",
    "match_id",
    "pair_key",
    "seat0",
    "seat1",
    "winner",
    "winner_seat",
    "termination",
    "faulting_seat",
    "points0",
    "points1",
    "deals",
    "decisions",
    "think_ms0",
    "think_ms1",
    "substituted_seats",
    "duration_s",
    "replay_path",
    "replay_hash",
    "detail",
)


def _csv(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(headers)
    for r in rows:
        w.writerow(["" if c is None else c for c in r])
    return buf.getvalue().encode()


def write_files(folder: Path, report: dict[str, Any]) -> list[Path]:
    """``results.json``, ``games.csv``, ``standings.csv``, ``crosstable.csv`` (atomically)."""

    def clean(x: Any) -> Any:
        if isinstance(x, float) and (math.isinf(x) or math.isnan(x)):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    paths = [folder / n for n in ("results.json", "games.csv", "standings.csv", "crosstable.csv")]
    write_atomic(paths[0], (json.dumps(clean(report), indent=2, ensure_ascii=False) + "\n").encode())
    write_atomic(
        paths[1],
        _csv(
            GAME_COLUMNS,
            [
                [
                    g["idx"],
                    g["match_id"],
                    g["pair_key"],
                    g["players"][0],
                    g["players"][1],
                    g["winner"],
                    g["winner_seat"],
                    g["termination"],
                    g["faulting_seat"],
                    g["points"][0],
                    g["points"][1],
                    g["deals"],
                    g["decisions"],
                    g["think_ms"][0],
                    g["think_ms"][1],
                    " ".join(map(str, g["substituted_seats"])),
                    g["duration_s"],
                    g["replay_path"],
                    g["replay_hash"],
                    g["detail"],
                ]
                for g in report["games"]
            ],
        ),
    )
    scols = (
        "rank",
        "bot",
        "elo",
        "elo_low",
        "elo_high",
        "elo_margin",
        "los",
        "units",
        "unit_wins",
        "unit_draws",
        "unit_losses",
        "score",
        "games",
        "wins",
        "losses",
        "no_result",
        "points_for",
        "points_against",
        "faults",
        "time_forfeits",
    )
    write_atomic(paths[2], _csv(scols, [[r[c] for c in scols] for r in report["standings"]]))
    crows = []
    for a, opp in report["crosstable"].items():
        for b, c in opp.items():
            crows.append(
                [a, b, c["games"], c["wins"], c["losses"], c["no_result"], c["units"], c["unit_score"]]
            )
    write_atomic(
        paths[3],
        _csv(("bot", "opponent", "games", "wins", "losses", "no_result", "units", "unit_score"), crows),
    )
    return paths
