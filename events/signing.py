"""Ed25519 signing keys, canonical JSON and signed objects (docs/audit.md, "Formats").

A signed object is the object with two more members: `key_id` (inside what is signed) and
`signature` = base64url(Ed25519(private key, canonical_bytes(object without `signature`))).
Receipts (`speculation-receipt/1`) carry their time in `time`, tree heads
(`speculation-sth/1`) in `timestamp`; a signature counts only when that time lies within the
validity of the key that made it, so a rotated-out key cannot vouch for anything newer.

Pure: no Redis, no Flask; files only in Keyring.load / save.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, replace
from typing import Any, Optional

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from events.envelope import canonical

ALGORITHM = "Ed25519"
KEY_FILE_FORMAT = "speculation-keys/1"
TIME_MEMBERS = ("time", "timestamp")   # a receipt's time, a tree head's
_JCS_INT_LIMIT = 2 ** 53               # JCS prints integers as IEEE doubles: exact below this


class SignatureError(ValueError):
    """A signed object that does not verify; the message says why."""


# --- canonical JSON ----------------------------------------------------------------------

def _check_jcs(obj: Any, where: str = "$") -> None:
    """Refuse what JCS would print differently from the envelope's encoder: floats, integers
    from 2^53 on, non-ASCII keys (JCS sorts keys by UTF-16 units, Python by code points)."""
    if obj is None or isinstance(obj, (bool, str)):
        return
    if isinstance(obj, int):
        if not -_JCS_INT_LIMIT < obj < _JCS_INT_LIMIT:
            raise ValueError(f"{where}: integer {obj} is not below 2^53 in magnitude")
        return
    if isinstance(obj, (list, tuple)):
        for index, item in enumerate(obj):
            _check_jcs(item, f"{where}[{index}]")
        return
    if isinstance(obj, dict):
        for key, value in obj.items():
            if not isinstance(key, str) or not key.isascii():
                raise ValueError(f"{where}: key {key!r} is not an ASCII string")
            _check_jcs(value, f"{where}.{key}")
        return
    raise ValueError(f"{where}: {type(obj).__name__} has no canonical form (only str, int, bool, None, list, dict)")


def canonical_bytes(obj: Any) -> bytes:
    """RFC 8785 (JCS) bytes of `obj`: for str/int/bool/None/list/dict with ASCII keys this is
    exactly the envelope's canonical form (sorted keys, no whitespace, UTF-8)."""
    _check_jcs(obj)
    return canonical(obj).encode("utf-8")   # a lone surrogate raises UnicodeEncodeError, a ValueError


# --- small encodings ---------------------------------------------------------------------

def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def unb64url(text: str) -> bytes:
    """Strict: only the alphabet, no padding, and the one text that encodes the bytes (the
    decoder alone would ignore stray characters and the unused bits of the last one, so
    another text of the same signature would pass for it)."""
    if not isinstance(text, str) or not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not base64url without padding")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64url(data) != text:
        raise ValueError("not the canonical base64url of its bytes")
    return data


def key_id(public_raw: bytes) -> str:
    """The first 8 bytes of SHA-256 of the raw 32-byte public key, in hex."""
    return hashlib.sha256(public_raw).digest()[:8].hex()


def _public_raw(private_raw: bytes) -> bytes:
    return Ed25519PrivateKey.from_private_bytes(private_raw).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def object_time(obj: dict) -> Optional[int]:
    """The time a signed object speaks for (`time`, else `timestamp`), or None."""
    for name in TIME_MEMBERS:
        if name in obj:
            return obj[name]
    return None


# --- keys --------------------------------------------------------------------------------

