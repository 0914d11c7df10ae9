"""The transparency log's proofs, by their properties: every inclusion and consistency proof of
every tree of up to 300 leaves verifies against the tree's root (RFC 9162's definition,
`root_of`) and fails once tampered with; random proofs in trees of up to a million leaves do
the same; and a store that keeps only complete subtrees can answer every range the proofs ask.
"""

import functools
from hashlib import sha256

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.core.tlog import (
    ProofError,
    consistency_proof,
    consistency_proof_ranges,
    inclusion_proof,
    inclusion_proof_ranges,
    leaf_hash,
    node_hash,
    root_from_inclusion,
    root_of,
    split_point,
    subtree_from_nodes,
    subtree_ranges,
    tile_hashes,
    tile_node_range,
    verify_consistency,
    verify_inclusion,
)

SMALL = 300
LEAVES = [leaf_hash(i.to_bytes(4, "big")) for i in range(SMALL + 1)]
ROOTS = [root_of(LEAVES[:n]) for n in range(SMALL + 2)]


@functools.cache
def subtree(start: int, end: int) -> bytes:
    return root_of(LEAVES[start:end])


def flipped(proof: list[bytes], j: int) -> list[bytes]:
    """The proof with one bit of hash j flipped."""
    h = proof[j]
    return [*proof[:j], bytes([h[0] ^ 1]) + h[1:], *proof[j + 1:]]


def fails(check, *args) -> bool:
    try:
        check(*args)
    except ProofError:
        return True
    return False


def test_split_point():
    assert [split_point(n) for n in range(2, 10)] == [1, 2, 2, 4, 4, 4, 4, 8]
    assert split_point(2**40) == 2**39 and split_point(2**40 + 1) == 2**40
    with pytest.raises(ValueError):
        split_point(1)


def rfc_mth(leaves: list[bytes]) -> bytes:
    """MTH by RFC 9162's recursive definition."""
    if len(leaves) == 1:
        return leaves[0]
    k = split_point(len(leaves))
    return node_hash(rfc_mth(leaves[:k]), rfc_mth(leaves[k:]))


def test_root_of_is_the_recursive_definition_of_the_rfc():
    for n in range(1, SMALL + 1):
        assert root_of(LEAVES[:n]) == rfc_mth(LEAVES[:n]), n
    with pytest.raises(ValueError, match="leaf hash 1 is 3 bytes"):
        root_of([LEAVES[0], b"abc"])


def test_root_of_is_the_stack_of_complete_subtrees():
    # An independent computation of MTH: complete subtrees merged as leaves arrive, then folded
    # from the right.
    for n in range(SMALL + 1):
        stack: list[bytes] = []
        for i, h in enumerate(LEAVES[:n]):
            stack.append(h)
            count = i + 1
            while count % 2 == 0:
                right, left = stack.pop(), stack.pop()
                stack.append(node_hash(left, right))
                count //= 2
        root = stack.pop() if stack else ROOTS[0]
        while stack:
            root = node_hash(stack.pop(), root)
        assert root == ROOTS[n], n


def inclusion_tamperings(i: int, n: int, proof: list[bytes]):
    """(index, size, leaf, proof, root) of each way to tamper with the proof of leaf i of n."""
    leaf, root = LEAVES[i], ROOTS[n]
    if proof:
        j = i % len(proof)
        yield i, n, leaf, flipped(proof, j), root
        yield i, n, leaf, proof[:j] + proof[j + 1:], root
    yield i, n, leaf, [*proof, root], root
    if n > 1:
        yield (i + 1) % n, n, leaf, proof, root
        yield i, n, LEAVES[(i + 1) % n], proof, root
    yield n, n, leaf, proof, root
    yield i, n + 1, leaf, proof, ROOTS[n + 1]
    if i < n - 1:
        yield i, n - 1, leaf, proof, ROOTS[n - 1]


def test_every_inclusion_proof_up_to_300_leaves_verifies_and_none_tampered_does():
    # Each proof is tampered with in one way, the ways taken in turn from proof to proof, so
    # that every way is tried on thousands of proofs of every shape (all of them for n <= 64).
    tried = 0
    for n in range(1, SMALL + 1):
        for i in range(n):
            proof = inclusion_proof(i, n, subtree)
            verify_inclusion(i, n, LEAVES[i], proof, ROOTS[n])
            assert len(proof) == len(inclusion_proof_ranges(i, n))
            ways = list(inclusion_tamperings(i, n, proof))
            for way in ways if n <= 64 else [ways[(i + n) % len(ways)]]:
                assert fails(verify_inclusion, *way), way[:2]
                tried += 1
    assert tried > 55_000


