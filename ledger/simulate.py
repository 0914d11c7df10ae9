"""Bots that play through the application service: the real aggregates and store, no shortcut."""

from __future__ import annotations

import hashlib
import hmac
import random
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


def simulate_table(
    app: LedgerApplication,
    variant: str,
    players: int,
    deals: int | None = None,
    turns: int | None = None,
    seed: str | None = None,
    limits: dict[str, int] | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Bots play a multi-seat table of `variant` until `deals` deals or `turns` settled turns.

    Every bot move is a legal action read from the table's own `legal_actions`, with amounts
    drawn from the legal range; wallets running low get fresh operator grants between deals.
    """
    from ledger.rules.odds import exact_win_rate
    from ledger.rules.variants import VARIANTS

    if variant not in VARIANTS:
        raise InvalidInput(f"variant must be casino or one of {sorted(VARIANTS)}",
                           field="variant")
    if deals is None and turns is None:
        raise InvalidInput("give a number of deals or turns", field="deals")
    rng = random.Random(bytes.fromhex(seed) if seed else secrets.token_bytes(16))
    master = bytes.fromhex(seed) if seed else secrets.token_bytes(32)
    counter = iter(range(10**12))

    def seeds() -> str:
        return deal_seed(master, next(counter))

    view = app.open_table(SYSTEM, variant, limits or {}, client_seed="simulation",
                          accepts_supplied_seeds=True)
    table_id = UUID(view["id"])
    wallets: dict[int, UUID] = {}
    if players > view["limits"]["max_seats"]:
        raise InvalidInput(f"{variant} seats at most {view['limits']['max_seats']} players",
                           field="players")
    for seat in range(1, players + 1):
        wallet_id = UUID(app.open_wallet(SYSTEM, f"sim-{variant}-{seat}", wallet_id=uuid4())["id"])
        wallets[seat] = wallet_id
        view = app.seat_player(SYSTEM, table_id, seat, wallet_id)
    limits_now = view["limits"]
    floor = 50 * max(limits_now["bank_min"], limits_now["ante"], limits_now["min_bet"], 10)
    position_before = app.recorder.max_notification_id() or 0
    reported = 0

    def done(counters: dict[str, int]) -> bool:
        return (deals is not None and counters["deals"] >= deals) or (
            turns is not None and counters["turns"] >= turns)

    while not done(view["counters"]):
        if view["phase"] in ("ready", "funding"):
            for entry in view["seats"]:
                if (entry["balance"] or 0) < floor:
                    app.grant(SYSTEM, wallets[entry["seat"]], 10 * floor)
                    view = app.table(SYSTEM, table_id)
        actions = [a for a in view["legal_actions"]
                   if a["action"] not in ("close", "split_pot", "decline_bank")]
        if not actions:
            raise RuntimeError(f"the bots are stuck: {view['phase']}")
        action = _bot_choice(rng, actions)
        kind = action["action"]
        if kind == "deal":
            view = app.start_deal(SYSTEM, table_id, seed_source=seeds)
        elif kind == "fund_bank":
            high = action["max"]
            view = app.fund_bank(SYSTEM, table_id, rng.randint(action["min"], min(
                high, 4 * action["min"])))
        elif kind == "bet":
            view = app.bet(SYSTEM, table_id, action["seat"], _bot_amount(rng, action))
        elif kind == "buy":
            view = app.buy_centre_card(SYSTEM, table_id, action["seat"])
        elif kind == "pass":
            view = app.pass_turn(SYSTEM, table_id, action["seat"])
        elif kind == "choose":
            view = app.dealer_choice(SYSTEM, table_id, rng.choice(action["choices"]))
        if progress is not None:
            measure = view["counters"]["turns"] if turns is not None else view["counters"]["deals"]
            progress(measure - reported)
            reported = measure
    counters = view["counters"]
    exact = exact_win_rate(VARIANTS[variant], limits_now["hand_size"])
    result: dict[str, Any] = {
        "variant": variant,
        "players": players,
        "hand_size": limits_now["hand_size"],
        "deals": counters["deals"],
        "turns": counters["turns"],
        "wins": counters["wins"],
        "win_rate": counters["wins"] / counters["turns"] if counters["turns"] else None,
        "exact_win_rate": float(exact) if exact is not None else None,
        "wagered": counters["wagered"],
        "returned": counters["returned"],
        "stitch_rounds": counters["stitch_rounds"],
        "banks_emptied": counters["banks_emptied"],
        "redeals": counters["redeals"],
        "pot_splits": counters["pot_splits"],
        "partial_payouts": counters["partial_payouts"],
        "centre_cards_bought": counters["centre_cards_bought"],
        "events": (app.recorder.max_notification_id() or 0) - position_before,
    }
    if exact is not None and counters["turns"]:
        sd = (float(exact) * (1 - float(exact)) / counters["turns"]) ** 0.5
        result["standard_deviations"] = (result["win_rate"] - float(exact)) / sd
    return result


def _bot_choice(rng: random.Random, actions: list[dict[str, Any]]) -> dict[str, Any]:
    """Mostly bet; sometimes buy a centre card or pass where the rules offer it."""
    by_kind = {a["action"]: a for a in actions}
    if "buy" in by_kind and rng.random() < 0.3:
        return by_kind["buy"]
    if "pass" in by_kind and ("bet" not in by_kind or rng.random() < 0.2):
        return by_kind["pass"]
    bets = [a for a in actions if a["action"] == "bet"]
    if bets:
        return rng.choice(bets)
    return rng.choice(actions)


def _bot_amount(rng: random.Random, action: dict[str, Any]) -> int:
    """A legal amount, weighted towards small bets so wallets last."""
    low, high = action["min"], action["max"]
    return rng.randint(low, max(low, min(high, low + (high - low) // 4)))