@dataclass(frozen=True)
class SigningKey:
    key_id: str
    private_raw: bytes
    public_raw: bytes
    valid_from: int                 # ms
    valid_until: Optional[int]      # ms; None: the current key

    @classmethod
    def generate(cls, now_ms: int) -> "SigningKey":
        private_raw = Ed25519PrivateKey.generate().private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        return cls.from_private(private_raw, now_ms, None)

    @classmethod
    def from_private(cls, private_raw: bytes, valid_from: int, valid_until: Optional[int]) -> "SigningKey":
        if len(private_raw) != 32:
            raise ValueError("an Ed25519 private key is 32 bytes")
        public_raw = _public_raw(private_raw)
        return cls(key_id(public_raw), private_raw, public_raw, valid_from, valid_until)

    def valid_at(self, ms: int) -> bool:
        return self.valid_from <= ms and (self.valid_until is None or ms <= self.valid_until)

    def public_entry(self) -> dict:
        """This key as GET /v1/keys lists it."""
        return {"key_id": self.key_id, "algorithm": ALGORITHM, "public_key": b64url(self.public_raw),
                "valid_from": self.valid_from, "valid_until": self.valid_until}


class Keyring:
    """The service's signing keys, oldest first, newest (the current one) last.

    Keeps every ended key's private half too: a receipt is regenerated from the log (an
    idempotent retry, a dispute bundle) and must come out byte-identical, so it is signed
    by the key that was valid at its time, not by whatever key is current now.
    """

    def __init__(self, keys: list[SigningKey]):
        keys = sorted(keys, key=lambda k: k.valid_from)
        if not keys:
            raise ValueError("a keyring needs at least one key")
        current = [k for k in keys if k.valid_until is None]
        if len(current) != 1 or current[0] is not keys[-1]:
            raise ValueError("a keyring has exactly one current key (valid_until null), its newest")
        if len({k.key_id for k in keys}) != len(keys):
            raise ValueError("a keyring holds each key once")
        self._keys = tuple(keys)
        self._signers = {k.key_id: Ed25519PrivateKey.from_private_bytes(k.private_raw) for k in keys}
        self._public = [k.public_entry() for k in reversed(keys)]

    @property
    def keys(self) -> tuple[SigningKey, ...]:
        return self._keys

    @property
    def current(self) -> SigningKey:
        return self._keys[-1]

    def key_at(self, ms: Optional[int]) -> SigningKey:
        """The newest key valid at `ms` (None, or a time before every key: the current one,
        whose signature then fails the validity check, as it should)."""
        if ms is not None:
            for key in reversed(self._keys):
                if key.valid_at(ms):
                    return key
        return self.current

    def sign(self, obj: dict) -> dict:
        """A copy of `obj` with `key_id` and `signature` (any old ones replaced), signed by
        the key valid at the object's time (`time` / `timestamp`; the current key if none)."""
        key = self.key_at(object_time(obj))
        unsigned = {name: value for name, value in obj.items() if name != "signature"}
        unsigned["key_id"] = key.key_id
        signature = self._signers[key.key_id].sign(canonical_bytes(unsigned))
        unsigned["signature"] = b64url(signature)
        return unsigned

    def public_keys(self) -> list[dict]:
        """GET /v1/keys's list: newest first."""
        return [dict(entry) for entry in self._public]

    def rotate(self, now_ms: int) -> "Keyring":
        """A new keyring: the current key ends at `now_ms` and a new one starts there. (The
        operator's rotation passes a moment a few seconds ahead, so that every running
        process has read the new key file before the new key takes over.)"""
        if now_ms < self.current.valid_from:
            raise ValueError("a rotation cannot end the current key before it began")
        ended = replace(self.current, valid_until=now_ms)
        return Keyring([*self._keys[:-1], ended, SigningKey.generate(now_ms)])

    @classmethod
    def ephemeral(cls, now_ms: int) -> "Keyring":
        """One fresh key held in memory only: for tests and an app given no key file."""
        return cls([SigningKey.generate(now_ms)])

    # --- the key file --------------------------------------------------------------------

    def to_json(self) -> dict:
        return {"format": KEY_FILE_FORMAT,
                "keys": [{"key_id": k.key_id, "private_key": b64url(k.private_raw),
                          "valid_from": k.valid_from, "valid_until": k.valid_until} for k in self._keys]}

    @classmethod
    def from_json(cls, obj: dict) -> "Keyring":
        if not isinstance(obj, dict) or obj.get("format") != KEY_FILE_FORMAT:
            raise ValueError(f"not a key file of format {KEY_FILE_FORMAT}")
        keys = []
        for entry in obj.get("keys") or []:
            key = SigningKey.from_private(unb64url(entry["private_key"]), int(entry["valid_from"]),
                                          None if entry.get("valid_until") is None else int(entry["valid_until"]))
            if entry.get("key_id") not in (None, key.key_id):
                raise ValueError(f"key file: key_id {entry.get('key_id')} does not match its private key")
            keys.append(key)
        return cls(keys)

    @classmethod
    def load(cls, path: str) -> "Keyring":
        with open(path, encoding="utf-8") as handle:
            return cls.from_json(json.load(handle))

    def save(self, path: str) -> None:
        """Write the key file atomically (a temporary file beside it, mode 0600, renamed)."""
        _write_private(path, self._file_bytes(), replace_existing=True)

    def _file_bytes(self) -> bytes:
        return (json.dumps(self.to_json(), indent=1) + "\n").encode("utf-8")

    @classmethod
    def load_or_create(cls, path: str, now_ms: int) -> "Keyring":
        """The key file's keyring; a new one-key file (0600) when there is none. Processes
        starting together agree: the file is created by a hard link, which never replaces,
        so the one that loses the race reads the winner's."""
        try:
            return cls.load(path)
        except FileNotFoundError:
            pass
        fresh = cls.ephemeral(now_ms)
        if _write_private(path, fresh._file_bytes(), replace_existing=False):
            return fresh
        return cls.load(path)


