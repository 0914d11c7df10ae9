"""The store's mapper: every event stored is sealed with its keyed MAC (`ledger.core.digests`).

An event of an aggregate is stored in the form it was sealed in when it was created
(`LedgerAggregate.Event.mutate`): the stored form, whose JSON was written then and is stored
as it is with the MAC spliced in (never written a second time), or the canonical form where
that JSON could not be written. Anything else stored (a snapshot) is sealed in the stored
form here. Every event read back keeps what its digest is worked out from (`read_seal`).
"""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import JSONTranscoder, Mapper, StoredEvent
from eventsourcing.utils import get_topic

from ledger.core.digests import (
    SEAL_MARK,
    SEAL_SLOT,
    body_digest,
    event_digest,
    event_mac,
    read_seal,
    seal_mac,
    sealed_json,
    state_to_store,
    stored_json,
)
from ledger.core.ids import id_text


class ChainedMapper(Mapper):
    """A mapper that seals every stored event with its keyed MAC."""

    chain_key: bytes = b""

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        state = vars(domain_event)
        kept = getattr(domain_event, SEAL_SLOT, None)
        if type(kept) is tuple:  # a new event of an aggregate, sealed when it was created
            body, digest = kept
            if body is not None and not self._writes_json():
                raise TypeError("the stored form of an event is JSON: this mapper's "
                                f"transcoder {type(self.transcoder).__name__} cannot read it")
        elif "chain_mac" in state:  # sealed already: stored as it is
            return super().to_stored_event(domain_event)
        else:  # a snapshot, say: nothing links to it, so it is sealed as it is stored here
            body, digest = self._body(domain_event), None
        topic = get_topic(type(domain_event))
        if body is None:  # the canonical form
            object.__setattr__(domain_event, "chain_mac", event_mac(
                self.chain_key, topic, domain_event.originator_id,
                domain_event.originator_version, digest or event_digest(domain_event)))
            return super().to_stored_event(domain_event)
        originator_id, version = state["originator_id"], state["originator_version"]
        if digest is None:
            digest = body_digest(topic, id_text(originator_id), version, body)
        mac = seal_mac(self.chain_key, digest)
        object.__setattr__(domain_event, "chain_mac", SEAL_MARK + mac)
        data = sealed_json(body, mac)
        if self.compressor:
            data = self.compressor.compress(data)
        if self.cipher:
            data = self.cipher.encrypt(data)
        return StoredEvent(originator_id=originator_id, originator_version=version, topic=topic,
                           state=data)

    def _writes_json(self) -> bool:
        """Whether this mapper's transcoder writes JSON (asked once: an `isinstance` of an ABC
        costs more than the rest of a check, for every event stored)."""
        writes = self.__dict__.get("_json_transcoder")
        if writes is None or writes[0] is not self.transcoder:
            writes = self.__dict__["_json_transcoder"] = (
                self.transcoder, isinstance(self.transcoder, JSONTranscoder))
        return bool(writes[1])

    def _body(self, domain_event: Any) -> bytes | None:
        """The JSON this mapper stores for an event, before its MAC; None when its transcoder
        does not write JSON (the canonical form then)."""
        if not self._writes_json():
            return None
        return stored_json(state_to_store(domain_event), self.transcoder.encode)

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        """The domain event, upcast by its class's `upcast_vN_vN+1` where its class is newer
        than 1; what its sealed digest is worked out from is kept on it (`read_seal`) for its
        aggregate's chain."""
        domain_event = super().to_domain_event(stored_event)
        if _sealable(type(domain_event)):
            read_seal(self, domain_event, stored_event)
        return domain_event


_SEALABLE: dict[type, bool] = {}


def _sealable(kind: type) -> bool:
    """Whether events of a class keep their seal (`LedgerAggregate.Event` and its kinds)."""
    known = _SEALABLE.get(kind)
    if known is None:
        known = _SEALABLE[kind] = any(SEAL_SLOT in getattr(k, "__slots__", ())
                                      for k in kind.__mro__)
    return known
