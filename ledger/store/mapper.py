"""The store's mapper: every event stored is sealed with its keyed MAC (`ledger.core.digests`)."""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Mapper, StoredEvent
from eventsourcing.utils import get_topic

from ledger.core.digests import event_digest, event_mac, remember_sealed, stored_event_digest


class ChainedMapper(Mapper):
    """A mapper that seals every stored event with its keyed MAC."""

    chain_key: bytes = b""

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        state = vars(domain_event)
        if "chain_mac" not in state:
            object.__setattr__(domain_event, "chain_mac", event_mac(
                self.chain_key, get_topic(type(domain_event)), domain_event.originator_id,
                domain_event.originator_version, event_digest(domain_event)))
        return super().to_stored_event(domain_event)

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        """The domain event, upcast by its class's `upcast_vN_vN+1` where its class is newer
        than 1; the digest it was sealed with is remembered for its aggregate's chain."""
        domain_event = super().to_domain_event(stored_event)
        if getattr(type(domain_event), "class_version", 1) > 1:
            remember_sealed(domain_event, stored_event_digest(self, stored_event))
        return domain_event