def _keep_owner(fd: int, path: str) -> None:
    """A replaced key file keeps its owner (root rotating the service user's keys must not
    leave a file the service cannot read); without the right to, the writer owns it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except PermissionError:
        pass


def _write_private(path: str, data: bytes, *, replace_existing: bool) -> bool:
    """Write `data` to `path` whole or not at all, readable by its owner only. Without
    `replace_existing`, False (and nothing written) when `path` already exists."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".keys-", dir=folder)   # mkstemp creates it 0600
    try:
        os.fchmod(fd, 0o600)
        if replace_existing:
            _keep_owner(fd, path)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if replace_existing:
            os.replace(tmp, path)
            return True
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


# --- verification ------------------------------------------------------------------------

def verify_signed(obj: dict, keys: list[dict]) -> None:
    """Raise SignatureError unless `obj` is signed by one of `keys` (GET /v1/keys's list)
    and its time (`time` or `timestamp`, when it has one) lies in that key's validity."""
    if not isinstance(obj, dict):
        raise SignatureError("a signed object is a JSON object")
    kid, signature = obj.get("key_id"), obj.get("signature")
    if not isinstance(kid, str) or not isinstance(signature, str):
        raise SignatureError("the object has no key_id and signature")
    entry = next((k for k in keys if isinstance(k, dict) and k.get("key_id") == kid), None)
    if entry is None:
        raise SignatureError(f"key {kid} is not among the trusted keys")
    if entry.get("algorithm", ALGORITHM) != ALGORITHM:
        raise SignatureError(f"key {kid}: algorithm {entry.get('algorithm')!r} is not {ALGORITHM}")
    try:
        public_raw = unb64url(entry["public_key"])
        if key_id(public_raw) != kid:
            raise SignatureError(f"key {kid}: its public key does not hash to its key_id")
        public = Ed25519PublicKey.from_public_bytes(public_raw)
        raw_signature = unb64url(signature)
        message = canonical_bytes({name: value for name, value in obj.items() if name != "signature"})
    except SignatureError:
        raise
    except (KeyError, TypeError, ValueError) as error:
        raise SignatureError(f"key {kid}: cannot check the signature ({error})") from None
    try:
        public.verify(raw_signature, message)
    except InvalidSignature:
        raise SignatureError(f"the signature does not verify with key {kid}") from None
    when = object_time(obj)
    if any(name in obj for name in TIME_MEMBERS):
        if not isinstance(when, int) or isinstance(when, bool):
            raise SignatureError("the object's time is not an integer")
        valid_from, valid_until = entry.get("valid_from"), entry.get("valid_until")
        if not isinstance(valid_from, int) or when < valid_from or (valid_until is not None and when > valid_until):
            raise SignatureError(f"time {when} lies outside key {kid}'s validity [{valid_from}, {valid_until}]")
