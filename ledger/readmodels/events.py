"""What the ledger projection's fold reads of each event before it folds it
(`ledger.readmodels.fold`): its facts, worked out once for every read model, and the documents
the event names itself, which a page reads from the store at once."""

from __future__ import annotations

from typing import Any, NamedTuple

from ledger.core.ids import id_text
from ledger.core.transfers import Transfer, transfers_of, wallet_movements
from ledger.domain.casino import CasinoDeal, CasinoTable
from ledger.domain.dispute import Dispute
from ledger.domain.highcard import HighCardTable
from ledger.domain.records import HEADER
from ledger.domain.wallet import Wallet
from ledger.rules.operations import Operation

#: Classes the fold dispatches on, as tuples made once (not a union made at every event).
TABLE_EVENTS = (CasinoTable.Event, HighCardTable.Event)
#: The per-table row of the day totals. Player ids start with a letter or digit
#: (`ledger.core.validation.PLAYER_ID`), so no player can be this marker.
TABLE_ROW = "#"
#: The variant of a casino table, in the read models.
CASINO = "casino"


class Facts(NamedTuple):
    """What the fold reads of an event, worked out once for every read model (`facts`)."""

    data: dict[str, Any]  # its recorded fields
    record: Any  # what it records: a table's operation (built once), else the event
    transfers: list[Transfer]
    aggregate: str  # its aggregate's id, as text
    wallets: list[tuple[str, int]]  # (wallet id, signed amount): each wallet side of a transfer
    when: str  # its time, as `isoformat()` writes it


_HEADER = tuple(HEADER)


def facts(event: Any, fields: dict[str, Any] | None = None, when: str | None = None) -> Facts:
    """An event's `Facts`: what `ledger.domain.records`' `record_of`, `fields_of` and
    `transfers_in` give, worked out here with fewer steps (every folded event comes here).
    `fields` and `when`: its fields and its time's text, where its reader has them already
    (`ledger.readmodels.decode.Read`)."""
    if isinstance(event, HighCardTable.Operation):
        data = event.data
        record: Any = event.operation
        transfers = record.moves() if isinstance(record, Operation) else transfers_of(vars(event))
    else:
        if fields is None:
            data = dict(vars(event))
            for name in _HEADER:
                data.pop(name, None)
        else:
            data = fields
        record = event
        transfers = transfers_of(data)
    return Facts(data, record, transfers, id_text(event.originator_id),
                 list(wallet_movements(transfers)) if transfers else [],
                 event.timestamp.isoformat() if when is None else when)


def named_documents(event: Any, known: Facts) -> set[str]:
    """The documents a fold of the event reads that the event names itself: its wallet, table,
    casino deal or dispute, the wallets its chips move between, and the table, wallet and deal
    its fields name; for the start of a casino deal, also what its end reads: the day's rows
    of its table and player and the day's series. A page reads them all at
    once (`Fold.prefetch`); the few others (the day totals of a multi-seat table's
    players, or of a deal begun on an earlier page) are read one at a time as the fold comes
    to them."""
    aggregate, data = known.aggregate, known.data
    names = {f"w|{wallet}" for wallet, _ in known.wallets}
    if isinstance(event, Wallet.Event):
        names.add(f"w|{aggregate}")
    elif isinstance(event, TABLE_EVENTS):
        names.add(f"t|{aggregate}")
    elif isinstance(event, CasinoDeal.Event):
        if event.originator_version != 1:  # (the first event's fold makes the document)
            names.add(f"d|{aggregate}")
        if isinstance(event, CasinoDeal.Committed):
            day, table, player = known.when[:10], data["table_id"], data["player_id"]
            names.update((f"a|{day}|{table}|{player}", f"a|{day}|{table}|{TABLE_ROW}",
                          f"p|{day}|{CASINO}"))
    elif isinstance(event, Dispute.Event):
        names.add(f"x|{aggregate}")
    for prefix, field in (("w|", "wallet_id"), ("t|", "table_id"), ("d|", "deal_id")):
        if data.get(field):
            names.add(f"{prefix}{data[field]}")
    return names
