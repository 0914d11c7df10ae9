"""The public tree checked against the log it was built from (`reddog verify` runs it).

The tree is rebuilt from the log, in memory, with the same salts, and compared leaf by leaf with
the tree the service keeps and serves; and every checkpoint the service signed is compared with
the rebuilt tree's root at its size. A difference names where it is: a leaf whose event changed
(an edit re-sealed with the chain key still changes the event's commitment), leaves the log no
longer holds (a cut), or a signed checkpoint the log no longer matches. Nothing here needs the
signing key: the checkpoints are checked with the verifier key, as anyone would.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

from ledger.core import tlog
from ledger.transparency.publish import PublicLog
from ledger.transparency.tree import APPEND_MOST, Tree
from ledger.transparency.treestore import SQLiteTreeStore

#: Problems named at most; the count says how many there were.
MOST_NAMED = 20


@dataclass
class TreeFindings:
    """What the comparison found."""

    leaves: int = 0
    log_events: int = 0
    checkpoints: int = 0
    problems: list[str] = field(default_factory=list)
    more: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, problem: str) -> None:
        if len(self.problems) < MOST_NAMED:
            self.problems.append(problem)
        else:
            self.more += 1


def check_tree(public: PublicLog) -> TreeFindings:
    """Compare the tree the service keeps, and what it signed, with the log (see above)."""
    findings = TreeFindings()
    rebuilt_store = SQLiteTreeStore(None)
    try:
        rebuilt = Tree(rebuilt_store, public.tree.key)
        while rebuilt.catch_up(public.read, APPEND_MOST)[0] == APPEND_MOST:
            pass
        kept_size, rebuilt_size = public.tree.size, rebuilt.size
        findings.leaves, findings.log_events = kept_size, rebuilt_size
        if kept_size > rebuilt_size:
            findings.add(f"the tree holds {kept_size} leaves and the log only {rebuilt_size} "
                         f"events: leaves {rebuilt_size} to {kept_size - 1} were cut from the "
                         "log")
        _compare_leaves(public, rebuilt, min(kept_size, rebuilt_size), findings)
        _compare_checkpoints(public, rebuilt, rebuilt_size, findings)
    finally:
        rebuilt_store.close()
    return findings


def _compare_leaves(public: PublicLog, rebuilt: Tree, size: int, findings: TreeFindings) -> None:
    for idx in range((size + tlog.TILE_WIDTH - 1) // tlog.TILE_WIDTH):
        kept, made = public.store.entries(idx), rebuilt.store.entries(idx)
        width = min(tlog.TILE_WIDTH, size - idx * tlog.TILE_WIDTH)
        for i in range(width):
            a, b = kept[i * 32:(i + 1) * 32], made[i * 32:(i + 1) * 32]
            if a != b:
                leaf = idx * tlog.TILE_WIDTH + i
                findings.add(f"leaf {leaf}: the event the log holds at that rank is not the one "
                             "the tree committed to (changed after it was appended)")


def _compare_checkpoints(public: PublicLog, rebuilt: Tree, log_size: int,
                         findings: TreeFindings) -> None:
    least = 0
    while True:
        sizes = public.store.signed_sizes(least, 500)
        for size in sizes:
            findings.checkpoints += 1
            signed = public.store.signed(size)
            assert signed is not None
            try:
                checkpoint = tlog.open_checkpoint(signed.note, public.verifier)
            except tlog.NoteError as exc:
                findings.add(f"checkpoint of {size} leaves: not signed by the log's key: {exc}")
                continue
            if size > log_size:
                findings.add(f"checkpoint of {size} leaves: the log holds only {log_size} "
                             "events: events it covered were removed")
            elif rebuilt.root(size) != checkpoint.root:
                findings.add(f"checkpoint of {size} leaves (root "
                             f"{base64.b64encode(checkpoint.root).decode()}): the log's tree "
                             "at that size has another root: the log was changed after it "
                             "was signed")
        if len(sizes) < 500:
            return
        least = sizes[-1] + 1
