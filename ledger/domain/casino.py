"""Casino Red Dog aggregates: the table (one seat, a shuffle counter) and one aggregate per deal."""

from __future__ import annotations

import functools
from typing import Any
from uuid import UUID

from eventsourcing.domain import event

from ledger.core.cards import Card
from ledger.core.errors import RuleViolation
from ledger.core.ids import derived_id, derived_text, id_text
from ledger.core.transfers import HOUSE, Transfer, deal_stake_account, make_transfer
from ledger.domain.base import LedgerAggregate, versioned
from ledger.domain.wallet import Wallet
from ledger.rules import casino
from ledger.rules.casino import Opening, Phase, Settlement


class CasinoTable(LedgerAggregate):
    """A Casino Red Dog table: one player's seat against the house (C1-C9)."""

    class Opened(LedgerAggregate.Created):
        wallet_id: UUID
        player_id: str
        client_seed: str
        accepts_supplied_seeds: bool

    @event(Opened)
    def __init__(
        self,
        id: UUID,
        wallet_id: UUID,
        player_id: str,
        client_seed: str,
        accepts_supplied_seeds: bool,
    ) -> None:
        self.variant = "casino"
        self.wallet_id = wallet_id
        self.player_id = player_id
        self.client_seed = client_seed
        self.accepts_supplied_seeds = accepts_supplied_seeds
        self.nonce = 0
        self.current_deal_id: UUID | None = None
        self.deals = 0

    def start_deal(self) -> int:
        """Take the next shuffle nonce (fairness.md) and record the deal as current."""
        nonce = self.nonce + 1
        self.trigger_event(CasinoTable.DealStarted, deal_id=CasinoDeal.create_id(self.id, nonce),
                           nonce=nonce)
        return nonce

    def change_client_seed(self, client_seed: str) -> None:
        """Set the client seed used by the next shuffle."""
        self._client_seed_changed(client_seed)

    class DealStarted(LedgerAggregate.Event):
        deal_id: UUID
        nonce: int

    @event(DealStarted)
    def _deal_started(self, deal_id: UUID, nonce: int) -> None:
        self.nonce = nonce
        self.current_deal_id = deal_id
        self.deals += 1

    class ClientSeedChanged(LedgerAggregate.Event):
        client_seed: str

    @event(ClientSeedChanged)
    def _client_seed_changed(self, client_seed: str) -> None:
        self.client_seed = client_seed


class SealedSeed(LedgerAggregate):
    """A deal's secret server seed, kept apart from the deal's events until the deal ends (G2)."""

    @staticmethod
    def create_id(deal_id: UUID) -> UUID:
        return _sealed_seed_id(deal_id)

    class Sealed(LedgerAggregate.Created):
        deal_id: UUID
        server_seed: str
        table_id: UUID | None
        table_version: int | None

    @event(Sealed)
    def __init__(
        self,
        deal_id: UUID,
        server_seed: str,
        table_id: UUID | None = None,
        table_version: int | None = None,
    ) -> None:
        self.deal_id = deal_id
        self.server_seed = server_seed
        # For a multi-seat table: the table, and the version of the deal's commitment in it.
        self.table_id = table_id
        self.table_version = table_version


