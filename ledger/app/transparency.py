"""The public log as the API serves it: checkpoints, tiles, proofs, the verifier key, and deal
receipts (`ledger.transparency`; the formats in docs/transparency.md).

Everything but a receipt is public: hashes of salted commitments, which tell nothing of what an
event holds. A receipt opens the events of one finished deal (the stored bytes and each one's
salt) to whom may read that deal, with each one's leaf, its inclusion proof against a signed
checkpoint, and the deal's fairness data.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from uuid import UUID

from ledger.app.access import Action, Principal, require
from ledger.app.base import LedgerBase
from ledger.app.deals import DealService
from ledger.core import tlog
from ledger.core.errors import InvalidInput, NotFound, RuleViolation, Unavailable
from ledger.store.eventlog import select_versions
from ledger.transparency.publish import REQUEST_MOST, NotConsistent, PublicLog
from ledger.transparency.tree import NotInTree, commitment_of
from ledger.transparency.treestore import Signed

RECEIPT_FORMAT = "reddog-receipt/1"
#: Most checkpoints one page of the list holds.
CHECKPOINT_PAGE = 100


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class TransparencyService:
    """The public log's answers, and receipts of deals."""

    def __init__(self, ledger: LedgerBase, deals: DealService) -> None:
        self.ledger = ledger
        self.deals = deals

    @property
    def public(self) -> PublicLog:
        if self.ledger.public is None:
            raise NotFound("this service keeps no public log (REDDOG_TRANSPARENCY=off)")
        return self.ledger.public

    def checkpoint(self) -> str:
        """The newest signed checkpoint with its cosignatures (signed now if none is yet and
        the log holds events, or one is due)."""
        public = self.public
        try:
            signed = public.refresh(REQUEST_MOST) or public.sign()
        except NotConsistent:  # it signs no more; what it signed is still served
            latest = public.latest()
            if latest is None:
                raise
            signed = latest
        return public.note(signed)

    def checkpoint_at(self, size: int) -> str:
        """The signed checkpoint of a given size, with its cosignatures."""
        signed = self.public.store.signed(size)
        if signed is None:
            raise NotFound(f"no checkpoint of {size} leaves was signed", field="size")
        return self.public.note(signed)

    def checkpoints(self, least: int) -> dict[str, Any]:
        """The sizes of the signed checkpoints from `least` on, a page at a time."""
        sizes = self.public.store.signed_sizes(least, CHECKPOINT_PAGE + 1)
        more = sizes[CHECKPOINT_PAGE] if len(sizes) > CHECKPOINT_PAGE else None
        return {"origin": self.public.origin, "sizes": sizes[:CHECKPOINT_PAGE], "next": more}

    def sign_now(self, actor: Principal) -> dict[str, Any]:
        """Bring the tree to the log's end and sign a checkpoint of it (operator)."""
        require(actor, Action.SIGN_CHECKPOINT)
        public = self.public
        public.catch_up()
        try:
            return self._checkpoint_view(public.sign())
        except NotConsistent as exc:
            raise Unavailable(f"the public log signs nothing more: {exc}", retry_after=60
                              ) from None

    def take_cosignatures(self, note: str) -> dict[str, Any]:
        """Keep the cosignatures on a checkpoint the log signed that verify under the key of
        a witness the settings name (`reddog witness poll` posts them); the others are
        ignored. 422 unless at least one is kept."""
        public = self.public
        try:
            checkpoint = tlog.open_checkpoint(note, public.verifier)
        except tlog.NoteError as exc:
            raise InvalidInput(f"not a checkpoint signed by this log: {exc}", field="body"
                               ) from None
        signed = public.store.signed(checkpoint.size)
        if signed is None or signed.root != checkpoint.root:
            raise InvalidInput(f"this log signed no checkpoint of {checkpoint.size} leaves with "
                               "that root", field="body")
        kept = []
        for witness in public.witness_keys():
            try:
                tlog.verify_cosignature(note, witness)
            except tlog.NoteError:
                continue
            line = next(line for line in note.splitlines(keepends=True)
                        if line.startswith(f"— {witness.name} ")
                        and _cosigns(line, witness))
            public.keep_cosignature(checkpoint.size, witness.name, line)
            kept.append(witness.name)
        if not kept:
            raise InvalidInput("no cosignature by a witness this log knows verifies",
                               field="body")
        return {"size": checkpoint.size, "witnesses": kept}

    def verifier_key(self) -> str:
        return self.public.verifier.text()

    def tile(self, path: str) -> bytes:
        """A tile or entry tile by its C2SP tlog-tiles path (`tile/...`)."""
        try:
            where = tlog.parse_tile_path(path)
        except ValueError as exc:
            raise NotFound(f"no tile {path}: {exc}", field="path") from None
        try:
            if where.level is None:
                return self.public.tree.entries(where.index, where.width)
            return self.public.tree.tile(where.level, where.index, where.width)
        except NotInTree as exc:
            raise NotFound(str(exc), field="path") from None

    def inclusion(self, leaf: int, size: int) -> dict[str, Any]:
        """An inclusion proof of a leaf in the tree of `size` leaves."""
        try:
            proof = self.public.tree.inclusion(leaf, size)
        except NotInTree as exc:
            raise InvalidInput(str(exc), field="leaf" if leaf >= size else "size") from None
        return {"leaf": leaf, "size": size, "proof": [b64(h) for h in proof]}

    def consistency(self, old: int, new: int) -> dict[str, Any]:
        """A consistency proof from the tree of `old` leaves to the tree of `new` leaves."""
        try:
            proof = self.public.tree.consistency(old, new)
        except NotInTree as exc:
            raise InvalidInput(str(exc), field="from" if old > new else "to") from None
        return {"old": old, "new": new, "proof": [b64(h) for h in proof]}

    def leaf(self, position: int) -> dict[str, Any]:
        """The leaf of a log position (public: an index and a commitment)."""
        leaf = self.public.tree.leaf_of(position)
        if leaf is None:
            raise NotFound(f"position {position} has no leaf in the tree (yet)", field="position")
        return {"position": position, "leaf": leaf,
                "commitment": b64(self.public.tree.commitment(leaf))}

    def receipt(self, actor: Principal, deal_id: UUID) -> dict[str, Any]:
        """A finished deal's receipt (docs/transparency.md): its events opened, their leaves,
        inclusion proofs against a signed checkpoint, and its fairness data."""
        log = self.deals.deal_log(actor, deal_id)
        if not log.finished:
            raise RuleViolation("G2", "a deal's receipt is given once the deal has ended and "
                                "its seed is revealed")
        public = self.public
        by_aggregate: dict[UUID, list[int]] = {}
        for event in log.events:
            by_aggregate.setdefault(event.originator_id, []).append(event.originator_version)
        stored = sorted((n for aggregate, versions in by_aggregate.items()
                         for n in select_versions(self.ledger.store, self.ledger.recorder,
                                                  aggregate, versions)),
                        key=lambda n: n.id)
        if not stored:
            raise Unavailable("the deal's events could not be read", retry_after=1)
        public.catch_up(REQUEST_MOST)
        leaves = [public.tree.leaf_of(n.id) for n in stored]
        if any(leaf is None for leaf in leaves):
            raise Unavailable("the public tree has not reached the deal's events yet",
                              retry_after=1)
        try:
            signed = public.covering(max(leaf for leaf in leaves if leaf is not None) + 1)
        except NotConsistent as exc:
            raise Unavailable(f"the public log signs nothing more: {exc}", retry_after=60
                              ) from None
        events = []
        for notification, leaf in zip(stored, leaves, strict=True):
            assert leaf is not None
            _, salt = commitment_of(public.tree.key, notification)
            events.append({
                "leaf": leaf, "position": notification.id,
                "opening": {"originator_id": str(notification.originator_id),
                            "originator_version": notification.originator_version,
                            "topic": notification.topic,
                            "state": b64(bytes(notification.state)), "salt": b64(salt)},
                "proof": [b64(h) for h in public.tree.inclusion(leaf, signed.size)]})
        committed = log.committed
        return {"format": RECEIPT_FORMAT, "origin": public.origin, "deal": str(deal_id),
                "checkpoint": public.note(signed), "events": events,
                "fairness": {"commitment": committed["commitment"],
                             "server_seed": log.server_seed,
                             "client_seed": committed["client_seed"],
                             "nonce": committed["nonce"]}}

    def _checkpoint_view(self, signed: Signed) -> dict[str, Any]:
        return {"origin": self.public.origin, "size": signed.size, "root": b64(signed.root),
                "note": self.public.note(signed)}


def _cosigns(line: str, witness: tlog.Verifier) -> bool:
    """Whether a signature line is by the witness's key (its key ID)."""
    try:
        payload = base64.b64decode(line.rsplit(" ", 1)[1])
    except (ValueError, IndexError):
        return False
    return payload[:4] == witness.key_id


def receipt_bytes(receipt: dict[str, Any]) -> bytes:
    """A receipt as the file a player downloads."""
    return json.dumps(receipt, indent=1, sort_keys=True).encode()
