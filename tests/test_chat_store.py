"""The table chat's log (events/chat.py), on every store: in memory, fakeredis and a real
redis-server. Appends and pages, the flags entries set, the per-author rate, the cap, the
idempotency key, a refusal that changes nothing, and the chat moving to the archive with its
game (outside the game's hash chain: the events, their hashes and the head never change)."""

import json
import os

import pytest

from events.archive import Archive, ArchivingStore
from events.chat import ChatRefused, Rate, chat_keys
from events.envelope import NewEvent
from events.store import GameRecord, MemoryEventStore

pytestmark = pytest.mark.quick

T0 = 1_700_000_000_000


def game(store, game_id="g1", events=2):
    version, head = store.head(game_id)
    store.append(game_id, [NewEvent(type="thing.happened", data={"n": n}) for n in range(events)],
                 base_version=version, base_head=head)
    return game_id


def say(store, text, at=T0, **kw):
    return store.append_chat("g1", json.dumps({"text": text}), at=at, **kw)


class TestChatLogContract:
    def test_entries_are_numbered_in_order_with_the_game_s_version_and_time(self, store):
        game(store)
        first, replayed = say(store, "hello", author="seat:0")
        second, _ = say(store, "again", at=T0 + 5, author="seat:1")
        assert (first.id, first.version, first.at, replayed) == (1, 2, T0, False)
        assert (second.id, json.loads(second.body)) == (2, {"text": "again"})
        game(store, events=1)
        third, _ = say(store, "later")
        assert third.version == 3                     # the game's version when it was said
        page = store.chat_page("g1")
        assert [e.id for e in page.entries] == [1, 2, 3] and page.last == 3 and page.flags == {}
        assert [e.id for e in store.chat_page("g1", after=1, limit=1).entries] == [2]
        assert store.chat_page("g1", after=3).entries == [] and store.chat_page("g1", after=3).last == 3
        assert store.head("g1")[0] == 3                # the game's own log is untouched

    def test_a_game_that_does_not_exist_takes_no_chat(self, store):
        with pytest.raises(ChatRefused) as refused:
            say(store, "anyone?")
        assert refused.value.reason == "missing"
        assert store.chat_page("g1").last == 0

    def test_flags_are_set_and_cleared_by_their_entries(self, store):
        game(store)
        say(store, "mute", flag="mute:0:1", on=True)
        say(store, "mute", flag="mute:0:2", on=True)
        say(store, "unmute", flag="mute:0:1", on=False)
        page = store.chat_page("g1")
        assert page.flags == {"mute:0:2": True}
        assert [(e.flag, e.on) for e in page.entries] == [("mute:0:1", True), ("mute:0:2", True), ("mute:0:1", False)]

    def test_an_author_past_its_rate_is_refused_until_its_oldest_entry_leaves_the_window(self, store):
        game(store)
        rate = Rate(3, 10_000)
        for n in range(3):
            say(store, f"m{n}", at=T0 + n * 1000, author="seat:0", rate=rate)
        with pytest.raises(ChatRefused) as refused:
            say(store, "flood", at=T0 + 4000, author="seat:0", rate=rate)
        assert refused.value.reason == "rate" and refused.value.retry_after_ms == 6000
        say(store, "other author", at=T0 + 4000, author="seat:1", rate=rate)   # its own window
        assert store.chat_page("g1").last == 4
        entry, _ = say(store, "in time", at=T0 + 10_001, author="seat:0", rate=rate)
        assert entry.id == 5

    def test_the_cap_refuses_every_entry_past_it_and_changes_nothing(self, store):
        game(store)
        for n in range(4):
            say(store, f"m{n}", cap=4)
        with pytest.raises(ChatRefused) as refused:
            say(store, "one more", cap=4, author="seat:0", rate=Rate(5, 10_000))
        assert (refused.value.reason, refused.value.count) == ("full", 4)
        assert store.chat_page("g1").last == 4
        say(store, "past the cap, uncapped")              # a removal by the operator: no cap
        assert store.chat_page("g1").last == 5

    def test_a_retry_with_its_key_is_answered_with_the_original_entry(self, store):
        game(store)
        first, _ = say(store, "once", author="seat:0", idempotency_key="k-1")
        again, replayed = say(store, "once", at=T0 + 50, author="seat:0", idempotency_key="k-1")
        assert replayed and again == first and store.chat_page("g1").last == 1
        with pytest.raises(ChatRefused) as refused:
            say(store, "another body", author="seat:0", idempotency_key="k-1")
        assert refused.value.reason == "idempotency"
        other, replayed = say(store, "once", author="seat:1", idempotency_key="k-1")   # a key is the author's own
        assert not replayed and other.id == 2


@pytest.fixture
def archive():
    archive = Archive(f"memory://chat-archive-{os.urandom(6).hex()}")
    yield archive
    if archive.fs.exists(archive.root):
        archive.fs.rm(archive.root, recursive=True)


def chat_hot_keys(store, game_id):
    if isinstance(store, MemoryEventStore):
        return [game_id] if game_id in store._chats() else []
    return [key for key in chat_keys(game_id).values() if store.redis.exists(key)]


class TestChatGoesToTheArchiveWithItsGame:
    def test_the_chat_leaves_with_the_game_reads_back_and_comes_back(self, store, archive):
        game(store)
        say(store, "gg", author="seat:0", idempotency_key="k-1", rate=Rate(5, 10_000))
        say(store, "mute", flag="mute:1:0", on=True)
        before_events, before_page = store.read_raw("g1"), store.chat_page("g1")
        digest = store.swap_out("g1", archive.put)
        assert digest and chat_hot_keys(store, "g1") == []
        record = archive.get("g1", digest)
        assert len(record.chat) == 2 and record.events == tuple(before_events)
        cold = ArchivingStore(store, archive)
        assert cold.chat_page("g1") == before_page
        assert cold.chat_page("g1", after=1).entries == before_page.entries[1:]
        with pytest.raises(ChatRefused) as refused:
            cold.append_chat("g1", json.dumps({"text": "late"}), at=T0)
        assert refused.value.reason == "archived" and chat_hot_keys(store, "g1") == []
        assert store.swap_in("g1", record, digest)
        assert store.chat_page("g1") == before_page and store.read_raw("g1") == before_events
        entry, _ = say(store, "back", at=T0 + 20_000)
        assert entry.id == 3

    def test_a_game_that_chats_while_it_is_written_stays(self, store, archive):
        game(store)

        def write_while_someone_chats(record):
            say(store, "still here")
            return archive.put(record)

        assert store.swap_out("g1", write_while_someone_chats) is None
        assert store.chat_page("g1").last == 1 and store.archived_digest("g1") is None

    def test_a_record_without_chat_keeps_its_bytes(self):
        plain = GameRecord("g1", (("{}", "ab" * 32),), {"version": "1"}, {})
        assert b"chat" not in plain.to_bytes() and GameRecord.from_bytes(plain.to_bytes()) == plain
        chatty = GameRecord("g1", plain.events, plain.meta, {}, ({"e": "{}", "v": 1, "at": T0},))
        assert GameRecord.from_bytes(chatty.to_bytes()) == chatty
