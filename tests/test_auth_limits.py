"""Auth and rate limits, for every registered game: no token or a forged one -> 401, another
game's token -> 403, a token acts only for its own seat, tokens are stored only as hashes,
and the limits per token and per address answer 429 with Retry-After."""

from ops.drills import _kit, auth_limits


def test_every_secured_endpoint_and_every_seat(redis_client):
    figures = auth_limits.run(redis_client, games_per_type=1, seed=2)
    assert not figures["unexpected"], figures["unexpected"]
    assert figures["seat_checks"] >= len(_kit.game_names())
    assert figures["tokens"] and figures["tokens_found_in_redis"] == 0
    assert figures["ok"], figures


def test_the_token_search_would_find_a_stored_token(fake_redis):
    """The hashed-token check can fail: a token stored as is is found."""
    fake_redis.hset("some:key", "field", b"xx-the-token-xx")
    fake_redis.xadd("some:stream", {"e": b"the-token"})
    values = auth_limits.redis_values(fake_redis)
    assert any(b"the-token" in v for v in values)


def test_rate_limits_per_token_and_per_address_with_retry_after(redis_client):
    figures = auth_limits.rate_limits(redis_client, limit=4)
    assert figures["token"] == [200] * 4 + [429, 429], figures
    assert figures["address"] == [200] * 4 + [429, 429], figures
    assert figures["other_address"] == 200
    assert figures["ok"], figures


def test_the_token_limit_reads_authorization_as_authentication_does(redis_client):
    """`bearer x`, `BEARER x`, `Bearer  x` authenticate as `Bearer x` (the scheme in any case),
    so they count against the same token: 40 addresses, one token in four spellings, a limit
    of 20 -> 20 x 200 then 20 x 429 (before: every spelling but `Bearer ` went uncounted)."""
    import random
    import time

    if 60 - time.time() % 60 < 3:   # a fixed window: keep the burst inside one
        time.sleep(60 - time.time() % 60 + 0.05)
    app = _kit.inline_app(redis_client, RATE_LIMIT="20/60")
    game_id, tokens = _kit.create_playable(app.extensions["games"], _kit.game_names()[0], random.Random(3))
    http = app.test_client()
    spellings = ["bearer {}", "BEARER {}", "Bearer  {}", "Bearer {}", "bEaReR {} "]
    statuses = [http.get(f"/v1/games/{game_id}/view",
                         headers={"Authorization": spellings[i % len(spellings)].format(tokens[0])},
                         environ_base={"REMOTE_ADDR": f"10.9.{i}.1"}).status_code for i in range(40)]
    assert statuses == [200] * 20 + [429] * 20, statuses
