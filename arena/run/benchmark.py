"""``arena benchmark``: a named, versioned benchmark — a fixed field of reference bots, a fixed
count of duplicate games, fixed seeds, rules and time control — played by a candidate bot
against each reference, and its result: the candidate's Elo against each reference with the 95%
interval, the LOS and the pentanomial counts of its duplicate pairs.

The benchmarks are data, in one place (``benchmarks.toml`` beside this module; a test or an
organiser may name another file). Their fields are names of the sample bots a game registers
(``referee.games.Registered.bots``), so that a benchmark is written against the registrations
and the arena names no game or bot. A benchmark is played as a gauntlet of the ordinary
tournament runner (every core, or a Dask cluster): the candidate at every table with ``seats -
1`` references. The candidate always plays under one name (:data:`CANDIDATE`), and a table's
seeds derive from the run seed and the table's names only, so every candidate — and every
machine and release — gets the same deals; ``--quick`` plays the first rotations of the same
tables (the same deals as the full run's first ones)."""

from __future__ import annotations

import html
import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.competition.ratings.score import elo_estimate
from arena.competition.ratings.units import scoring_units, unit_name, wdl
from arena.competition.result import Result
from arena.model.manifest import BotSpec
from arena.model.schedule import PlayConfig, RunConfig
from arena.results.page import PAGE_CSS
from arena.results.report import SPRT_DECISION, sprt_summary
from arena.results.stats import SprtSpec, finite_or_none, format_elo, sprt_counts
from arena.store import RunStore
from referee import TimeControl, games
from referee.lowlevel import write_atomic

BENCHMARKS_FILE = Path(__file__).with_name("benchmarks.toml")
"""The published benchmarks (docs/benchmark.md)."""
CANDIDATE = "candidate"
"""The name the benchmarked bot plays under in the run (its deals depend on the names at its
tables: one name gives every candidate the same deals); the report names it as the user did."""
BENCHMARK_JSON = "benchmark.json"
"""The benchmark's result in its run folder (beside the tournament's ``results.json``)."""
BENCHMARK_HTML = "benchmark.html"
"""The same as a page (it links to the run's ``index.html``: every game and its replay)."""
BENCHMARK_META = "benchmark"
"""The run database's meta key of the benchmark it plays (:func:`remember`): what ``arena
benchmark --resume`` reads."""
_KEYS = frozenset({"name", "version", "description", "game", "rules", "seats", "field", "games", "quick_games",
                   "seed", "tc"})


class BenchmarkError(ValueError):
    """A benchmark that cannot be played: unknown, badly defined, or naming a bot its game does not
    register (the message says which and what there is)."""


@dataclass(frozen=True, slots=True)
class Benchmark:
    """One benchmark, as ``benchmarks.toml`` defines it."""

    name: str
    """Its name without the version (``NAME-vVERSION`` is what the command takes)."""
    version: int
    """Its version: anything that changes its games is a new one."""
    game: str
    """The game (a name in ``referee.games``' registry)."""
    rules: str
    """The game's rules preset."""
    seats: int
    """Seats of every table: the candidate and ``seats - 1`` references."""
    field: tuple[str, ...]
    """The references: sample bots of the game (``Registered.bots``), by name."""
    games: int
    """Games per table, whole duplicate rotations (a multiple of ``seats``)."""
    quick_games: int
    """Games per table with ``--quick`` (the first rotations of the full run)."""
    seed: str
    """The run seed every deal derives from."""
    tc: str
    """Every seat's time control (``st=1 timemargin=50``)."""
    description: str = ""
    """What it measures, in a line."""

    @property
    def id(self) -> str:
        """``NAME-vVERSION``: what ``arena benchmark`` is given and every result is labelled with."""
        return f"{self.name}-v{self.version}"


