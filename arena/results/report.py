"""Results of a run: standings (Elo ± 95%, LOS), crosstable, SPRT; printed as tables and written
as JSON and CSV (atomically: a temporary file, fsync, rename)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console as RichConsole
from rich.table import Table
from rich.text import Text

from arena.competition.ratings import RatingRow, default_raters, get_raters, los_between, mle_ratings
from arena.competition.ratings.score import elo_estimate
from arena.competition.ratings.units import Unit, scoring_units, unit_name, wdl
from arena.competition.result import Result
from arena.competition.seating import base_name
from arena.model.records import Outcome
from arena.results.multi import head_to_head, ranking
from arena.results.stats import SprtSpec, finite_or_none, format_elo, sprt_counts, sprt_state
from referee.lowlevel import write_atomic

FAULTS = (
    "time_forfeit",
    "illegal_action",
    "malformed_message",
    "disconnected",
    "crashed",
    "failed_to_connect",
    "bot_error",
)
"""The terminations that are a seat's fault (its bot's record counts them)."""
FAULT_LIST_MAX = 20
"""The text report lists at most this many faults (results.json has them all)."""


@dataclass(frozen=True, slots=True)
class PlayedGame:
    """A finished game with what the tables need."""

    idx: int
    """Its position in the schedule."""
    pair_key: str
    """Its duplicate pair (``""``: none)."""
    outcome: Outcome
    """How it ended."""


def _seats_of(bot: str, o: Outcome) -> list[int]:
    """The seats ``bot`` held in a game (its instances ``bot#2`` … included)."""
    return [s for s, p in enumerate(o.players) if base_name(p) == bot]


def _standing(bot: str, games: Sequence[Outcome], units: Sequence[Unit]) -> dict[str, Any]:
    """One bot's row of the standings (a seat of a game is a game: two seats of one table count
    twice): a win alone in first place, a loss behind another seat, no result otherwise."""
    mine = [(o, s) for o in games for s in _seats_of(bot, o)]
    won = sum(1 for o, s in mine if o.result().winner == s)  # alone in first place
    lost = sum(1 for o, s in mine if o.places[s] > min(o.places))  # someone finished ahead
    w, d, lo = wdl(units, bot)
    est = elo_estimate(w, d, lo)
    return {
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
        "points_for": sum(o.points[s] for o, s in mine),
        "points_against": sum(sum(o.points) - o.points[s] for o, s in mine),
        "faults": sum(1 for o, s in mine if o.faulting_seat == s and o.termination in FAULTS),
        "time_forfeits": sum(1 for o, s in mine if o.faulting_seat == s and o.termination == "time_forfeit"),
        "fallbacks": sum(o.fallbacks[s] for o, s in mine if o.fallbacks),
    }


def fault_list(games: Sequence[Outcome]) -> list[dict[str, Any]]:
    """Every game a seat's fault ended or changed, in game order: the bot, the match, the
    termination and the referee's detail (a bot's exception: its last line)."""
    return [
        {"bot": base_name(o.players[o.faulting_seat]), "seat": o.faulting_seat, "match_id": o.match_id,
         "termination": o.termination, "detail": o.detail}
        for o in games if o.faulting_seat is not None and o.termination in FAULTS
    ]


def standings(bots: Sequence[str], games: Sequence[Outcome], units: Sequence[Unit],
              order: Sequence[RatingRow] = ()) -> list[dict[str, Any]]:
    """The standings — the arena's one standings engine: ranked by the rating of the first rater
    (``order``; without one: by score over the scoring units, a bot without rated units counting
    as even), then game wins, then name."""
    rows = [_standing(bot, games, units) for bot in bots]
    rated = {r.bot: r.rating for r in order}
    rows.sort(key=lambda r: (-rated.get(r["bot"], -math.inf) if rated else -(r["score"] if r["units"] else 0.5),
                             -r["wins"], r["bot"]))
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return rows


def crosstable(bots: Sequence[str], games: Sequence[Outcome], units: Sequence[Unit]) -> dict[str, dict[str, Any]]:
    """For each two bots that met: the games the row bot finished ahead of the column bot in (its
    wins) and behind it (its losses; a bot of several seats: by its mean score over them), and
    its score over the units."""
    cross: dict[str, dict[str, Any]] = {}
    for a in bots:
        cross[a] = {}
        for b in bots:
            between = [score for o in games if a != b and (score := o.result().score_of(a, b)) is not None]
            if not between:
                continue
            gw = sum(1 for score in between if score > 0.5)
            gl = sum(1 for score in between if score < 0.5)
            w, d, lo = wdl(units, a, b)
            cross[a][b] = {
                "games": len(between),
                "wins": gw,
                "losses": gl,
                "no_result": len(between) - gw - gl,
                "units": w + d + lo,
                "unit_score": w + 0.5 * d,
            }
    return cross


def _mle(units: Sequence[Unit], bots: Sequence[str]) -> list[dict[str, Any]]:
    ratings = mle_ratings(units, bots)
    return [
        {
            "bot": r.bot,
            "elo": round(r.elo, 1),
            "margin": finite_or_none(r.margin),
            "units": r.units,
            "los_next": round(los_between(r, ratings[i + 1]), 4) if i + 1 < len(ratings) else None,
        }
        for i, r in enumerate(ratings)
    ]


def rating_block(name: str, title: str, rows: Sequence[RatingRow]) -> dict[str, Any]:
    """One rater's table as plain data (``results.json``'s ``ratings``): its name and title, and per
    bot, best first, the rank, rating, 95% interval, what it counted and the rater's own extras."""
    return {
        "rater": name,
        "title": title,
        "rows": [{"rank": i, "bot": r.bot, "rating": finite_or_none(r.rating), "low": finite_or_none(r.low),
                  "high": finite_or_none(r.high), "margin": finite_or_none(r.margin), "count": r.count,
                  **{k: round(v, 4) for k, v in r.extra}} for i, r in enumerate(rows, start=1)],
    }


def sprt_summary(facts: Sequence[Result], bots: Sequence[str], sprt: SprtSpec) -> dict[str, Any]:
    """The SPRT of ``bots[0]`` against ``bots[1]`` over ``facts``: its counts, LLR, bounds and
    decision (``results.json``'s ``sprt``)."""
    counts = sprt_counts(facts, bots[0], bots[1])
    st = sprt_state(counts, sprt)
    return {
        "spec": str(sprt),
        "bot": bots[0],
        "opponent": bots[1],
        "pairs": list(counts.pairs),
        "games": list(counts.games),
        "llr": round(st.llr, 4),
        "lower": round(st.lower, 4),
        "upper": round(st.upper, 4),
        "decision": st.decision,
    }


def build_report(
    bots: Sequence[str],
    games: Sequence[PlayedGame],
    *,
    duplicate: bool,
    sprt: SprtSpec | None = None,
    scheduled: int | None = None,
    extra: dict[str, Any] | None = None,
    raters: Sequence[str] = (),
) -> dict[str, Any]:
    """Everything about a set of finished games, as plain JSON-able data; ``raters`` (by name; none:
    :func:`arena.competition.ratings.default_raters`) each give a table of ``ratings``, the first
    ordering the standings."""
    ordered = sorted(games, key=lambda g: g.idx)
    outcomes = [g.outcome for g in ordered]
    facts = [g.outcome.result(g.pair_key if duplicate else "") for g in ordered]
    units = scoring_units(facts)
    seats = max((len(o.players) for o in outcomes), default=2)
    terminations = Counter(o.termination for o in outcomes)
    chosen = get_raters(raters or default_raters(seats))
    rated = [(r, r.rate(facts, bots)) for r in chosen]
    report: dict[str, Any] = {
        "bots": list(bots),
        "scoring_unit": unit_name(duplicate, seats),
        "games_played": len(games),
        "games_scheduled": scheduled if scheduled is not None else len(games),
        "terminations": dict(sorted(terminations.items())),
        "standings": standings(bots, outcomes, units, rated[0][1]),
        "raters": [r.name for r in chosen],
        "raters_chosen": bool(raters),
        "ratings": [rating_block(r.name, r.title, rows) for r, rows in rated],
        "faults": fault_list(outcomes),
        "crosstable": crosstable(bots, outcomes, units),
        "ratings_mle": _mle(units, bots),
        "sprt": sprt_summary(facts, bots, sprt) if sprt is not None and len(bots) == 2 else None,
        "seats": seats,
        "head_to_head": head_to_head(bots, outcomes),
        "ranking": ranking(bots, outcomes),
        "games": [
            {"idx": g.idx, "pair_key": g.pair_key, **g.outcome.to_dict()}
            for g in sorted(games, key=lambda g: g.idx)
        ],
    }
    if extra:
        report.update(extra)
    return report


# ----- text -----
_RULE_UNDER_HEADER = box.Box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True)
"""Columns apart, a dashed rule under the header, nothing else."""


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], right: Iterable[int] = ()) -> str:
    """A plain text table (drawn by rich); columns in ``right`` are right-aligned."""
    ra = set(right)
    t = Table(box=_RULE_UNDER_HEADER, show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True,
              header_style="", highlight=False)
    for i, h in enumerate(headers):
        t.add_column(h, justify="right" if i in ra else "left", no_wrap=True)
    for r in rows:
        t.add_row(*(Text(str(c)) for c in r))
    out = RichConsole(width=10_000, file=io.StringIO(), color_system=None, record=True, soft_wrap=False)
    out.print(t)
    return "\n".join(line.rstrip() for line in out.export_text().splitlines())


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _standings_text(report: dict[str, Any]) -> list[str]:
    unit = report["scoring_unit"]
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
    headers = ["#", "bot", "Elo", "±95%", "LOS", unit, "score", "%", "games", "W-L", "faults"]
    if any(r.get("fallbacks") for r in report["standings"]):  # only then: most runs have none
        headers.append("fallbacks")
        for row, r in zip(rows, report["standings"], strict=True):
            row.append(r["fallbacks"])
    return [
        f"Standings (Elo vs the field, 95% interval, LOS; scored by {unit}):",
        table(headers, rows, right=[0, 2, 3, 4, 5, 6, 7, 8, 10, 11]),
    ]


