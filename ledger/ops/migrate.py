"""Moving a store into another (`reddog migrate`): SQLite to PostgreSQL, or any pair of the
persistent stores.

1. The source's read models are read first (in one transaction, so they agree with their
   position), then its last position, the head. Everything up to the head is copied.
2. What the target holds already must be the source's own beginning: compared batch by batch
   (positions, ids, versions, topics and states, by digest) up to the target's head. A target
   holding anything else, or more, is refused before anything is written. So a run that was
   interrupted resumes after the last batch it committed.
3. The events after the target's head are copied in batches, each in one transaction, at their
   own positions (`ledger.ops.rawstore`): gaps in the source's numbering (rolled-back inserts on
   PostgreSQL) stay gaps, so checkpoints, which record positions, verify on the target.
4. The snapshots the target lacks are copied, and its read models replaced by the source's.
5. The two stores are proved equal: every batch of events by digest, the same checkpoint
   events at the same positions, the same snapshots, the same read models (`Proof`).

The chain key travels as a file: the target's key must be the source's (`place_target_key`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from eventsourcing.utils import get_topic

from ledger.domain.checkpoint import Checkpoints
from ledger.integrity.chainkey import ChainKey, chain_key_file, find_chain_key, write_key_file
from ledger.ops.rawrows import ModelsDigest, Row, digest, digest_models
from ledger.ops.rawstore import RawStore
from ledger.settings import Settings
from ledger.store.locate import locate

DEFAULT_BATCH = 500
MOST_BATCH = 5000  # a much larger single insert can hang on PostgreSQL (psycopg issue 685)
CHECKPOINT_TOPIC = get_topic(Checkpoints.Recorded)  # as stored, to count checkpoint rows


class Refused(Exception):
    """The migration will not write into this target (nothing was written)."""


class NotEqual(Exception):
    """After copying, the two stores differ: the proof failed."""


@dataclass
class Proof:
    """What was compared, and found equal, between the source and the target."""

    head: int
    events: int
    batches: int
    checkpoints: int
    last_checkpoint: int
    snapshots: int
    documents: int
    read_position: int
    events_sha256: str

    def summary(self) -> dict[str, int | str]:
        return asdict(self)


def source_key(settings: Settings) -> ChainKey:
    """The source store's chain key, found as a process on it finds it; never made anew."""
    return find_chain_key(settings, locate(settings.store), lambda: False)


def check_source_key(source: RawStore, key: ChainKey) -> None:
    """Refused when the source recorded another key's fingerprint than this key's, or none (a
    store from before fingerprints: the first process to open it records one, and that would
    be the target's verification, leaving the target an event ahead of its source)."""
    recorded = source.recorded_fingerprint()
    if recorded is None:
        raise Refused("the source has not recorded its chain key's fingerprint (a store from "
                      "before fingerprints): run `reddog verify` on it once, which records it, "
                      "then migrate")
    if recorded != key.fingerprint:
        raise Refused(f"the chain key from {key.source} (fingerprint {key.fingerprint}) is not "
                      f"the source's key (fingerprint {recorded}): give --from-key")


def place_target_key(settings: Settings, key: ChainKey) -> str:
    """Make sure the target's key is the source's: write the key file where the target's
    settings look for it (beside a SQLite file, or REDDOG_CHAIN_KEY_FILE / `--to-key`) unless
    the same key is there. Refused if another key is there, or the target names no file."""
    if settings.chain_key:
        if settings.chain_key.encode() != key.secret:
            raise Refused("REDDOG_CHAIN_KEY is not the source's chain key")
        return "REDDOG_CHAIN_KEY"
    path = chain_key_file(settings, locate(settings.store))
    if path is None:
        raise Refused("the target names no chain key file: give --to-key FILE (the file "
                      "REDDOG_CHAIN_KEY_FILE will name for the target's processes)")
    text = key.secret.decode()
    if not write_key_file(path, text) and path.read_text().strip() != text:
        raise Refused(f"the target's chain key file {path} holds another key; the target's "
                      "events must stay sealed by the source's key. Move that file away first.")
    return str(path)


def check_prefix(source: RawStore, target: RawStore, head: int, batch: int) -> int:
    """The target's last position, after checking that everything it holds is the beginning
    of the source's log, which ends at `head`; Refused naming the first position that differs."""
    held = target.head()
    if not held:
        return 0
    if held > head:
        raise Refused(f"the target holds events up to position {held}, beyond the source's "
                      f"last position {head}: it is not a copy of this source")
    _compare(source, target, held, batch)
    return held


