"""The transparency log's Merkle tree: RFC 9162 §2.1 (the hashing of RFC 6962, unchanged).

    leaf hash     SHA-256(0x00 || leaf)
    interior node SHA-256(0x01 || left || right)
    MTH({})       SHA-256("")                    (the tree of zero leaves)
    MTH(D[n])     node(MTH(D[0:k]), MTH(D[k:n])) k: the largest power of two below n

Proofs are RFC 9162's PATH (§2.1.3.1) and PROOF (§2.1.4.1), lists of hashes from the
leaves up; `verify_inclusion` and `verify_consistency` are the verification algorithms of
§2.1.3.2 and §2.1.4.2, step by step.

`MerkleTree` keeps every complete subtree's hash (each level in one bytearray, 2n hashes in
all), so a root of any prefix, an inclusion proof or a consistency proof costs O(log² n)
slices and a few hashes instead of rehashing the leaves: the log keeps one per process and
appends to it. The list functions (`root`, `inclusion_proof`, `consistency_proof`) build one
from the leaf hashes each call, O(n): for tests and small trees.

Pure: no Redis, no Flask.
"""

from __future__ import annotations

import hashlib
from typing import Iterable, Optional, Sequence

HASH_SIZE = 32
LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(LEAF_PREFIX + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def _split(n: int) -> int:
    """k: the largest power of two smaller than n (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def _is_size(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class MerkleTree:
    """An append-only tree of leaf hashes with the hash of every complete subtree kept:
    level h holds the hashes of the subtrees of 2^h leaves that start at multiples of 2^h."""

    def __init__(self, leaf_hashes: Iterable[bytes] = ()):
        self._levels: list[bytearray] = [bytearray()]
        self.extend(leaf_hashes)

    def __len__(self) -> int:
        return len(self._levels[0]) // HASH_SIZE

    def append(self, leaf_hash_: bytes) -> None:
        if len(leaf_hash_) != HASH_SIZE:
            raise ValueError(f"a leaf hash is {HASH_SIZE} bytes")
        self._levels[0] += leaf_hash_
        level = 0
        # Each level that now ends in a complete pair gives its parent one more node.
        while (len(self._levels[level]) // HASH_SIZE) % 2 == 0:
            count = len(self._levels[level]) // HASH_SIZE
            pair = self._levels[level][(count - 2) * HASH_SIZE:]
            if level + 1 == len(self._levels):
                self._levels.append(bytearray())
            self._levels[level + 1] += node_hash(bytes(pair[:HASH_SIZE]), bytes(pair[HASH_SIZE:]))
            level += 1

    def extend(self, leaf_hashes: Iterable[bytes]) -> None:
        for h in leaf_hashes:
            self.append(h)

    def truncate(self, size: int) -> None:
        """Forget every leaf from `size` on (a batch that was not committed)."""
        if not 0 <= size <= len(self):
            raise ValueError(f"size {size} is not within the tree's {len(self)} leaves")
        for level, nodes in enumerate(self._levels):
            del nodes[(size >> level) * HASH_SIZE:]

    def leaf(self, index: int) -> bytes:
        return self._node(0, index)

    def leaves(self, start: int = 0, end: Optional[int] = None) -> list[bytes]:
        end = len(self) if end is None else end
        return [self._node(0, i) for i in range(start, end)]

    def _node(self, level: int, position: int) -> bytes:
        return bytes(self._levels[level][position * HASH_SIZE:(position + 1) * HASH_SIZE])

    def _mth(self, start: int, end: int) -> bytes:
        """MTH(D[start:end]); a complete aligned subtree is read, any other is split as the
        definition splits it (its left part is then complete)."""
        n = end - start
        if n == 0:
            return EMPTY_ROOT
        if n & (n - 1) == 0 and start % n == 0:
            return self._node(n.bit_length() - 1, start // n)
        k = _split(n)
        return node_hash(self._mth(start, start + k), self._mth(start + k, end))

    def _size(self, size: Optional[int]) -> int:
        if size is None:
            return len(self)
        if not _is_size(size) or size > len(self):
            raise ValueError(f"tree size {size!r} is not within the tree's {len(self)} leaves")
        return size

    def root(self, size: Optional[int] = None) -> bytes:
        """MTH of the first `size` leaves (default: all)."""
        return self._mth(0, self._size(size))

    def inclusion_proof(self, index: int, size: Optional[int] = None) -> list[bytes]:
        """PATH(index, D[size]) (RFC 9162 §2.1.3.1)."""
        size = self._size(size)
        if not _is_size(index) or index >= size:
            raise ValueError(f"leaf index {index!r} is not below the tree size {size}")
        path: list[bytes] = []
        start, end, m = 0, size, index
        while end - start > 1:
            k = _split(end - start)
            if m < k:
                path.append(self._mth(start + k, end))
                end = start + k
            else:
                path.append(self._mth(start, start + k))
                start, m = start + k, m - k
        return path[::-1]          # the recursion puts the deepest sibling first

    def consistency_proof(self, first: int, second: Optional[int] = None) -> list[bytes]:
        """PROOF(first, D[second]) (RFC 9162 §2.1.4.1, for 0 < first < second); empty when
        first == second. From the empty tree there is none (ValueError)."""
        second = self._size(second)
        if not _is_size(first) or first > second or (first == 0 < second):
            raise ValueError(f"first size {first!r} is not within 1..{second}")
        if first == second:
            return []
        proof: list[bytes] = []
        start, end, m, whole = 0, second, first, True   # SUBPROOF(m, D[start:end], whole)
        while True:
            n = end - start
            if m == n:
                if not whole:
                    proof.append(self._mth(start, end))
                break
            k = _split(n)
            if m <= k:
                proof.append(self._mth(start + k, end))
                end = start + k
            else:
                proof.append(self._mth(start, start + k))
                start, m, whole = start + k, m - k, False
        return proof[::-1]


# --- over a list of leaf hashes (builds the tree each call) -------------------------------

def root(leaf_hashes: Sequence[bytes]) -> bytes:
    """MTH(D[n]) of the leaf hashes; SHA-256("") for none."""
    return MerkleTree(leaf_hashes).root()


def inclusion_proof(index: int, leaf_hashes: Sequence[bytes]) -> list[bytes]:
    """PATH(index, D[n])."""
    return MerkleTree(leaf_hashes).inclusion_proof(index)


def consistency_proof(m: int, leaf_hashes: Sequence[bytes]) -> list[bytes]:
    """PROOF(m, D[n])."""
    return MerkleTree(leaf_hashes).consistency_proof(m)


# --- verification (RFC 9162 §2.1.3.2, §2.1.4.2) ---------------------------------------------

def _shift_until_odd_or_zero(fn: int, sn: int) -> tuple[int, int]:
    while fn & 1 == 0 and fn != 0:
        fn, sn = fn >> 1, sn >> 1
    return fn, sn


def verify_inclusion(leaf_hash_: bytes, index: int, tree_size: int, proof: Sequence[bytes],
                     root_: bytes) -> bool:
    """Whether `proof` proves the leaf hash at `index` in the tree of `tree_size` leaves whose
    root is `root_` (§2.1.3.2)."""
    if not (_is_size(index) and _is_size(tree_size)) or index >= tree_size:   # step 1
        return False
    fn, sn = index, tree_size - 1                                             # step 2
    r = leaf_hash_                                                            # step 3
    for p in proof:                                                           # step 4
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if fn & 1 == 0:
                fn, sn = _shift_until_odd_or_zero(fn, sn)
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root_                                             # step 5


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes,
                       proof: Sequence[bytes]) -> bool:
    """Whether `proof` proves the tree of `first` leaves with root `first_root` a prefix of
    the tree of `second` leaves with root `second_root` (§2.1.4.2, for 0 < first < second).
    Outside the RFC's range: equal sizes hold with an empty proof and equal roots; a proof
    from the empty tree (first 0 < second) is not defined, and fails."""
    if not (_is_size(first) and _is_size(second)) or first > second:
        return False
    if first == second:
        return len(proof) == 0 and first_root == second_root
    if first == 0:
        return False
    if len(proof) == 0:                                                       # step 1
        return False
    path = list(proof)
    if first & (first - 1) == 0:                                              # step 2
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1                                            # step 3
    while fn & 1:                                                             # step 4
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]                                                         # step 5
    for c in path[1:]:                                                        # step 6
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if fn & 1 == 0:
                fn, sn = _shift_until_odd_or_zero(fn, sn)
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return fr == first_root and sr == second_root and sn == 0                 # step 7
