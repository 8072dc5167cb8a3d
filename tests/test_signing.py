"""events/signing.py: canonical JSON (RFC 8785), Ed25519 signed objects, the keyring and its file."""

from __future__ import annotations

import json
import os
import stat

import pytest

from events.signing import (Keyring, SignatureError, SigningKey, b64url, canonical_bytes, key_id, unb64url,
                            verify_signed)

pytestmark = pytest.mark.quick

T0 = 1_796_380_000_000


def receipt(**changes) -> dict:
    base = {"format": "speculation-receipt/1", "game": "g-abc", "first_version": 3, "version": 4,
            "head": "ab" * 32, "time": T0 + 5_000, "include_by": T0 + 15_000}
    base.update(changes)
    return base


# --- canonical JSON ----------------------------------------------------------------------

@pytest.mark.parametrize("obj, expected", [
    ({"b": 2, "a": 1}, b'{"a":1,"b":2}'),
    # RFC 8785 section 3.2.2.2's string example: short escapes, \u00xx lower case, "/" and the euro sign as is
    ({"string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"/"},
     b'{"string":"\xe2\x82\xac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'),
    ({"z": {"b": [], "a": {}}, "A": -9007199254740991, "n": None, "t": True, "f": False},
     b'{"A":-9007199254740991,"f":false,"n":null,"t":true,"z":{"a":{},"b":[]}}'),
    ({"s": "\x01\x7f\t\U0001F600\u00e9", "l": [0, "x", [None]]},
     b'{"l":[0,"x",[null]],"s":"\\u0001\x7f\\t\xf0\x9f\x98\x80\xc3\xa9"}'),
])
def test_canonical_bytes_matches_jcs(obj, expected):
    assert canonical_bytes(obj) == expected


@pytest.mark.parametrize("bad", [{"x": 1.5}, {"x": 1.0}, [2 ** 53], {"x": -(2 ** 53)}, {"\u00e9": 1}, {1: 2},
                                 {"x": b"bytes"}, {"x": "\ud800"}])
def test_canonical_bytes_refuses_what_jcs_would_print_otherwise(bad):
    with pytest.raises(ValueError):
        canonical_bytes(bad)


def test_b64url_and_key_id():
    assert b64url(b"\xfb\xff") == "-_8"
    assert unb64url("-_8") == b"\xfb\xff"
    for bad in ("-_8=", "AB", "A", "A A", "-_8+", "-_8/"):   # padding, unused bits set, a lone char, not the alphabet
        with pytest.raises(ValueError):
            unb64url(bad)
    assert unb64url("AA") == b"\x00" and unb64url("") == b""
    key = SigningKey.generate(T0)
    assert len(key.public_raw) == 32 and len(key.key_id) == 16
    assert key.key_id == key_id(key.public_raw)
    assert key_id(bytes(32)) == "66687aadf862bd77"   # sha256 of 32 zero bytes, first 8 bytes


# --- signing and verifying -----------------------------------------------------------------

def test_sign_verify_round_trip():
    ring = Keyring.ephemeral(T0)
    signed = ring.sign(receipt())
    assert signed["key_id"] == ring.current.key_id
    assert set(signed) == set(receipt()) | {"key_id", "signature"}
    verify_signed(signed, ring.public_keys())
    verify_signed(json.loads(json.dumps(signed)), ring.public_keys())   # survives a JSON round trip
    assert ring.sign(receipt()) == signed                               # Ed25519 is deterministic
    listed = ring.public_keys()
    assert listed == [{"key_id": ring.current.key_id, "algorithm": "Ed25519",
                       "public_key": b64url(ring.current.public_raw), "valid_from": T0, "valid_until": None}]


def test_a_tree_head_is_checked_by_its_timestamp():
    ring = Keyring.ephemeral(T0)
    head = ring.sign({"format": "speculation-sth/1", "tree_size": 3, "root_hash": "00" * 32, "timestamp": T0 + 1})
    verify_signed(head, ring.public_keys())
    with pytest.raises(SignatureError, match="validity"):
        verify_signed(ring.sign({**head, "timestamp": T0 - 1}), ring.public_keys())


def _altered(value):
    if isinstance(value, bool) or value is None:
        return "x"
    if isinstance(value, int):
        return value + 1
    return value[:-1] + ("0" if value[-1] != "0" else "1")


@pytest.mark.parametrize("member", ["format", "game", "first_version", "version", "head", "time", "include_by",
                                    "key_id", "signature"])
def test_a_changed_member_fails(member):
    ring = Keyring.ephemeral(T0)
    signed = ring.sign(receipt())
    with pytest.raises(SignatureError):
        verify_signed({**signed, member: _altered(signed[member])}, ring.public_keys())


def test_every_flipped_byte_of_the_signature_fails():
    ring = Keyring.ephemeral(T0)
    signed = ring.sign(receipt())
    raw = unb64url(signed["signature"])
    for index in range(len(raw)):
        flipped = raw[:index] + bytes([raw[index] ^ 0x01]) + raw[index + 1:]
        with pytest.raises(SignatureError):
            verify_signed({**signed, "signature": b64url(flipped)}, ring.public_keys())


def test_added_or_removed_member_fails():
    ring = Keyring.ephemeral(T0)
    signed = ring.sign(receipt())
    with pytest.raises(SignatureError):
        verify_signed({**signed, "seed_commitment": "00" * 32}, ring.public_keys())
    without = dict(signed)
    del without["include_by"]
    with pytest.raises(SignatureError):
        verify_signed(without, ring.public_keys())
    with pytest.raises(SignatureError, match="no key_id"):
        verify_signed(receipt(), ring.public_keys())


def test_unknown_key_fails():
    ring, other = Keyring.ephemeral(T0), Keyring.ephemeral(T0)
    signed = ring.sign(receipt())
    with pytest.raises(SignatureError, match="not among"):
        verify_signed(signed, other.public_keys())
    # the right key_id listed with another key's public half
    forged = [{**other.public_keys()[0], "key_id": ring.current.key_id}]
    with pytest.raises(SignatureError):
        verify_signed(signed, forged)


def test_outside_validity_fails():
    ring = Keyring.ephemeral(T0)
    with pytest.raises(SignatureError, match="validity"):
        verify_signed(ring.sign(receipt(time=T0 - 1)), ring.public_keys())
    rotated = ring.rotate(T0 + 10_000)
    old_key = rotated.keys[0]
    # an object of a time after the old key ended, signed with it, fails
    late = Keyring([SigningKey.from_private(old_key.private_raw, T0, None)]).sign(receipt(time=T0 + 10_001))
    with pytest.raises(SignatureError, match="validity"):
        verify_signed(late, rotated.public_keys())


def test_rotation_keeps_old_signatures_verifying():
    ring = Keyring.ephemeral(T0)
    old = ring.sign(receipt())
    rotated = ring.rotate(T0 + 10_000)
    assert rotated.current.key_id != ring.current.key_id
    keys = rotated.public_keys()
    assert [k["key_id"] for k in keys] == [rotated.current.key_id, ring.current.key_id]   # newest first
    assert keys[0]["valid_from"] == T0 + 10_000 and keys[0]["valid_until"] is None
    assert keys[1]["valid_until"] == T0 + 10_000
    verify_signed(old, keys)
    new = rotated.sign(receipt(time=T0 + 20_000))
    assert new["key_id"] == rotated.current.key_id
    verify_signed(new, keys)
    # a receipt of a time before the rotation is signed (again) by the key valid then: byte-identical
    assert rotated.sign(receipt()) == old
    with pytest.raises(ValueError):
        rotated.rotate(T0)


# --- the key file ----------------------------------------------------------------------------

def test_load_save_round_trip_and_mode(tmp_path):
    path = str(tmp_path / "keys" / "audit-keys.json")
    ring = Keyring.ephemeral(T0).rotate(T0 + 1_000)
    ring.save(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with open(path, encoding="utf-8") as handle:
        stored = json.load(handle)
    assert stored["format"] == "speculation-keys/1"
    assert [set(k) for k in stored["keys"]] == [{"key_id", "private_key", "valid_from", "valid_until"}] * 2
    loaded = Keyring.load(path)
    assert loaded.keys == ring.keys
    assert loaded.public_keys() == ring.public_keys()
    assert os.listdir(tmp_path / "keys") == ["audit-keys.json"]   # no temporary file left


def test_load_or_create_creates_once(tmp_path):
    path = str(tmp_path / "audit-keys.json")
    first = Keyring.load_or_create(path, T0)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    again = Keyring.load_or_create(path, T0 + 5)
    assert again.keys == first.keys


def test_a_damaged_key_file_is_refused(tmp_path):
    path = tmp_path / "audit-keys.json"
    ring = Keyring.ephemeral(T0)
    stored = ring.to_json()
    stored["keys"][0]["key_id"] = "00" * 8
    path.write_text(json.dumps(stored))
    with pytest.raises(ValueError, match="does not match"):
        Keyring.load(str(path))
    path.write_text(json.dumps({"format": "other", "keys": []}))
    with pytest.raises(ValueError):
        Keyring.load(str(path))