def consistency_tamperings(m: int, n: int, proof: list[bytes]):
    """(old size, new size, old root, new root, proof) of each way to tamper with the proof."""
    old, new = ROOTS[m], ROOTS[n]
    yield m, n, old, new, [*proof, new]
    yield m, n + 1, old, ROOTS[n + 1], proof
    if m < n:
        j = m % len(proof)
        yield m, n, old, new, flipped(proof, j)
        yield m, n, old, new, proof[:j] + proof[j + 1:]
        yield m, n, new, old, proof
        yield m + 1, n, ROOTS[m + 1], new, proof
        yield m, n, old, ROOTS[n - 1], proof
        if m > 1:
            yield m - 1, n, ROOTS[m - 1], new, proof


def test_every_consistency_proof_up_to_300_leaves_verifies_and_none_tampered_does():
    tried = 0
    for n in range(1, SMALL + 1):
        for m in range(1, n + 1):
            proof = consistency_proof(m, n, subtree)
            verify_consistency(m, n, ROOTS[m], ROOTS[n], proof)
            assert len(proof) == len(consistency_proof_ranges(m, n))
            assert proof or m == n
            ways = list(consistency_tamperings(m, n, proof))
            for way in ways if n <= 64 else [ways[(m + n) % len(ways)]]:
                assert fails(verify_consistency, *way), way[:2]
                tried += 1
    assert tried > 55_000


def test_what_a_proof_error_names():
    proof = inclusion_proof(5, 8, subtree)
    assert root_from_inclusion(5, 8, LEAVES[5], proof) == ROOTS[8]
    with pytest.raises(ProofError, match="the leaf hash is 31 bytes"):
        root_from_inclusion(5, 8, LEAVES[5][1:], proof)
    with pytest.raises(ProofError, match="^leaf index 8 is not below the tree size 8$"):
        verify_inclusion(8, 8, LEAVES[5], proof, ROOTS[8])
    with pytest.raises(ProofError, match="of leaf 5 in a tree of size 8 has 2 hashes; it takes 3"):
        verify_inclusion(5, 8, LEAVES[5], proof[:2], ROOTS[8])
    with pytest.raises(ProofError, match="hash 1 of the inclusion proof is 31 bytes"):
        verify_inclusion(5, 8, LEAVES[5], [proof[0], proof[1][:31], proof[2]], ROOTS[8])
    with pytest.raises(ProofError, match="leads to the root .*, not "):
        verify_inclusion(5, 8, LEAVES[4], proof, ROOTS[8])
    with pytest.raises(ProofError, match="the log shrank"):
        verify_consistency(8, 5, ROOTS[8], ROOTS[5], [])
    with pytest.raises(ProofError, match="the two trees of size 5 have different roots"):
        verify_consistency(5, 5, ROOTS[5], ROOTS[6], [])
    with pytest.raises(ProofError, match="from size 3 to 7 leads to the new root"):
        verify_consistency(3, 7, ROOTS[3], ROOTS[6], consistency_proof(3, 7, subtree))
    with pytest.raises(ProofError, match="from size 3 to 7 leads to the old root"):
        verify_consistency(3, 7, ROOTS[4], ROOTS[7], consistency_proof(3, 7, subtree))
    with pytest.raises(ProofError, match="proves nothing"):
        verify_consistency(0, 7, ROOTS[0], ROOTS[7], [])


def test_subtree_ranges_are_maximal_aligned_complete_subtrees():
    for start in range(70):
        for end in range(start, 70):
            ranges = subtree_ranges(start, end)
            at = start
            for lo, hi in ranges:
                size = hi - lo
                assert lo == at and size & (size - 1) == 0 and lo % size == 0
                # maximal: the next larger aligned subtree at lo would not fit, or not be aligned
                assert lo % (2 * size) or lo + 2 * size > end
                at = hi
            assert at == end
    assert subtree_ranges(0, 1_000_000)[:3] == [(0, 524288), (524288, 786432), (786432, 917504)]
    assert subtree_ranges(5, 13) == [(5, 6), (6, 8), (8, 12), (12, 13)]
    with pytest.raises(ValueError):
        subtree_ranges(5, 4)


def complete_only(start: int, end: int) -> bytes:
    """A store of complete subtrees only: anything else is refused."""
    size = end - start
    assert size & (size - 1) == 0 and start % size == 0, (start, end)
    return subtree(start, end)