def _faults_text(report: dict[str, Any]) -> list[str]:
    faults = report.get("faults") or []
    if not faults:
        return []
    rows = [[f["bot"], f["match_id"], f["termination"], f["detail"]] for f in faults[:FAULT_LIST_MAX]]
    more = len(faults) - FAULT_LIST_MAX
    return ["", "Faults:", table(["bot", "match", "termination", "detail"], rows),
            *([f"… and {more} more (results.json lists them all)"] if more > 0 else [])]


def _crosstable_text(report: dict[str, Any]) -> list[str]:
    unit = report["scoring_unit"]
    bots = [r["bot"] for r in report["standings"]]
    cross = report["crosstable"]
    if len(bots) < 2:
        return []
    crow = []
    for a in bots:
        cells: list[str] = []
        for b in bots:
            c = cross.get(a, {}).get(b)
            if a == b:
                cells.append("-")
            elif c is None:
                cells.append("")
            elif unit != "games":
                cells.append(f"{c['wins']}-{c['losses']} ({c['unit_score']:g}/{c['units']})")
            else:
                cells.append(f"{c['wins']}-{c['losses']}")
        crow.append([a, *cells])
    note = {"pairs": " (pair score in brackets)", "rotations": " (rotation score in brackets)"}.get(unit, "")
    return ["", f"Crosstable (row bot's game wins-losses against the column bot{note}):", table(["", *bots], crow)]


