"""The deal in progress at a high-card table, and its stored form (snapshots, hand histories).

Places in the shuffled pack (0 = top), never the cards themselves but those shown face up.
`HighCardState` (`ledger.rules.highcard.state`) holds one while a deal runs and changes it only
by applying operations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ledger.rules.operations import PlacedCard


def _fresh_pack() -> list[int]:
    return list(range(52))


def _placed(data: dict[str, Any]) -> PlacedCard:
    return PlacedCard(position=data["position"], card=data["card"])


@dataclass
class Deal:
    """The deal in progress: places in the shuffled pack (0 = top), never the cards themselves
    but those shown. Stored in snapshots as `to_dict` writes it (seats as string keys)."""

    id: str
    nonce: int
    purpose: str
    client_seed: str
    commitment: str
    order: list[int]
    """The seats with a hand, in turn order (G5)."""
    pack: list[int] = field(default_factory=_fresh_pack)
    """The places still in the pack, top first (burned cards go to the bottom, G3)."""
    hands: dict[int, list[int]] = field(default_factory=dict)
    turn: int = 0
    """The index in `order` of the seat whose turn it is (sequential betting)."""
    target: PlacedCard | None = None
    bets: dict[int, int] = field(default_factory=dict)
    """Stakes in play, by seat, until settled."""
    sealed: bool = True
    """Whether sealed bets (X4) are still sealed."""
    buys: int = 0
    """Centre cards bought in the current turn (FW2)."""
    acted: list[int] = field(default_factory=list)
    shown: dict[int, list[PlacedCard]] = field(default_factory=dict)
    covered: int = 0
    """Chips bet so far in this deal (the covered part of the bank, XB3)."""
    price: int | None = None
    """The price of the turn's first centre card, which the second costs too (FW2); stored
    only while set."""

    @property
    def current(self) -> int | None:
        """The seat whose turn it is, None once every seat in `order` has had one."""
        return self.order[self.turn] if self.turn < len(self.order) else None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id, "nonce": self.nonce, "purpose": self.purpose,
            "pack": list(self.pack), "hands": {str(k): list(v) for k, v in self.hands.items()},
            "order": list(self.order), "turn": self.turn,
            "target": None if self.target is None else self.target.copy(),
            "bets": {str(k): v for k, v in self.bets.items()}, "sealed": self.sealed,
            "buys": self.buys, "acted": list(self.acted),
            "shown": {str(k): [c.copy() for c in v] for k, v in self.shown.items()},
            "covered": self.covered, "client_seed": self.client_seed,
            "commitment": self.commitment,
        }
        if self.price is not None:
            data["price"] = self.price
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Deal:
        target = data["target"]
        return cls(
            id=data["id"], nonce=data["nonce"], purpose=data["purpose"],
            client_seed=data["client_seed"], commitment=data["commitment"],
            order=list(data["order"]), pack=list(data["pack"]),
            hands={int(k): list(v) for k, v in data["hands"].items()}, turn=data["turn"],
            target=None if target is None else _placed(target),
            bets={int(k): v for k, v in data["bets"].items()}, sealed=data["sealed"],
            buys=data["buys"], acted=list(data["acted"]),
            shown={int(k): [_placed(c) for c in v] for k, v in data["shown"].items()},
            covered=data["covered"], price=data.get("price"),
        )
