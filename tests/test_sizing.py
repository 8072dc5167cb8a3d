"""The sizing script behind docs/deployment.md: its model's arithmetic, and one game measured
on the real processes (so the script cannot rot)."""

import pytest

from ops.bench import sizing
from ops.drills.redis_server import redis_server_path


def figures(**changes) -> dict:
    base = {"games": 10, "requests": 1000, "events": 3000, "bot_turns": 990,
            "api_cpu_ms_per_request": 2.0, "worker_cpu_ms_per_job": 30.0, "redis_cpu_us_per_event": 500.0,
            "rq_redis_cpu_us_per_job": 2000.0, "aof_bytes_per_event": 1000.0,
            "per_type": {"x": {"memory_bytes": 3000 * 200}}}
    base.update(changes)
    return base


def test_the_model_scales_each_part_with_its_own_figure():
    a = sizing.Assumptions(games_per_day=864_000, peak_to_mean=1.0, game_minutes=10.0, core_busy=0.5,
                           redis_core_busy=0.5, redis_gb_per_shard=1.0, replicas=2)
    m = sizing.model(figures(), a)
    assert m["peak_games_per_s"] == 10.0
    assert m["peak_requests_per_s"] == 1000 and m["peak_events_per_s"] == 3000
    assert m["api_cores"] == 4.0                       # 1,000 requests/s x 2 ms / 0.5
    assert m["peak_jobs_per_s"] == 1000                # (99 bot turns + 1 scoring) a game
    assert m["worker_cores"] == 60.0                   # 1,000 jobs/s x 30 ms / 0.5
    assert m["rq_redis_cores"] == 4.0                  # 1,000 jobs/s x 2 ms / 0.5
    assert m["redis_primary_cores"] == 3.0             # 3,000 events/s x 0.5 ms / 0.5
    assert m["live_games_at_peak"] == 6000 and m["live_gb_at_peak"] == 0.36
    assert m["shards"] == 3 and m["redis_nodes"] == 9  # never fewer than 3 primaries; 2 replicas each
    heavier = sizing.model(figures(redis_cpu_us_per_event=5000.0), a)
    assert heavier["shards_by_cpu"] == 30 and heavier["shards"] == 30


@pytest.mark.slow
@pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")
def test_one_game_is_measured_on_the_real_processes():
    f = sizing.measure(games=1, clients=1)
    assert f["games"] == 1 and f["events"] > 10 and f["person_actions"] > 0 and f["bot_turns"] > 0
    assert f["api_cpu_ms_per_request"] > 0 and f["worker_cpu_ms_per_job"] > 0 and f["redis_cpu_us_per_event"] > 0
    assert 100 < next(iter(f["per_type"].values()))["bytes_per_event"] < 1000
