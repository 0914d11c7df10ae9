"""The ledger projection's fold: how each event of the log changes the read models.

One pass over the log keeps three things, written together page by page (`ledger.readmodels.projection`):

Documents (JSON, by name):
- `w|<wallet>`: the player and the balance (from grants and the first record of each transfer).
- `t|<table>`: variant, seats and dealer.
- `d|<deal>`: a deal in progress: its table, who plays, their bets, returns and cards seen.
- `a|<day>|<table>|<player>`: one UTC day's totals at a table for a player; the player `#`
  (which no player id can be) holds the table's own counts: deals, stitch rounds, pot splits.
- `r|<player>|<newest>`: a deal the player played, one document each, named by the log position
  that finished it (`ledger.readmodels.deals.recall_name`: in name order, newest first); recall
  reads the first of a player's names. (Format 2 kept a player's last 50 in one document, read and
  written again at every deal's end.)
- `k|<key id>`: an API key's record (role, player, label, expiry, revocation), never the key
  (`ledger.readmodels.keys`).
- `x|`, `q|`, `s|`: disputes, their lists and day totals (`ledger.readmodels.disputes`).
- `c|chips`: chips by account kind (`ledger.readmodels.chips`).
- `p|`, `b|`: the report's series, deals and banks (`ledger.readmodels.series`).
- `v|`: verification runs and checkpoints (`ledger.readmodels.verification`).
- `g|`, `gi|`: finished deals and the index `GET /deals` searches (`ledger.readmodels.deals`).
- `u|<table>`: the sealed six-spot bets laid at a table and not shown yet (X4), whose chips
  are folded only once their table shows them (`ledger.readmodels.sealed`).

The feed index: each listed event's time, and the keys it is found by (`ledger.readmodels.readstore`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import datetime
from typing import Any, NamedTuple

from eventsourcing.utils import TopicError, resolve_topic

from ledger.core.fairness import shuffled_pack
from ledger.core.transfers import pot_account
from ledger.domain.access import ApiKey, CommandRecord
from ledger.domain.casino import CasinoDeal, CasinoTable, SealedSeed
from ledger.domain.checkpoint import ChainKeyFingerprint, Checkpoints
from ledger.domain.dispute import Dispute
from ledger.domain.highcard import HighCardTable
from ledger.domain.verification import VerificationRun
from ledger.domain.wallet import Wallet
from ledger.readmodels.chips import count_chips
from ledger.readmodels.deals import index_deal, recall_name
from ledger.readmodels.disputes import dispute_doc, facts_of, fold_dispute
from ledger.readmodels.events import (
    CASINO,
    TABLE_EVENTS,
    TABLE_ROW,
    Facts,
    named_documents,
)
from ledger.readmodels.keys import fold_key
from ledger.readmodels.readstore import ReadSession
from ledger.readmodels.sealed import UNSEALS, fold_unsealed_bets, hold_sealed_bet
from ledger.readmodels.series import deal_finished, track_pot
from ledger.readmodels.verification import fold_checkpoint, fold_run
from ledger.rules import operations as op

#: The most deals recall answers at once.
RECALL_KEPT = 50
TOP_WINS = 5
COUNTS = ("deals", "turns", "wins", "handle", "returned", "paid_in", "paid_out", "banker_in",
          "banker_out", "stitch_rounds", "pot_splits", "partial_payouts")
BETS = (CasinoDeal.Wagered, CasinoDeal.Raised, op.BetPlaced)
RETURNS = (CasinoDeal.Settled, op.PaidOut)  # a partial payout is a PaidOut too
#: Classes the fold dispatches on, as tuples made once (not a union made at every event).
TABLE_OPENED = (CasinoTable.Opened, HighCardTable.Opened)
DEAL_ENDS = (CasinoDeal.SeedRevealed, op.DealEnded)
#: Events the projection never reads: secrets and request bookkeeping.
UNFOLDED: tuple[type, ...] = (SealedSeed.Event, CommandRecord.Event, ChainKeyFingerprint.Event)
#: Events folded into documents but never listed in the feed.
UNLISTED: tuple[type, ...] = (*UNFOLDED, ApiKey.Event, Checkpoints.Event)


@functools.lru_cache(maxsize=1024)
def _topic_class(topic: str) -> type | None:
    """The class a stored topic names, or None where it names none (the decoding that follows
    reports such an event)."""
    try:
        found = resolve_topic(topic)
    except TopicError:
        return None
    return found if isinstance(found, type) else None


def listed_topic(topic: str) -> bool:
    """Whether events of this stored topic appear in the audit feed."""
    cls = _topic_class(topic)
    return cls is None or not issubclass(cls, UNLISTED)


@functools.lru_cache(maxsize=1024)
def folded_topic(topic: str) -> bool:
    """Whether the projection reads events of this stored topic at all (asked of every event
    it reads: remembered per topic, as `_topic_class` is)."""
    cls = _topic_class(topic)
    return cls is None or not issubclass(cls, UNFOLDED)


class _Plan(NamedTuple):
    """What the fold does with an event or record of a class, worked out once per class (the
    fold dispatches on these rather than asking `isinstance` a score of times per event)."""

    type_key: str  # its feed index key
    wallet: bool  # a wallet's event
    table: bool  # a table's event (casino or high-card)
    casino_deal: bool
    dispute: bool
    api_key: bool
    checkpoint: bool
    verification: bool
    table_opened: bool
    casino_committed: bool
    # As a record (a table's operation, or any event but a table's operation):
    bet_placed: bool  # may be a sealed bet (X4)
    unseals: bool
    operation: bool
    op_committed: bool
    bets: bool
    returns: bool
    funds: bool
    collects: bool
    deal_ends: bool
    deal_voided: bool
    deal_fact: bool  # changes a deal's document (`_deal_fact`)


_PLANS: dict[type, _Plan] = {}
_DEAL_FACTS = (CasinoDeal.CardDealt, op.CardDealt, op.TargetTurned, op.SeedRevealed, *RETURNS)


def _plan_of(cls: type) -> _Plan:
    found = _PLANS.get(cls)
    if found is None:
        found = _PLANS[cls] = _Plan(
            f"type:{cls.__name__}", issubclass(cls, Wallet.Event), issubclass(cls, TABLE_EVENTS),
            issubclass(cls, CasinoDeal.Event), issubclass(cls, Dispute.Event),
            issubclass(cls, ApiKey.Event), issubclass(cls, Checkpoints.Event),
            issubclass(cls, VerificationRun.Event), issubclass(cls, TABLE_OPENED),
            issubclass(cls, CasinoDeal.Committed), issubclass(cls, op.BetPlaced),
            issubclass(cls, UNSEALS), issubclass(cls, op.Operation),
            issubclass(cls, op.Committed), issubclass(cls, BETS), issubclass(cls, RETURNS),
            issubclass(cls, op.BankFunded), issubclass(cls, op.BankCollected),
            issubclass(cls, DEAL_ENDS), issubclass(cls, op.DealVoided),
            issubclass(cls, _DEAL_FACTS))
    return found


#: What `Fold.get` finds for a name neither changed nor read yet (None: read, and not there).
_UNREAD = object()


class Fold:
    """Folds events into documents and feed index rows, reading unchanged documents from
    `session` (inside the projection's transaction). A page reads each document once at most:
    what it read is kept, found or not, for the rest of the page."""

    def __init__(self, session: ReadSession) -> None:
        self._session = session
        self._read: dict[str, Any] = {}  # None: the store has no such document
        self.changed: dict[str, Any] = {}
        self._created: set[str] = set()  # changed documents that no fold can have made before
        self.keys: dict[str, list[int]] = {}  # index key → its positions, in order
        self.listed: list[tuple[int, int]] = []
        self._owners: dict[str, str] = {}  # wallet id → its player, as read for the index
        self.at = 0  # the log position of the event being folded

    def get(self, name: str, default: Any = None) -> Any:
        found = self.changed.get(name, _UNREAD)
        if found is _UNREAD:
            found = self._read.get(name, _UNREAD)
            if found is _UNREAD:
                found = self._read[name] = self._session.read(name)
        return default if found is None else found

    def put(self, name: str, document: Any) -> None:
        self.changed[name] = document

    def create(self, name: str, document: Any) -> None:
        """`put` a document whose name only the event being folded can make (it holds that
        event's log position, or a deal's id and end, which one event of the log makes once),
        so the store cannot hold it yet."""
        self.changed[name] = document
        self._created.add(name)

    def absent(self) -> frozenset[str]:
        """The changed documents the store does not hold: made by `create`, or read by this
        page and not found (inside its transaction, in which no other folder writes)."""
        read = self._read
        return frozenset(name for name in self.changed
                         if name in self._created or (name in read and read[name] is None))

    def prefetch(self, names: Iterable[str]) -> None:
        """Read the documents of these names that are neither read nor changed yet, at once."""
        wanted = [name for name in names if name not in self.changed and name not in self._read]
        if wanted:
            found = self._session.read_many(wanted)
            self._read.update((name, found.get(name)) for name in wanted)

    def fold_page(self, events: Iterable[tuple[int, Any, Facts]]) -> None:
        """Fold (position, event, its `facts`) in order, having read at once the documents that
        their events name where the store reads in bulk (which holds them all first); else each
        as it comes (decoded just before, it is still in the processor's caches: a catch-up in
        memory takes 6 to 9 % less CPU than with the page's 20,000 events decoded first)."""
        if self._session.reads_in_bulk:
            events = list(events)
            self.prefetch({name for _position, event, its in events
                           for name in named_documents(event, its)})
        for position, event, its in events:
            self.fold(position, event, its)

    def row(self, day: str, table: str, player: str, variant: str) -> dict[str, Any]:
        name = f"a|{day}|{table}|{player}"
        row = self.get(name) or {"day": day, "table": table, "player": player,
                                 "variant": variant, **dict.fromkeys(COUNTS, 0), "top_wins": []}
        self.put(name, row)
        return row

    def fold(self, position: int, event: Any, known: Facts) -> None:
        """Fold one event, at its position in the log (`known`: its `facts`)."""
        self.at = position
        record = known.record
        plan = _plan_of(type(event))
        of_record = plan if record is event else _plan_of(type(record))
        if of_record.bet_placed and record.sealed:
            self._index(position, event, plan, known, known.data)
            hold_sealed_bet(self, known)
            return
        if of_record.unseals:
            fold_unsealed_bets(self, event, known.aggregate)
        if known.transfers:
            count_chips(self, event, known.transfers)
        if plan.api_key:
            fold_key(self, event, known.data)
        elif plan.checkpoint:
            fold_checkpoint(self, position, event)
        elif plan.verification:
            self._index(position, event, plan, known, known.data)
            fold_run(self, event)
        elif plan.dispute:
            doc = dispute_doc(self, event)
            self._index(position, event, plan, known, facts_of(doc, known.data))
            fold_dispute(self, event, known.data, doc)
        else:
            self._index(position, event, plan, known, known.data)
            self._fold(event, plan, of_record, known)

    # The feed index.
    def _index(self, position: int, event: Any, kind: _Plan, known: Facts,
               data: dict[str, Any]) -> None:
        """The event's index rows: its type, and the tables, wallets and players it is about
        (`data`: its fields, or for a dispute's event those of the dispute too). Wallets are
        gathered apart to find their players."""
        aggregate = known.aggregate
        keys = {kind.type_key}
        wallets = [wallet for wallet, _ in known.wallets]
        at_table = False
        if kind.wallet:
            wallets.append(aggregate)
        elif kind.table:
            keys.add(f"table:{aggregate}")
            at_table = True
        if kind.dispute:
            if data.get("table_id"):
                keys.add(f"table:{data['table_id']}")
                at_table = True
        elif kind.casino_deal:
            # A deal's first event: its document is made by this event's fold, after the
            # index, so there is none to read (a SQLite store would look it up for nothing).
            deal = {} if event.originator_version == 1 else self.get(f"d|{aggregate}") or {}
            table = data.get("table_id") or deal.get("table")
            if table:
                keys.add(f"table:{table}")
                at_table = True
            players = deal.get("players")
            if players:
                keys.update([f"player:{player}" for player in players])
        player = data.get("player_id")
        if isinstance(player, str):
            keys.add(f"player:{player}")
        wallet_id = data.get("wallet_id")
        if wallet_id is not None:
            wallets.append(str(wallet_id))
        seat = data.get("seat")
        if at_table and isinstance(seat, int):
            info = (self.get(f"t|{aggregate}") or {}).get("seats", {}).get(str(seat))
            if info:
                keys.add(f"player:{info['player']}")
        owners = self._owners
        for wallet in wallets:
            keys.add(f"wallet:{wallet}")
            owner = owners.get(wallet)
            if owner is None:
                owner = (self.get(f"w|{wallet}") or {}).get("player")
                if owner:  # a wallet's player never changes once it is opened
                    owners[wallet] = owner
            if owner:
                keys.add(f"player:{owner}")
        # Its UTC time in whole microseconds since the epoch: the feed index's clock.
        self.listed.append((position, int(event.timestamp.timestamp() * 1_000_000)))
        index = self.keys
        for key in keys:
            found = index.get(key)
            if found is None:
                index[key] = [position]
            else:
                found.append(position)

    # Reports and recall.
    def _fold(self, event: Any, plan: _Plan, of_record: _Plan, known: Facts) -> None:
        data, aggregate = known.data, known.aggregate
        if plan.wallet:
            self._wallet_fact(event, aggregate, data)
            return
        if plan.table_opened:
            self.put(f"t|{aggregate}", {"variant": event.variant if isinstance(
                event, HighCardTable.Opened) else CASINO, "seats": {}, "dealer": None})
            return
        if plan.casino_deal:
            deal_id: str | None = aggregate
            table_id = str(data["table_id"]) if plan.casino_committed else (
                self.get(f"d|{deal_id}") or {}).get("table")
        else:
            deal_id = data.get("deal_id")
            table_id = aggregate
        if table_id:
            self.fold_at_table(known, deal_id, table_id, of_record)

    def fold_at_table(self, known: Facts, deal_id: str | None, table_id: str,
                      plan: _Plan | None = None) -> None:
        """What an event at a table, or of one of its deals, does to the reports and recall
        (`plan`: its record's, when known)."""
        data, record, transfers, when = known.data, known.record, known.transfers, known.when
        table = self.get(f"t|{table_id}")
        if table is None:
            return
        if plan is None:
            plan = _plan_of(type(record))
        day = when[:10]  # the date, as `date().isoformat()` writes it
        variant = table["variant"]
        if plan.operation:  # a casino event changes no seat or dealer
            self._table_fact(record, table, table_id, day, variant)
        if deal_id is not None and (plan.casino_committed or (  # a deal's start
                plan.op_committed and record.purpose == op.Committed.DEAL)):
            self._start_deal(deal_id, table_id, table, record, data, when, day, variant)
        deal = self.get(f"d|{deal_id}") if deal_id else None
        if known.wallets:
            self._move(known.wallets, plan, deal, table_id, day, variant)
        if transfers:
            pot = pot_account(table_id)
            for transfer in transfers:
                track_pot(table, pot, transfer)
        if deal_id and deal is not None:  # (a deal is read only by its id)
            if plan.deal_fact:
                self._deal_fact(record, data, deal, day, variant, table_id)
            self.put(f"d|{deal_id}", deal)
            if plan.deal_ends:
                deal_finished(self, deal, table, table_id, day, variant)
                self._finish_deal(deal_id, deal, day, table_id, variant, when)
            elif plan.deal_voided:
                self.put(f"d|{deal_id}", None)
                self.row(day, table_id, TABLE_ROW, variant)["deals"] -= 1
        self.put(f"t|{table_id}", table)

    def _wallet_fact(self, event: Any, aggregate: str, data: dict[str, Any]) -> None:
        if isinstance(event, Wallet.Opened):
            self.put(f"w|{aggregate}", {"player": data["player_id"], "balance": 0})
        elif isinstance(event, Wallet.Granted):
            wallet = self.get(f"w|{aggregate}")
            wallet["balance"] += data["transfer"]["amount"]
            self.put(f"w|{aggregate}", wallet)
        # Debits and credits: the table or deal event holds the first record of the transfer.

    def _table_fact(self, record: Any, table: dict[str, Any], table_id: str, day: str,
                    variant: str) -> None:
        if isinstance(record, op.Seated):
            table["seats"][str(record.seat)] = {"player": record.player_id,
                                                "wallet": record.wallet_id}
        elif isinstance(record, op.Unseated):
            table["seats"].pop(str(record.seat), None)
        elif isinstance(record, op.DealerChosen):
            table["dealer"] = record.seat
        elif isinstance(record, op.DealPassed):
            table["dealer"] = record.to_seat
        elif isinstance(record, op.StitchDeclared):
            self.row(day, table_id, TABLE_ROW, variant)["stitch_rounds"] += 1
        elif isinstance(record, op.PotSplit):
            self.row(day, table_id, TABLE_ROW, variant)["pot_splits"] += 1

    def _start_deal(self, deal_id: str, table_id: str, table: dict[str, Any], record: Any,
                    data: dict[str, Any], when: str, day: str, variant: str) -> None:
        if isinstance(record, CasinoDeal.Committed):  # one player, in seat 1
            seats = {"1": {"player": data["player_id"], "wallet": str(data["wallet_id"])}}
        else:
            seats = {str(seat): table["seats"][str(seat)] for seat in data.get("order", [])
                     if str(seat) in table["seats"]}
        players = {}
        for seat, info in seats.items():
            wallet = self.get(f"w|{info['wallet']}") or {"balance": 0}
            players[info["player"]] = {"seat": int(seat), "wallet": info["wallet"], "bets": 0,
                                       "returned": 0, "cards": [], "positions": [],
                                       "target": None, "outcome": None,
                                       "balance_before": wallet["balance"]}
        seated = {info["player"]: {"seat": int(seat), "wallet": info["wallet"],
                                   "balance_before": (self.get(f"w|{info['wallet']}") or {}).get(
                                       "balance", 0)}
                  for seat, info in table["seats"].items() if info["player"] not in players}
        self.put(f"d|{deal_id}", {"table": table_id, "variant": variant, "started": when,
                                  "players": players, "seated": seated, "target": None,
                                  "client_seed": data["client_seed"], "nonce": data["nonce"]})
        self.row(day, table_id, TABLE_ROW, variant)["deals"] += 1

    def _move(self, movements: list[tuple[str, int]], plan: _Plan,
              deal: dict[str, Any] | None, table_id: str, day: str, variant: str) -> None:
        """Each wallet side of the event's transfers (its facts' `wallets`, in order)."""
        bets, returns, funds, collects = plan.bets, plan.returns, plan.funds, plan.collects
        for wallet_id, signed in movements:
            wallet = self.get(f"w|{wallet_id}")
            wallet["balance"] += signed
            self.put(f"w|{wallet_id}", wallet)
            row = self.row(day, table_id, wallet["player"], variant)
            amount = abs(signed)
            row["paid_in" if signed < 0 else "paid_out"] += amount
            bet, paid = signed < 0 and bets, signed > 0 and returns
            row["handle"] += amount if bet else 0
            row["returned"] += amount if paid else 0
            row["banker_in"] += amount if funds else 0
            row["banker_out"] += amount if collects else 0
            player = (deal or {}).get("players", {}).get(wallet["player"])
            if player is not None and bet:
                player["bets"] += amount
            elif player is not None and paid:
                player["returned"] += amount

    def _deal_fact(self, record: Any, data: dict[str, Any], deal: dict[str, Any], day: str,
                   variant: str, table_id: str) -> None:
        casino = isinstance(record, CasinoDeal.Event)
        by_seat = {} if casino else {p["seat"]: name for name, p in deal["players"].items()}
        if isinstance(record, CasinoDeal.CardDealt):
            player = next(iter(deal["players"]), None)
            if player:
                deal["players"][player]["cards"].append(record.card)
        elif isinstance(record, op.CardDealt):
            player = by_seat.get(record.seat)
            if player:
                deal["players"][player]["positions"].append(record.position)
        elif isinstance(record, op.TargetTurned):
            player = by_seat.get(record.seat)
            if player:
                deal["players"][player]["target"] = record.card
            else:
                deal["target"] = record.card
        elif isinstance(record, op.SeedRevealed):
            pack = shuffled_pack(record.server_seed, deal["client_seed"], deal["nonce"])
            for info in deal["players"].values():
                info["cards"] = [str(pack[p]) for p in info["positions"]]
        elif isinstance(record, RETURNS):
            player = (by_seat.get(record.seat) if isinstance(record, op.PaidOut)
                      else next(iter(deal["players"])))
            if player is not None:
                self._settled(record, data, deal, player, day, variant, table_id)

    def _settled(self, record: Any, data: dict[str, Any], deal: dict[str, Any], player: str,
                 day: str, variant: str, table_id: str) -> None:
        row = self.row(day, table_id, player, variant)
        row["turns"] += 1
        won = data["outcome"] == op.PaidOut.WIN
        row["wins"] += won
        row["partial_payouts"] += isinstance(record, op.PartiallyPaid)
        deal["players"][player]["outcome"] = data["outcome"]
        winnings = data.get("winnings", max(data.get("returned", 0) - (
            deal["players"][player]["bets"]), 0))
        if won and winnings:
            row["top_wins"] = sorted(row["top_wins"] + [{
                "winnings": winnings, "player": player, "deal": data.get("deal_id") or "",
                "table": table_id}], key=lambda w: -w["winnings"])[:TOP_WINS]

    def _finish_deal(self, deal_id: str, deal: dict[str, Any], day: str, table_id: str,
                     variant: str, when: str) -> None:
        finished = datetime.fromisoformat(when)
        for player, info in deal["players"].items():
            if not info["bets"]:
                continue
            self.row(day, table_id, player, variant)["deals"] += 1
            wallet = self.get(f"w|{info['wallet']}")
            self.create(recall_name(player, self.at), {
                "deal_id": deal_id, "table_id": table_id, "variant": variant,
                "started": deal["started"], "ended": when, "seat": info["seat"],
                "cards": info["cards"], "target": info["target"] or deal["target"],
                "bets": info["bets"],
                "returned": info["returned"], "outcome": info["outcome"],
                "balance_before": info["balance_before"], "balance_after": wallet["balance"],
            })
        balances = {info["wallet"]: (self.get(f"w|{info['wallet']}") or {}).get("balance", 0)
                    for info in [*deal["players"].values(), *deal.get("seated", {}).values()]}
        index_deal(self, deal_id, deal, table_id, variant, finished, balances, self.at)
        self.put(f"d|{deal_id}", None)
