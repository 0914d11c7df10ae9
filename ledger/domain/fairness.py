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


#: What each class of record is to the pack (`_step_kind`), worked out once per class.
_STEP_KINDS: dict[type, str] = {}


def _step_kind(cls: type) -> str:
    """`reveal`, `return`, `show`, `burn` or `take`; "" for a record the pack check skips."""
    found = _STEP_KINDS.get(cls)
    if found is None:
        found = _STEP_KINDS[cls] = (
            "reveal" if issubclass(cls, REVEALS) else "return" if issubclass(cls, op.CardsReturned)
            else "show" if issubclass(cls, op.HandShown) else "burn" if issubclass(cls, op.CardBurned)
            else "take" if issubclass(cls, TAKES) else "")
    return found


def fairness_of(events: list[Any], explain: bool = True) -> fairness.FairnessReport:
    """Check one deal against docs/fairness.md from its events, the commitment first.
    `explain=False`: only the failed checks are in the report (`fairness.verify_deal`)."""
    committed = fields_of(events[0])
    steps: list[fairness.PackStep] = []
    seed = ""
    for event in events:
        record = record_of(event)
        kind = _step_kind(type(record))
        if not kind:
            continue
        if kind == "take" or kind == "burn":
            steps.append(fairness.PackStep(kind, record.position, record.card,
                                           event.originator_version))
        elif kind == "reveal":
            seed = record.server_seed
        elif kind == "return":
            steps.append(fairness.PackStep("return", version=event.originator_version,
                                           positions=tuple(record.positions)))
        else:
            version = event.originator_version
            steps.extend(fairness.PackStep("show", c["position"], c["card"], version)
                         for c in record.cards)
    return fairness.verify_deal(
        server_seed=seed, commitment_hex=committed["commitment"],
        client_seed=committed["client_seed"], nonce=committed["nonce"],
        commitment_version=events[0].originator_version, steps=steps, explain=explain,
    )