def _benchmark(raw: Mapping[str, Any], where: str) -> Benchmark:
    """One ``[[benchmark]]`` table, checked (``BenchmarkError`` saying what is wrong)."""
    unknown = sorted(set(raw) - _KEYS)
    missing = sorted(_KEYS - {"description"} - set(raw))
    if unknown or missing:
        raise BenchmarkError(f"{where}: " + "; ".join(
            ([f"unknown key(s) {', '.join(unknown)}"] if unknown else [])
            + ([f"missing key(s) {', '.join(missing)}"] if missing else [])))
    try:
        b = Benchmark(name=str(raw["name"]), version=int(raw["version"]), game=str(raw["game"]),
                      rules=str(raw["rules"]), seats=int(raw["seats"]), field=tuple(str(x) for x in raw["field"]),
                      games=int(raw["games"]), quick_games=int(raw["quick_games"]), seed=str(raw["seed"]),
                      tc=str(raw["tc"]), description=str(raw.get("description", "")))
        TimeControl.parse(b.tc)
    except (TypeError, ValueError) as e:
        raise BenchmarkError(f"{where}: {e}") from None
    for count, what in ((b.games, "games"), (b.quick_games, "quick_games")):
        if count < b.seats or count % b.seats:
            raise BenchmarkError(f"{where} ({b.id}): {what} = {count} is not a multiple of its {b.seats} seats")
    if b.quick_games > b.games:
        raise BenchmarkError(f"{where} ({b.id}): quick_games ({b.quick_games}) exceeds games ({b.games})")
    if len(b.field) < b.seats - 1 or len(set(b.field)) != len(b.field) or CANDIDATE in b.field:
        raise BenchmarkError(f"{where} ({b.id}): its field needs {b.seats - 1} or more distinct references "
                             f"(none named {CANDIDATE!r}); got {list(b.field)}")
    return b


def load_benchmarks(path: Path | None = None) -> dict[str, Benchmark]:
    """The benchmarks of ``path`` (default :data:`BENCHMARKS_FILE`) by :attr:`Benchmark.id`."""
    path = path or BENCHMARKS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise BenchmarkError(f"benchmarks file {path}: {e}") from None
    found: dict[str, Benchmark] = {}
    for i, raw in enumerate(data.get("benchmark", [])):
        b = _benchmark(raw, f"{path.name}: benchmark {i + 1}")
        if b.id in found:
            raise BenchmarkError(f"{path.name}: {b.id} is defined twice")
        found[b.id] = b
    return found


def find(benchmarks: Mapping[str, Benchmark], name: str) -> Benchmark:
    """The benchmark ``name`` (``NAME-vVERSION``), or an error listing the ones there are."""
    if name in benchmarks:
        return benchmarks[name]
    known = ", ".join(benchmarks) or "none"
    raise BenchmarkError(f"no benchmark {name!r} (there are: {known}; `arena benchmark --list`)")


def registered_bots(game: str) -> dict[str, games.SampleBot]:
    """The sample bots ``game`` registers, by name (``BenchmarkError`` for a game not installed)."""
    try:
        return {b.name: b for b in games.get(game).bots}
    except ValueError as e:
        raise BenchmarkError(str(e)) from None


def check_field(bench: Benchmark) -> dict[str, games.SampleBot]:
    """Its references as the game registers them, or a ``BenchmarkError`` naming every bot of its
    field that the game does not register (and the ones it does)."""
    bots = registered_bots(bench.game)
    missing = [n for n in bench.field if n not in bots]
    if missing:
        raise BenchmarkError(f"benchmark {bench.id}: its field names {', '.join(missing)}, which {bench.game} does "
                             f"not register as a sample bot (it registers: {', '.join(bots) or 'none'}); the "
                             "benchmark cannot be played until the game's registration lists "
                             f"{'it' if len(missing) == 1 else 'them'} (referee.games.Registered.bots)")
    return {n: bots[n] for n in bench.field}


def pick_references(bench: Benchmark, against: Sequence[str], candidate: str = "") -> tuple[str, ...]:
    """The references played: the field (or the ones of it named in ``against``, in the field's
    order), without the reference ``candidate`` that plays as the candidate."""
    wrong = [n for n in against if n not in bench.field]
    if wrong:
        raise BenchmarkError(f"--against {', '.join(wrong)}: not in {bench.id}'s field ({', '.join(bench.field)})")
    chosen = tuple(n for n in bench.field if (not against or n in against) and n != candidate)
    if len(chosen) < bench.seats - 1:
        raise BenchmarkError(f"{bench.id} seats {bench.seats}: it needs {bench.seats - 1} reference(s) at every "
                             f"table; only {', '.join(chosen) or 'none'} left")
    return chosen


def reference_spec(bot: games.SampleBot, name: str, game: str, cwd: str) -> BotSpec:
    """A registered sample bot as a run's bot ``name`` (quiet: its log keeps warnings)."""
    return BotSpec(name=name, command=bot.command, cwd=cwd, env={"GIN_LOG_LEVEL": "WARNING"}, games=(game,))


