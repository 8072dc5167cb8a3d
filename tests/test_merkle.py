"""events/merkle.py: RFC 9162 §2.1 hashing, proofs and their verification.

The reference vectors are RFC 6962's (the eight leaves and the roots, inclusion and
consistency proofs that certificate-transparency-go, Trillian and transparency-dev/merkle
test against); the rest checks the proofs against the definitions on every small tree and
that any change to a proof's inputs makes it fail."""

from __future__ import annotations

import hashlib
import time

import pytest
from hypothesis import given, settings, strategies as st

from events import merkle

LEAVES = [bytes.fromhex(h) for h in ("", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                                      "606162636465666768696a6b6c6d6e6f")]
ROOTS = [bytes.fromhex(h) for h in (
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328")]


def _h(*hexes: str) -> list[bytes]:
    return [bytes.fromhex(x) for x in hexes]


# (leaf index, tree size, PATH) and (first, second, PROOF) of RFC 6962's reference data.
INCLUSION_VECTORS = [
    (0, 8, _h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
              "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
              "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4")),
    (5, 8, _h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
              "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
              "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7")),
    (2, 3, _h("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125")),
    (1, 5, _h("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
              "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
              "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b")),
    (0, 1, []),
]
CONSISTENCY_VECTORS = [
    (1, 8, _h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
              "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
              "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4")),
    (6, 8, _h("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
              "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
              "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7")),
    (2, 5, _h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
              "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b")),
    (6, 7, _h("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
              "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
              "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7")),
    (1, 1, []),
]
HASHES = [merkle.leaf_hash(leaf) for leaf in LEAVES]


def _mth(hashes: list[bytes]) -> bytes:
    """MTH straight from its definition (RFC 9162 §2.1.1), to check the tree against."""
    if not hashes:
        return hashlib.sha256(b"").digest()
    if len(hashes) == 1:
        return hashes[0]
    k = 1
    while k * 2 < len(hashes):
        k *= 2
    return hashlib.sha256(b"\x01" + _mth(hashes[:k]) + _mth(hashes[k:])).digest()


def _leaves(n: int) -> list[bytes]:
    return [merkle.leaf_hash(f"leaf {i}".encode()) for i in range(n)]


def _flip(data: bytes, at: int = 0) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


# --- the reference vectors -----------------------------------------------------------------

def test_hashing_is_rfc_9162s():
    assert merkle.leaf_hash(b"") == hashlib.sha256(b"\x00").digest()
    assert merkle.node_hash(b"a", b"b") == hashlib.sha256(b"\x01ab").digest()
    assert merkle.root([]).hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


@pytest.mark.parametrize("size", range(1, 9))
def test_roots_of_the_reference_leaves(size):
    assert merkle.root(HASHES[:size]) == ROOTS[size - 1]
    assert merkle.MerkleTree(HASHES).root(size) == ROOTS[size - 1]


@pytest.mark.parametrize("index,size,path", INCLUSION_VECTORS)
def test_reference_inclusion_proofs(index, size, path):
    assert merkle.inclusion_proof(index, HASHES[:size]) == path
    assert merkle.verify_inclusion(HASHES[index], index, size, path, ROOTS[size - 1])


@pytest.mark.parametrize("first,second,proof", CONSISTENCY_VECTORS)
def test_reference_consistency_proofs(first, second, proof):
    assert merkle.consistency_proof(first, HASHES[:second]) == proof
    assert merkle.verify_consistency(first, second, ROOTS[first - 1], ROOTS[second - 1], proof)


# --- every proof of every small tree ----------------------------------------------------

