"""The chat flood drill's short form (ops/drills/chat_flood.py: `python -m ops.drills.chat_flood
--size 200` is the full one, figures in docs/operations.md) on a private redis-server: a
flood from one seat says exactly the rate's count, the rest 429; huge and hostile messages are
refused and change nothing, markup comes back as sent; a chat full to its cap refuses with 409."""

import pytest

from ops.drills import chat_flood
from ops.drills.redis_server import redis_server_path


@pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")
def test_a_chat_flood_huge_messages_and_markup_change_nothing_past_the_limits():
    fig = chat_flood.run(size=40, cap=60, apps=2)
    assert fig["ok"], fig
    assert fig["flood"]["said"] == 5 and fig["flood"]["refused_429"] == 35
    assert fig["cap"]["said"] == 60 and fig["cap"]["refused_409"] == 20
