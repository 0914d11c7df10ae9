"""The public log kept up with the event log: leaves appended, checkpoints signed, witnesses told.

- **Appended** after the commit, by a `Publisher` thread of each server process (with
  `--workers N`, of one worker for all of them: `ledger.core.background.SharedLoop`) that the saves
  wake, `GATHER_SECONDS` later, the events of every save since in one append (one process at
  a time appends: `Tree.catch_up` holds the tree's write lock), or by
  `PublicLog.catch_up` wherever an answer needs the tree to reach the log's end.
- **Signed** (`PublicLog.sign`): a checkpoint once the tree has grown by `EVERY` leaves since the
  last one, or `SECONDS` after the last one while leaves arrive, and on demand (a receipt whose
  deal the newest checkpoint does not cover yet, `POST /log/checkpoints`). Before signing, the
  tree's root at the size of the newest checkpoint is checked against that checkpoint's root:
  a tree that is not an extension of what was signed (rebuilt from a log changed since) is never
  signed, so the service never signs two checkpoints that are not consistent.
- **Witnessed**: every new checkpoint is sent to the witnesses the settings name
  (`ledger.transparency.witness.Witnesses`), and the cosignatures they return are kept and
  served with it.
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Callable
from typing import Any

from ledger.core import tlog
from ledger.core.background import Background, SharedLoop
from ledger.settings import Settings
from ledger.store.locate import StoreLocation
from ledger.transparency.signing import find_signing_key
from ledger.transparency.tree import APPEND_MOST, Read, Tree, salt_key
from ledger.transparency.treestore import Signed, TreeStore, tree_store_for
from ledger.transparency.witness import Witnesses, parse_witnesses

log = logging.getLogger(__name__)
#: A checkpoint at least every this many leaves,
EVERY = 1000
#: and this many seconds after the last while leaves arrive.
SECONDS = 10.0
#: Seconds a publisher, woken by a save, lets more saves gather before it appends them: one
#: append (a transaction of the tree and its fsync, and the checks of what is due) for the
#: events of many commands, not one for each, and the tree at most that much later behind
#: the log (an answer that needs the tree at the log's end catches it up itself; checkpoints
#: are signed every `EVERY` leaves or `SECONDS` anyway). A wake costs about 0.6 ms of CPU on
#: SQLite and 3.5 ms on PostgreSQL, whatever it appends, in the process that publishes.
GATHER_SECONDS = 0.5


#: The most leaves a request appends itself (a store's first request on a large log leaves the
#: rest to the `Publisher`).
REQUEST_MOST = 2 * APPEND_MOST


class NotConsistent(Exception):
    """The tree does not extend the newest signed checkpoint: nothing more is signed."""


class PublicLog:
    """One store's tree, its signer and what it signed."""

    def __init__(self, tree: Tree, store: TreeStore, signer: tlog.Signer, read: Read,
                 clock: Callable[[], float] | None = None) -> None:
        self.tree, self.store, self.signer, self.read = tree, store, signer, read
        #: The one clock (`time.time`, looked up on every call: tests control it).
        self.clock = clock or (lambda: time.time())
        self.verifier = signer.verifier()
        self.origin = signer.name
        #: The witnesses each new checkpoint is sent to (`ledger.transparency.witness`).
        self.witnesses: Witnesses | None = None
        self._witnessed = 0

    def catch_up(self, most: int | None = None) -> int:
        """Append every event of the log the tree lacks (at most `most` of them); the tree's
        size."""
        done = 0
        while True:
            appended, size = self.tree.catch_up(self.read, APPEND_MOST)
            done += appended
            if appended < APPEND_MOST or (most is not None and done >= most):
                return size

    def latest(self) -> Signed | None:
        return self.store.latest()

    def due(self) -> bool:
        """Whether a checkpoint is due (see the module's docstring)."""
        return self._due(self.tree.size, self.store.latest())

    def _due(self, size: int, latest: Signed | None) -> bool:
        if latest is None:
            return size > 0
        return size >= latest.size + EVERY or (
            size > latest.size and self.clock() - latest.signed_at >= SECONDS)

    def sign(self) -> Signed:
        """Sign a checkpoint of the tree as it is now (the newest one if it covers as much)."""
        size = self.tree.size
        latest = self.store.latest()
        if latest is not None and latest.size >= size:
            return latest
        root = self.tree.root(size)
        if latest is not None and self.tree.root(latest.size) != latest.root:
            raise NotConsistent(
                f"the tree's root at {latest.size} leaves is not the root signed at that size: "
                "the log was changed after it was signed; nothing more is signed")
        note = tlog.sign_checkpoint(tlog.Checkpoint(self.origin, size, root), self.signer)
        signed = Signed(size, root, note, self.clock())
        self.store.add_checkpoint(signed)
        signed = self.store.signed(size) or signed
        log.info("log checkpoint signed", extra={"size": size})
        return signed

    def witness(self) -> dict[str, str]:
        """Send the newest checkpoint to the witnesses, unless this process sent it already;
        what each said."""
        if self.witnesses is None:
            return {}
        latest = self.store.latest()
        if latest is None or latest.size <= self._witnessed:
            return {}
        checkpoint = tlog.Checkpoint.parse(tlog.note_parts(latest.note)[0])
        said = self.witnesses.send(checkpoint, latest.note)
        self._witnessed = latest.size
        return said

    def witness_keys(self) -> list[tlog.Verifier]:
        """The keys of the witnesses whose cosignatures this log keeps."""
        return [] if self.witnesses is None else [w.verifier for w in self.witnesses.settings]

    def keep_cosignature(self, size: int, witness: str, line: str) -> None:
        self.store.add_cosignature(size, witness, line)

    def covering(self, size: int) -> Signed:
        """A signed checkpoint of at least `size` leaves, signed now if none is yet."""
        latest = self.store.latest()
        if latest is not None and latest.size >= size:
            return latest
        if self.tree.size < size:
            self.catch_up()
        return self.sign()

    def note(self, signed: Signed) -> str:
        """The checkpoint's note with the log's signature and every cosignature kept for it."""
        lines = [line for _, line in self.store.cosignatures(signed.size)]
        return tlog.add_signature_lines(signed.note, lines) if lines else signed.note

    def state_at(self, position: int) -> dict[str, Any] | None:
        """The tree as the events up to a log position make it: its size and root (base64),
        which a consistency proof to any later signed checkpoint checks; None while the tree
        has not reached that position (a request appends `REQUEST_MOST` leaves at most)."""
        _, last = self.store.state()
        if position > last:
            self.catch_up(REQUEST_MOST)
            _, last = self.store.state()
            if position > last:
                return None
        size = self.tree.size_at(position)
        return {"position": position, "size": size,
                "root": base64.b64encode(self.tree.root(size)).decode()}

    def refresh(self, most: int | None = None) -> Signed | None:
        """Catch up (by at most `most` leaves: a request's share, the rest left to the
        `Publisher`) and sign if a checkpoint is due; the newest checkpoint."""
        size = self.catch_up(most)
        latest = self.store.latest()
        if self._due(size, latest):
            return self.sign()
        return latest


