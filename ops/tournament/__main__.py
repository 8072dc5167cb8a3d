"""`python -m ops.tournament`: play the tournament, print its table and the verdicts.

    python -m ops.tournament                       # the full matrix: 400 sessions a cell,
                                                   # 2,000 for speculation (resumable)
    python -m ops.tournament --sessions 40 --speculation-sessions 40 --games speculate
    python -m ops.tournament --only search --processes 2     # the search level's cells alone
    python -m ops.tournament --only search --field heuristic --no-extra-players   # its 4-player verdicts
    python -m ops.tournament --processes 2 --budget 1800 --seed 0 [--fresh] [--no-extra-players]
        [--json out.json] [--markdown out.md] [--results path.jsonl]

Exit status: 0 when every cell is complete and has no broken session, 1 when a session broke
(a bot raised, an illegal action, a game that did not end), 2 when the budget stopped it
first (rerun the same command to resume).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

from .runner import default_results, markdown, matrix, run, verdicts


def select_cells(cells: list, only=None, field=None, players=None) -> list:
    """The cells whose challenger or field starts with `only`, whose field is `field` and
    whose player count is in `players` (each left out: no filter)."""
    if only:
        cells = [c for c in cells if c.challenger.startswith(only) or c.field.startswith(only)]
    if field:
        cells = [c for c in cells if c.field == field]
    if players:
        cells = [c for c in cells if c.players in players]
    return cells


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ops.tournament", description=__doc__.splitlines()[0])
    ap.add_argument("--seed", default="0")
    ap.add_argument("--sessions", type=int, default=400)
    ap.add_argument("--speculation-sessions", type=int, default=2000)
    ap.add_argument("--games", default=None, help="comma-separated game names (default: all four)")
    ap.add_argument("--no-extra-players", action="store_true", help="only the 4-player cells")
    ap.add_argument("--no-search", action="store_true", help="leave out the search level's cells")
    ap.add_argument("--only", default=None,
                    help="only the cells whose challenger or field starts with this level (e.g. search)")
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--budget", type=float, default=None, help="CPU seconds for this run (then stop; resumable)")
    ap.add_argument("--results", type=Path, default=None)
    ap.add_argument("--fresh", action="store_true", help="discard earlier results of this seed")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--field", default=None, help="only the cells whose field is this level (e.g. heuristic)")
    ap.add_argument("--players", default=None, help="only the cells of these player counts (comma-separated, e.g. 3,6)")
    args = ap.parse_args(argv)
    try:
        players = {int(p) for p in args.players.split(",")} if args.players else None
    except ValueError:
        ap.error(f"--players: comma-separated player counts, not {args.players!r}")
    games = args.games.split(",") if args.games else None
    cells = matrix(args.sessions, args.speculation_sessions, not args.no_extra_players, games,
                   search=not args.no_search)
    cells = select_cells(cells, args.only, args.field, players)
    if not cells:
        ap.error("no cell of the tournament matches --games, --only, --field and --players together")
    path = args.results or default_results(args.seed)
    if args.fresh and path.exists():
        path.unlink()
    summary = run(cells, args.seed, path, processes=args.processes, budget_s=args.budget)
    summary["python"] = platform.python_version()
    summary["results"] = str(path)
    table = markdown(summary)
    lines = verdicts(summary)
    print(table)
    print("\n".join(lines))
    broken = [e for s in summary["cells"] for e in s["errors"]] + [a for s in summary["cells"] for a in s["anomalies"]]
    for e in broken[:20]:
        print("BROKEN:", e if isinstance(e, str) else e.get("error"), file=sys.stderr)
    print(f"\n{sum(s['sessions'] for s in summary['cells'])} sessions in {len(cells)} cells; this run "
          f"{summary['cpu_s']} s CPU, {summary['wall_s']} s wall, {args.processes} process(es); "
          f"results: {path}" + ("; STOPPED BY THE BUDGET (rerun to resume)" if summary["stopped_by_budget"] else ""))
    if args.json:
        args.json.write_text(json.dumps({**summary, "verdicts": lines}, indent=1, default=str))
    if args.markdown:
        args.markdown.write_text(table + "\n" + "\n".join(lines) + "\n")
    if broken:
        return 1
    return 2 if summary["stopped_by_budget"] or not summary["complete"] else 0


if __name__ == "__main__":
    sys.exit(main())