def _mle_text(report: dict[str, Any]) -> list[str]:
    if not report.get("ratings_mle") or len(report["standings"]) < 3:
        return []
    rows = [
        [
            m["bot"],
            format_elo(m["elo"]),
            "inf" if m["margin"] is None else f"{m['margin']:.0f}",
            "" if m["los_next"] is None else _pct(m["los_next"]),
        ]
        for m in report["ratings_mle"]
    ]
    return ["", "Maximum-likelihood ratings (Bradley–Terry, mean 0):",
            table(["bot", "Elo", "±95%", "LOS vs next"], rows, right=[1, 2, 3])]


def _rating_number(value: object) -> str:
    """A rating as text: ``±inf`` for an unbounded one, one decimal under 100, whole above."""
    if value is None:
        return "inf"
    v = float(str(value))
    return f"{v:.1f}" if abs(v) < 100 else f"{v:.0f}"


def ratings_text(report: dict[str, Any]) -> list[str]:
    """Every chosen rater's table, named by the rater: rank, bot, rating, 95% interval, what it
    counted and the rater's own columns (a run that chose none prints the text it always printed:
    the standings and the maximum-likelihood table)."""
    out: list[str] = []
    for block in report.get("ratings") or []:
        rows = block.get("rows") or []
        extras = sorted({k for r in rows for k in r} - {"rank", "bot", "rating", "low", "high", "margin", "count"})
        body = [[r["rank"], r["bot"], _rating_number(r["rating"]),
                 f"[{_rating_number(r['low'])}, {_rating_number(r['high'])}]", r["count"],
                 *(f"{r[k]:g}" if k in r else "" for k in extras)] for r in rows]
        out += ["", f"Ratings: {block['title']} ({block['rater']}):",
                table(["#", "bot", "rating", "95%", "counted", *extras], body, right=[0, 2, 4])]
    return out


