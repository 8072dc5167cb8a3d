"""ops/drills/sign_up_race.py in its short form: 50 parallel sign-ups for one name over HTTP,
against gunicorn with two API processes, make exactly one account (one 201, 49 x 409
`username_taken`), spelled alike or in 50 look-alike spellings of the name."""

import pytest

from ops.drills.redis_server import redis_server_path

pytestmark = pytest.mark.skipif(redis_server_path() is None, reason="redis-server is not installed")


def test_parallel_sign_ups_for_one_name_on_two_processes_make_one_account():
    from ops.drills import sign_up_race

    figures = sign_up_race.run(size=50, rounds=2, seed=2, processes=2)
    assert figures["ok"], figures
    assert figures["answers"] == {"201": 2, "409 username_taken": 98}, figures
    assert figures["one_account_each_round"] == 2, figures


def test_the_look_alike_spellings_are_many_and_all_one_name():
    import random

    from ops.drills.sign_up_race import spellings
    from service.accounts.names import check_username

    names = spellings("solid7race", 50, random.Random(4))
    assert len(set(names)) == 50 and len({check_username(n)[1] for n in names}) == 1
    assert any(not n.isascii() for n in names) and any("_" in n or "-" in n for n in names)
