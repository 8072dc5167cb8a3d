"""Passwords: the policy, the shipped list of common passwords, and Argon2id hashing in its
bounded pool."""

import subprocess
import sys
import threading
import time

import pytest

from service.accounts.passwords import (
    PASSWORD_MAX,
    PASSWORD_MIN,
    HashingBusy,
    PasswordHashing,
    common_passwords,
    password_problem,
)

pytestmark = pytest.mark.quick

GOOD = "correct horse battery staple"


@pytest.fixture
def hashing():
    pool = PasswordHashing.for_tests()
    yield pool
    pool.close()


# --- the policy ---------------------------------------------------------------------------
@pytest.mark.parametrize("password", [GOOD, "Tr0ub4dor&3-ish", "x" * 7 + "y", "é" * 7 + "ß",
                                      "z" * (PASSWORD_MAX - 1) + "q", "mot de passe à moi 42"])
def test_acceptable_passwords(password):
    assert password_problem(password) is None


@pytest.mark.parametrize("password, words", [
    (None, "text"), (12345678, "text"), (b"bytes-password", "text"),
    ("short", "at least"), ("a" * (PASSWORD_MIN - 1), "at least"),
    ("ab" * PASSWORD_MAX, "at most"),
    ("\U0001F600" * PASSWORD_MAX + "x", "at most"),
    ("nul\x00inside-it", "control"), ("new\nline-inside", "control"), ("del\x7fete-me-now", "control"),
    ("lone\ud800surrogate", "surrogate"),
    ("aaaaaaaaaaaa", "repeated"), ("\u00e9" * 10, "repeated"),
])
def test_refused_passwords(password, words):
    problem = password_problem(password)
    assert problem and problem.startswith("password: ") and words in problem


def test_the_byte_bound_counts_utf8():
    four_bytes = "\U0001F600\U0001F601"                 # 8 bytes, 2 characters
    assert password_problem(four_bytes * 64) is None    # 128 characters, 512 bytes
    assert len((four_bytes * 64 + "x").encode()) > 512
    assert "at most" in password_problem(four_bytes * 64 + "x")


@pytest.mark.parametrize("password", ["alice-in-wonderland", "MyNameIsALICE!!", "alice123456"])
def test_a_password_holding_the_username_is_refused(password):
    assert "username" in password_problem(password, "Alice")


def test_a_short_username_is_not_looked_for():
    assert password_problem("ab-cd-ef-gh", "ab") is None


def test_messages_never_echo_the_password():
    secret = "hunter2hunter2"
    for password, username in ((secret, "hunter"), ("qwertyuiop", ""), ("s" * 200, ""),
                               ("sec\x00ret-sauce", "")):
        problem = password_problem(password, username)
        assert problem and password not in problem and secret not in problem


# --- the common list ----------------------------------------------------------------------
def test_the_common_list_is_shipped_and_large():
    assert len(common_passwords()) >= 10_000
    assert common_passwords() is common_passwords()          # read once


@pytest.mark.parametrize("password", ["password", "PASSWORD", "Password", "123456789", "qwertyuiop",
                                      "QwErTyUiOp", "iloveyou", "baseball"])
def test_common_passwords_are_refused_whatever_their_case(password):
    assert "common" in password_problem(password)


def test_a_long_random_passphrase_passes():
    assert password_problem("plinth-orbit-marzipan-73-gusty-lantern") is None


def test_the_lists_header_is_not_a_password():
    assert not any(entry.startswith("#") for entry in common_passwords())


# --- hashing ------------------------------------------------------------------------------
def test_hash_and_verify_round_trip(hashing):
    stored = hashing.hash(GOOD)
    assert stored.startswith("$argon2id$")
    assert GOOD not in stored
    assert hashing.verify(stored, GOOD) is True
    assert hashing.needs_rehash(stored) is False


def test_a_wrong_password_is_false_not_an_error(hashing):
    stored = hashing.hash(GOOD)
    assert hashing.verify(stored, GOOD + "!") is False
    assert hashing.verify(stored, "") is False
    assert hashing.verify(stored, None) is False


