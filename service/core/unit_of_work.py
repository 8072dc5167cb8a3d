"""One unit of work for every command, over any kind of aggregate.

A command is a few lines over it: say which stream, which idempotency key, how to decide on
the aggregate as loaded and how to answer. The unit of work does the rest, the same way for
every command and every aggregate:

    1. peek the idempotency key and the stream's head in one round trip: a key already used
       answers the retry with its original outcome (`replay`), or is a conflict when the
       body differs;
    2. load the aggregate at that head through its repository and `decide`: the events to
       append (a `Decision`) or an answer that needs no write (`Answer`);
    3. append with the expected version and the head the decision was made on; when another
       command moved the head first, go back to 1 (at most MAX_HEAD_RETRIES times);
    4. run the repository's follow-ups (projections, jobs), then `answer`.

An aggregate is one stream under one hash tag (events/store.py `keys`), so every append is
a single-key write. A command spanning aggregates is a chain of these, each with an
idempotency key derived from the step before, so a crash at any step is healed by running
the chain again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Optional, Protocol, TypeVar

from events.envelope import NewEvent
from events.store import IdempotencyConflict, Receipt, VersionConflict

from .errors import IDEMPOTENCY_KEY, Conflict

MAX_HEAD_RETRIES = 20

Aggregate = TypeVar("Aggregate")
Result = TypeVar("Result")


@dataclass(frozen=True)
class Decision:
    """What a command appends: its events, and the version the client expected (None: any;
    the head the decision was made on is always checked)."""

    events: list[NewEvent]
    expected_version: Optional[int] = None
    meta: Any = field(default_factory=dict)   # fields written with the batch (see EventStore.append)


@dataclass(frozen=True)
class Answer:
    """A command that needs no write (the game is already scored, say): its answer."""

    value: Any


class Retry:
    """A decision made on a stale cached aggregate refused: decide again on a fresh load."""


RETRY = Retry()


@dataclass(frozen=True)
class Appended(Generic[Aggregate]):
    receipt: Receipt
    before: Aggregate          # the aggregate the decision was made on
    after: Aggregate           # the aggregate after the batch
    stored: list               # the batch's events as stored


@dataclass(frozen=True)
class Idempotency:
    """The key a command is recorded under in its stream's idempotency hash, and the digest
    of its body (a retry with another body is a conflict)."""

    key: str
    digest: str


class Repository(Protocol[Aggregate]):
    """How the unit of work reaches one kind of aggregate (a game today)."""

    def peek(self, stream_id: str, idem_key: str) -> tuple[Optional[tuple[str, Receipt]], int, str]: ...
    def head(self, stream_id: str) -> tuple[int, str]: ...
    def load(self, stream_id: str, at: tuple[int, str]) -> Aggregate: ...
    def empty(self, stream_id: str) -> Aggregate: ...
    def append(self, aggregate: Aggregate, decision: Decision,
               idem: Optional[Idempotency]) -> tuple[Receipt, Aggregate, list]: ...
    def follow_up(self, after: Aggregate) -> None: ...


@dataclass
class Command(Generic[Aggregate, Result]):
    """One command: its stream, how it decides, how it answers, how a retry is answered.

    - `decide(aggregate, careful)`: a Decision, an Answer, or RETRY (only when not careful:
      the aggregate was a cached copy and may be stale);
    - `answer(appended)`: the result once the batch is appended and the follow-ups ran;
    - `replay(receipt)`: the original result of an idempotent retry;
    - `new`: the stream must not exist yet (a creation): it decides on `repository.empty`;
      `unseen`: its id is the request's own, so no earlier request can have used its key;
    - `cached`: an aggregate to try first without reading the head (the fast path);
    - `version_conflict(err)`: the error when the expected version was not the stream's."""

    stream_id: str
    decide: Callable[[Aggregate, bool], Any]
    answer: Callable[[Appended], Result]
    idem: Optional[Idempotency] = None
    replay: Optional[Callable[[Receipt], Result]] = None
    new: bool = False
    cached: Optional[Aggregate] = None
    version_conflict: Optional[Callable[[VersionConflict], Exception]] = None
    unseen: bool = False   # a new stream this request named itself (a random id): nothing to peek first


def idempotency_conflict(version: int) -> Conflict:
    return Conflict(f"{IDEMPOTENCY_KEY}: this key was already used with another body",
                    {"field": IDEMPOTENCY_KEY, "version": version}, code="idempotency_conflict")


def expected_version_conflict(err: VersionConflict) -> Conflict:
    return Conflict(f"expected_version: the stream is at version {err.current_version}",
                    {"field": "expected_version", "version": err.current_version}, code="version_conflict")


class UnitOfWork(Generic[Aggregate]):
    def __init__(self, repository: Repository[Aggregate]):
        self.repository = repository

    def run(self, command: Command[Aggregate, Result]) -> Result:
        if command.cached is not None:
            done = self._attempt(command, command.cached, careful=False)
            if done is not RETRY:
                return done
        version = 0
        for _ in range(MAX_HEAD_RETRIES):
            seen, version, head = self._peek(command)
            if seen is not None:
                return self._replay(command, seen)
            aggregate = (self.repository.empty(command.stream_id) if command.new
                         else self.repository.load(command.stream_id, (version, head)))
            done = self._attempt(command, aggregate, careful=True)
            if done is not RETRY:
                return done
        raise Conflict("the stream is too busy now; retry", {"version": version}, code="version_conflict")

    def _peek(self, command: Command) -> tuple[Optional[tuple[str, Receipt]], int, str]:
        if command.new and (command.unseen or command.idem is None):
            return None, 0, ""   # the append's expected version 0 is the check: no read first
        if command.idem is not None:
            return self.repository.peek(command.stream_id, command.idem.key)
        return (None, *self.repository.head(command.stream_id))

    def _attempt(self, command: Command, aggregate, careful: bool):
        decided = command.decide(aggregate, careful)
        if decided is RETRY:
            if careful:
                raise RuntimeError("a careful decision cannot ask to retry")
            return RETRY
        if isinstance(decided, Answer):
            return decided.value
        try:
            receipt, after, stored = self.repository.append(aggregate, decided, command.idem)
        except IdempotencyConflict as err:
            raise idempotency_conflict(err.current_version) from None
        except VersionConflict as err:
            if err.reason == "head" or decided.expected_version is None:
                return RETRY   # another command appended first: decide again on the new head
            raise (command.version_conflict or expected_version_conflict)(err) from None
        if receipt.duplicate:   # a concurrent retry with the same key appended first
            return self._replay(command, (command.idem.digest, receipt))
        self.repository.follow_up(after)
        return command.answer(Appended(receipt, aggregate, after, stored))

    def _replay(self, command: Command, seen: tuple[str, Receipt]):
        digest, receipt = seen
        if command.idem is None or digest != command.idem.digest or command.replay is None:
            raise idempotency_conflict(self.repository.head(command.stream_id)[0])
        return command.replay(receipt)