class CasinoDeal(LedgerAggregate):
    """One deal of Casino Red Dog: commitment, bet, cards, decision, settlement, seed reveal."""

    @staticmethod
    def create_id(table_id: UUID, nonce: int) -> UUID:
        return _deal_id(table_id, nonce)

    class Committed(LedgerAggregate.Created):
        table_id: UUID
        nonce: int
        wallet_id: UUID
        player_id: str
        client_seed: str
        commitment: str

    @event(Committed)
    def __init__(
        self,
        table_id: UUID,
        nonce: int,
        wallet_id: UUID,
        player_id: str,
        client_seed: str,
        commitment: str,
    ) -> None:
        self.table_id = table_id
        self.nonce = nonce
        self.wallet_id = wallet_id
        self.player_id = player_id
        self.client_seed = client_seed
        self.commitment = commitment
        self.commitment_version = 1
        self.bet = 0
        self.stake = 0
        self.raised = False
        self.stood = False
        self.cards: list[dict[str, Any]] = []
        self.phase = Phase.DECIDING
        self.outcome: str | None = None
        self.odds = 0
        self.trips = False
        self.returned = 0
        self.server_seed: str | None = None

    # Reading the state.
    @property
    def stake_account(self) -> str:
        return deal_stake_account(self.id)

    @property
    def opening(self) -> Opening | None:
        cards = self.cards
        if len(cards) < 2:
            return None
        return _opening_of(cards[0]["card"], cards[1]["card"])

    @property
    def finished(self) -> bool:
        return self.phase == Phase.FINISHED

    def card(self, position: int) -> Card:
        return Card.parse(self.cards[position]["card"])

    def can_raise(self, balance: int) -> bool:
        opening = self.opening
        return opening is not None and casino.can_raise(
            opening, self.phase, self.bet, self.raised, balance
        )

    def can_stand(self) -> bool:
        opening = self.opening
        return opening is not None and casino.can_stand(opening, self.phase)

    # Commands: compute and check here, then record through the private events.
    def open(self, bet: int, wallet: Wallet, pack: list[Card]) -> None:
        """Take the opening bet from the wallet and deal two cards face up (C2, C3)."""
        casino.verify_opening_bet(bet, wallet.balance)
        transfer = self._transfer("wager", wallet.account, self.stake_account, bet,
                                  CasinoDeal.Wagered)
        wallet.debit(transfer, rule="C2")
        self.trigger_event(CasinoDeal.Wagered, transfer=transfer)
        self._deal_card(pack[0], 0)
        self._deal_card(pack[1], 1)

    @property
    def needs_decision(self) -> bool:
        """Whether the deal waits for Stand or Raise (only a spread, C6)."""
        return casino.awaits_decision(self.opening, self.phase, self.stood or self.raised)

    def stand(self) -> None:
        """Keep the opening bet as the whole stake (C6)."""
        opening = self._require_opening()
        casino.verify_stand(opening, self.phase)
        if self.stood or self.raised:
            raise RuleViolation("G8", "the player has already decided")
        self.trigger_event(CasinoDeal.Stood)

    def raise_bet(self, wallet: Wallet) -> None:
        """Add exactly the opening bet to the stake (C6)."""
        opening = self._require_opening()
        if self.stood:
            raise RuleViolation("G8", "the player has already stood")
        amount = casino.verify_raise(opening, self.phase, self.bet, self.raised, wallet.balance)
        transfer = self._transfer("raise", wallet.account, self.stake_account, amount,
                                  CasinoDeal.Raised)
        wallet.debit(transfer, rule="C6")
        self.trigger_event(CasinoDeal.Raised, transfer=transfer)

    def finish(self, wallet: Wallet, pack: list[Card], server_seed: str) -> Settlement:
        """Deal the third card when the rules call for one, settle, then reveal the seed."""
        opening = self._require_opening()
        third: Card | None = None
        if opening.needs_third_card:
            third = pack[2]
            self._deal_card(third, 2)
        settlement = casino.settle_deal(self.card(0), self.card(1), third, self.stake)
        transfers: list[Transfer] = []
        if settlement.winnings:
            transfers.append(
                self._transfer("winnings", HOUSE, self.stake_account, settlement.winnings,
                               CasinoDeal.Settled)
            )
        if settlement.returned:
            transfers.append(
                self._transfer("payout", self.stake_account, wallet.account, settlement.returned,
                               CasinoDeal.Settled)
            )
        if settlement.house_takes:
            transfers.append(
                self._transfer("loss", self.stake_account, HOUSE, settlement.house_takes,
                               CasinoDeal.Settled)
            )
        self.trigger_event(
            CasinoDeal.Settled, outcome=str(settlement.outcome), odds=settlement.odds,
            trips=settlement.trips, returned=settlement.returned, transfers=transfers,
        )
        for transfer in transfers:
            if transfer["destination"] == wallet.account:
                wallet.credit(transfer)
        self.trigger_event(CasinoDeal.SeedRevealed, server_seed=server_seed)
        return settlement

    def _deal_card(self, card: Card, position: int) -> None:
        self.trigger_event(CasinoDeal.CardDealt, card=str(card), position=position, to="player",
                           face_up=True)

    def _require_opening(self) -> Opening:
        opening = self.opening
        if opening is None:
            raise RuleViolation("G8", "no cards have been dealt in this deal")
        return opening

    def _transfer(self, label: str, source: str, destination: str, amount: int,
                  cause: type[LedgerAggregate.Event]) -> Transfer:
        # The transfer's id is kept as text only: written from its digest, never a UUID.
        return make_transfer(
            derived_text(self.id, label), source, destination, amount,
            {"table": id_text(self.table_id), "deal": id_text(self.id), "event": cause.__name__},
        )

    # Events: apply only; they run again on every replay. The commands above trigger them by
    # class with their fields by name (`trigger_event`), which records exactly what calling the
    # decorated method would, without the decorator matching arguments to parameters again for
    # every event.
    class Wagered(LedgerAggregate.Event):
        transfer: Transfer

    @event(Wagered)
    def _wagered(self, transfer: Transfer) -> None:
        self.bet = transfer["amount"]
        self.stake += transfer["amount"]

    class CardDealt(LedgerAggregate.Event):
        card: str
        position: int
        to: str
        face_up: bool

    @event(CardDealt)
    def _card_dealt(self, card: str, position: int, to: str, face_up: bool) -> None:
        self.cards.append({"card": card, "position": position, "face_up": face_up, "to": to})

    class Stood(LedgerAggregate.Event):
        """The player kept the opening bet as the whole stake (C6)."""

    @event(Stood)
    def _stood(self) -> None:
        self.stood = True

    class Raised(LedgerAggregate.Event):
        transfer: Transfer

    @event(Raised)
    def _raised(self, transfer: Transfer) -> None:
        self.raised = True
        self.stake += transfer["amount"]

    class Settled(LedgerAggregate.Event):
        outcome: str
        odds: int
        trips: bool
        returned: int
        transfers: list[Transfer]

    @event(Settled)
    def _settled(
        self, outcome: str, odds: int, trips: bool, returned: int, transfers: list[Transfer]
    ) -> None:
        self.phase = Phase.FINISHED
        self.outcome = outcome
        self.odds = odds
        self.trips = trips
        self.returned = returned

    class SeedRevealed(LedgerAggregate.Event):
        server_seed: str

    @event(SeedRevealed)
    def _seed_revealed(self, server_seed: str) -> None:
        self.server_seed = server_seed

    @property
    def opening_label(self) -> str | None:
        """Report bucket of the opening: consecutive, pair, trips or spread_N."""
        return casino.opening_label(self.opening, self.trips)


