"""The ledger application: every command loads aggregates, decides, and saves them in one go.

A command that moves chips between a wallet and a deal saves both (and the table) in one
`save`, which the event store writes in one transaction. A command sent with an idempotency
key saves its answer in that same transaction, so a retry finds the answer and records nothing.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from uuid import UUID, uuid4

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError, OperationalError
from eventsourcing.utils import Environment, EnvType

from ledger import fairness
from ledger.cards import Card
from ledger.chain import (
    ChainedMapper,
    checkpoint_mac,
    find_chain_key,
    position_ranges,
    sealed_by,
    stored_digest,
)
from ledger.domain.access import CommandRecord
from ledger.domain.casino import CasinoDeal, CasinoTable, SealedSeed
from ledger.domain.checkpoint import ChainKeyFingerprint, Checkpoints
from ledger.domain.highcard import HighCardStateAsDict, HighCardTable
from ledger.domain.transfers import check_amount
from ledger.domain.wallet import Wallet
from ledger.errors import (
    ConfigurationError,
    Conflict,
    InvalidInput,
    LedgerError,
    NotFound,
    RuleViolation,
)
from ledger.projection import Follower, Projection
from ledger.runtime import RuntimeStore
from ledger.services import views
from ledger.services.access import Action, Principal, require
from ledger.services.audit import AuditQueries
from ledger.services.highcard import HighCardCommands
from ledger.services.keys import ApiKeys
from ledger.services.reports import ReportQueries
from ledger.settings import Settings
from ledger.store import locate
from ledger.validation import IDEMPOTENCY_KEY, PLAYER_ID

A = TypeVar("A", bound=Aggregate)
MAX_ATTEMPTS = 5
CHECKPOINT_EVERY = 1000
CHECKPOINT_MOST = 5000


@dataclass(frozen=True)
class CommandKey:
    """An idempotency key as the API received it: who sent it, the key, and what was asked."""

    principal: str
    key: str
    fingerprint: str

    @classmethod
    def of(cls, principal: Principal, key: str, method: str, path: str, body: Any) -> CommandKey:
        """Fingerprint the request so a reused key with a different request is caught."""
        IDEMPOTENCY_KEY.check(key)
        text = json.dumps([method, path, body], sort_keys=True, default=str)
        return cls(principal.key_id, key, hashlib.sha256(text.encode()).hexdigest())


class LedgerApplication(HighCardCommands, AuditQueries, ReportQueries, ApiKeys,
                        Application[UUID]):
    """Red Dog Ledger's application service over one event store."""

    name = "RedDogLedger"
    snapshotting_intervals = {Wallet: 100, CasinoTable: 100, HighCardTable: 100}  # noqa: RUF012
    env = {"AGGREGATE_CACHE_MAXSIZE": "10000", "AGGREGATE_CACHE_FASTFORWARD": "y"}  # noqa: RUF012

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self.store = locate(self.settings.store)
        self._projection: Projection | None = None
        self._follower: Follower | None = None
        self._projection_lock = threading.Lock()
        self._runtime: RuntimeStore | None = None
        self._runtime_lock = threading.Lock()
        super().__init__(env={**self.settings.store_env, **self.store.env})
        try:
            self.chain = find_chain_key(self.settings, self.store, self._store_is_empty)
            self.mapper.chain_key = self.chain.secret  # type: ignore[attr-defined]
            self._seal_key_fingerprint()
        except BaseException:
            self.close()
            raise

    def construct_env(self, name: str, env: EnvType | None = None) -> Environment:
        """Configure the store from the settings alone, not from the process environment."""
        configured = {**type(self).env, "IS_SNAPSHOTTING_ENABLED": "y", **(env or {})}
        return Environment(name, configured)

    def construct_mapper(self) -> Any:
        """A mapper that seals every stored event with its keyed MAC (`ledger.chain`)."""
        return self.factory.mapper(transcoder=self.construct_transcoder(),
                                   mapper_class=ChainedMapper)

    # The read models.
    @property
    def projection(self) -> Projection:
        """The ledger projection (reports, recall, the feed index, the list of keys)."""
        with self._projection_lock:
            if self._projection is None:
                self._projection = Projection(self)
            return self._projection

    def project(self) -> int:
        """Fold the log into the read models up to its end now; returns events folded."""
        return self.projection.catch_up()

    def follow(self, poll: float = 0.25) -> Follower:
        """Keep the read models folded from a thread of this process (`ledger.projection`)."""
        if self._follower is None:
            self._follower = Follower(self.projection, poll).start()
        return self._follower

    def _notify(self, recordings: list[Any]) -> None:
        if self._follower is not None:
            self._follower.notify()

    def close(self) -> None:
        if self._follower is not None:
            self._follower.stop()
        if self._projection is not None:
            self._projection.store.close()
        if self._runtime is not None:
            self._runtime.close()
        super().close()

    def _store_is_empty(self) -> bool:
        return not (self.recorder.max_notification_id() or 0)

    def _seal_key_fingerprint(self) -> None:
        """Record the chain key's fingerprint in a new store; refuse another store's key."""
        fingerprint = self.chain.fingerprint
        try:
            recorded = self.repository.get(ChainKeyFingerprint.create_id())
        except AggregateNotFoundError:
            if not self._store_is_empty() and not self._first_event_sealed_by_this_key():
                raise ConfigurationError(self._wrong_key(fingerprint, None)) from None
            try:
                self.save(ChainKeyFingerprint(fingerprint=fingerprint))
                return
            except IntegrityError:  # another process recorded it first
                recorded = self.repository.get(ChainKeyFingerprint.create_id())
        if recorded.fingerprint != fingerprint:
            raise ConfigurationError(self._wrong_key(fingerprint, recorded.fingerprint))

    def _first_event_sealed_by_this_key(self) -> bool:
        """A store from before fingerprints were recorded: does the key seal its first event?"""
        [first] = self.recorder.select_notifications(start=1, limit=1)
        return sealed_by(self.chain.secret, first, self.mapper.to_domain_event(first))

    def _wrong_key(self, fingerprint: str, recorded: str | None) -> str:
        sealed_with = f"the key of fingerprint {recorded}" if recorded else "another key"
        return (f"the chain key from {self.chain.source} (fingerprint {fingerprint}) is not this "
                f"store's key: its events were sealed with {sealed_with}. Point "
                "REDDOG_CHAIN_KEY_FILE at that key; a process never seals with a different one.")

    @property
    def chain_key(self) -> bytes:
        return self.mapper.chain_key  # type: ignore[attr-defined]

    def _checkpoint_now_and_then(self, recordings: list[Any]) -> None:
        """Checkpoint the log once it has grown CHECKPOINT_EVERY events past the last one."""
        if not recordings:
            return
        position = recordings[-1].notification.id
        if position - self._checkpointed >= CHECKPOINT_EVERY:
            self.checkpoint()
            self._checkpointed = position

    def checkpoint(self) -> dict[str, Any] | None:
        """Record the positions and digests of the log since the last checkpoint, in checkpoints
        of at most CHECKPOINT_MOST positions; None when nothing is new."""
        try:
            checkpoints = self.repository.get(Checkpoints.create_id())
        except AggregateNotFoundError:
            checkpoints = Checkpoints()
        end = self.recorder.max_notification_id() or 0
        done = {"first": checkpoints.last_position + 1, "last": 0, "events": 0}
        while checkpoints.last_position < end:
            first = checkpoints.last_position + 1
            page = self.recorder.select_notifications(
                start=first, limit=CHECKPOINT_MOST, stop=end)
            last = page[-1].id if len(page) == CHECKPOINT_MOST else end
            digests = [stored_digest(n.id, n) for n in page]
            ranges = position_ranges([n.id for n in page])
            mac = checkpoint_mac(self.chain_key, checkpoints.last_mac, first, last, digests,
                                 ranges)
            checkpoints.record(first, last, digests, mac, ranges)
            try:
                self.save(checkpoints)
            except IntegrityError:  # another process checkpointed first; its checkpoint stands
                return None
            done.update(last=last, events=done["events"] + len(digests))
        return done if done["last"] else None

    def register_transcodings(self, transcoder: Any) -> None:
        """Add the transcoding that lets high-card table snapshots hold the engine state."""
        super().register_transcodings(transcoder)
        transcoder.register(HighCardStateAsDict())

    _checkpointed = 0

    @classmethod
    def for_store(cls, url: str | None = None) -> LedgerApplication:
        """Build the application on the store named by a URL (`ledger.store`), the other
        settings from the environment."""
        return cls(Settings.from_env(store=url))

    # Wallets.
    def open_wallet(
        self, actor: Principal, player_id: str, command: CommandKey | None = None,
        wallet_id: UUID | None = None,
    ) -> dict[str, Any]:
        """Open an empty wallet for a pseudonymous player id."""
        require(actor, Action.OPEN_WALLET)
        player_id = _check_player_id(player_id)

        def decide() -> tuple[list[Aggregate], dict[str, Any]]:
            wallet = Wallet(player_id=player_id, id=wallet_id or uuid4())
            return [wallet], views.wallet_view(wallet)

        return self._execute(command, decide)

    def grant(
        self, actor: Principal, wallet_id: UUID, amount: int, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """Grant play credits to a wallet (C1)."""
        require(actor, Action.GRANT)
        check_amount(amount, field="amount")

        def decide() -> tuple[list[Aggregate], dict[str, Any]]:
            wallet = self._get(wallet_id, Wallet, "wallet")
            wallet.grant(amount, granted_by=actor.key_id)
            return [wallet], views.wallet_view(wallet)

        return self._execute(command, decide)

    def wallet(self, actor: Principal, wallet_id: UUID) -> dict[str, Any]:
        """Read a wallet."""
        wallet = self._get(wallet_id, Wallet, "wallet")
        require(actor, Action.READ_WALLET, owner=wallet.player_id)
        return views.wallet_view(wallet)

    # Casino tables and deals.
    def open_casino_table(
        self,
        actor: Principal,
        wallet_id: UUID,
        client_seed: str | None = None,
        accepts_supplied_seeds: bool = False,
        command: CommandKey | None = None,
        table_id: UUID | None = None,
    ) -> dict[str, Any]:
        """Open a Casino Red Dog table with the wallet's player in its one seat."""
        require(actor, Action.OPEN_TABLE)
        client_seed = fairness.check_client_seed(client_seed or secrets.token_hex(8))

        def decide() -> tuple[list[Aggregate], dict[str, Any]]:
            wallet = self._get(wallet_id, Wallet, "wallet")
            table = CasinoTable(
                wallet_id=wallet.id, player_id=wallet.player_id, client_seed=client_seed,
                accepts_supplied_seeds=accepts_supplied_seeds, id=table_id or uuid4(),
            )
            return [table], views.table_view(table, None, wallet.balance)

        return self._execute(command, decide)

    def change_client_seed(
        self, actor: Principal, table_id: UUID, client_seed: str, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """Set the client seed for the next shuffle, between deals only (fairness.md)."""
        client_seed = fairness.check_client_seed(client_seed)
        if isinstance(self._get(table_id, Aggregate, "table"), HighCardTable):
            return self.change_table_client_seed(actor, table_id, client_seed, command)

        def decide() -> tuple[list[Aggregate], dict[str, Any]]:
            table = self._get(table_id, CasinoTable, "table")
            require(actor, Action.CHANGE_CLIENT_SEED, owner=table.player_id)
            current = self._current_deal(table)
            if current is not None and not current.finished:
                raise RuleViolation("G2", "the client seed changes only between deals",
                                    field="client_seed")
            table.change_client_seed(client_seed)
            wallet = self._get(table.wallet_id, Wallet, "wallet")
            return [table], views.table_view(table, current, wallet.balance)

        return self._execute(command, decide)

    def deal(
        self,
        actor: Principal,
        table_id: UUID,
        bet: int,
        server_seed: str | None = None,
        command: CommandKey | None = None,
    ) -> dict[str, Any]:
        """Commit to a fresh shuffle, take the opening bet and deal two cards (G2, C2, C3)."""

        def decide() -> tuple[list[Aggregate], dict[str, Any]]:
            found = self._get(table_id, Aggregate, "table")
            if isinstance(found, HighCardTable):
                require(actor, Action.PLAY, owner=frozenset(
                    info["player"] for info in found.state.seats.values()))
                raise InvalidInput("a multi-seat table starts deals with POST "
                                   "/tables/{id}/next-deal and takes bets at /tables/{id}/bets",
                                   field="bet")
            if not isinstance(found, CasinoTable):
                raise NotFound(f"no table {table_id}")
            table = found
            require(actor, Action.PLAY, owner=table.player_id)
            current = self._current_deal(table)
            if current is not None and not current.finished:
                raise RuleViolation("G8", "the current deal has not finished")
            if server_seed is not None:
                require(actor, Action.SUPPLY_SEED)
            if server_seed is not None and not table.accepts_supplied_seeds:
                raise RuleViolation("G2", "this table draws its own server seeds",
                                    field="server_seed")
            seed = fairness.check_server_seed(server_seed) if server_seed else (
                fairness.new_server_seed())
            wallet = self._get(table.wallet_id, Wallet, "wallet")
            nonce = table.start_deal()
            deal = CasinoDeal(
                table_id=table.id, nonce=nonce, wallet_id=wallet.id, player_id=table.player_id,
                client_seed=table.client_seed, commitment=fairness.commitment(seed),
            )
            sealed = SealedSeed(deal_id=deal.id, server_seed=seed)
            pack = fairness.shuffled_pack(seed, table.client_seed, nonce)
            deal.open(bet, wallet, pack)
            if not deal.needs_decision:
                deal.finish(wallet, pack, seed)
            return [table, deal, sealed, wallet], views.deal_view(deal, wallet.balance)

        return self._execute(command, decide)

    def stand(
        self, actor: Principal, deal_id: UUID, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """Stand on the opening bet; the third card is dealt and the deal settles (C6, C7)."""
        return self._decide_on(actor, deal_id, raise_bet=False, command=command)

    def raise_bet(
        self, actor: Principal, deal_id: UUID, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """Raise by exactly the opening bet; the third card is dealt and the deal settles (C6, C7)."""
        return self._decide_on(actor, deal_id, raise_bet=True, command=command)

    def _decide_on(
        self, actor: Principal, deal_id: UUID, raise_bet: bool, command: CommandKey | None
    ) -> dict[str, Any]:
        def decide() -> tuple[list[Aggregate], dict[str, Any]]:
            deal = self._get(deal_id, CasinoDeal, "deal")
            require(actor, Action.PLAY, owner=deal.player_id)
            wallet = self._get(deal.wallet_id, Wallet, "wallet")
            if raise_bet:
                deal.raise_bet(wallet)
            else:
                deal.stand()
            seed = self._sealed_seed(deal.id)
            deal.finish(wallet, fairness.shuffled_pack(seed, deal.client_seed, deal.nonce), seed)
            return [deal, wallet], views.deal_view(deal, wallet.balance)

        return self._execute(command, decide)

    def open_any_table(
        self,
        actor: Principal,
        variant: str,
        wallet_id: UUID | None = None,
        limits: dict[str, int] | None = None,
        client_seed: str | None = None,
        accepts_supplied_seeds: bool = False,
        command: CommandKey | None = None,
    ) -> dict[str, Any]:
        """Open a casino table (one seat, `wallet_id`) or a multi-seat table (`limits`)."""
        require(actor, Action.OPEN_TABLE)
        if variant == "casino":
            if wallet_id is None:
                raise InvalidInput("a casino table needs the wallet_id of its player",
                                   field="wallet_id")
            if limits:
                raise InvalidInput("casino limits are fixed by rule C2", field="limits")
            return self.open_casino_table(actor, wallet_id, client_seed, accepts_supplied_seeds,
                                          command)
        if wallet_id is not None:
            raise InvalidInput("multi-seat tables seat players with POST /tables/{id}/seats",
                               field="wallet_id")
        return self.open_table(actor, variant, limits, client_seed, accepts_supplied_seeds,
                               command)

    def table(self, actor: Principal, table_id: UUID) -> dict[str, Any]:
        """Read a table as its caller may see it, with the actions legal now."""
        table = self._get(table_id, Aggregate, "table")
        if isinstance(table, HighCardTable):
            return self.high_card_table(actor, table_id)
        if not isinstance(table, CasinoTable):
            raise NotFound(f"no table {table_id}")
        require(actor, Action.READ_TABLE, owner=table.player_id)
        wallet = self._get(table.wallet_id, Wallet, "wallet")
        return views.table_view(table, self._current_deal(table), wallet.balance)

    def deal_state(self, actor: Principal, deal_id: UUID) -> dict[str, Any]:
        """Read one deal as it stands (a multi-seat deal: its replay's last state)."""
        if self.table_of_deal(deal_id) is not None:
            replay = self.table_deal_replay(actor, deal_id)
            return {"id": replay["deal_id"], "table_id": replay["table_id"],
                    "phase": "finished" if replay["finished"] else "in_progress",
                    "state": replay["steps"][-1]["state"]}
        deal = self._readable_deal(actor, deal_id)
        balance = self._get(deal.wallet_id, Wallet, "wallet").balance
        return views.deal_view(deal, balance)

    def deal_events(self, actor: Principal, deal_id: UUID) -> list[dict[str, Any]]:
        """List a deal's events in order, with nothing the rules have not revealed."""
        if self.table_of_deal(deal_id) is not None:
            return self.table_deal_events(actor, deal_id)
        self._readable_deal(actor, deal_id)
        return [views.event_view(event) for event in self.events.get(deal_id)]

    def replay(self, actor: Principal, deal_id: UUID) -> dict[str, Any]:
        """Every step of a deal with the state after it, rebuilt from the stored events."""
        if self.table_of_deal(deal_id) is not None:
            return self.table_deal_replay(actor, deal_id)
        deal = self._readable_deal(actor, deal_id)
        steps = []
        for event in self.events.get(deal_id):
            state = self.repository.get(deal_id, version=event.originator_version)
            steps.append({"event": views.event_view(event), "state": views.deal_view(state)})
        return {"deal_id": str(deal.id), "finished": deal.finished, "steps": steps}

    def check_fairness(self, actor: Principal, deal_id: UUID) -> dict[str, Any]:
        """Check a finished deal against its commitment (fairness.md)."""
        if self.table_of_deal(deal_id) is not None:
            return self.table_deal_fairness(actor, deal_id)
        deal = self._readable_deal(actor, deal_id)
        if not deal.finished or deal.server_seed is None:
            raise RuleViolation("G2", "the seed is revealed, and fairness checkable, when the deal ends")
        report = fairness_of(list(self.events.get(deal_id)))
        return {
            "deal_id": str(deal.id),
            "fair": report.fair,
            "server_seed": deal.server_seed,
            "commitment": deal.commitment,
            "client_seed": deal.client_seed,
            "nonce": deal.nonce,
            "pack": report.pack,
            "checks": report.checks,
        }

    # Plumbing.
    def _readable_deal(self, actor: Principal, deal_id: UUID) -> CasinoDeal:
        deal = self._get(deal_id, CasinoDeal, "deal")
        require(actor, Action.READ_DEAL, owner=deal.player_id)
        return deal

    def _current_deal(self, table: CasinoTable) -> CasinoDeal | None:
        if table.current_deal_id is None:
            return None
        return self._get(table.current_deal_id, CasinoDeal, "deal")

    def _sealed_seed(self, deal_id: UUID) -> str:
        sealed = self._get(SealedSeed.create_id(deal_id), SealedSeed, "sealed seed")
        return sealed.server_seed

    def _get(self, aggregate_id: UUID, kind: type[A], name: str) -> A:
        try:
            aggregate = self.repository.get(aggregate_id)
        except AggregateNotFoundError:
            raise NotFound(f"no {name} {aggregate_id}") from None
        if not isinstance(aggregate, kind):
            raise NotFound(f"no {name} {aggregate_id}")
        return aggregate

    def _recorded_answer(self, command: CommandKey) -> dict[str, Any] | None:
        try:
            record = self.repository.get(CommandRecord.create_id(command.principal, command.key))
        except AggregateNotFoundError:
            return None
        if record.fingerprint != command.fingerprint:
            raise Conflict(
                "this Idempotency-Key was used for a different request", field="Idempotency-Key"
            )
        return record.answer

    def _execute(
        self,
        command: CommandKey | None,
        decide: Callable[[], tuple[list[Aggregate], dict[str, Any]]],
    ) -> dict[str, Any]:
        """Decide and save atomically; retry a lost race; answer a repeated key with its first answer."""
        if command is not None and (answer := self._recorded_answer(command)) is not None:
            return answer
        for _attempt in range(MAX_ATTEMPTS):
            try:
                aggregates, answer = decide()
            except LedgerError:
                # The same command may have been applied since its record was looked for (a
                # retry racing its own first attempt): that answer stands, not this refusal.
                if command is not None and (first := self._recorded_answer(command)) is not None:
                    return first
                raise
            if command is not None:
                aggregates.append(CommandRecord(
                    principal=command.principal, key=command.key,
                    fingerprint=command.fingerprint, answer=answer,
                ))
            try:
                recordings = self.save(*aggregates)
            except OperationalError:  # e.g. SQLite's lock timeout: nothing was written
                continue
            except IntegrityError:
                if command is not None and (first := self._recorded_answer(command)) is not None:
                    return first
                continue
            self._checkpoint_now_and_then(recordings)
            return answer
        raise Conflict("the command kept losing races with concurrent commands; try again")


PACK_STEP_KINDS = {"CardDealt": "take", "TargetTurned": "take", "CardDiscarded": "take",
                   "CardBurned": "burn", "CardsReturned": "return", "HandShown": "show"}


def fairness_of(records: list[Any]) -> fairness.FairnessReport:
    """Check one finished deal against fairness.md. `records` are its events, or (name, data,
    version) triples; the first is the commitment."""
    triples = [r if isinstance(r, tuple) else (views.event_name(r), vars(r), r.originator_version)
               for r in records]
    _name, committed, committed_version = triples[0]
    steps: list[fairness.PackStep] = []
    seed = ""
    for name, data, version in triples:
        kind = PACK_STEP_KINDS.get(name)
        if name == "SeedRevealed":
            seed = data["server_seed"]
        elif kind == "return":
            steps.append(fairness.PackStep("return", version=version,
                                           positions=tuple(data["positions"])))
        elif kind == "show":
            steps.extend(fairness.PackStep("show", c["position"], c["card"], version)
                         for c in data["cards"])
        elif kind is not None:
            steps.append(fairness.PackStep(kind, data["position"], data.get("card"), version))
    return fairness.verify_deal(
        server_seed=seed, commitment_hex=committed["commitment"],
        client_seed=committed["client_seed"], nonce=committed["nonce"],
        commitment_version=committed_version, steps=steps,
    )


def _check_player_id(player_id: object) -> str:
    return PLAYER_ID.check(player_id)


def parse_card(text: str) -> Card:
    """Read a card, as InvalidInput when it is not one."""
    try:
        return Card.parse(text)
    except ValueError as error:
        raise InvalidInput(str(error), field="card") from None
