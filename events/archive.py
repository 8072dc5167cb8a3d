"""The archive: finished games leave Redis for files at an fsspec URL and read back as before.

A game's archive file is its whole hot record — the stored events exactly as appended (body
and hash), its meta (status, seats' token hashes, the revealed seed, ...), its idempotency
records and its table chat (events/chat.py; only when it has one) — as canonical JSON,
gzipped, named by the SHA-256 of the file's bytes:

    <root>/<first two characters of the game id>/<game id>.<sha256 of the file>.json.gz

so a changed file no longer matches its own name, and the pointer Redis keeps for the game
(`game:{g:ID}:arch`, the digest) names exactly one content. Views are not stored: they are
derived again from the events, as for a live game.

`ArchivingStore` wraps the hot store (events/store.py) so that every read — head, events,
meta, idempotency records — of a game that is no longer in Redis is served from its archive
file, and nothing above the store can tell the difference. `move` and `restore` are the two
steps that change where a game lives; each is safe to repeat and to interrupt (see `move`).

fsspec is the maintained filesystem interface of the PyData world (dask, pandas, xarray): one
URL scheme for a local folder (`file://`), object storage (`s3://`, `gs://`, `az://` with
their packages installed) and memory (`memory://`, the tests).
"""

from __future__ import annotations

import gzip
import hashlib
import threading
import uuid
from collections import OrderedDict
from typing import Iterator, Optional

import fsspec

from .chat import ChatEntry, ChatPage, flags_of
from .envelope import GENESIS
from .store import EventStore, GameArchived, GameRecord, StoreError  # noqa: F401 (GameArchived: re-exported)


SUFFIX = ".json.gz"


class ArchiveError(StoreError):
    """The archive cannot give the game's record: its file is missing or fails its check."""


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def encode(record: GameRecord) -> bytes:
    """The file's bytes: the record's canonical JSON, gzipped (no timestamp, so the same
    record gives the same bytes)."""
    return gzip.compress(record.to_bytes(), compresslevel=9, mtime=0)


def decode(data: bytes) -> GameRecord:
    try:
        return GameRecord.from_bytes(gzip.decompress(data))
    except (OSError, EOFError, ValueError, KeyError, TypeError) as err:
        raise ArchiveError(f"not an archive record: {err}") from None


def checked_record(game_id: str, digest: str, data: bytes) -> GameRecord:
    """The record a file's bytes hold, checked against the name it is stored under."""
    if digest_of(data) != digest:
        raise ArchiveError(f"the archive file of {game_id} was changed: its SHA-256 is not {digest}")
    record = decode(data)
    if record.game_id != game_id:
        raise ArchiveError(f"the archive file of {game_id} holds another game ({record.game_id})")
    return record


class Archive:
    """Archive files at an fsspec URL (a local folder by default)."""

    def __init__(self, url: str):
        self.url = url
        self.fs, self.root = fsspec.core.url_to_fs(url)
        self.root = self.root.rstrip("/")

    def path(self, game_id: str, digest: str) -> str:
        return f"{self.root}/{game_id[:2]}/{game_id}.{digest}{SUFFIX}"

    def put(self, record: GameRecord) -> str:
        """Write the record (once: its name is its content) and read it back; its digest."""
        data = encode(record)
        digest = digest_of(data)
        path = self.path(record.game_id, digest)
        if not self._holds(path, digest):
            self.fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
            # Written beside, then moved into place: a crash mid-write leaves a temporary file,
            # never a partial file under the content's name (a rename on a local folder; an
            # object store's put is whole anyway).
            temporary = f"{path}.{uuid.uuid4().hex}.partial"
            self.fs.pipe_file(temporary, data)
            self.fs.mv(temporary, path)
            if not self._holds(path, digest):
                raise ArchiveError(f"the archive file of {record.game_id} did not read back as written")
        return digest

    def _holds(self, path: str, digest: str) -> bool:
        try:
            return digest_of(self.fs.cat_file(path)) == digest
        except FileNotFoundError:
            return False

    def get(self, game_id: str, digest: str) -> GameRecord:
        path = self.path(game_id, digest)
        try:
            data = self.fs.cat_file(path)
        except FileNotFoundError:
            raise ArchiveError(f"the archive file of {game_id} is missing") from None
        return checked_record(game_id, digest, data)

    def files(self) -> Iterator[tuple[str, str, str]]:
        """(game id, digest, path) of every archive file, in path order."""
        for path in sorted(self.fs.glob(f"{self.root}/*/*{SUFFIX}")):
            name = path.rsplit("/", 1)[1][:-len(SUFFIX)]
            game_id, _, digest = name.rpartition(".")
            if game_id and len(digest) == 64:
                yield game_id, digest, path

    def read_file(self, path: str) -> bytes:
        return self.fs.cat_file(path)


