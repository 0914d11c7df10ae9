"""A thin test client for multi-seat high-card tables, shared by the `test_highcard_*_rules` files.

`Table` plays one table through the real application service (`LedgerApplication` on the
in-memory store): it opens the table, opens and grants a real `Wallet` per seat and seats it,
and every command goes to the service as the principal who would send it (a seat's player for
its own bets, buys, passes, stakes and choices; the dealer's player to deal; an operator to open,
grant, split and close). It reads the table through the stored `HighCardTable` events
(`type(event).__name__` and `event.data`), the table's state from the repository and the seats'
balances from their wallets.

Packs are stacked through the application's scenario-test seam (`stacked_packs`, see
`ledger.app.base.LedgerBase`): a test queues any 52-card order built with `stack(...)` in
`table.packs`; each new shuffle of the table takes the next one, and a shuffle with an empty
queue deals the provably fair pack of its sealed seed.

After every command, refused or not, the client checks conservation (G10) on the application's
own records: the real wallets' balances plus the table's pot and stake in play equal what was
granted; no balance, pot or stake is negative, after the whole command and after each of the
table's stored events (replayed one by one); every transfer carries a positive whole amount
and an id used once; every transfer touching a wallet is recorded once by that wallet; and the
stored events rebuild the table's state exactly.
"""

from __future__ import annotations

from collections import deque
from typing import Any
from uuid import UUID

import pytest

from ledger.app.access import SYSTEM, Principal
from ledger.app.application import LedgerApplication
from ledger.core.cards import CANONICAL_PACK, Card
from ledger.core.errors import Forbidden, RuleViolation
from ledger.domain.access import Role
from ledger.domain.highcard import HighCardTable
from ledger.rules.highcard.actions import HighCardGame
from ledger.rules.highcard.state import HighCardState
from ledger.rules.variants import Funding
from ledger.settings import Settings

CLIENT_SEED = "highcard-tests"
FILLERS = ["2d", "3d", "4d", "5d", "6d", "7d", "8d", "9d", "Td", "Jd", "Qd", "Kd",
           "2h", "3h", "4h"]
OPENED: list[LedgerApplication] = []
"""Applications the client opened; `tests/integration/conftest.py` closes them after each test."""


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


def player(player_id: str) -> Principal:
    return Principal(key_id=f"key-{player_id}", role=Role.PLAYER, player_id=player_id)


class StackedPacks:
    """The application's pack source for this client's tables: one queue per table; the pack a
    shuffle took is remembered by (table, nonce), since the service asks again at every later
    command of the deal."""

    def __init__(self) -> None:
        self.queues: dict[UUID, deque[list[Card]]] = {}
        self.taken: dict[tuple[UUID, int], list[Card] | None] = {}

    def queue(self, table_id: UUID) -> deque[list[Card]]:
        return self.queues.setdefault(table_id, deque())

    def __call__(self, table_id: UUID, nonce: int) -> list[Card] | None:
        key = (table_id, nonce)
        if key not in self.taken:
            queue = self.queue(table_id)
            self.taken[key] = list(queue.popleft()) if queue else None
        return self.taken[key]


def transfers_in(data: dict[str, Any]) -> list[dict[str, Any]]:
    single = [data["transfer"]] if isinstance(data.get("transfer"), dict) else []
    return single + [t for t in data.get("transfers") or [] if isinstance(t, dict)]