def check_sprt(bench: Benchmark, references: Sequence[str], sprt: str) -> None:
    """Refuse ``--sprt`` where it cannot decide (``BenchmarkError`` saying why): it compares two
    bots, so it needs tables of two seats and one reference."""
    if not sprt:
        return
    try:
        SprtSpec.parse(sprt)
    except ValueError as e:
        raise BenchmarkError(f"--sprt: {e}") from None
    if bench.seats != 2 or len(references) != 1:
        raise BenchmarkError(f"--sprt compares the bot with one reference at tables of two seats; {bench.id} has "
                             f"{bench.seats} seats and this run {len(references)} reference(s) (name one with "
                             "--against)")


def run_config(bench: Benchmark, run_id: str, references: Sequence[str], *, quick: bool,
               concurrency: int, sprt: str = "") -> RunConfig:
    """The run that plays ``bench`` (a gauntlet of :data:`CANDIDATE` against ``references``): its
    game, preset, seats, games, seed and time control are the benchmark's; only how many games
    run at once is the caller's (the CPU clock keeps that from changing a result). With ``sprt``
    (one reference: :func:`check_sprt`) the run stops early once the SPRT decides; the games it
    plays are the first ones of the full run, on the same deals."""
    check_sprt(bench, references, sprt)
    engine = games.get(bench.game).game
    play = PlayConfig(game=bench.game, rules=engine.rules_preset(bench.rules), time_control=TimeControl.parse(bench.tc),
                      concurrency=concurrency)
    return RunConfig(run_id=run_id, bots=(CANDIDATE, *references), format="gauntlet",
                     games=bench.quick_games if quick else bench.games, duplicate=True, seed=bench.seed, play=play,
                     challenger=CANDIDATE, seats=bench.seats, sprt=sprt)


def _row(results: Sequence[Result], units: Sequence[Any], ref: str) -> dict[str, Any]:
    """The candidate against one reference."""
    w, d, lo = wdl(units, CANDIDATE, ref)
    est = elo_estimate(w, d, lo)
    counts = sprt_counts(results, CANDIDATE, ref)
    met = [r for r in results if ref in r.bots and CANDIDATE in r.bots]
    return {
        "reference": ref,
        "elo": finite_or_none(est.elo), "elo_text": format_elo(est.elo),
        "elo_low": finite_or_none(est.low), "elo_high": finite_or_none(est.high),
        "elo_margin": finite_or_none(est.margin), "los": round(est.los, 4), "score": round(est.score, 4),
        "units": est.n, "unit_wins": w, "unit_draws": d, "unit_losses": lo,
        "pentanomial": list(counts.pairs), "trinomial": list(counts.games),
        "games": len(met),
        "ahead": sum(1 for r in met if (r.score_of(CANDIDATE, ref) or 0.0) > 0.5),
        "behind": sum(1 for r in met if (r.score_of(CANDIDATE, ref) or 0.0) < 0.5),
    }


def benchmark_report(store: RunStore, bench: Benchmark, candidate: Mapping[str, Any], *, quick: bool,
                     seconds: float, cores: str) -> dict[str, Any]:
    """The result of a played benchmark run: the candidate against each reference (Elo, 95%
    interval, LOS, pentanomial counts of its pairs, trinomial counts of its other games) and
    against the field as a whole."""
    cfg = store.config
    rows = [r for r in store.games() if r.outcome is not None]
    results = [r.outcome.result(r.job.pair_key) for r in rows if r.outcome is not None]
    units = scoring_units(results)
    references = [b for b in cfg.bots if b != CANDIDATE]
    w, d, lo = wdl(units, CANDIDATE)
    overall = elo_estimate(w, d, lo)
    firsts = sum(1 for r in results if r.winner is not None and r.bots[r.winner] == CANDIDATE)
    return {
        "benchmark": bench.id,
        "description": bench.description,
        "quick": quick,
        "game": bench.game,
        "rules": bench.rules,
        "seats": bench.seats,
        "games_per_table": cfg.games,
        "seed": bench.seed,
        "time_control": bench.tc,
        "candidate": dict(candidate),
        "references": references,
        "scoring_unit": unit_name(True, bench.seats),
        "games_played": len(results),
        "games_scheduled": len(store.games()),
        "first_places": firsts,
        "overall": {"elo": finite_or_none(overall.elo), "elo_text": format_elo(overall.elo),
                    "elo_low": finite_or_none(overall.low), "elo_high": finite_or_none(overall.high),
                    "elo_margin": finite_or_none(overall.margin), "los": round(overall.los, 4), "units": overall.n},
        "rows": [_row(results, units, ref) for ref in references],
        "sprt": _sprt(store, results),
        "wall_seconds": round(seconds, 1),
        "cores": cores,
        "run_folder": str(store.run_dir),
    }


