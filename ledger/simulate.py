"""Bots that play through the application service: the real aggregates and store, no shortcut."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any
from uuid import UUID, uuid4

from ledger.errors import InvalidInput
from ledger.rules import casino
from ledger.services.access import SYSTEM
from ledger.services.application import LedgerApplication

STRATEGIES = ("never", "optimal")
#: The player's exact expected result per unit of opening bet over all 132,600 deals.
EXACT_EV = {"never": Fraction(-1523, 16575), "optimal": Fraction(-523, 16575)}
OPENING_LABELS = ["consecutive", "pair", "trips"] + [f"spread_{s}" for s in range(1, 12)]


@dataclass
class CasinoTally:
    """What a casino simulation counted."""

    deals: int = 0
    initial_staked: int = 0
    wagered: int = 0
    returned: int = 0
    events: int = 0
    openings: Counter[str] = field(default_factory=Counter)

    def summary(self, strategy: str) -> dict[str, Any]:
        exact_rtp = 1 + EXACT_EV[strategy]
        rtp_initial = (
            (self.initial_staked + self.returned - self.wagered) / self.initial_staked
            if self.initial_staked else None
        )
        return {
            "variant": "casino",
            "strategy": strategy,
            "deals": self.deals,
            "events": self.events,
            "initial_staked": self.initial_staked,
            "wagered": self.wagered,
            "returned": self.returned,
            "rtp_per_initial": rtp_initial,
            "rtp_per_wagered": self.returned / self.wagered if self.wagered else None,
            "exact_rtp_per_initial": float(exact_rtp),
            **{label: self.openings[label] for label in OPENING_LABELS},
        }


def deal_seed(master: bytes, index: int) -> str:
    """A server seed derived from the run's seed, so `--seed` makes a run repeatable."""
    return hmac.new(master, f"deal:{index}".encode(), hashlib.sha256).hexdigest()


def should_raise(strategy: str, spread: int | None) -> bool:
    """`optimal` raises on spreads 7 to 11 (the published best play); `never` never raises."""
    return strategy == "optimal" and spread is not None and spread >= 7


def simulate_casino(
    app: LedgerApplication,
    deals: int,
    strategy: str = "optimal",
    seed: str | None = None,
    bet: int = 100,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Play `deals` casino deals at one table and tally the outcome."""
    if strategy not in STRATEGIES:
        raise InvalidInput(f"strategy must be one of {STRATEGIES}", field="strategy")
    casino.verify_opening_bet(bet, bet)
    master = bytes.fromhex(seed) if seed else secrets.token_bytes(32)
    wallet_id = UUID(app.open_wallet(SYSTEM, "sim-casino", wallet_id=uuid4())["id"])
    table_id = UUID(app.open_casino_table(
        SYSTEM, wallet_id, client_seed="simulation", accepts_supplied_seeds=True
    )["id"])
    top_up = 100 * casino.MAX_STAKE
    balance = 0
    tally = CasinoTally()
    position_before = app.recorder.max_notification_id() or 0
    for index in range(deals):
        if balance < 2 * bet:
            balance = app.grant(SYSTEM, wallet_id, top_up)["balance"]
        state = app.deal(SYSTEM, table_id, bet, server_seed=deal_seed(master, index))
        tally.initial_staked += bet
        if state["legal_actions"]:
            spread = state["opening"]["spread"]
            if should_raise(strategy, spread) and "raise" in state["legal_actions"]:
                state = app.raise_bet(SYSTEM, UUID(state["id"]))
            else:
                state = app.stand(SYSTEM, UUID(state["id"]))
        tally.deals += 1
        tally.wagered += state["stake"]
        tally.returned += state["returned"]
        balance += state["returned"] - state["stake"]
        tally.openings[state["opening"]["label"]] += 1
        if progress is not None:
            progress(1)
    tally.events = (app.recorder.max_notification_id() or 0) - position_before
    return tally.summary(strategy)