def ranking_text(report: dict[str, Any]) -> list[str]:
    """The ranking: places and points per bot, with the Plackett–Luce ratings."""
    rows = [
        [r["rank"], r["bot"], f"{r['mu']:.1f}", f"[{r['low']:.1f}, {r['high']:.1f}]", r["games"], r["seats"],
         r["firsts"], "" if r["mean_place"] is None else f"{r['mean_place']:.2f}", r["points"],
         "" if r["mean_points"] is None else f"{r['mean_points']:.1f}"]
        for r in report.get("ranking") or []
    ]
    if not rows:
        return []
    return ["", f"Ranking ({report['seats']} seats; Plackett–Luce rating mu with its 95% interval, openskill):",
            table(["#", "bot", "mu", "95%", "games", "seats", "firsts", "mean place", "points", "per seat"], rows,
                  right=[0, 2, 4, 5, 6, 7, 8, 9])]


def _head_to_head_text(report: dict[str, Any]) -> list[str]:
    bots = [r["bot"] for r in report.get("ranking") or report["standings"]]
    h2h = report.get("head_to_head") or {}
    if not any(h2h.values()):  # (no two bots met)
        return []
    rows = []
    for a in bots:
        cells = []
        for b in bots:
            c = h2h.get(a, {}).get(b)
            cells.append("-" if a == b else "" if not c else f"{c['ahead']}-{c['behind']}" +
                         (f"-{c['level']}" if c["level"] else ""))
        rows.append([a, *cells])
    return ["", "Head to head (how often the row bot finished ahead-behind(-level) of the column bot):",
            table(["", *bots], rows)]


def sprt_text(s: dict[str, Any]) -> str:
    """A report's SPRT in one line: the counts, the LLR with its bounds, the decision."""
    verdict = {"H1": "H1 accepted (elo >= elo1)", "H0": "H0 accepted (elo <= elo0)"}.get(s["decision"], "undecided")
    counted = []
    if "pairs" in s:  # (a report written before the pentanomial counted W-D-L units)
        if any(s["pairs"]):
            counted.append("pairs LL-LD-LW/DD-DW-WW " + "-".join(map(str, s["pairs"])))
        if any(s["games"]) or not any(s["pairs"]):
            counted.append("games L-D-W " + "-".join(map(str, s["games"])))
    else:
        counted.append(f"W-D-L {s['wins']}-{s['draws']}-{s['losses']}")
    return (f"SPRT {s['spec']} for {s['bot']} vs {s['opponent']}: {', '.join(counted)}; "
            f"LLR {s['llr']:.2f} [{s['lower']:.2f}, {s['upper']:.2f}] — {verdict}")


SPRT_DECISION = "sprt_decision"
"""The key (in results.json and the run's meta) of the SPRT as it was when it decided: its
:func:`sprt_summary` and ``games_played``, the games it was decided on."""


def sprt_decision_text(decided: dict[str, Any], report: dict[str, Any]) -> list[str]:
    """The SPRT's decision, once, with the counts it was taken on; then what became of the games
    that were still running when it was taken (played to the end: in the standings, not in it)."""
    on = int(decided["games_played"])
    late = int(report["games_played"]) - on
    lines = [f"{sprt_text(decided)} (decided after {on} game{'s' if on != 1 else ''})"]
    if late <= 0:
        lines.append("No game was running when the SPRT decided: the standings above count the same games.")
    else:
        now = report.get("sprt") or {}
        with_them = f" (with them the LLR is {now['llr']:.2f})" if "llr" in now else ""
        lines.append(f"{late} game{'s' if late != 1 else ''} that {'were' if late != 1 else 'was'} still in play when "
                     f"the SPRT decided {'were' if late != 1 else 'was'} played to the end: counted in the "
                     f"standings above, not in the decision{with_them}.")
    return lines


