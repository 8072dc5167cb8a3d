"""Account credentials: their form, their hash, and who presents one.

A credential is `spa_<account id>_<secret>` (a personal token) or `sps_<account id>_<secret>`
(a session), the secret 256 random bits. The account id in the clear is what makes a lookup
one read of that account's own record (its meta field `tok:<sha256 of the credential>`,
written atomically with the grant or revocation event): no shared token directory, no hot
key, and a Redis Cluster finds it in the account's slot. Only the hash is ever stored.

Authentication is cached per process for at most `CACHE_SECONDS`, so a revocation decided in
any process is honoured by every process within that time (the revoking process drops it at
once).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Optional

PERSONAL_PREFIX, SESSION_PREFIX = "spa_", "sps_"
CACHE_SECONDS = 0.9
CACHE_SIZE = 50_000
_FORM = re.compile(r"^sp[as]_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$")


@dataclass(frozen=True)
class Principal:
    """Who a request is: an account, through one of its credentials."""

    account_id: str
    token_id: str
    token_hash: str
    kind: str                 # "session" or "personal"
    scopes: tuple[str, ...]
    via_cookie: bool = False

    @property
    def stream_id(self) -> str:
        return f"account/{self.account_id}"


def is_account_credential(text: Optional[str]) -> bool:
    return bool(text) and text.startswith((PERSONAL_PREFIX, SESSION_PREFIX))


def account_of(credential: str) -> Optional[str]:
    """The account id a well-formed credential names (None: not one of ours)."""
    found = _FORM.match(credential)
    return found.group(1) if found else None


def new_credential(account_id: str, kind: str) -> str:
    prefix = SESSION_PREFIX if kind == "session" else PERSONAL_PREFIX
    return f"{prefix}{account_id}_{secrets.token_urlsafe(32)}"


def credential_hash(credential: str) -> str:
    return hashlib.sha256(credential.encode()).hexdigest()


def token_id_of(digest: str) -> str:
    """A credential's public id: a prefix of its hash (names it in lists and revocations)."""
    return digest[:16]


def recovery_code_hash(account_id: str, code: str) -> str:
    normalised = code.strip().lower().replace("-", "").replace(" ", "")
    return hashlib.sha256(f"recovery\0{account_id}\0{normalised}".encode()).hexdigest()


def new_recovery_codes(count: int = 10) -> list[str]:
    """Codes of 16 base-32 characters (80 bits) in four groups: easy to copy, never guessed."""
    alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
    out = []
    for _ in range(count):
        raw = "".join(secrets.choice(alphabet) for _ in range(16))
        out.append("-".join(raw[i:i + 4] for i in range(0, 16, 4)))
    return out


def keyed(secret: bytes, *parts: str) -> str:
    return hmac.new(secret, "\0".join(parts).encode(), hashlib.sha256).hexdigest()


REVOKED_CHANNEL = "credentials:revoked"


class RevocationBroadcast:
    """Revocations told to every process: the revoking one publishes the account's id, each
    process listens (one subscription, started on its first authentication) and forgets that
    account's cached credentials at once. A message lost (the listener reconnecting) costs at
    most the cache's lifetime: on every (re)subscription the whole cache is dropped."""

    def __init__(self, client, cache: "CredentialCache"):
        self.redis = client
        self.cache = cache
        self._started = False
        self._lock = threading.Lock()

    def tell(self, account_id: str) -> None:
        try:
            self.redis.publish(REVOKED_CHANNEL, account_id)
        except Exception:   # the other processes' caches lapse within CACHE_SECONDS anyway
            pass

    def listen(self) -> None:
        if self._started:
            return
        with self._lock:
            if self._started:
                return
            self._started = True
        import weakref

        threading.Thread(target=_listen, args=(weakref.ref(self),), daemon=True, name="revocations").start()


def _listen(ref) -> None:
    while True:
        owner = ref()
        if owner is None:
            return
        pubsub = owner.redis.pubsub(ignore_subscribe_messages=True)
        try:
            pubsub.subscribe(REVOKED_CHANNEL)
            owner.cache.clear()   # whatever was revoked while nobody listened
            del owner
            while True:
                message = pubsub.get_message(timeout=1.0)
                owner = ref()
                if owner is None:
                    return
                if message and message.get("type") == "message":
                    data = message["data"]
                    owner.cache.drop_account(data.decode() if isinstance(data, bytes) else str(data))
                del owner
        except Exception:
            time.sleep(1.0)
        finally:
            try:
                pubsub.close()
            except Exception:
                pass


class CredentialCache:
    """Principals recently authenticated in this process, each for at most CACHE_SECONDS."""

    def __init__(self, seconds: float = CACHE_SECONDS):
        self.seconds = seconds
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[float, Principal]] = {}

    def get(self, digest: str) -> Optional[Principal]:
        found = self._entries.get(digest)
        if found is None or found[0] < time.monotonic():
            return None
        return found[1]

    def put(self, digest: str, principal: Principal) -> None:
        with self._lock:
            if len(self._entries) >= CACHE_SIZE:
                now = time.monotonic()
                self._entries = {k: v for k, v in self._entries.items() if v[0] >= now}
                if len(self._entries) >= CACHE_SIZE:
                    self._entries.clear()
            self._entries[digest] = (time.monotonic() + self.seconds, principal)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def drop_account(self, account_id: str, token_ids=None) -> None:
        """Forget the account's credentials: those of `token_ids`, or all (None)."""
        with self._lock:
            for digest, (_, principal) in list(self._entries.items()):
                if principal.account_id == account_id and (token_ids is None or principal.token_id in token_ids):
                    del self._entries[digest]