@pytest.mark.parametrize("stored", ["", "garbage", "$argon2id$v=19$m=1024,t=1,p=1$xx$yy", None, 7])
def test_an_unreadable_stored_hash_is_false(hashing, stored):
    assert hashing.verify(stored, GOOD) is False
    assert hashing.needs_rehash(stored) is True


def test_the_dummy_verify_is_always_false(hashing):
    assert hashing.verify_dummy(GOOD) is False
    assert hashing.verify_dummy("") is False
    assert hashing.verify_dummy(None) is False


def test_other_parameters_need_a_rehash(hashing):
    stronger = PasswordHashing(time_cost=2, memory_kib=2048, parallelism=1)
    assert stronger.needs_rehash(hashing.hash(GOOD)) is True
    stronger.close()


def test_the_defaults_are_rfc_9106s_second_option():
    hashing = PasswordHashing()
    assert hashing.hash(GOOD).startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    hashing.close()


class SlowHasher:
    """Stands in for argon2's hasher: each call waits until released."""

    def __init__(self, parties: int = 1):
        self.entered = threading.Semaphore(0)
        self.release = threading.Event()
        self.together = threading.Barrier(parties, timeout=10)

    def hash(self, password):
        self.entered.release()
        self.together.wait()
        assert self.release.wait(10)
        return "$slow$"

    def verify(self, stored, password):
        return self.hash(password) == "$slow$"


def test_past_max_waiting_the_pool_refuses_at_once(monkeypatch):
    hashing = PasswordHashing.for_tests(threads=1, max_waiting=1)
    slow = SlowHasher()
    monkeypatch.setattr(hashing, "_hasher", slow)
    first = threading.Thread(target=hashing.hash, args=(GOOD,))
    first.start()
    try:
        assert slow.entered.acquire(timeout=10)
        started = time.monotonic()
        with pytest.raises(HashingBusy) as busy:
            hashing.hash(GOOD)
        assert time.monotonic() - started < 1 and busy.value.retry_after == 2
        with pytest.raises(HashingBusy):
            hashing.verify_dummy(GOOD)
    finally:
        slow.release.set()
        first.join(10)
    assert hashing.hash(GOOD) == "$slow$"               # room again once the first is done
    hashing.close()


def test_four_threads_hash_at_once(monkeypatch):
    hashing = PasswordHashing.for_tests(threads=4)
    slow = SlowHasher(parties=4)                         # passes only when all 4 run together
    slow.release.set()
    monkeypatch.setattr(hashing, "_hasher", slow)
    results = []
    workers = [threading.Thread(target=lambda: results.append(hashing.hash(GOOD))) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(15)
    assert results == ["$slow$"] * 4
    hashing.close()


def test_four_parallel_real_hashes_complete():
    hashing = PasswordHashing.for_tests(threads=4)
    results = {}

    def one(i):
        stored = hashing.hash(f"{GOOD} {i}")
        results[i] = hashing.verify(stored, f"{GOOD} {i}") and not hashing.verify(stored, GOOD)

    workers = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert results == {0: True, 1: True, 2: True, 3: True}
    hashing.close()


GEVENT_PROBE = """
from gevent import monkey; monkey.patch_all()
import gevent, gevent.threadpool
from service.accounts.passwords import PasswordHashing
hashing = PasswordHashing(time_cost=3, memory_kib=32768, parallelism=1, threads=2)
ticks = []
def ticker():
    while True:
        ticks.append(1)
        gevent.sleep(0.001)
tick = gevent.spawn(ticker)
gevent.sleep(0.01)
before = len(ticks)
jobs = [gevent.spawn(lambda: hashing.verify(hashing.hash("a passphrase"), "a passphrase")) for _ in range(3)]
gevent.joinall(jobs, timeout=30)
tick.kill()
assert all(job.value is True for job in jobs), [job.value for job in jobs]
assert isinstance(hashing._pool, gevent.threadpool.ThreadPool)
print("ticks while hashing:", len(ticks) - before)
assert len(ticks) - before >= 5
"""


def test_under_gevent_the_loop_keeps_serving_while_hashing():
    done = subprocess.run([sys.executable, "-c", GEVENT_PROBE], capture_output=True, text=True, check=False,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