class Publisher(Background):
    """A process's thread that keeps its store's public log up with the event log (with a
    `SharedLoop`, one worker's thread for all the workers of a server)."""

    thread_name = "reddog-publisher"

    def __init__(self, public: PublicLog, poll: float = 1.0,
                 gather: float = GATHER_SECONDS, shared: SharedLoop | None = None) -> None:
        super().__init__(shared)
        self.public = public
        self.poll = poll
        self.gather = gather

    def run(self) -> None:
        while not self._stop.is_set():
            if not self._leads(self.poll):
                continue
            if self._waited(self.poll) and self._stop.wait(self.gather):
                break  # stopped while gathering: the tree catches up from the log later
            self._clear_wake()
            try:
                self.public.refresh()
                self.public.witness()
            except NotConsistent:
                log.exception("the public log is not consistent with what it signed")
            except Exception:
                log.exception("the public log could not be brought up to date")


def open_public_log(settings: Settings, store: StoreLocation, datastore: Any, prefix: str,
                    chain_key: bytes, read: Read) -> PublicLog:
    """The public log of a store: its tree's tables, its signing key (checked against what it
    signed, `ledger.transparency.signing`)."""
    trees = tree_store_for(store, datastore, prefix)
    try:
        signer = find_signing_key(settings, store, trees.latest())
    except BaseException:
        trees.close()
        raise
    tree = Tree(trees, salt_key(chain_key))
    if not tree.matches(read):
        # A log put back from a copy, or changed behind the tree: the tree is rebuilt from the
        # log as it is; the checkpoints it signed stay, and `PublicLog.sign` signs nothing
        # that does not extend them.
        log.warning("the public tree does not match the log's event at its last leaf: it is "
                    "rebuilt from the log")
        trees.clear_tree()
        tree = Tree(trees, salt_key(chain_key))
    public = PublicLog(tree, trees, signer, read)
    if settings.witnesses:
        public.witnesses = Witnesses(parse_witnesses(settings.witnesses), public.tree.consistency,
                                     public.keep_cosignature)
    return public
