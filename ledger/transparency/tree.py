"""The Merkle tree over the log (RFC 9162), kept as C2SP tlog tiles (`ledger.core.tlog`).

Leaf i is the i-th stored event of the log, in log order (positions the log skipped, its gaps,
take no leaf), so a leaf's index is its event's rank in the log. Its entry is a 32-byte
*commitment* to the stored event (`tlog.commitment`: its aggregate id, version, topic and stored
bytes) under a salt of its own, so no hash the tree publishes lets anyone test a guess at what an
event holds. Each event's salt is derived from the chain key (`salt_of`), so the tree can always
be rebuilt from the log, identical, and the salt of one event tells nothing of another's.

Stored as the tiles themselves (`ledger.transparency.treestore`): tile (L, N) holds the hashes
of the nodes of height 8L numbered 256N to 256N+255, as far as they are complete; entry tile N
holds the commitments of leaves 256N to 256N+255. Any complete node is read from one tile (and
hashed up from at most 128 of its hashes); any range the proofs ask for is a few complete nodes.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import hmac
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from ledger.core import tlog
from ledger.core.ids import id_text
from ledger.core.keyedhash import keyed_sha256
from ledger.transparency.treestore import Appending, TreeStore

WIDTH = tlog.TILE_WIDTH
H = tlog.HASH_SIZE
#: Events read and appended in one transaction at most.
APPEND_MOST = 5000

Read = Callable[[int, int], Sequence[Any]]
"""(first position, most) -> the stored events of the log from that position on, in order
(eventsourcing `Notification`s: `id`, `originator_id`, `originator_version`, `topic`, `state`)."""


class NotInTree(LookupError):
    """A leaf, size or node the tree does not hold (yet)."""


def salt_key(chain_key: bytes) -> bytes:
    """The key every leaf's salt is derived from: the chain key's, for this one use."""
    return hmac.new(chain_key, b"reddog-transparency-salts/1", hashlib.sha256).digest()


def salt_of(key: bytes, originator_id: str, version: int) -> bytes:
    """One event's salt: 32 bytes no one can guess without the key (HMAC-SHA-256 of
    `<id>|<version>`, under a key whose padded hashes are taken once: `keyed_sha256`)."""
    return keyed_sha256(key).digest(f"{originator_id}|{version}".encode())


def commitment_of(key: bytes, stored: Any) -> tuple[bytes, bytes]:
    """(commitment, salt) of one stored event (its aggregate id's text remembered: `id_text`)."""
    originator = id_text(stored.originator_id)
    salt = salt_of(key, originator, stored.originator_version)
    return tlog.commitment(salt, originator, stored.originator_version, stored.topic,
                           bytes(stored.state)), salt


class Tree:
    """The tree of one store: appended from the log, read for roots, proofs and tiles."""

    def __init__(self, store: TreeStore, key: bytes) -> None:
        self.store = store
        self.key = key
        self._runs: list[tuple[int, int]] = []
        self._runs_size = -1
        self._guard = threading.Lock()
        self._node = lru_cache(maxsize=65536)(self._complete_node)
        self._full = lru_cache(maxsize=4096)(self._full_tile)
        self._inside = lru_cache(maxsize=1024)(self._inside_full_tile)

    # Appending.
    def catch_up(self, read: Read, most: int = APPEND_MOST) -> tuple[int, int]:
        """Append the log's events after the tree's last leaf (at most `most` of them) in one
        transaction; (leaves appended, the tree's size)."""
        with self.store.appending() as tx:
            size, last = tx.state()
            page = read(last + 1, most)
            if not page:
                return 0, size
            commitments: list[bytes] = []
            runs: list[tuple[int, int]] = []
            previous = last
            for stored in page:
                if stored.id <= previous:
                    raise ValueError(f"the log went back from position {previous} to {stored.id}")
                leaf = size + len(commitments)
                if leaf == 0 or stored.id != previous + 1:
                    runs.append((leaf, stored.id))
                commitments.append(commitment_of(self.key, stored)[0])
                previous = stored.id
            tiles, entries = _extended(tx, size, commitments)
            tx.write(size + len(commitments), previous, tiles, entries, runs)
            return len(commitments), size + len(commitments)

    def matches(self, read: Read) -> bool:
        """Whether the tree's newest leaf is the commitment to the event at its position in
        the log (a log put back, cut or changed behind the tree does not match)."""
        size, last = self.store.state()
        if size == 0:
            return True
        found = read(last, 1)
        return bool(found) and found[0].id == last and commitment_of(
            self.key, found[0])[0] == self.commitment(size - 1)

    # Reading.
    @property
    def size(self) -> int:
        return self.store.state()[0]

    def root(self, size: int | None = None) -> bytes:
        """The tree's root hash at `size` leaves (its size now by default)."""
        size = self.size if size is None else size
        return tlog.empty_root() if size == 0 else self.subtree(0, size)

    def subtree(self, start: int, end: int) -> bytes:
        """MTH of leaves [start, end) (any range the proof algorithms ask for)."""
        hashes = [self._node((e - s).bit_length() - 1, s >> ((e - s).bit_length() - 1))
                  for s, e in tlog.subtree_ranges(start, end)]
        result = hashes[-1]
        for left in reversed(hashes[:-1]):
            result = tlog.node_hash(left, result)
        return result

    def inclusion(self, leaf: int, size: int) -> list[bytes]:
        self._check(size)
        if not 0 <= leaf < size:
            raise NotInTree(f"leaf {leaf} is not in a tree of {size} leaves")
        return tlog.inclusion_proof(leaf, size, self.subtree)

    def consistency(self, old: int, new: int) -> list[bytes]:
        self._check(new)
        if not 0 <= old <= new:
            raise NotInTree(f"a tree of {old} leaves is not part of one of {new}")
        if old in (0, new):  # nothing to prove: the empty proof (RFC 9162; C2SP tlog-witness)
            return []
        return tlog.consistency_proof(old, new, self.subtree)

    def tile(self, level: int, idx: int, width: int) -> bytes:
        """Tile (level, idx) at `width` hashes, as C2SP tlog-tiles serves it."""
        data = self._full(level, idx) if width == WIDTH else self.store.tile(level, idx)
        if len(data) < width * H:
            raise NotInTree(f"tile {level}/{idx} holds {len(data) // H} hashes, not {width}")
        return data[:width * H]

    def entries(self, idx: int, width: int) -> bytes:
        """Entry tile idx at `width` entries: the commitments as an entry bundle."""
        data = self.store.entries(idx)
        if len(data) < width * H:
            raise NotInTree(f"entry tile {idx} holds {len(data) // H} entries, not {width}")
        return tlog.entry_bundle([data[i * H:(i + 1) * H] for i in range(width)])

    def commitment(self, leaf: int) -> bytes:
        data = self.store.entries(leaf // WIDTH)
        at = (leaf % WIDTH) * H
        if len(data) < at + H:
            raise NotInTree(f"leaf {leaf} is not in the tree")
        return data[at:at + H]

    def leaf_of(self, position: int) -> int | None:
        """The leaf of the event at a log position; None for a position the tree has not
        reached (or a gap)."""
        size, last = self.store.state()
        if position > last or position < 1:
            return None
        runs = self._current_runs(size)
        i = bisect.bisect_right([p for _, p in runs], position) - 1
        if i < 0:
            return None
        first_leaf, first_position = runs[i]
        leaf = first_leaf + position - first_position
        end = runs[i + 1][0] if i + 1 < len(runs) else size
        return leaf if leaf < end else None

    def size_at(self, position: int) -> int:
        """How many leaves the events at log positions up to `position` make (as far as the
        tree reaches)."""
        size, _ = self.store.state()
        runs = self._current_runs(size)
        i = bisect.bisect_right([p for _, p in runs], position) - 1
        if i < 0:
            return 0
        first_leaf, first_position = runs[i]
        end = runs[i + 1][0] if i + 1 < len(runs) else size
        return min(first_leaf + position - first_position + 1, end)

    def _current_runs(self, size: int) -> list[tuple[int, int]]:
        with self._guard:
            if self._runs_size != size:
                self._runs, self._runs_size = self.store.runs(), size
            return self._runs

    def _check(self, size: int) -> None:
        if size > self.size:
            raise NotInTree(f"the tree holds {self.size} leaves, not {size}")

    def _full_tile(self, level: int, idx: int) -> bytes:
        data = self.store.tile(level, idx)
        if len(data) < WIDTH * H:
            raise NotInTree(f"tile {level}/{idx} is not full")
        return data

    def _inside_full_tile(self, level: int, idx: int) -> tuple[bytes, ...]:
        """Every node inside full tile (level, idx), height by height: its own 256 hashes, the
        128 above them, and so on to the 2 under its root (8 KiB more than the tile)."""
        heights = [self._full(level, idx)]
        for _ in range(tlog.TILE_HEIGHT - 1):
            heights.append(_paired(heights[-1]))
        return tuple(heights)

    def _complete_node(self, height: int, index: int) -> bytes:
        """The hash of the complete node of `height` numbered `index` (leaves index·2^height
        onwards), from the one tile that holds its descendants at a multiple of 8 levels: from
        the nodes inside it, hashed once and kept, when it is full; else hashed up from at most
        128 of its hashes."""
        level, below = divmod(height, tlog.TILE_HEIGHT)
        first = index << below
        idx, offset = divmod(first, WIDTH)
        try:
            inside = self._inside(level, idx)
        except NotInTree:  # the tile at the tree's right edge: not full, so not kept
            pass
        else:
            at = (offset >> below) * H
            return inside[below][at:at + H]
        count = 1 << below
        data = self.store.tile(level, idx)
        if len(data) < (offset + count) * H:
            raise NotInTree(f"node {height}/{index} is not complete in the tree")
        data = data[offset * H:(offset + count) * H]
        for _ in range(below):
            data = _paired(data)
        return data


def _paired(hashes: bytes) -> bytes:
    """The hashes of the nodes above an even number of neighbouring hashes, pair by pair."""
    return b"".join([hashlib.sha256(b"\x01" + hashes[i:i + 2 * H]).digest()
                     for i in range(0, len(hashes), 2 * H)])


def _extended(tx: Appending, size: int, commitments: list[bytes]
              ) -> tuple[dict[tuple[int, int], bytes], dict[int, bytes]]:
    """The tiles and entry tiles that appending `commitments` at `size` changes."""
    entries: dict[int, bytes] = {}
    _grow(entries, size, commitments, tx.entries)
    tiles: dict[tuple[int, int], bytes] = {}
    pending, level, start = [tlog.leaf_hash(c) for c in commitments], 0, size
    while pending:
        at_level: dict[int, bytes] = {}
        full = _grow(at_level, start, pending, functools.partial(tx.tile, level))
        tiles.update(((level, idx), data) for idx, data in at_level.items())
        pending = [tlog.root_of([data[i * H:(i + 1) * H] for i in range(WIDTH)])
                   for data in full]
        level, start = level + 1, start // WIDTH
    return tiles, entries


def _grow(tiles: dict[int, bytes], start: int, hashes: list[bytes],
          stored: Callable[[int], bytes]) -> list[bytes]:
    """Add `hashes` at index `start` onwards to the tiles of one level; the tiles it filled."""
    full: list[bytes] = []
    k = 0
    while k < len(hashes):
        idx, offset = divmod(start + k, WIDTH)
        take = min(WIDTH - offset, len(hashes) - k)
        before = tiles.get(idx)
        if before is None:
            before = stored(idx) if offset else b""
        if len(before) != offset * H:
            raise ValueError(f"tile {idx} holds {len(before) // H} hashes where {offset} "
                             "were expected: the tree's store is damaged")
        data = before + b"".join(hashes[k:k + take])
        tiles[idx] = data
        if len(data) == WIDTH * H:
            full.append(data)
        k += take
    return full
