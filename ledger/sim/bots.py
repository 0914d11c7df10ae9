"""Bots that play through the application service: the real aggregates and store, no shortcut."""

from __future__ import annotations

import hashlib
import hmac
import random
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID, uuid4

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.core.errors import InvalidInput
from ledger.domain.records import record_of
from ledger.rules import casino
from ledger.rules import operations as op
from ledger.rules.odds import EXACT_EV

STRATEGIES = ("never", "optimal")
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
    by_opening: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, state: dict[str, Any]) -> None:
        """Count one finished deal: its opening, and per opening the deals, wins, chips wagered,
        chips wagered on wins and chips returned (so paid odds can be checked exactly)."""
        label, stake, returned = state["opening"]["label"], state["stake"], state["returned"]
        self.deals += 1
        self.wagered += stake
        self.returned += returned
        self.openings[label] += 1
        won = state["outcome"] == "win"
        self.by_opening.setdefault(label, Counter()).update({
            "deals": 1, "wins": int(won), "wagered": stake, "won_wagered": stake if won else 0,
            "returned": returned})

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
            "by_opening": {label: {key: self.by_opening.get(label, Counter())[key] for key in (
                "deals", "wins", "wagered", "won_wagered", "returned")}
                for label in OPENING_LABELS},
        }


def deal_seed(master: bytes, index: int) -> str:
    """A server seed derived from the run's seed, so `--seed` makes a run repeatable."""
    return hmac.new(master, f"deal:{index}".encode(), hashlib.sha256).hexdigest()


def should_raise(strategy: str, spread: int | None) -> bool:
    """`optimal` raises on spreads 7 to 11 (the published best play); `never` never raises."""
    return strategy == "optimal" and spread is not None and spread >= 7


@dataclass(frozen=True)
class Run:
    """What a simulation plays: how many deals, or (multi-seat tables) settled turns."""

    variant: str
    deals: int | None = None
    turns: int | None = None

    def __post_init__(self) -> None:
        if self.deals is None and (self.turns is None or self.variant == casino.VARIANT):
            raise InvalidInput("give a number of deals (or of turns, for a multi-seat variant)",
                               field="deals")

    @property
    def length(self) -> tuple[int, str]:
        """How long the run is, and in what: deals or turns."""
        if self.turns is not None and self.variant != casino.VARIANT:
            return self.turns, "turns"
        return self.deals or 0, "deals"


