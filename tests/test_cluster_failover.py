"""The failover drill's short form (the full drill: `make failover-drill`, figures in
docs/reliability.md): two API processes and two workers on a loopback cluster of 3 primaries
with a replica each, appends acknowledged after a replica confirms them; one primary killed
-9 in the middle of the games. Nothing acknowledged may be lost, every game must finish and
verify, and appends must resume in the killed node's slots."""

import json

import pytest

from ops.drills import cluster_failover
from ops.drills.redis_server import redis_server_path

pytestmark = pytest.mark.skipif(redis_server_path() is None, reason="redis-server (RQ's Redis) is not installed")


@pytest.mark.slow
@pytest.mark.timing
def test_a_primary_killed_under_play_loses_no_acknowledged_action():
    # One-deal speculation games (the quickest of the hosted games), so the games in play when
    # the primary dies finish within seconds of the failover.
    figures = cluster_failover.run(failovers=1, clients=4, ack_replicas=1, seed=3, short=True,
                                   warm_up=4.0, settle=4.0, patience=120.0, game_types=["speculation"])
    assert figures["ok"], json.dumps(figures, default=str)
    assert figures["failovers"] == 1 and figures["lost"] == figures["games_lost"] == 0
    assert figures["acknowledged"] > 0 and figures["games"] == figures["finished"] == figures["verified"]
    kill = figures["kills"][0]
    assert kill["promoted_s"] is not None and kill["first_append_s"] is not None, kill