def _sprt(store: RunStore, results: Sequence[Result]) -> dict[str, Any] | None:
    """The run's SPRT (``--sprt``; None without one): the decision it stopped on, or its state so far."""
    cfg = store.config
    if not cfg.sprt:
        return None
    decided = store.meta(SPRT_DECISION)
    if decided:
        found: dict[str, Any] = json.loads(decided)
        return found
    ref = next(b for b in cfg.bots if b != CANDIDATE)
    return {**sprt_summary(results, [CANDIDATE, ref], SprtSpec.parse(cfg.sprt)), "games_played": len(results)}


def sprt_text(report: Mapping[str, Any]) -> str:
    """The SPRT's line of the table (empty without one)."""
    s = report.get("sprt")
    if not s:
        return ""
    state = (f"{s['decision']} accepted after {s['games_played']} games" if s.get("decision")
             else f"not decided after {s['games_played']} games")
    return (f"SPRT {s['spec']}: {state} (LLR {s['llr']:.2f}, bounds {s['lower']:.2f} … {s['upper']:.2f}; "
            f"H0: at most elo0, H1: at least elo1, for {report['candidate']['name']} against {s['opponent']}).")


def interval_text(row: Mapping[str, Any]) -> str:
    """``+35 ± 20``; a one-sided record (every pair won, or lost) has a one-sided interval:
    ``+inf (≥ +407)``, ``-inf (≤ -407)``."""
    margin, low, high = row.get("elo_margin"), row.get("elo_low"), row.get("elo_high")
    if isinstance(margin, int | float):
        return f"{row['elo_text']} ± {margin:.0f}"
    if isinstance(low, int | float):
        return f"{row['elo_text']} (≥ {format_elo(low)})"
    if isinstance(high, int | float):
        return f"{row['elo_text']} (≤ {format_elo(high)})"
    return str(row["elo_text"])


def _counts(report: Mapping[str, Any], row: Mapping[str, Any]) -> tuple[str, str]:
    """The column of the counts and a row's: the pentanomial of its duplicate pairs (two seats), or
    the trinomial of its games against the reference (behind, level, ahead: more seats)."""
    if report["seats"] == 2:
        return "pentanomial 0 ¼ ½ ¾ 1", " ".join(str(x) for x in row["pentanomial"])
    return "games behind-level-ahead", "-".join(str(x) for x in row["trinomial"])


