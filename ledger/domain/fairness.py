"""A deal's fairness read from its events: which events reveal a seed or move a card, and the
check of the whole deal against the provably fair shuffle (`ledger.core.fairness`, G2)."""

from __future__ import annotations

from typing import Any

from ledger.core import fairness
from ledger.domain.casino import CasinoDeal
from ledger.domain.records import fields_of, record_of
from ledger.rules import operations as op

#: Event fields that hold secrets; only the events that reveal them may carry them.
SECRET_FIELDS = {"server_seed"}
#: Events that reveal a deal's server seed, in either family.
REVEALS: tuple[type[CasinoDeal.SeedRevealed | op.SeedRevealed], ...] = (CasinoDeal.SeedRevealed,
                                                                     op.SeedRevealed)
#: Events that take a card off the pack, in either family.
TAKES: tuple[type[CasinoDeal.CardDealt | op.CardDealt | op.TargetTurned | op.CardDiscarded], ...] = (
    CasinoDeal.CardDealt, *op.TAKES_CARD)


def fairness_of(events: list[Any]) -> fairness.FairnessReport:
    """Check one deal against docs/fairness.md from its events, the commitment first."""
    committed = fields_of(events[0])
    steps: list[fairness.PackStep] = []
    seed = ""
    for event in events:
        record, version = record_of(event), event.originator_version
        if isinstance(record, REVEALS):
            seed = record.server_seed
        elif isinstance(record, op.CardsReturned):
            steps.append(fairness.PackStep("return", version=version,
                                           positions=tuple(record.positions)))
        elif isinstance(record, op.HandShown):
            steps.extend(fairness.PackStep("show", c["position"], c["card"], version)
                         for c in record.cards)
        elif isinstance(record, op.CardBurned):
            steps.append(fairness.PackStep("burn", record.position, record.card, version))
        elif isinstance(record, TAKES):
            steps.append(fairness.PackStep("take", record.position, record.card, version))
    return fairness.verify_deal(
        server_seed=seed, commitment_hex=committed["commitment"],
        client_seed=committed["client_seed"], nonce=committed["nonce"],
        commitment_version=events[0].originator_version, steps=steps,
    )
