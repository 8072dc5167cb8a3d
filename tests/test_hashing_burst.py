"""ops/drills/hashing_burst.py in its short form: a burst of sign-ins with real Argon2id
(64 MiB, t=3) against one gevent API process, past its password pool's bound (one thread
here: 32), while parked streams follow a game being played: no block of the event loop over
0.1 s that the hashing could explain (gevent's monitor), the probes' p99 within PROBE_MAX_MS,
and the sign-ins past the bound answered 429 `busy` at once."""

import pytest

from ops.drills.redis_server import redis_server_path

pytestmark = [pytest.mark.timing, pytest.mark.skipif(redis_server_path() is None,
                                                     reason="redis-server is not installed")]


def test_a_burst_of_argon2id_sign_ins_neither_stalls_the_loop_nor_queues_without_bound():
    from ops.drills import hashing_burst

    figures = hashing_burst.run(size=40, streams=30, rounds=1, quiet_s=2.0, seed=2, threads=1)
    assert figures["ok"], figures
    assert figures["loop_blocked_reports"] <= 3, figures   # one a verify (32) were they on the loop
    assert figures["answers"].get("429 busy", 0) >= 1 and figures["answers"].get("201", 0) >= 30, figures
    assert figures["busy_max_s"] <= hashing_burst.BUSY_MAX_S, figures
    for what in ("types", "delivery", "move"):
        assert figures[f"{what}_real_p99_ms"] <= hashing_burst.PROBE_MAX_MS, figures