def interim_text(report: dict[str, Any]) -> str:
    """The standings of a run still being played (``--rating-interval``): a heading with the
    games so far, the standings and the SPRT."""
    s = report.get("sprt")
    return "\n".join([f"After {report['games_played']}/{report['games_scheduled']} games:", *_standings_text(report),
                      *([sprt_text(s)] if s else [])])


def render_text(report: dict[str, Any]) -> str:
    """Standings, crosstable, ranking, head to head, ratings and SPRT as text."""
    out = [*_standings_text(report), *_faults_text(report), *_crosstable_text(report), *ranking_text(report),
           *_head_to_head_text(report), *(ratings_text(report) if report.get("raters_chosen") else _mle_text(report))]
    s, decided = report.get("sprt"), report.get(SPRT_DECISION)
    if decided:
        out += ["", *sprt_decision_text(decided, report)]
    elif s:
        out += ["", sprt_text(s)]
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


def game_columns(seats: int) -> tuple[str, ...]:
    """``games.csv``'s columns for games of up to ``seats`` seats: :data:`GAME_COLUMNS` with a
    column per seat for its bot, points and thinking time, and the places."""
    per = {"seat1": [f"seat{s}" for s in range(1, seats)], "points1": [f"points{s}" for s in range(1, seats)],
           "think_ms1": [f"think_ms{s}" for s in range(1, seats)]}
    out: list[str] = []
    for c in GAME_COLUMNS:
        out += per.get(c, [c])
        if c == "winner_seat":
            out += [f"place{s}" for s in range(seats)]
    return tuple(out)


def _games_csv(report: dict[str, Any]) -> bytes:
    n = max([2, *(len(g["players"]) for g in report["games"])])
    cols = game_columns(n)

    def seat(values: list[Any], s: int) -> Any:
        return values[s] if s < len(values) else None

    rows = []
    for g in report["games"]:
        per_seat = {f"{k}{s}": seat(g[src], s) for k, src in (("seat", "players"), ("points", "points"),
                                                             ("think_ms", "think_ms")) for s in range(n)}
        places = g.get("places") or []
        per_seat.update({f"place{s}": seat(places, s) for s in range(n)})
        values = {**g, **per_seat, "substituted_seats": " ".join(map(str, g["substituted_seats"]))}
        rows.append([values[c] for c in cols])
    return _csv(cols, rows)


def write_files(folder: Path, report: dict[str, Any]) -> list[Path]:
    """``results.json``, ``games.csv``, ``standings.csv``, ``crosstable.csv``, ``headtohead.csv``
    and ``ranking.csv`` (atomically; a report written before every report had a ranking: none)."""

    def clean(x: Any) -> Any:
        if isinstance(x, float) and (math.isinf(x) or math.isnan(x)):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    paths = [folder / n for n in ("results.json", "games.csv", "standings.csv", "crosstable.csv",
                                  "headtohead.csv")]
    write_atomic(paths[0], (json.dumps(clean(report), indent=2, ensure_ascii=False) + "\n").encode())
    write_atomic(paths[1], _games_csv(report))
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
        "fallbacks",
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
    hrows = [[a, b, c["meetings"], c["ahead"], c["behind"], c["level"]]
             for a, opp in report.get("head_to_head", {}).items() for b, c in opp.items()]
    write_atomic(paths[4], _csv(("bot", "opponent", "meetings", "ahead", "behind", "level"), hrows))
    if report.get("ranking"):
        paths.append(folder / "ranking.csv")
        rcols = ("rank", "bot", "mu", "sigma", "low", "high", "games", "seats", "firsts", "mean_place", "points",
                 "mean_points", "rated_games")
        write_atomic(paths[-1], _csv(rcols, [[r[c] for c in rcols] for r in report["ranking"]]))
    return paths
