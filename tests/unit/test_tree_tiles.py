"""The kept tree (`ledger.transparency.tree.Tree`) past full tiles: a tree of 65,536 + 773 leaves
holds full tiles at levels 0 and 1 and partial ones at the right edge of levels 0, 1 and 2; every
complete node it answers, its roots, and its inclusion and consistency proofs, cold and from its
caches, are those of RFC 9162's definition over the same leaves (`tlog.root_of`)."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass

import pytest

from ledger.core import tlog
from ledger.transparency.tree import Tree, commitment_of
from ledger.transparency.treestore import SQLiteTreeStore

# A build of 66 thousand leaves and their roots in memory: a few seconds.
pytestmark = pytest.mark.slow

SIZE = 256 * 256 + 3 * 256 + 5
KEY = b"\x07" * 32


@dataclass
class Made:
    id: int
    originator_id: uuid.UUID
    originator_version: int
    topic: str
    state: bytes


EVENTS = [Made(p, uuid.UUID(int=p % 97), p, "t", p.to_bytes(4, "big")) for p in range(1, SIZE + 1)]


def read(first: int, most: int) -> list[Made]:
    return EVENTS[first - 1:first - 1 + most]


@pytest.fixture(scope="module")
def built() -> tuple[Tree, list[bytes]]:
    tree = Tree(SQLiteTreeStore(None), KEY)
    while tree.catch_up(read)[0]:
        pass
    leaves = [tlog.leaf_hash(commitment_of(KEY, e)[0]) for e in EVENTS]
    return tree, leaves


def test_every_complete_node_of_every_height_is_the_rfc_subtree(built) -> None:  # type: ignore[no-untyped-def]
    tree, leaves = built
    assert tree.size == SIZE
    rng = random.Random(5)
    for height in range(SIZE.bit_length()):
        count = SIZE >> height
        # The first, the last (at the right edge) and some between, twice (the second cached).
        for index in {0, count - 1, *(rng.randrange(count) for _ in range(5))}:
            want = tlog.root_of(leaves[index << height:(index + 1) << height])
            for _ in range(2):
                assert tree.subtree(index << height, (index + 1) << height) == want


def test_roots_and_proofs_at_sizes_across_the_tiles_verify(built) -> None:  # type: ignore[no-untyped-def]
    tree, leaves = built
    rng = random.Random(9)
    sizes = [1, 255, 256, 257, 65535, 65536, 65537, SIZE, *(rng.randint(1, SIZE)
                                                               for _ in range(6))]
    roots = {n: tlog.root_of(leaves[:n]) for n in sizes}
    for n in sizes:
        assert tree.root(n) == roots[n]
        for leaf in {0, n - 1, *(rng.randrange(n) for _ in range(4))}:
            tlog.verify_inclusion(leaf, n, leaves[leaf], tree.inclusion(leaf, n), roots[n])
        for m in sizes:
            if m <= n:
                tlog.verify_consistency(m, n, roots[m], roots[n], tree.consistency(m, n))


def test_full_tiles_answer_from_their_nodes_and_partial_ones_from_the_store(built) -> None:  # type: ignore[no-untyped-def]
    tree, leaves = built
    assert tree.tile(0, 3, 256) == b"".join(leaves[768:1024])
    assert tree.tile(0, SIZE // 256, 5) == b"".join(leaves[SIZE - 5:])
    level1 = b"".join(tlog.root_of(leaves[i * 256:(i + 1) * 256]) for i in range(256))
    assert tree.tile(1, 0, 256) == level1
    assert tree.tile(2, 0, 1) == tlog.root_of(leaves[:65536])