def _compare(source: RawStore, target: RawStore, upto: int, batch: int,
             seen: Callable[[list[Row]], None] | None = None) -> int:
    """Compare both logs up to a position, a batch at a time; the batches compared."""
    after = batches = 0
    while after < upto:
        ours, theirs = source.events(after, batch, upto), target.events(after, batch, upto)
        if not ours and not theirs:
            break
        if digest(ours) != digest(theirs):
            raise Refused(f"the target differs from the source at position "
                          f"{_first_difference(ours, theirs)}: it holds other events")
        if seen is not None:
            seen(ours)
        after = ours[-1].position
        batches += 1
    return batches


def _first_difference(ours: list[Row], theirs: list[Row]) -> int:
    for a, b in zip(ours, theirs, strict=False):
        if a != b:
            return min(a.position, b.position)
    longer = ours if len(ours) > len(theirs) else theirs
    return longer[min(len(ours), len(theirs))].position


def copy_events(source: RawStore, target: RawStore, after: int, head: int, batch: int,
                say: Callable[[str], None]) -> int:
    """Copy the events after `after` up to `head`, a batch per transaction; the count."""
    copied = 0
    while after < head:
        rows = source.events(after, batch, head)
        if not rows:
            break
        target.append(rows)
        copied += len(rows)
        after = rows[-1].position
        say(f"copied {copied} events, up to position {after} of {head}")
    return copied


@dataclass(frozen=True)
class CopiedModels:
    """The read models as copied: the position they were folded up to, their digest and the
    rows of each table."""

    position: int
    sha256: str
    counts: dict[str, int]


def migrate(source: RawStore, target: RawStore, batch: int = DEFAULT_BATCH,
            say: Callable[[str], None] = lambda _line: None,
            ready: Callable[[], None] = lambda: None) -> Proof:
    """Copy the source into the target (resuming after what the target holds) and prove the
    two equal; Refused when the target holds something else, NotEqual if the proof fails.
    `ready` runs once the target is known to be this source's copy, before any write."""
    with source.read_models() as (position, chunks):  # first: the head read next covers them
        head = source.head()
        if not head:
            raise Refused("the source holds no events")
        held = check_prefix(source, target, head, batch)
        ready()
        if held >= head:
            say(f"the target holds the source's whole log, up to position {head}")
        else:
            say(f"the target holds the source's log up to position {held}; copying positions "
                f"{held + 1} to {head}" if held else f"copying positions 1 to {head}")
        copy_events(source, target, held, head, batch, say)
        snapshots = source.snapshots()
        target.add_snapshots(snapshots)
        models = ModelsDigest(chunks)
        target.replace_read_models(models)
        copied = CopiedModels(position, models.hexdigest(), models.counts)
    say(f"copied {len(snapshots)} snapshots and {copied.counts['documents']} read model "
        f"documents (folded up to position {position})")
    return prove_equal(source, target, head, batch, copied, snapshots)


def prove_equal(source: RawStore, target: RawStore, head: int, batch: int,
                models: CopiedModels, snapshots: list[tuple[str, int, str, bytes]]) -> Proof:
    """Compare the stores up to `head`: events batch by batch, checkpoints, snapshots, read
    models. NotEqual names the first thing that differs."""
    whole = hashlib.sha256()
    counted = {"events": 0, "checkpoints": 0, "last_checkpoint": 0}

    def seen(rows: list[Row]) -> None:
        for row in rows:
            row.digest_into(whole)
            counted["events"] += 1
            if row.topic == CHECKPOINT_TOPIC:
                counted["checkpoints"] += 1
                counted["last_checkpoint"] = row.position

    try:
        batches = _compare(source, target, head, batch, seen)
    except Refused as error:
        raise NotEqual(str(error)) from None
    if target.head() != head:
        raise NotEqual(f"the target's last position is {target.head()}, the source's {head}")
    if target.snapshots() != snapshots:
        raise NotEqual("the target's snapshots differ from the source's")
    with target.read_models() as (position, chunks):
        sha256, _counts = digest_models(chunks)
    if (position, sha256) != (models.position, models.sha256):
        raise NotEqual("the target's read models differ from the source's")
    return Proof(head=head, events=counted["events"], batches=batches,
                 checkpoints=counted["checkpoints"], last_checkpoint=counted["last_checkpoint"],
                 snapshots=len(snapshots), documents=models.counts["documents"],
                 read_position=models.position, events_sha256=whole.hexdigest())


def key_path_setting(path: str | None) -> str | None:
    """A key file option as an absolute path (every process must find the same file)."""
    return None if path is None else str(Path(path).expanduser().absolute())
