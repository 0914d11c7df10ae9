"""A pure driver for the high-card family engine, shared by the `test_highcard_*` files.

`Table` plays one table through `HighCardGame` exactly as the aggregate would: every operation the
engine emits is recorded and applied to the state at once, and one `Context` (its balances and its
current shuffle) is carried from command to command. Packs are stacked: a test queues any 52-card
order it builds with `stack(...)`; when the queue is empty a provably fair pack is used.

After every recorded operation and after every command the driver checks conservation (G10): the
chips in the seats' wallets plus the table's pot plus the stakes in play stay what was granted,
no balance is negative, the engine's balances agree with a ledger rebuilt from the transfers the
log carries, and no transfer id is used twice.
"""

from __future__ import annotations

import hashlib
from collections import deque
from typing import Any
from uuid import uuid4

import pytest

from ledger.cards import CANONICAL_PACK, Card
from ledger.errors import RuleViolation
from ledger.fairness import commitment, shuffled_pack
from ledger.rules.highcard import Context, HighCardGame, Shuffle, new_state
from ledger.rules.highcard_state import HighCardState
from ledger.rules.operations import Operation
from ledger.rules.variants import VARIANTS, Funding

CLIENT_SEED = "highcard-tests"
FILLERS = ["2d", "3d", "4d", "5d", "6d", "7d", "8d", "9d", "Td", "Jd", "Qd", "Kd",
           "2h", "3h", "4h"]


def cards(text: str) -> list[Card]:
    """`"As 7h 2c"` as cards."""
    return [Card.parse(token) for token in text.split()]


def stack(*parts: str) -> list[Card]:
    """A full pack whose top cards are `parts` in order (space-separated notation), followed by
    every other card in canonical order (2c 3c ... As)."""
    top = cards(" ".join(parts))
    assert len(set(top)) == len(top), f"a card appears twice in {parts}"
    chosen = set(top)
    return top + [card for card in CANONICAL_PACK if card not in chosen]


def round_robin(order: list[int], hands: dict[int, str]) -> str:
    """The cards in the order a deal takes them: one at a time round `order`."""
    split = {seat: hand.split() for seat, hand in hands.items()}
    size = len(split[order[0]])
    return " ".join(split[seat][r] for r in range(size) for seat in order)


def first_ace(seats: list[int], dealer: int) -> list[Card]:
    """A first-dealer pack (G7): cards go round the seats from the lowest until `dealer` gets Ac."""
    before = sorted(seats).index(dealer)
    return stack(*FILLERS[:before], "Ac")


def seed_for(label: str) -> str:
    return hashlib.sha256(label.encode()).hexdigest()


