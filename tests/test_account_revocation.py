"""ops/drills/account_revocation.py in its short form: on gunicorn's gevent worker, a revoked
personal token's account stream and game stream end within 1 s of the revocation (through the
streams' own process, through another one, as the streams open, and for streams opened after
it while a process's cache still holds the token), and its next request is 401."""

import pytest

from ops.drills.redis_server import redis_server_path

pytestmark = [pytest.mark.timing, pytest.mark.skipif(redis_server_path() is None,
                                                     reason="redis-server is not installed")]


def test_a_revoked_tokens_streams_end_within_a_second_and_its_next_request_is_401():
    from ops.drills import account_revocation

    figures = account_revocation.run(size=8, seed=2)
    assert figures["ok"], figures
    modes = figures["by_mode"]
    assert set(modes) == set(account_revocation.MODES) and all(m["revocations"] == 2 for m in modes.values())
    assert figures["close_max_s"] < account_revocation.MAX_CLOSE_S, figures
    for mode in ("same", "at-once"):
        assert modes[mode]["next_401"] == 2, modes[mode]
    assert modes["other"]["next_401_on_the_revoking_process"] == 2, modes["other"]
    assert modes["other"]["refused_after_max_s"] < account_revocation.MAX_CLOSE_S, modes["other"]
    # a token revoked elsewhere cannot open an account stream past its revoking event
    assert modes["stale"]["account_stream_refused"] == 2, modes["stale"]