class Table:
    """One table of a high-card variant, played through the application service."""

    def __init__(self, variant: str, seats: list[int] | tuple[int, ...] = (1, 2, 3),
                 chips: int | dict[int, int] = 1000, limits: dict[str, int] | None = None,
                 app: LedgerApplication | None = None) -> None:
        if app is None:
            self.source = StackedPacks()
            app = LedgerApplication(Settings.from_env(store="memory"), stacked_packs=self.source)
            OPENED.append(app)
        else:
            assert isinstance(app.stacked_packs, StackedPacks), "the app needs stacked packs"
            self.source = app.stacked_packs
        self.app = app
        view = app.tables.open_table(SYSTEM, variant, limits=dict(limits or {}), client_seed=CLIENT_SEED)
        self.id = UUID(view["id"])
        self.packs = self.source.queue(self.id)
        self.wallets: dict[int, str] = {}  # seat -> wallet id, as the table records it
        self.opened: list[UUID] = []  # every wallet this client opened, seated or not
        self.total = 0
        self.replica: Any = None  # the table rebuilt event by event from the store
        self.checked_version = 0
        self.transfer_ids: set[str] = set()
        self.wallet_transfers: dict[str, list[str]] = {}  # wallet account -> transfer ids
        for seat in seats:
            self.sit(seat, chips if isinstance(chips, int) else chips[seat])
        self.check()

    # Reading.
    def aggregate(self) -> HighCardTable:
        table = self.app.repository.get(self.id)
        assert isinstance(table, HighCardTable)
        return table

    @property
    def state(self) -> HighCardState:
        return self.aggregate().state

    @property
    def log(self) -> list[tuple[str, dict[str, Any]]]:
        """The table's stored operations (every event but the table's opening and client seed
        changes), as (event class name, data)."""
        return [(type(event).__name__, event.data) for event in self.app.events.get(self.id)
                if isinstance(getattr(event, "data", None), dict)]

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

    def wallet(self, seat: int) -> Any:
        return self.app.repository.get(UUID(self.wallets[seat]))

    def balance(self, seat: int) -> int:
        return self.wallet(seat).balance

    @property
    def balances(self) -> dict[int, int]:
        """Every seated player's wallet balance, from the application."""
        return {seat: self.balance(seat) for seat in self.state.seats}

    def view(self, actor: Principal = SYSTEM) -> dict[str, Any]:
        return self.app.deals.table(actor, self.id)

    def legal_actions(self) -> list[dict[str, Any]]:
        """The actions the service offers now (as an operator sees them), without player ids."""
        return [{k: v for k, v in action.items() if k != "player_id"}
                for action in self.view()["legal_actions"]]

    def bettable(self) -> dict[int, tuple[int, int]]:
        """Seats the service offers a bet now, with (min, max)."""
        return {a["seat"]: (a["min"], a["max"])
                for a in self.legal_actions() if a["action"] == "bet"}

    def may_see(self, viewer: int | None, seat: int) -> bool:
        """Whether the table as the player in seat `viewer` reads it (an operator's view for
        None) shows the cards of `seat`'s face-down hand."""
        actor = SYSTEM if viewer is None else player(self.state.seats[viewer]["player"])
        deal = self.view(actor)["current_deal"]
        hands = {hand["seat"]: hand for hand in (deal or {}).get("hands", [])}
        return seat in hands and hands[seat]["cards"] is not None

    def engine_refuses(self, rule: str, action: str, *args: Any) -> RuleViolation:
        """The pure engine's `action` (an attribute of `HighCardGame`: `fund`, `choose`, ...),
        checked by its `verify` on the table's current state, names `rule`."""
        game = HighCardGame(self.state, lambda *_: pytest.fail("a check emitted an operation"))
        with pytest.raises(RuleViolation) as refused:
            getattr(game, action).verify(*args)
        assert refused.value.rule == rule, str(refused.value)
        return refused.value

    # Conservation (G10), on the application's own records.
    def check(self) -> None:
        state = self.state
        balances = {w: self.app.repository.get(w).balance for w in self.opened}
        assert all(amount >= 0 for amount in balances.values()), balances
        assert state.pot >= 0 and state.stake >= 0, (state.pot, state.stake)
        assert sum(balances.values()) + state.pot + state.stake == self.total
        new = list(self.app.events.get(self.id, gt=self.checked_version))
        for event in new:
            self.replica = event.mutate(self.replica)
            for transfer in transfers_in(getattr(event, "data", None) or {}):
                self._book(transfer)
            replayed = self.replica.state
            assert replayed.pot >= 0 and replayed.stake >= 0, (type(event).__name__, replayed.pot)
            self.checked_version = event.originator_version
        assert self.replica.state.to_dict() == state.to_dict()
        for wallet_id in self.opened:
            account = f"wallet:{wallet_id}"
            recorded = [e.transfer["id"] for e in self.app.events.get(wallet_id)
                        if type(e).__name__ in ("Debited", "Credited")]
            assert recorded == self.wallet_transfers.get(account, []), account

    def _book(self, transfer: dict[str, Any]) -> None:
        amount = transfer["amount"]
        assert isinstance(amount, int) and not isinstance(amount, bool) and amount > 0, transfer
        assert transfer["id"] not in self.transfer_ids, f"transfer id reused: {transfer}"
        self.transfer_ids.add(transfer["id"])
        for account in (transfer["source"], transfer["destination"]):
            if account.startswith("wallet:"):
                self.wallet_transfers.setdefault(account, []).append(transfer["id"])

    # Seats and chips.
    def new_wallet(self, chips: int = 0, name: str = "spare") -> UUID:
        """Open a wallet (and grant it `chips`) without seating it."""
        wallet_id = UUID(self.app.wallets.open_wallet(SYSTEM, name)["id"])
        self.opened.append(wallet_id)
        if chips:
            self.app.wallets.grant(SYSTEM, wallet_id, chips)
            self.total += chips
        return wallet_id

    def seat(self, seat: int, wallet_id: UUID) -> None:
        """Seat a wallet; its player sends the command."""
        owner = self.app.repository.get(wallet_id).player_id
        self._do(lambda: self.app.tables.seat_player(player(owner), self.id, seat, wallet_id))
        self.wallets[seat] = str(wallet_id)

    def sit(self, seat: int, chips: int) -> None:
        """Open a wallet for `player-<seat>`, grant it `chips` and seat it."""
        self.seat(seat, self.new_wallet(chips, name=f"player-{seat}"))

    def grant(self, seat: int, chips: int) -> None:
        """Chips arriving in a seat's wallet from outside the table (an operator grant)."""
        self.total += chips
        self._do(lambda: self.app.wallets.grant(SYSTEM, UUID(self.wallets[seat]), chips))

    def unseat(self, seat: int) -> None:
        self._do(lambda: self.app.tables.unseat_player(self._player(seat), self.id, seat))

    # Commands: each goes to the service as the principal who would send it, then checks.
    def _player(self, seat: int) -> Principal:
        info = self.state.seats.get(seat)
        return player(info["player"]) if info else player(f"player-{seat}")

    def _dealer(self) -> Principal:
        dealer = self.state.dealer
        return SYSTEM if dealer is None else self._player(dealer)

    def _do(self, command: Any) -> Any:
        try:
            return command()
        finally:
            self.check()

    def start(self) -> None:
        self._do(lambda: self.app.play.start_deal(self._dealer(), self.id))

    def fund(self, seat: int, amount: int) -> None:
        self._do(lambda: self.app.play.fund_bank(self._player(seat), self.id, amount))

    def decline(self, seat: int) -> None:
        self._do(lambda: self.app.play.decline_bank(self._player(seat), self.id))

    def bet(self, seat: int, amount: int) -> None:
        self._do(lambda: self.app.play.bet(self._player(seat), self.id, seat, amount))

    def buy(self, seat: int) -> None:
        self._do(lambda: self.app.play.buy_centre_card(self._player(seat), self.id, seat))

    def pass_turn(self, seat: int) -> None:
        self._do(lambda: self.app.play.pass_turn(self._player(seat), self.id, seat))

    def choose(self, seat: int, choice: str) -> None:
        self._do(lambda: self.app.play.dealer_choice(self._player(seat), self.id, choice))

    def split_pot(self) -> None:
        self._do(lambda: self.app.tables.split_pot(SYSTEM, self.id))

    def close(self) -> None:
        self._do(lambda: self.app.tables.close_table(SYSTEM, self.id))

    def _unchanged(self, action: str, args: tuple[Any, ...], error: type[Exception]
                   ) -> Exception:
        before = (self.state.to_dict(), self.app.recorder.max_notification_id(),
                  {w: self.app.repository.get(w).balance for w in self.opened})
        with pytest.raises(error) as refused:
            getattr(self, action)(*args)
        after = (self.state.to_dict(), self.app.recorder.max_notification_id(),
                 {w: self.app.repository.get(w).balance for w in self.opened})
        assert after == before, "a refused command changed or recorded something"
        return refused.value

    def refuse(self, rule: str, action: str, *args: Any) -> RuleViolation:
        """The command is refused naming `rule`, and records and changes nothing (G8)."""
        refused = self._unchanged(action, args, RuleViolation)
        assert isinstance(refused, RuleViolation) and refused.rule == rule, str(refused)
        return refused

    def forbidden(self, action: str, *args: Any) -> Forbidden:
        """The service refuses the command to the principal sending it, recording nothing."""
        refused = self._unchanged(action, args, Forbidden)
        assert isinstance(refused, Forbidden)
        return refused

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
