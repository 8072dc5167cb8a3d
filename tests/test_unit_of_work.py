"""The unit of work over an aggregate that is not a game: a tally (a counter with a ceiling),
on every store (memory, fakeredis, a real redis-server). What a game's commands rely on,
checked without any game: the idempotent replay, the conflict on a reused key, the retry on
a moved head, the client's expected version, and a command spanning two aggregates as a
chain of single-aggregate appends that a crash between its steps does not break."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, replace

import pytest

from events.envelope import GENESIS, NewEvent, body_digest
from events.keys import stream_of_prefix, stream_prefix
from events.store import keys
from service.core.errors import Conflict, Invalid
from service.core.unit_of_work import RETRY, Answer, Command, Decision, Idempotency, UnitOfWork

pytestmark = pytest.mark.quick

CEILING = 10


@dataclass(frozen=True)
class Tally:
    stream_id: str
    version: int = 0
    head: str = GENESIS
    total: int = 0


class TallyRepository:
    def __init__(self, store):
        self.store = store
        self.followed: list[Tally] = []

    def peek(self, stream_id, idem_key):
        return self.store.peek(stream_id, idem_key)

    def head(self, stream_id):
        return self.store.head(stream_id)

    def load(self, stream_id, at):
        tally = Tally(stream_id)
        for event in self.store.read(stream_id, 0, at[0]):
            tally = replace(tally, total=tally.total + event.data["by"])
        return replace(tally, version=at[0], head=at[1])

    def empty(self, stream_id):
        return Tally(stream_id)

    def append(self, tally, decision, idem):
        receipt = self.store.append(tally.stream_id, decision.events, base_version=tally.version,
                                    base_head=tally.head, expected_version=decision.expected_version,
                                    idempotency_key=idem.key if idem else "",
                                    body_digest=idem.digest if idem else "", meta=decision.meta)
        if receipt.duplicate:
            return receipt, tally, []
        added = sum(e.data["by"] for e in decision.events)
        return receipt, replace(tally, version=receipt.version, head=receipt.head, total=tally.total + added), []

    def follow_up(self, after):
        self.followed.append(after)


def add(unit: UnitOfWork, stream_id: str, by: int, key: str = "", expected_version=None,
        before_append=None) -> int:
    """A command: add `by` to a tally, never past the ceiling; the tally's total after it."""
    def decide(tally: Tally, careful: bool):
        if tally.total + by > CEILING:
            raise Invalid(f"by: {tally.total} + {by} is past the ceiling", {"field": "by"})
        if before_append is not None:
            before_append()
        return Decision([NewEvent("tally.added", {"by": by})], expected_version=expected_version)

    idem = Idempotency(key, body_digest({"by": by})) if key else None
    return unit.run(Command(stream_id, decide, lambda done: done.after.total, idem=idem,
                            replay=lambda receipt: unit.repository.load(stream_id, (receipt.version,
                                                                                    receipt.head)).total))


@pytest.fixture
def unit(store):
    return UnitOfWork(TallyRepository(store))


def test_an_aggregate_of_another_kind_has_its_own_keys_under_one_hash_tag():
    assert stream_prefix("tally/t1") == "tally:{tally:t1}"
    assert keys("tally/t1")["events"] == "tally:{tally:t1}:events"
    assert keys("0123abcd0123abcd")["events"] == "game:{g:0123abcd0123abcd}:events"   # a game: as before
    for stream_id in ("tally/t1", "0123abcd0123abcd"):
        assert stream_of_prefix(stream_prefix(stream_id)) == stream_id
    with pytest.raises(ValueError):
        stream_prefix("tally/a/b")


def test_a_command_appends_and_follows_up(unit):
    assert add(unit, "tally/t1", 3) == 3
    assert add(unit, "tally/t1", 4) == 7
    assert [t.total for t in unit.repository.followed] == [3, 7]
    assert unit.repository.store.head("tally/t1")[0] == 2
    assert unit.repository.store.head("t1")[0] == 0          # not a game's stream


def test_a_refused_command_changes_nothing(unit):
    add(unit, "tally/t1", 8)
    with pytest.raises(Invalid) as refused:
        add(unit, "tally/t1", 5)
    assert refused.value.details["field"] == "by"
    assert unit.repository.store.head("tally/t1")[0] == 1