def test_a_store_of_complete_subtrees_answers_every_proof():
    def from_nodes(start, end):
        return subtree_from_nodes(start, end, complete_only)

    for n in range(1, 130):
        for i in range(n):
            assert inclusion_proof(i, n, from_nodes) == inclusion_proof(i, n, subtree)
        for m in range(1, n + 1):
            assert consistency_proof(m, n, from_nodes) == consistency_proof(m, n, subtree)
        assert from_nodes(0, n) == ROOTS[n]
    with pytest.raises(ValueError, match="not a subtree"):
        from_nodes(1, 3)


# Trees of up to a million leaves: every complete subtree of a tree of 2^20 leaves, by level.
BIG_LEVELS = 20


@functools.cache
def big_levels() -> list[list[bytes]]:
    # The leaves' hashes may be any 32 bytes: leaf i's are i itself, which spares a million
    # hashes. hashlib at once rather than node_hash, for the million nodes.
    levels = [[i.to_bytes(32, "big") for i in range(1 << BIG_LEVELS)]]
    while len(levels[-1]) > 1:
        below = levels[-1]
        levels.append([sha256(b"\x01" + below[k] + below[k + 1]).digest()
                       for k in range(0, len(below), 2)])
    return levels


def big_node(start: int, end: int) -> bytes:
    level = (end - start).bit_length() - 1
    assert end - start == 1 << level and start % (1 << level) == 0
    return big_levels()[level][start >> level]


def big_subtree(start: int, end: int) -> bytes:
    return subtree_from_nodes(start, end, big_node)


def test_the_big_tree_has_the_roots_of_root_of():
    leaves = big_levels()[0]
    assert big_levels()[1][3] == node_hash(leaves[6], leaves[7])
    assert big_subtree(0, 1_000_000) == root_of(leaves[:1_000_000])


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_random_proofs_in_trees_of_up_to_a_million_leaves(data):
    n = data.draw(st.integers(1, 1_000_000), label="size")
    i = data.draw(st.integers(0, n - 1), label="index")
    m = data.draw(st.integers(1, n), label="old size")
    root, leaf = big_subtree(0, n), big_levels()[0][i]
    proof = inclusion_proof(i, n, big_subtree)
    assert [big_subtree(*r) for r in inclusion_proof_ranges(i, n)] == proof
    verify_inclusion(i, n, leaf, proof, root)
    if proof:
        j = data.draw(st.integers(0, len(proof) - 1), label="tampered hash")
        assert fails(verify_inclusion, i, n, leaf, flipped(proof, j), root)
        assert fails(verify_inclusion, i, n, leaf, proof[:j] + proof[j + 1:], root)
    if n > 1:
        assert fails(verify_inclusion, (i + 1) % n, n, leaf, proof, root)
    old = big_subtree(0, m)
    proof = consistency_proof(m, n, big_subtree)
    assert len(proof) == len(consistency_proof_ranges(m, n))
    verify_consistency(m, n, old, root, proof)
    if m < n:
        j = data.draw(st.integers(0, len(proof) - 1), label="tampered hash")
        assert fails(verify_consistency, m, n, old, root, flipped(proof, j))
        assert fails(verify_consistency, m, n, old, root, proof[:j] + proof[j + 1:])
        assert fails(verify_consistency, m, n, old, big_subtree(0, n - 1), proof)


def test_the_hashes_of_tiles():
    # c2sp.org/tlog-tiles: hash i of tile n at level l is
    # MTH(D[(n * 256 + i) * 256**l : (n * 256 + i + 1) * 256**l]), and each hash of a tile at
    # level 1 or above is the root of the full tile below it, its 256 hashes taken as leaves.
    assert tile_node_range(0, 0, 0) == (0, 1)
    assert tile_node_range(0, 3, 255) == (1023, 1024)
    assert tile_node_range(1, 0, 3) == (768, 1024)
    assert tile_node_range(2, 0, 1) == (65536, 131072)
    assert tile_node_range(1, 2, 7) == ((2 * 256 + 7) * 256, (2 * 256 + 8) * 256)
    with pytest.raises(ValueError):
        tile_node_range(0, 0, 256)
    leaves = big_levels()[0]
    assert tile_hashes(0, 2, 5, big_subtree) == b"".join(leaves[512:517])
    for level, index, width in ((1, 0, 256), (1, 15, 256), (2, 0, 16)):  # within 2^20 leaves
        tile = tile_hashes(level, index, width, big_subtree)
        assert len(tile) == width * 32
        for i in (0, 1, width // 2, width - 1):
            below = tile_hashes(level - 1, index * 256 + i, 256, big_subtree)
            hashes = [below[k:k + 32] for k in range(0, len(below), 32)]
            assert tile[i * 32:(i + 1) * 32] == root_of(hashes), (level, index, i)
