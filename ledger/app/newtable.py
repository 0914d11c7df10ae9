"""Opening a table, of either family: what the casino and the multi-seat services share.

Each family's service says who may open its tables and checks what is its own (a casino
table's wallet, a multi-seat table's variant and limits), then builds its table and its answer;
`open_table` does the rest once: the table's client seed
(`ledger.core.fairness.table_client_seed`), its id, and the unit of work that saves it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID, uuid4

from ledger.app.unit import CommandKey, Decision, UnitOfWork
from ledger.core import fairness

#: Builds a table of one family and its answer, given its client seed and its id.
Build = Callable[[str, UUID], Decision]


def open_table(unit: UnitOfWork, client_seed: str | None, table_id: UUID | None,
               command: CommandKey | None, build: Build) -> dict[str, Any]:
    """Open a table built by `build`: its client seed the one given, checked, or drawn; its id
    the one given, or a new one for each attempt of the command."""
    seed = fairness.table_client_seed(client_seed)
    return unit.execute(command, lambda: build(seed, table_id or uuid4()))