def _inclusion_tampered(h, index, size, proof, root):
    """Every way to change one input of an inclusion check."""
    yield _flip(h), index, size, proof, root
    yield h, index, size, proof, _flip(root, 31)
    for at in range(len(proof)):
        yield h, index, size, proof[:at] + [_flip(proof[at], at)] + proof[at + 1:], root
    for other in {index - 1, index + 1, index ^ 1, index ^ 2} - {index}:
        yield h, other, size, proof, root
    # another size with the same path can be consistent with the proof (index 0 of 3 and of 4
    # share theirs): the size is fixed by the signed head the root comes with. As the
    # reference tests do, a size twice or half as large.
    for other in {size * 2, size // 2} - {size}:
        yield h, index, other, proof, root
    yield h, index, size, proof + [root], root
    yield h, index, size, [root] + proof, root
    if proof:
        yield h, index, size, proof[:-1], root


def test_every_inclusion_proof_of_trees_1_to_20_verifies_and_fails_when_changed():
    for size in range(1, 21):
        hashes = _leaves(size)
        root = _mth(hashes)
        tree = merkle.MerkleTree(hashes)
        assert tree.root() == root
        for index in range(size):
            proof = tree.inclusion_proof(index)
            assert proof == merkle.inclusion_proof(index, hashes)
            assert merkle.verify_inclusion(hashes[index], index, size, proof, root), (index, size)
            for args in _inclusion_tampered(hashes[index], index, size, proof, root):
                if args[1] != index and args[1] < size and hashes[args[1]] == hashes[index]:
                    continue
                assert not merkle.verify_inclusion(*args), (index, size, args[1:3])


def _consistency_tampered(first, second, r1, r2, proof):
    yield first, second, _flip(r1), r2, proof
    yield first, second, r1, _flip(r2), proof
    yield first, second, r2, r1, proof
    for at in range(len(proof)):
        yield first, second, r1, r2, proof[:at] + [_flip(proof[at], at)] + proof[at + 1:]
    for other in {first - 1, first + 1, first ^ 2} - {first, 0}:
        if other < second:
            yield other, second, r1, r2, proof
    for other in {second * 2, second // 2} - {second}:   # as for inclusion, above
        if other > first:
            yield first, other, r1, r2, proof
    yield first, second, r1, r2, proof + [r2]
    yield first, second, r1, r2, [r1] + proof
    yield first, second, r1, r2, proof[:-1]
    yield first, second, r1, r2, []


def test_every_consistency_proof_of_trees_1_to_20_verifies_and_fails_when_changed():
    for second in range(1, 21):
        hashes = _leaves(second)
        tree = merkle.MerkleTree(hashes)
        r2 = tree.root()
        for first in range(1, second + 1):
            r1 = _mth(hashes[:first])
            assert tree.root(first) == r1
            proof = tree.consistency_proof(first)
            assert proof == merkle.consistency_proof(first, hashes)
            assert merkle.verify_consistency(first, second, r1, r2, proof), (first, second)
            if first == second:
                assert proof == []
                assert not merkle.verify_consistency(first, second, r1, _flip(r2), proof)
                continue
            for args in _consistency_tampered(first, second, r1, r2, proof):
                assert not merkle.verify_consistency(*args), (first, second, args[:2])


def test_edges_outside_the_rfcs_range():
    hashes = _leaves(3)
    assert not merkle.verify_inclusion(hashes[0], 0, 0, [], merkle.EMPTY_ROOT)
    assert not merkle.verify_inclusion(hashes[0], -1, 3, [], merkle.root(hashes))
    assert not merkle.verify_inclusion(hashes[0], True, 3, [], merkle.root(hashes))
    assert merkle.verify_consistency(0, 0, merkle.EMPTY_ROOT, merkle.EMPTY_ROOT, [])
    assert not merkle.verify_consistency(0, 3, merkle.EMPTY_ROOT, merkle.root(hashes), [])
    assert not merkle.verify_consistency(3, 2, merkle.root(hashes), merkle.root(hashes[:2]), [])
    with pytest.raises(ValueError):
        merkle.consistency_proof(0, hashes)
    with pytest.raises(ValueError):
        merkle.inclusion_proof(3, hashes)
    with pytest.raises(ValueError):
        merkle.MerkleTree(hashes).root(4)


def test_truncate_forgets_a_batch_exactly():
    tree = merkle.MerkleTree(_leaves(13))
    before = [tree.root(n) for n in range(14)]
    tree.extend(_leaves(30)[13:])
    tree.truncate(13)
    assert len(tree) == 13
    assert [tree.root(n) for n in range(14)] == before
    tree.extend(_leaves(30)[13:])
    assert tree.root() == _mth(_leaves(30))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.data())
def test_random_sizes(size, data):
    hashes = _leaves(size)
    tree = merkle.MerkleTree(hashes)
    root = _mth(hashes)
    assert tree.root() == root
    index = data.draw(st.integers(0, size - 1))
    assert merkle.verify_inclusion(hashes[index], index, size, tree.inclusion_proof(index), root)
    first = data.draw(st.integers(1, size))
    assert merkle.verify_consistency(first, size, tree.root(first), root, tree.consistency_proof(first))
    inner = data.draw(st.integers(index + 1, size))   # a proof within an earlier tree size
    assert merkle.verify_inclusion(hashes[index], index, inner, tree.inclusion_proof(index, inner), tree.root(inner))


def test_proofs_at_100_000_leaves_are_fast():
    tree = merkle.MerkleTree(_leaves(100_000))
    root = tree.root()
    started = time.perf_counter()
    for index in range(0, 100_000, 1000):
        assert merkle.verify_inclusion(tree.leaf(index), index, 100_000, tree.inclusion_proof(index), root)
        assert merkle.verify_consistency(index + 1, 100_000, tree.root(index + 1), root,
                                         tree.consistency_proof(index + 1))
    each = (time.perf_counter() - started) / 100
    assert each < 0.05, f"{each * 1000:.1f} ms for an inclusion and a consistency proof, with their checks"
