"""ops/drills/sign_in_flood.py in its short form: wrong passwords for one account from many
addresses (X-Forwarded-For through a trusted proxy) are checked until SIGNIN_LOCK_AFTER of
them lock the name, then refused 429 `sign_in_locked` without a check; the right password is
refused from a new device and accepted at once from the owner's known device; the lock's
Retry-After is at most 900 s and is not extended by attempts made while it holds (the lock is
15 minutes: its end is the full form's, `--wait-lock`)."""

import pytest

from ops.drills.redis_server import redis_server_path

pytestmark = pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")


def test_a_flood_of_wrong_passwords_locks_the_name_but_not_its_owner():
    from ops.drills import sign_in_flood

    figures = sign_in_flood.run(size=200, addresses=40, concurrency=8, gap=3.0, seed=2)
    assert figures["ok"], figures
    assert figures["answers"]["429 sign_in_locked"] >= 200 - 10 - 7, figures
    assert 10 <= figures["passwords_checked"] <= 10 + 8 - 1, figures
    assert figures["right_password_new_device"] == "429 sign_in_locked" and figures["known_device"] == 201
    assert 0 < figures["retry_after_2"] < figures["retry_after_1"] <= 900, figures
    assert figures["retry_after_2"] <= figures["retry_after_1"] - int(figures["seconds_between"]) + 1, figures