# A deal's id and its sealed seed's are each asked for more than once in a command (when the
# deal starts and when it is built; when the seed is sealed and when it is read back): each
# `uuid5` is a SHA-1, so the last few are remembered. An id is a value: sharing one is safe.
# Made by `derived_id`, each one's text is written once, as it is made, for the digest, the MAC
# and the store that write it next.
@functools.lru_cache(maxsize=256)
def _deal_id(table_id: UUID, nonce: int) -> UUID:
    return derived_id(table_id, f"deal:{nonce}")


@functools.lru_cache(maxsize=256)
def _sealed_seed_id(deal_id: UUID) -> UUID:
    return derived_id(deal_id, "sealed-seed")


@functools.cache
def _opening_of(first: str, second: str) -> Opening:
    """The opening two cards make, by their notation (at most 52 x 52 pairs are remembered);
    a deal reads its opening several times a command."""
    return casino.classify_opening(Card.parse(first), Card.parse(second))


# The version of every stored event class (docs/events.md): 1 until its shape changes.
versioned(
    CasinoTable,
    Opened=1, DealStarted=1, ClientSeedChanged=1,
)
versioned(
    SealedSeed,
    Sealed=1,
)
versioned(
    CasinoDeal,
    Committed=1, Wagered=1, CardDealt=1, Stood=1, Raised=1, Settled=1, SeedRevealed=1,
)