class ArchivingStore(EventStore):
    """The hot store, with the archive behind it for the games that have left it."""

    def __init__(self, hot: EventStore, archive: Archive, cache_size: int = 256):
        self.hot = hot
        self.archive = archive
        self.upcasters = hot.upcasters
        self._records: OrderedDict[str, tuple[str, GameRecord]] = OrderedDict()   # game -> (digest, record)
        self._cache_size = cache_size
        self._lock = threading.Lock()

    # The single-Redis shortcuts the core takes (one round trip for the touch and the append)
    @property
    def redis(self):
        return getattr(self.hot, "redis", None)

    @property
    def append_script(self):
        """The hot store's append script (readiness checks the server has it loaded)."""
        return self.hot.append_script

    @property
    def notifier(self):
        return self.hot.notifier

    def _make_notifier(self):
        return self.hot.notifier

    def record_of(self, game_id: str, fresh: bool = False) -> Optional[GameRecord]:
        """The archived record of a game that is not in the hot store (None: it is, or it
        was never archived). `fresh`: read and check its file again, whatever is cached."""
        digest = self.hot.archived_digest(game_id)
        if digest is None:       # the pointer and the hot keys never coexist (swap_out, swap_in)
            return None
        with self._lock:
            cached = self._records.get(game_id)
            if cached is not None and cached[0] == digest and not fresh:
                self._records.move_to_end(game_id)
                return cached[1]
        record = self.archive.get(game_id, digest)
        with self._lock:
            self._records[game_id] = (digest, record)
            while len(self._records) > self._cache_size:
                self._records.popitem(last=False)
        return record

    def forget(self, game_id: str) -> None:
        with self._lock:
            self._records.pop(game_id, None)

    # --- reads: the hot store's own call first (a live game costs what it did before); only
    # when it finds nothing, the pointer (one GET: it never coexists with a live game's keys) ---
    def head(self, game_id):
        version, head = self.hot.head(game_id)
        if version:
            return version, head
        return self._archived_head(game_id)

    def heads(self, game_ids):
        return {game_id: at if at[0] else self._archived_head(game_id)
                for game_id, at in self.hot.heads(game_ids).items()}

    def _archived_head(self, game_id) -> tuple[int, str]:
        record = self.record_of(game_id)
        return (record.version, record.head) if record else (0, GENESIS)

    def read_raw(self, game_id, after=0, until=None):
        raw = self.hot.read_raw(game_id, after, until)
        if raw:
            return raw
        record = self.record_of(game_id)
        return list(record.events[after:until]) if record else []

    def get_idempotent(self, game_id, idem_key):
        found = self.hot.get_idempotent(game_id, idem_key)
        if found is not None:
            return found
        record = self.record_of(game_id)
        return record.receipt(idem_key) if record else None

    def peek(self, game_id, idem_key):
        seen, version, head = self.hot.peek(game_id, idem_key)
        if version:
            return seen, version, head
        record = self.record_of(game_id)
        if record is None:
            return None, 0, GENESIS
        return record.receipt(idem_key), record.version, record.head

    def get_meta(self, game_id, *fields):
        found = self.hot.get_meta(game_id, *fields)
        if any(v is not None for v in found.values()):
            return found
        record = self.record_of(game_id)
        return {f: record.meta.get(f) for f in fields} if record else found

    def get_meta_prefixed(self, game_id, prefix):
        found = self.hot.get_meta_prefixed(game_id, prefix)
        if found:
            return found
        record = self.record_of(game_id)
        return {k: v for k, v in record.meta.items() if k.startswith(prefix)} if record else found

    def load_snapshot(self, game_id):
        return self.hot.load_snapshot(game_id)     # an archived game has none: its fold is short-lived

    def chat_page(self, game_id, after=0, limit=200):
        page = self.hot.chat_page(game_id, after, limit)
        if page.last:
            return page
        record = self.record_of(game_id)
        if record is None or not record.chat:
            return page
        entries = [ChatEntry.from_record(n, c) for n, c in enumerate(record.chat, start=1)]
        return ChatPage(entries[after:after + limit], flags_of(entries), len(entries))

    # --- writes: the hot store, which refuses (appends) or drops (side facts) a write to a game
    # that has left it, each in its own atomic step ----------------------------------------
    def _append(self, *args, **kwargs):  # pragma: no cover - append() below goes to the hot store
        raise NotImplementedError

    def append(self, game_id, events, **kwargs):
        return self.hot.append(game_id, events, **kwargs)

    def append_chat(self, game_id, body, **kwargs):
        return self.hot.append_chat(game_id, body, **kwargs)     # refused once the game is archived

    def set_meta(self, game_id, mapping):
        self.hot.set_meta(game_id, mapping)

    def save_snapshot(self, game_id, version, head, blob):
        self.hot.save_snapshot(game_id, version, head, blob)

    # --- the moves -------------------------------------------------------------------------
    def archived_digest(self, game_id):
        return self.hot.archived_digest(game_id)

    def swap_out(self, game_id, write):
        return self.hot.swap_out(game_id, write)

    def swap_in(self, game_id, record, digest):
        self.forget(game_id)
        return self.hot.swap_in(game_id, record, digest)
