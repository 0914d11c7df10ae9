"""What the integrity checks read of a ledger: its log and mapper, how it is sealed, its
repository, read models and head. The application (`ledger.app.base.LedgerBase`) is one; the
checks never import it, so they sit below the layer that builds them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol
from uuid import UUID

from ledger.readmodels.projection import Followed
from ledger.store.snapshots import Snapshotting

if TYPE_CHECKING:
    from eventsourcing.persistence import ApplicationRecorder, Recording

    from ledger.integrity.chainkey import ChainKey
    from ledger.integrity.head import HeadFile
    from ledger.readmodels.projection import Projection
    from ledger.settings import Settings
    from ledger.store.repository import LedgerRepository


class SealedLedger(Followed, Snapshotting, Protocol):
    """A ledger as its checks see it: what the projection and the snapshots need of it, and its
    settings, chain key, head, repository and read models."""

    @property
    def settings(self) -> Settings: ...

    @property
    def chain(self) -> ChainKey: ...

    @property
    def head(self) -> HeadFile | None: ...

    @property
    def recorder(self) -> ApplicationRecorder: ...

    @property
    def repository(self) -> LedgerRepository: ...

    @property
    def projection(self) -> Projection: ...

    def save(self, *objs: Any, **kwargs: Any) -> list[Recording[UUID]]: ...

    def close(self) -> None: ...
