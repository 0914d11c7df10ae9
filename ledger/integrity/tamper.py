"""Tamper evidence checked position by position: each event reads, its MAC holds, it extends
its aggregate's hash chain, and each checkpoint's digests match the stored log (`ledger.core.digests`).
Every digest, MAC and link is read from the event as it was stored (never upcast), so an
upcaster cannot raise a false alarm and any change to the stored bytes still fails: an event of
the stored form is digested from its stored bytes as they are (its MAC is the last member of
its JSON), one of the canonical form from its state decoded and written canonically again. Used over the whole log by `ledger.integrity.verify` and over a range by `ledger.integrity.ranges`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eventsourcing.persistence import Mapper

from ledger.core.digests import (
    GENESIS,
    StoredSeals,
    checkpoint_mac,
    expand_ranges,
    stored_digest,
)
from ledger.core.ids import id_text
from ledger.domain.checkpoint import Checkpoints


class TamperCheck:
    """Per position: the event reads, its MAC holds, it extends its aggregate's hash chain; and
    each checkpoint's digests match the stored log, position by position (`ledger.core.digests`)."""

    def __init__(self, key: bytes, mapper: Mapper, fail: Callable[[int, Any, str], None]) -> None:
        self.key = key
        self.seals = StoredSeals(key, mapper)
        self.fail = fail
        self.heads: dict[str, tuple[int, str]] = {}
        self.digests: dict[int, str] = {}
        self.last_mac = GENESIS
        self.checkpointed = 0
        self.checkpoints = 0

    def check_decoded(self, position: int, stored: Any, state: dict[str, Any] | None,
                      event: Any) -> str:
        """Check one position whose sealed state the caller decoded (`read_position`):
        None when its bytes cannot be decoded. Answers its aggregate's id as text, written once
        for every check here and for the caller's own."""
        aggregate = id_text(stored.originator_id)
        if state is None or event is None:
            self.digests[position] = stored_digest(position, stored, aggregate)
            if state is None:
                self.fail(position, aggregate,
                          "the stored event cannot be read: its bytes were altered")
            else:
                self.fail(position, aggregate, "the stored event cannot be read as its class: a "
                          "class renamed without its old topic, or no upcaster from its stored "
                          "version")
            return aggregate
        # The stored form from its bytes alone; the canonical form from its sealed state. The
        # row's digest for the checkpoints is then taken from the event's.
        digest, sealed, stored_form = self.seals.seal(stored, state, aggregate)
        self.digests[position] = stored_digest(position, stored, aggregate,
                                               digest if stored_form else None)
        if not sealed:
            self.fail(position, aggregate, "the event does not match its MAC: altered, or written "
                      "outside the application")
        version, head = self.heads.get(aggregate, (0, GENESIS))
        if stored.originator_version != version + 1:
            self.fail(position, aggregate, f"version {stored.originator_version} follows version "
                      f"{version}: an event of this aggregate is missing or out of order")
        elif state.get("chain_prev") != head:
            self.fail(position, aggregate, "the event breaks its aggregate's hash chain")
        self.heads[aggregate] = (stored.originator_version, digest)
        if isinstance(event, Checkpoints.Recorded):
            self._check_checkpoint(position, event)
        return aggregate

    def _check_checkpoint(self, position: int, event: Any) -> None:
        """Compare a checkpoint with the log: every position it names must hold the event it
        recorded, and no other position in its range may hold one. Gaps it recorded (sequence
        numbers a rolled-back insert used up) are not failures."""
        first, last, digests = event.first, event.last, list(event.digests)
        ranges = getattr(event, "ranges", None)
        if event.prev_mac != self.last_mac or event.mac != checkpoint_mac(
                self.key, event.prev_mac, first, last, digests, ranges):
            self.fail(position, event.originator_id, "the checkpoint's MAC chain is broken")
        recorded = (expand_ranges(ranges) if ranges is not None
                    else list(range(first, first + len(digests))))
        for at, expected in zip(recorded, digests, strict=False):
            if self.digests.get(at) != expected:
                what = "is missing" if at not in self.digests else "holds a different event"
                self.fail(at, event.originator_id, f"position {at} {what} than the checkpoint at "
                          f"position {position} recorded (deleted, inserted, swapped or altered)")
                break
        named = set(recorded)
        extra = [p for p in self.digests if first <= p <= last and p not in named]
        if extra:
            self.fail(min(extra), event.originator_id, f"position {min(extra)} was not in the log "
                      f"when the checkpoint at position {position} was recorded")
        for done in [p for p in self.digests if p <= last]:  # keep only what is still to check
            del self.digests[done]
        self.last_mac = event.mac
        self.checkpointed = last
        self.checkpoints += 1
