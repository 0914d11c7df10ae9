"""What the integrity checks read of a ledger: its log and mapper, how it is sealed, its
repository, read models and head. The application (`ledger.app.base.LedgerBase`) is one; the
checks never import it, so they sit below the layer that builds them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol
from uuid import UUID

if TYPE_CHECKING:
    from eventsourcing.persistence import ApplicationRecorder, Mapper, Recording

    from ledger.integrity.chainkey import ChainKey
    from ledger.integrity.head import HeadFile
    from ledger.readmodels.projection import Projection
    from ledger.settings import Settings
    from ledger.store.locate import StoreLocation
    from ledger.store.repository import LedgerRepository


class SealedLedger(Protocol):
    """A ledger as its checks see it."""

    settings: Settings
    store: StoreLocation
    chain: ChainKey
    head: HeadFile | None

    @property
    def recorder(self) -> ApplicationRecorder: ...

    @property
    def mapper(self) -> Mapper[UUID]: ...

    @property
    def repository(self) -> LedgerRepository: ...

    @property
    def projection(self) -> Projection: ...

    @property
    def chain_key(self) -> bytes: ...

    def save(self, *objs: Any, **kwargs: Any) -> list[Recording[UUID]]: ...

    def close(self) -> None: ...