def render_text(report: Mapping[str, Any]) -> str:
    """The benchmark's table as text."""
    cand = report["candidate"]
    head = (f"Benchmark {report['benchmark']}{' (quick)' if report['quick'] else ''}: {cand['name']} against "
            f"{len(report['rows'])} reference(s); {report['game']} {report['rules']}, {report['seats']} seats, "
            f"{report['games_per_table']} games per table, tc {report['time_control']}, seed {report['seed']!r}")
    unit = report["scoring_unit"]
    title = _counts(report, report["rows"][0])[0] if report["rows"] else ""
    lines = [head, "", f"{'reference':<14} {'Elo ± 95%':>14} {'LOS':>7} {unit:>9} {'W-D-L':>13} "
             f"{title:>26} {'games':>6}"]
    for r in report["rows"]:
        wdl_text = f"{r['unit_wins']}-{r['unit_draws']}-{r['unit_losses']}"
        penta = _counts(report, r)[1]
        lines.append(f"{r['reference']:<14} {interval_text(r):>14} {100 * r['los']:>6.1f}% {r['units']:>9} "
                     f"{wdl_text:>13} {penta:>26} {r['games']:>6}")
    o = report["overall"]
    lines += ["", f"Against the field: {interval_text(o)} Elo over {o['units']} {unit}, LOS {100 * o['los']:.1f}%; "
              f"first place in {report['first_places']} of {report['games_played']} games.",
              f"Games {report['games_played']}/{report['games_scheduled']}, {report['wall_seconds']} s on "
              f"{report['cores']}."]
    if sprt_line := sprt_text(report):
        lines.append(sprt_line)
    return "\n".join(lines)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def render_html(report: Mapping[str, Any]) -> str:
    """The benchmark's table as a self-contained page (linking to the run's results page)."""
    cand = report["candidate"]
    title = _counts(report, report["rows"][0])[0] if report["rows"] else ""
    head = ("<tr><th>reference</th><th>Elo</th><th>95% interval</th><th>LOS</th>"
            f"<th>{_e(report['scoring_unit'])} W-D-L</th><th>{_e(title)}</th><th>games</th></tr>")
    body = "".join(
        f"<tr><td>{_e(r['reference'])}</td><td class='num'>{_e(r['elo_text'])}</td>"
        f"<td class='num'>{_e(r['elo_low'])} … {_e(r['elo_high'])}</td><td class='num'>{100 * r['los']:.1f}%</td>"
        f"<td class='num'>{r['unit_wins']}-{r['unit_draws']}-{r['unit_losses']}</td>"
        f"<td class='num'>{_e(_counts(report, r)[1])}</td>"
        f"<td class='num'>{r['games']}</td></tr>"
        for r in report["rows"])
    o = report["overall"]
    title = f"{report['benchmark']}{' (quick)' if report['quick'] else ''}: {cand['name']}"
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><meta name='viewport' "
        f"content='width=device-width'><title>{_e(title)}</title><style>{PAGE_CSS}</style></head><body>"
        f"<header><h1>{_e(title)}</h1><div class='meta'>{_e(report['description'])} · {_e(report['game'])} "
        f"{_e(report['rules'])}, {report['seats']} seats, {report['games_per_table']} games per table, tc "
        f"{_e(report['time_control'])}, seed {_e(report['seed'])} · {_e(cand.get('command', ''))}</div></header>"
        f"<section><h2>Against each reference</h2><table>{head}{body}</table>"
        f"<p>Against the field: {_e(interval_text(o))} Elo over {o['units']} {_e(report['scoring_unit'])}, LOS "
        f"{100 * o['los']:.1f}%; first place in {report['first_places']} of {report['games_played']} games; "
        f"{report['wall_seconds']} s on {_e(report['cores'])}.</p>"
        + (f"<p>{_e(sprt_text(report))}</p>" if report.get("sprt") else "") +
        "<p class='note'>Every game and its replay: <a href='index.html'>the run's results page</a>.</p></section>"
        "</body></html>\n")


def write_files(run_dir: Path, report: Mapping[str, Any]) -> tuple[Path, Path]:
    """``benchmark.json`` and ``benchmark.html`` in the run folder (each written whole)."""
    js, page = run_dir / BENCHMARK_JSON, run_dir / BENCHMARK_HTML
    write_atomic(js, (json.dumps(report, indent=2) + "\n").encode())
    write_atomic(page, render_html(report).encode())
    return js, page


def remember(store: RunStore, bench: Benchmark, candidate: Mapping[str, Any], quick: bool) -> None:
    """Store in the run what it plays (the benchmark as defined, the candidate's label, ``--quick``)."""
    store.set_meta(**{BENCHMARK_META: json.dumps({"benchmark": {f: getattr(bench, f) for f in _KEYS},
                                                   "candidate": dict(candidate), "quick": quick})})


def recall(store: RunStore) -> tuple[Benchmark, dict[str, Any], bool]:
    """What :func:`remember` stored (``BenchmarkError``: the run is no benchmark's)."""
    text = store.meta(BENCHMARK_META)
    if text is None:
        raise BenchmarkError(f"{store.run_dir} is not a benchmark's run (arena tournament --resume finishes it)")
    data = json.loads(text)
    return _benchmark(data["benchmark"], str(store.run_dir)), dict(data["candidate"]), bool(data["quick"])


def listing(benchmarks: Mapping[str, Benchmark]) -> str:
    """``arena benchmark --list``: every benchmark, and whether its game registers its field."""
    lines = []
    for b in benchmarks.values():
        try:
            check_field(b)
            state = "ready"
        except BenchmarkError as e:
            state = f"not playable here: {e}"
        lines.append(f"{b.id}: {b.description}\n  {b.game} {b.rules}, {b.seats} seats, field "
                     f"{', '.join(b.field)}; {b.games} games per table ({b.quick_games} with --quick), "
                     f"seed {b.seed!r}, tc {b.tc!r}\n  {state}")
    return "\n".join(lines)