def test_a_retry_with_the_same_key_gets_the_original_answer_and_writes_nothing(unit):
    assert add(unit, "tally/t1", 2, key="k1") == 2
    add(unit, "tally/t1", 5)
    assert add(unit, "tally/t1", 2, key="k1") == 2       # as the first answer, not the tally now
    assert unit.repository.store.head("tally/t1")[0] == 2
    with pytest.raises(Conflict) as reused:
        add(unit, "tally/t1", 3, key="k1")
    assert reused.value.code == "idempotency_conflict"


def test_a_moved_head_is_decided_again_on_the_new_tally(unit):
    """Another command appends between this one's load and its append: the append is refused
    (the head moved), and the command decides again on what is there now."""
    raced = []

    def other_command_first():
        if not raced:
            raced.append(True)
            add(unit, "tally/t1", 6)

    add(unit, "tally/t1", 1)
    with pytest.raises(Invalid):     # decided again on 1 + 6: 4 more is past the ceiling
        add(unit, "tally/t1", 4, before_append=other_command_first)
    assert unit.repository.store.head("tally/t1")[0] == 2
    assert add(unit, "tally/t1", 3) == 10


def test_the_clients_expected_version_is_a_conflict_not_a_retry(unit):
    add(unit, "tally/t1", 1)
    with pytest.raises(Conflict) as stale:
        add(unit, "tally/t1", 1, expected_version=0)
    assert stale.value.code == "version_conflict" and stale.value.version == 1


def test_concurrent_commands_with_one_key_append_once(unit):
    results, errors = [], []

    def run():
        try:
            results.append(add(unit, "tally/t1", 2, key="same"))
        except Exception as err:   # noqa: BLE001: collected for the assertion
            errors.append(err)

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and results == [2] * 8
    assert unit.repository.store.head("tally/t1")[0] == 1


def test_an_answer_without_a_write(unit):
    answered = unit.run(Command("tally/t1", lambda tally, careful: Answer("nothing to do"),
                                lambda done: "appended", new=True))
    assert answered == "nothing to do"
    assert unit.repository.store.head("tally/t1")[0] == 0


def test_a_cached_aggregate_that_refuses_is_decided_again_carefully(unit):
    add(unit, "tally/t1", 5)
    stale = Tally("tally/t1")          # a cache that missed the first append

    def decide(tally, careful):
        if tally.total != 5:
            return RETRY
        return Decision([NewEvent("tally.added", {"by": 1})])

    assert unit.run(Command("tally/t1", decide, lambda done: done.after.total, cached=stale)) == 6


def transfer(unit: UnitOfWork, transfer_id: str, source: str, target: str, amount: int,
             crash_after_first=False) -> None:
    """A command spanning two aggregates: take from one tally, then give to the other, each
    step a single-aggregate append under a key derived from the transfer's id. Running it
    again after a crash finishes it, and never does a step twice."""
    def step(stream_id, by, key):
        def decide(tally, careful):
            return Decision([NewEvent("tally.added", {"by": by, "transfer": transfer_id})])
        idem = Idempotency(key, body_digest({"by": by, "transfer": transfer_id}))
        unit.run(Command(stream_id, decide, lambda done: None, idem=idem, replay=lambda receipt: None))

    step(source, -amount, f"transfer:{transfer_id}:out")
    if crash_after_first:
        raise RuntimeError("the process died between the two steps")
    step(target, amount, f"transfer:{transfer_id}:in")


def test_a_command_spanning_two_aggregates_heals_when_run_again(unit):
    add(unit, "tally/a", 9)
    with pytest.raises(RuntimeError):
        transfer(unit, "x1", "tally/a", "tally/b", 4, crash_after_first=True)
    transfer(unit, "x1", "tally/a", "tally/b", 4)     # the retry: the first step is a replay
    transfer(unit, "x1", "tally/a", "tally/b", 4)     # and once more: nothing changes
    store = unit.repository.store
    totals = {s: sum(e.data["by"] for e in store.read(s)) for s in ("tally/a", "tally/b")}
    assert totals == {"tally/a": 5, "tally/b": 4}
    assert [json.loads(json.dumps(e.data)) for e in store.read("tally/b")] == [{"by": 4, "transfer": "x1"}]
