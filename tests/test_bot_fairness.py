"""Fair bot scheduling, the short form of ops/drills/bot_fairness.py (the full one: 100 all-bot
games): with one client's all-bot games keeping the worker busy, the bot turns of a person's
game wait in the queue (enqueued to started) p95 under 1 s."""

import pytest

from ops.drills import bot_fairness
from ops.drills.redis_server import redis_server_path


@pytest.mark.timing
@pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")
def test_a_persons_bots_are_not_queued_behind_all_bot_games():
    figures = bot_fairness.run(size=20, turns=20, workers=1, think=0.05, timeout=120)
    assert figures["human_game_bot_turns"] >= 20, figures
    assert figures["all_bot_turns_while_measured"] > 0, figures      # measured under load
    assert figures["all_bot_games_still_running_at_end"] > 0, figures
    assert figures["human_wait_p95_s"] < 1.0, figures
    assert figures["ok"], figures