class Table:
    """One table of a high-card variant, driven through the pure engine."""

    def __init__(self, variant: str, seats: list[int] | tuple[int, ...] = (1, 2, 3),
                 chips: int | dict[int, int] = 1000, limits: dict[str, int] | None = None) -> None:
        self.state: HighCardState = new_state(str(uuid4()), variant, dict(limits or {}))
        self.log: list[tuple[str, dict[str, Any]]] = []
        self.game = HighCardGame(self.state, self._record)
        self.packs: deque[list[Card]] = deque()
        self.shuffles: list[Shuffle] = []
        self.ctx = Context(balances={}, shuffle=None, new_shuffle=self._new_shuffle)
        self.wallets: dict[int, str] = {}
        self.ledger: dict[str, int] = {}
        self.transfer_ids: set[str] = set()
        self.total = 0
        for seat in seats:
            self.sit(seat, chips if isinstance(chips, int) else chips[seat])

    # Recording.
    def _record(self, operation: Operation) -> None:
        self.check()  # the state and balances agree with every operation before this one
        for transfer in operation.moves():
            self._book(transfer)
        self.log.append((type(operation).__name__, operation.to_data()))
        self.state.apply(operation)

    def _book(self, transfer: dict[str, Any]) -> None:
        amount = transfer["amount"]
        assert isinstance(amount, int) and not isinstance(amount, bool) and amount > 0, transfer
        assert transfer["id"] not in self.transfer_ids, f"transfer id reused: {transfer}"
        self.transfer_ids.add(transfer["id"])
        self.ledger[transfer["source"]] = self.ledger.get(transfer["source"], 0) - amount
        self.ledger[transfer["destination"]] = self.ledger.get(transfer["destination"], 0) + amount

    def _new_shuffle(self) -> Shuffle:
        number = len(self.shuffles) + 1
        seed = seed_for(f"{self.state.table_id}:{number}")
        nonce = self.state.nonce + 1
        pack = self.packs.popleft() if self.packs else shuffled_pack(seed, CLIENT_SEED, nonce)
        assert sorted(pack) == sorted(CANONICAL_PACK), "a stacked pack must hold all 52 cards"
        shuffle = Shuffle(f"deal-{number}", nonce, commitment(seed), CLIENT_SEED, seed, list(pack))
        self.shuffles.append(shuffle)
        return shuffle

    def check(self) -> None:
        """Conservation (G10 style) and agreement of the engine's balances with the log."""
        s, balances = self.state, self.ctx.balances
        assert sum(balances.values()) + s.pot + s.stake == self.total
        assert all(amount >= 0 for amount in balances.values()), balances
        assert s.pot >= 0 and s.stake >= 0, (s.pot, s.stake)
        rebuilt = {seat: self.ledger[f"wallet:{wallet}"] for seat, wallet in self.wallets.items()}
        assert rebuilt == balances
        assert self.ledger.get(s.pot_account, 0) == s.pot
        assert self.ledger.get(s.stake_account, 0) == s.stake

    # Seats and chips.
    def sit(self, seat: int, chips: int) -> None:
        wallet = str(uuid4())
        self.game.seat(seat, wallet, f"player-{seat}")
        self.wallets[seat] = wallet
        self.ledger[f"wallet:{wallet}"] = chips
        self.ctx.balances[seat] = chips
        self.total += chips
        self.check()

    def grant(self, seat: int, chips: int) -> None:
        """Chips arriving in a seat's wallet from outside the table (an operator grant)."""
        self.ledger[f"wallet:{self.wallets[seat]}"] += chips
        self.ctx.balances[seat] += chips
        self.total += chips
        self.check()

    # Commands: each goes through the engine with the one carried context, then checks.
    def _do(self, action: str, *args: Any) -> None:
        getattr(self.game, action)(*args, self.ctx)
        self.check()

    def start(self) -> None:
        self._do("start")

    def fund(self, seat: int, amount: int) -> None:
        self._do("fund", seat, amount)

    def bet(self, seat: int, amount: int) -> None:
        self._do("bet", seat, amount)

    def buy(self, seat: int) -> None:
        self._do("buy", seat)

    def pass_turn(self, seat: int) -> None:
        self._do("pass_turn", seat)

    def choose(self, seat: int, choice: str) -> None:
        self._do("choose", seat, choice)

    def split_pot(self) -> None:
        self._do("split_pot")

    def close(self) -> None:
        self._do("close")

    def unseat(self, seat: int) -> None:
        self.game.unseat(seat)
        self.check()

    def refuse(self, rule: str, action: str, *args: Any) -> RuleViolation:
        """The command is refused naming `rule`, and records and changes nothing (G8)."""
        before = (self.state.to_dict(), len(self.log), dict(self.ctx.balances))
        with pytest.raises(RuleViolation) as refused:
            getattr(self, action)(*args)
        assert refused.value.rule == rule, str(refused.value)
        assert (self.state.to_dict(), len(self.log), dict(self.ctx.balances)) == before
        return refused.value

    # Opening.
    def open(self, dealer: int, bank: int | None = None, pack: list[Card] | None = None) -> None:
        """Draw `dealer` as first dealer (G7); stake `bank` where the variant needs it; deal `pack`.

        An ante variant deals straight after the draw, so its `pack` is queued first."""
        self.packs.append(first_ace(sorted(self.state.seats), dealer))
        ante = self.state.variant.funding is Funding.ANTE
        if ante and pack is not None:
            self.packs.append(pack)
        self.start()
        assert self.state.dealer == dealer
        if not ante:
            if bank is not None:
                self.fund(dealer, bank)
            if pack is not None:
                self.deal(pack)

    def deal(self, pack: list[Card]) -> None:
        """Start the next deal from `pack`."""
        self.packs.append(pack)
        self.start()

    # Reading the log.
    def mark(self) -> int:
        return len(self.log)

    def names(self, since: int = 0) -> list[str]:
        return [name for name, _ in self.log[since:]]

    def events(self, name: str, since: int = 0) -> list[dict[str, Any]]:
        return [data for event, data in self.log[since:] if event == name]

    def one(self, name: str, since: int = 0) -> dict[str, Any]:
        found = self.events(name, since)
        assert len(found) == 1, f"{len(found)} {name} events: {self.names(since)}"
        return found[0]

    def balance(self, seat: int) -> int:
        return self.ctx.balances[seat]

    def bettable(self) -> dict[int, tuple[int, int]]:
        """Seats the engine offers a bet now, with (min, max)."""
        return {a["seat"]: (a["min"], a["max"])
                for a in self.game.legal_actions(self.ctx.balances) if a["action"] == "bet"}


# The harness checks itself.
def test_harness_stacked_pack_is_a_whole_pack_with_the_given_cards_on_top():
    pack = stack("As 7h", round_robin([2, 3], {2: "2c 3c", 3: "4c 5c"}))
    # Check the top cards come in the order given, dealing round the seats one at a time
    assert [str(card) for card in pack[:6]] == ["As", "7h", "2c", "4c", "3c", "5c"]
    assert sorted(pack) == sorted(CANONICAL_PACK)
    with pytest.raises(AssertionError):
        stack("As As")


def test_harness_fair_shuffles_follow_the_table_nonce_and_agree_with_fairness():
    table = Table("high_card_pool", seats=[1, 2, 3])
    table.start()
    deal = table.shuffles[-1]
    # Check an unstacked deal uses exactly the provably fair pack for its nonce
    assert deal.pack == shuffled_pack(deal.server_seed, CLIENT_SEED, deal.nonce)
    assert [s.nonce for s in table.shuffles] == [1, 2]
    draw, deal_commit = table.events("Committed")
    assert (draw["purpose"], draw["nonce"]) == ("first_dealer", 1)  # the first-dealer draw
    assert (deal_commit["purpose"], deal_commit["nonce"]) == ("deal", 2)


def test_harness_every_variant_opens_with_its_defaults():
    for name, variant in VARIANTS.items():
        table = Table(name, seats=list(range(1, variant.min_players + 1)))
        # Check a fresh table waits for its first deal
        assert table.state.dealer is None and table.state.pot == 0