def simulate(
    app: LedgerApplication, run: Run, players: int = 4, strategy: str = "optimal",
    seed: str | None = None, bet: int = 100, progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Bots play a run of any variant: one casino player, or `players` at a multi-seat table."""
    if run.variant == casino.VARIANT:
        return simulate_casino(app, run.deals or 0, strategy, seed, bet, progress=progress)
    return simulate_table(app, run.variant, players, deals=run.deals, turns=run.turns,
                          seed=seed, progress=progress)


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
    wallet_id = UUID(app.wallets.open_wallet(SYSTEM, "sim-casino", wallet_id=uuid4())["id"])
    table_id = UUID(app.casino.open_casino_table(
        SYSTEM, wallet_id, client_seed="simulation", accepts_supplied_seeds=True
    )["id"])
    top_up = 100 * casino.MAX_STAKE
    balance = 0
    tally = CasinoTally()
    position_before = app.recorder.max_notification_id() or 0
    for index in range(deals):
        if balance < 2 * bet:
            balance = app.wallets.grant(SYSTEM, wallet_id, top_up)["balance"]
        state = app.deals.deal(SYSTEM, table_id, bet, server_seed=deal_seed(master, index))
        tally.initial_staked += bet
        if state["legal_actions"]:
            spread = state["opening"]["spread"]
            if should_raise(strategy, spread) and "raise" in state["legal_actions"]:
                state = app.casino.raise_bet(SYSTEM, UUID(state["id"]))
            else:
                state = app.casino.stand(SYSTEM, UUID(state["id"]))
        tally.add(state)
        balance += state["returned"] - state["stake"]
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
    from ledger.rules.variants import VARIANTS, Betting

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

    view = app.tables.open_table(SYSTEM, variant, limits or {}, client_seed="simulation",
                          accepts_supplied_seeds=True)
    table_id = UUID(view["id"])
    tally = RuleTally(covers=VARIANTS[variant].betting is Betting.COVER)

    def observe(_outcome: str, recordings: list[Any]) -> None:  # as commands record them
        for recording in recordings:
            if recording.domain_event.originator_id == table_id:
                tally.add(recording.domain_event)

    with app.telemetry.listening(observe):
        wallets: dict[int, UUID] = {}
        if players > view["limits"]["max_seats"]:
            raise InvalidInput(f"{variant} seats at most {view['limits']['max_seats']} players",
                               field="players")
        for seat in range(1, players + 1):
            wallet_id = UUID(app.wallets.open_wallet(SYSTEM, f"sim-{variant}-{seat}", wallet_id=uuid4())["id"])
            wallets[seat] = wallet_id
            view = app.tables.seat_player(SYSTEM, table_id, seat, wallet_id)
        limits_now = view["limits"]
        floor = 50 * max(limits_now["bank_min"], limits_now["ante"], limits_now["min_bet"], 10)
        position_before = app.recorder.max_notification_id() or 0
        reported = 0
        bots: Counter[str] = Counter()

        def done(counters: dict[str, int]) -> bool:
            return (deals is not None and counters["deals"] >= deals) or (
                turns is not None and counters["turns"] >= turns)

        while not done(view["counters"]):
            if view["phase"] in ("ready", "funding"):
                for entry in view["seats"]:
                    if (entry["balance"] or 0) < floor:
                        app.wallets.grant(SYSTEM, wallets[entry["seat"]], 10 * floor)
                        view = app.deals.table(SYSTEM, table_id)
            actions = [a for a in view["legal_actions"]
                       if a["action"] not in ("close", "split_pot", "decline_bank")]
            if not actions:
                raise RuntimeError(f"the bots are stuck: {view['phase']}")
            action = _bot_choice(rng, actions)
            kind = action["action"]
            if kind == "deal":
                view = app.play.start_deal(SYSTEM, table_id, seed_source=seeds)
            elif kind == "fund_bank":
                amount = _bot_amount(rng, action["min"], action["max"])
                bots.update(_extremes("banks", amount, action))
                view = app.play.fund_bank(SYSTEM, table_id, amount)
            elif kind == "bet":
                amount = _bot_amount(rng, action["min"], action["max"])
                bots.update(_extremes("bets", amount, action))
                view = app.play.bet(SYSTEM, table_id, action["seat"], amount)
            elif kind == "buy":
                view = app.play.buy_centre_card(SYSTEM, table_id, action["seat"])
            elif kind == "pass":
                view = app.play.pass_turn(SYSTEM, table_id, action["seat"])
            elif kind == "choose":
                view = app.play.dealer_choice(SYSTEM, table_id, rng.choice(action["choices"]))
            if progress is not None:
                measure = view["counters"]["turns"] if turns is not None else view["counters"]["deals"]
                progress(measure - reported)
                reported = measure
    counters = view["counters"]
    exact = exact_win_rate(VARIANTS[variant], limits_now["hand_size"])
    reached = tally.reached
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
        **{key: reached.counts[key] for key in REACHED},
        **{key: bots[key] for key in BOT_EXTREMES},
        "rules_reached": sorted(reached.rules),
        "events": (app.recorder.max_notification_id() or 0) - position_before,
    }
    if exact is not None and counters["turns"]:
        sd = (float(exact) * (1 - float(exact)) / counters["turns"]) ** 0.5
        result["standard_deviations"] = (result["win_rate"] - float(exact)) / sd
    return result


#: What `rules_reached` counts from a table's events, beside the table's own counters.
REACHED = ("banks_covered", "turns_skipped_covered", "turns_skipped", "passes",
           "second_centre_cards", "reantes", "sat_out", "banks_collected", "dealer_choices",
           "fourth_deals")
#: Rules an event shows it reached though its data names none.
NAMED_BY_EVENT: dict[type[op.Operation], str] = {op.PartiallyPaid: "X5", op.CentreBought: "FW2"}
#: How often the bots staked or bet the least or the most the rules allowed them.
BOT_EXTREMES = ("banks_at_min", "banks_at_max", "bets_at_min", "bets_at_max")


@dataclass
class Reached:
    """Which rules a table's events reached, and how often the rarer steps happened."""

    counts: Counter[str] = field(default_factory=Counter)
    rules: set[str] = field(default_factory=set)


class RuleTally:
    """A multi-seat table's recorded events tallied as they come (`add`): every rule ID they
    name, and the steps the table's counters do not keep (covered banks XB3, passes FW3,
    re-antes H8, choices S6...)."""

    def __init__(self, covers: bool = False) -> None:
        self.reached = Reached()
        self.covers = covers
        self.bank = self.covered = self.buys = 0

    def add(self, event: Any) -> None:
        record = record_of(event)
        kind = type(record)
        named = _NAMED.get(kind)
        if named is None:
            named = _NAMED[kind] = _named_by(kind)
        if named is _NOT_AN_OPERATION:
            return
        reached, count = self.reached, self.reached.counts
        rule = getattr(record, "rule", None)  # a plain field: what `to_data` would store
        if isinstance(rule, str):
            reached.rules.add(rule)
        if named:
            reached.rules.update(named)
        if isinstance(record, op.BankFunded):
            self.bank = record.transfer["amount"]
        elif isinstance(record, op.Committed):
            self.covered = self.buys = 0
        elif isinstance(record, op.BetPlaced):
            self.covered += record.amount
            if self.covers and self.covered == self.bank:
                count["banks_covered"] += 1
                reached.rules.add("XB3")
        elif isinstance(record, op.CentreBought):
            self.buys += 1
            count["second_centre_cards"] += self.buys == 2
        elif isinstance(record, op.Passed | op.TurnSkipped | op.PaidOut):
            self.buys = 0
        if not isinstance(record, _COUNTED):  # most records: none of the rarer steps below
            return
        if isinstance(record, op.TurnSkipped):
            count["turns_skipped"] += 1
            count["turns_skipped_covered"] += "covered" in record.reason
        count["passes"] += isinstance(record, op.Passed)
        count["reantes"] += isinstance(record, op.Anted) and record.rule == "H8"
        count["sat_out"] += isinstance(record, op.SatOut)
        count["banks_collected"] += isinstance(record, op.BankCollected)
        count["dealer_choices"] += isinstance(record, op.DealerChose)
        count["fourth_deals"] += (isinstance(record, op.DealerChose)
                                  and record.choice == "deal_fourth")


#: What `RuleTally.add` has worked out about each kind of record: the rules it names by being
#: that kind (`NAMED_BY_EVENT`), or `_NOT_AN_OPERATION`.
_NAMED: dict[type, tuple[str, ...]] = {}
_NOT_AN_OPERATION: tuple[str, ...] = ("not an operation",)
#: The kinds `RuleTally.add` counts under a name of their own (the rarer steps).
_COUNTED = (op.TurnSkipped, op.Passed, op.Anted, op.SatOut, op.BankCollected, op.DealerChose)


def _named_by(kind: type) -> tuple[str, ...]:
    if not issubclass(kind, op.Operation):
        return _NOT_AN_OPERATION
    return tuple(rule for named, rule in NAMED_BY_EVENT.items() if issubclass(kind, named))


def _extremes(kind: str, amount: int, action: dict[str, Any]) -> Counter[str]:
    return Counter({f"{kind}_at_min": amount == action["min"],
                    f"{kind}_at_max": amount == action["max"]})


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


def _bot_amount(rng: random.Random, low: int, high: int) -> int:
    """A legal amount from anywhere in [low, high]: the least or the most a tenth of the time
    each, else evenly over the range or evenly on a log scale (so small amounts of a large range
    occur too), half the time each."""
    if high <= low:
        return low
    draw = rng.random()
    if draw < 0.1:
        return low
    if draw < 0.2:
        return high
    if draw < 0.6:
        return rng.randint(low, high)
    return min(high, max(low, round(low * (high / low) ** rng.random())))
