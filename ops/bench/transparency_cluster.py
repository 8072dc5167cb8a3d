"""Benchmark 14: the transparency log's sequencer on a Redis Cluster vs one Redis (issue 45).

The Merkle log is one sequence: one sequencer at a time holds its lease and commits a batch
(events/transparency.py), so its throughput is one sequencer's. Subject: the passes
(`events.transparency.sequence`, what workers/sequencer.py runs every AUDIT_SEQUENCE_EVERY s)
that log `games` games which moved since the last pass, on a loopback valkey cluster of 3
primaries (ops/drills/redis_cluster.py): the lease (a script on `{tlog}:lease`), the touched
games merged from the index's 16 keys on every node, the games' heads (one pipeline: one
round trip a node), the logged versions, the Merkle tree and the signed head, the commit
script in the log's slot.
Baseline: the same passes on a private single Redis, in the same run. The games are created
before each round (untimed); each round's passes also read again the games of the rounds
before within the sequencer's LOOKBACK (30 s), on both sides alike. Rounds alternate
(ops/bench/common.alternate); the ratio is the median of the side-by-side rounds' ratios.
Reported beside it: a quiet pass (nothing moved), in ms, on each side; and the head reads the
pass makes, in us a game, on each side: the store's `heads` (one pipeline, on a cluster one a
node: what the pass calls) against `head` game by game (what it called before), alternated.

    python -m ops.bench --only 14
    python -m ops.bench.transparency_cluster --games 300 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import time

from .common import Env, Row, Scale, alternate

GAMES = {"full": 500, "quick": 200, "smoke": 30}


def _core(client):
    from service.bootstrap import Backend, build_core
    from workers.memory_jobs import MemoryJobs

    return build_core({"ALLOW_SEED": True}, Backend(client, client, False), MemoryJobs())


def _pass(core):
    from events.transparency import sequence

    return sequence(core.transparency, core.store, core.index, core.keys.sign, owner="bench-sequencer")


class Side:
    """One sequencer and the games it logs, on one Redis (a cluster or a single server)."""

    def __init__(self, client, games: int):
        self.core, self.games, self.created = _core(client), games, 0
        self.passes = 0
        self.game_ids: list[str] = []

    def _move_games(self) -> None:
        for _ in range(self.games):
            session = self.core.create("speculation", {}, [{}, {}, {}], seed=f"{self.created:064x}")
            self.game_ids.append(session.game_id)
            self.created += 1

    def checkpoints_per_second(self) -> float:
        self._move_games()
        logged, started = 0, time.perf_counter()
        while logged < self.games:
            done = _pass(self.core)
            if not done.held:
                raise RuntimeError("the bench's sequencer lost its lease")
            logged += done.logged
            self.passes += 1
        return logged / (time.perf_counter() - started)

    def quiet_pass_ms(self, passes: int = 5) -> float:
        started = time.perf_counter()
        for _ in range(passes):
            if _pass(self.core).logged:
                raise RuntimeError("a quiet pass logged a game")
        return (time.perf_counter() - started) * 1000 / passes

    def head_read_us(self, rounds: int = 3) -> dict:
        """Reading every game's head: in one `heads` call against one `head` a game, us a game
        (alternated rounds' medians; the ratio batched / one by one), the answers checked equal."""
        store, games = self.core.store, self.game_ids

        def timed(read) -> float:
            started = time.perf_counter()
            found = read()
            elapsed = time.perf_counter() - started
            if found != {game: store.head(game) for game in games}:
                raise RuntimeError("heads() and head() answered otherwise")
            return elapsed * 1e6 / len(games)

        batched, one_by_one, ratio = alternate(lambda: timed(lambda: store.heads(games)),
                                               lambda: timed(lambda: {g: store.head(g) for g in games}), rounds)
        return {"one_by_one": round(one_by_one, 1), "batched": round(batched, 1), "ratio": round(ratio, 3)}

    def log_size(self) -> int:
        return self.core.transparency.size()


def measure(cluster_client, single_client, games: int, rounds: int) -> dict:
    on_cluster, on_single = Side(cluster_client, games), Side(single_client, games)
    cluster_rate, single_rate, ratio = alternate(on_cluster.checkpoints_per_second,
                                                 on_single.checkpoints_per_second, rounds)
    return {"games_per_round": games, "rounds": rounds,
            "cluster_checkpoints_per_s": round(cluster_rate, 1), "single_checkpoints_per_s": round(single_rate, 1),
            "ratio_cluster_vs_single": round(ratio, 3),
            "quiet_pass_ms": {"cluster": round(on_cluster.quiet_pass_ms(), 2),
                              "single": round(on_single.quiet_pass_ms(), 2)},
            "head_read_us_a_game": {"cluster": on_cluster.head_read_us(), "single": on_single.head_read_us()},
            "passes": {"cluster": on_cluster.passes, "single": on_single.passes},
            "every_game_logged_once": on_cluster.log_size() == on_cluster.created
            and on_single.log_size() == on_single.created}


def run(env: Env, scale: Scale) -> list[Row]:
    found = measure(env.fresh_cluster_client(), env.fresh_client(), GAMES[scale.name], scale.rounds)
    return [Row("14 transparency cluster", "sequencer: games checkpointed per s, 3-primary cluster",
                found["cluster_checkpoints_per_s"], "checkpoints/s", found["single_checkpoints_per_s"],
                "one Redis", found["ratio_cluster_vs_single"],
                extra={k: v for k, v in found.items() if not k.endswith("_per_s")})]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=GAMES["full"], help="games moved (and logged) per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from ops.drills import redis_server
    from ops.drills.redis_cluster import valkey_binary

    if redis_server.redis_server_path() is None:   # the single Redis from the valkey binary too
        redis_server.redis_server_path = valkey_binary
    env = Env(Scale.full())
    try:
        print(json.dumps(measure(env.fresh_cluster_client(), env.fresh_client(), args.games, args.rounds)), flush=True)
    finally:
        env.close()


if __name__ == "__main__":
    main()
