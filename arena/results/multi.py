"""Results of games of any number of seats: a ranking with points per bot and Plackett–Luce ratings
(:func:`arena.competition.ratings.openskill_ratings`) with 95% intervals, and a head-to-head table (how
often each bot finished ahead of each other).

A seat's player may be an instance of a bot (``greedy#2``): everything here counts it as that bot
(:func:`arena.competition.seating.base_name`). Two seats of one bot in one game are never compared with
each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.competition.ratings import openskill_ratings
from arena.competition.seating import base_name
from arena.model.records import Outcome


def head_to_head(bots: Sequence[str], games: Iterable[Outcome]) -> dict[str, dict[str, dict[str, int]]]:
    """For each two bots that met: how often the row bot finished ahead of, behind, or level with
    the column bot — one meeting per seat of the one and seat of the other in a game."""
    table: dict[str, dict[str, dict[str, int]]] = {a: {} for a in bots}
    for o in games:
        seats = [base_name(p) for p in o.players]
        for i, a in enumerate(seats):
            for j, b in enumerate(seats):
                if a == b:
                    continue
                cell = table.setdefault(a, {}).setdefault(b, {"meetings": 0, "ahead": 0, "behind": 0, "level": 0})
                cell["meetings"] += 1
                key = "ahead" if o.places[i] < o.places[j] else "behind" if o.places[i] > o.places[j] else "level"
                cell[key] += 1
    return table


def ranking(bots: Sequence[str], games: Sequence[Outcome]) -> list[dict[str, object]]:
    """Per bot: its games and seats, first places, mean place and points (over its seats), and
    its Plackett–Luce rating with the 95% interval; best rating first."""
    ratings = {r.bot: r for r in openskill_ratings(games, bots)}
    rows: list[dict[str, object]] = []
    for bot in bots:
        seats = [(o, s) for o in games for s, p in enumerate(o.players) if base_name(p) == bot]
        r = ratings[bot]
        rows.append({
            "bot": bot,
            "games": len({id(o) for o, _ in seats}),
            "seats": len(seats),
            "firsts": sum(1 for o, s in seats if o.places[s] == 1),
            "mean_place": round(sum(o.places[s] for o, s in seats) / len(seats), 3) if seats else None,
            "points": sum(o.points[s] for o, s in seats),
            "mean_points": round(sum(o.points[s] for o, s in seats) / len(seats), 2) if seats else None,
            "mu": round(r.mu, 3),
            "sigma": round(r.sigma, 3),
            "low": round(r.low, 3),
            "high": round(r.high, 3),
            "rated_games": r.games,
        })
    rows.sort(key=lambda row: (-float(str(row["mu"])), str(row["bot"])))
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return rows
