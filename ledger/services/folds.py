"""The ledger projection's fold: how each event of the log changes the read models.

One pass over the log keeps three things, written together page by page (`ledger.projection`):

Documents (JSON, by name):
- `w|<wallet>`: the player and the balance (from grants and the first record of each transfer).
- `t|<table>`: variant, seats and dealer.
- `d|<deal>`: a deal in progress: its table, who plays, their bets, returns and cards seen.
- `a|<day>|<table>|<player>`: one UTC day's totals at a table for a player; the player `#`
  (which no player id can be) holds the table's own counts: deals, stitch rounds, pot splits.
- `r|<player>`: the player's most recent deals, newest first.
- `k|<key id>`: an API key's record (role, player, label, expiry, revocation), never the key.

The feed index: each listed event's time, and the keys it is found by (`ledger.readstore`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ledger.fairness import shuffled_pack
from ledger.rules.highcard_state import transfers_of
from ledger.services import views

RECALL_KEPT = 50
TOP_WINS = 5
#: The per-table row of the day totals. Player ids start with a letter or digit
#: (`ledger.validation.PLAYER_ID`), so no player can be this marker.
TABLE_ROW = "#"
COUNTS = ("deals", "turns", "wins", "handle", "returned", "paid_in", "paid_out", "banker_in",
          "banker_out", "stitch_rounds", "pot_splits", "partial_payouts")
BETS = {"Wagered", "Raised", "BetPlaced"}
RETURNS = {"Settled", "PaidOut", "PartiallyPaid"}
#: Aggregates whose events the projection never reads: secrets and request bookkeeping.
UNFOLDED = ("SealedSeed.", "CommandRecord.", "Checkpoints.", "ChainKeyFingerprint.")
#: Aggregates folded into documents but never listed in the feed.
UNLISTED = (*UNFOLDED, "ApiKey.")


def listed_topic(topic: str) -> bool:
    """Whether events of this stored topic appear in the audit feed."""
    return not topic.rsplit(":", 1)[-1].startswith(UNLISTED)


def folded_topic(topic: str) -> bool:
    """Whether the projection reads events of this stored topic at all."""
    return not topic.rsplit(":", 1)[-1].startswith(UNFOLDED)


def microseconds(event: Any) -> int:
    """An event's UTC time as whole microseconds since the epoch (the feed index's clock)."""
    return int(event.timestamp.timestamp() * 1_000_000)


class Fold:
    """Folds events into documents and feed index rows, reading unchanged documents from
    `read` (inside the projection's transaction)."""

    def __init__(self, read: Callable[[str], Any]) -> None:
        self._read = read
        self.changed: dict[str, Any] = {}
        self.keys: list[tuple[str, int]] = []
        self.listed: list[tuple[int, int]] = []

    def get(self, name: str, default: Any = None) -> Any:
        if name in self.changed:
            found = self.changed[name]
        else:
            found = self._read(name)
        return default if found is None else found

    def put(self, name: str, document: Any) -> None:
        self.changed[name] = document

    def row(self, day: str, table: str, player: str, variant: str) -> dict[str, Any]:
        name = f"a|{day}|{table}|{player}"
        row = self.get(name) or {"day": day, "table": table, "player": player,
                                 "variant": variant, **dict.fromkeys(COUNTS, 0), "top_wins": []}
        self.put(name, row)
        return row

    def fold(self, position: int, event: Any) -> None:
        name = type(event).__qualname__
        data = event.data if isinstance(getattr(event, "data", None), dict) else vars(event)
        if name.startswith("ApiKey."):
            self._key(event, name, data)
            return
        self._index(position, event, name, data)
        self._fold(event, name, data)

    # API keys.
    def _key(self, event: Any, name: str, data: dict[str, Any]) -> None:
        key_id = str(event.originator_id)
        if name == "ApiKey.Issued":
            self.put(f"k|{key_id}", {
                "key_id": key_id, "kind": data.get("kind", "api"), "role": data["role"], "player_id": data.get("player_id"),
                "label": data.get("label", ""), "issued_at": event.timestamp.isoformat(),
                "expires_at": data.get("expires_at"), "rate_limit": data.get("rate_limit"),
                "revoked_at": None, "issued_by": data.get("issued_by")})
        elif name == "ApiKey.Revoked":
            record = self.get(f"k|{key_id}")
            if record is not None:
                record.update(revoked_at=event.timestamp.isoformat(),
                              revoked_by=data.get("revoked_by"))
                self.put(f"k|{key_id}", record)

    # The feed index.
    def _index(self, position: int, event: Any, name: str, data: dict[str, Any]) -> None:
        kind = views.event_name(event)
        keys = {f"type:{kind}"}
        aggregate = str(event.originator_id)
        tables: set[str] = set()
        wallets: set[str] = set()
        players: set[str] = set()
        deals: set[str] = set()
        if name.startswith("Wallet."):
            wallets.add(aggregate)
        elif name.startswith(("CasinoTable.", "HighCardTable.")):
            tables.add(aggregate)
        elif name.startswith("CasinoDeal."):
            deals.add(aggregate)
            deal = self.get(f"d|{aggregate}") or {}
            table = data.get("table_id") or deal.get("table")
            if table:
                tables.add(str(table))
            players.update(deal.get("players", {}))
        if data.get("deal_id") is not None:
            deals.add(str(data["deal_id"]))
        if isinstance(data.get("player_id"), str):
            players.add(data["player_id"])
        if data.get("wallet_id") is not None:
            wallets.add(str(data["wallet_id"]))
        for transfer in transfers_of(data):
            for account in (transfer["source"], transfer["destination"]):
                if account.startswith("wallet:"):
                    wallets.add(account.partition(":")[2])
        seat = data.get("seat")
        if isinstance(seat, int) and tables:
            info = (self.get(f"t|{aggregate}") or {}).get("seats", {}).get(str(seat))
            if info:
                players.add(info["player"])
        for wallet in wallets:
            owner = (self.get(f"w|{wallet}") or {}).get("player")
            if owner:
                players.add(owner)
        if kind == "SeedRevealed":
            keys.update(f"revealed:{deal}" for deal in deals)
        keys.update(f"table:{t}" for t in tables)
        keys.update(f"wallet:{w}" for w in wallets)
        keys.update(f"player:{p}" for p in players)
        keys.update(f"deal:{d}" for d in deals)
        self.listed.append((position, microseconds(event)))
        self.keys.extend((key, position) for key in sorted(keys))

    # Reports and recall.
    def _fold(self, event: Any, name: str, data: dict[str, Any]) -> None:
        kind = views.event_name(event)
        aggregate = str(event.originator_id)
        day = event.timestamp.date().isoformat()
        when = event.timestamp.isoformat()
        if name == "Wallet.Opened":
            self.put(f"w|{aggregate}", {"player": data["player_id"], "balance": 0})
            return
        if name == "Wallet.Granted":
            wallet = self.get(f"w|{aggregate}")
            wallet["balance"] += data["transfer"]["amount"]
            self.put(f"w|{aggregate}", wallet)
            return
        if name.startswith("Wallet."):
            return  # the table or deal event holds the first record of the same transfer
        if name == "CasinoTable.Opened":
            self.put(f"t|{aggregate}", {"variant": "casino", "seats": {}, "dealer": None})
            return
        if name == "HighCardTable.Opened":
            self.put(f"t|{aggregate}", {"variant": data["variant"], "seats": {}, "dealer": None})
            return
        if name.startswith("CasinoDeal."):
            deal_id = aggregate
            table_id = str(data["table_id"]) if kind == "Committed" else (
                self.get(f"d|{deal_id}") or {}).get("table")
        else:
            deal_id = data.get("deal_id")
            table_id = aggregate
        table = self.get(f"t|{table_id}") if table_id else None
        if table is None:
            return
        variant = table["variant"]
        self._table_fact(kind, data, table, table_id, day, variant)
        if kind == "Committed" and (name.startswith("CasinoDeal.") or data.get("purpose") == "deal"):
            self._start_deal(deal_id, table_id, table, data, when, day, variant)
        deal = self.get(f"d|{deal_id}") if deal_id else None
        for transfer in transfers_of(data):
            self._move(transfer, kind, deal, table_id, day, variant)
        if deal is not None:
            self._deal_fact(kind, data, deal, table, day, variant, table_id)
            self.put(f"d|{deal_id}", deal)
            if kind in ("SeedRevealed", "DealEnded") and (
                    name.startswith("CasinoDeal.") or kind == "DealEnded"):
                self._finish_deal(deal_id, deal, day, table_id, variant, when)
            elif kind == "DealVoided":
                self.put(f"d|{deal_id}", None)
                self.row(day, table_id, TABLE_ROW, variant)["deals"] -= 1
        self.put(f"t|{table_id}", table)

    def _table_fact(self, kind: str, data: dict[str, Any], table: dict[str, Any],
                    table_id: str, day: str, variant: str) -> None:
        if kind == "Seated":
            table["seats"][str(data["seat"])] = {"player": data["player_id"],
                                                 "wallet": data["wallet_id"]}
        elif kind == "Unseated":
            table["seats"].pop(str(data["seat"]), None)
        elif kind == "DealerChosen":
            table["dealer"] = data["seat"]
        elif kind == "DealPassed":
            table["dealer"] = data["to_seat"]
        elif kind == "StitchDeclared":
            self.row(day, table_id, TABLE_ROW, variant)["stitch_rounds"] += 1
        elif kind == "PotSplit":
            self.row(day, table_id, TABLE_ROW, variant)["pot_splits"] += 1

    def _start_deal(self, deal_id: str, table_id: str, table: dict[str, Any],
                    data: dict[str, Any], when: str, day: str, variant: str) -> None:
        if variant == "casino":
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
        self.put(f"d|{deal_id}", {"table": table_id, "variant": variant, "started": when,
                                  "players": players, "target": None,
                                  "client_seed": data["client_seed"], "nonce": data["nonce"]})
        self.row(day, table_id, TABLE_ROW, variant)["deals"] += 1

    def _move(self, transfer: dict[str, Any], kind: str, deal: dict[str, Any] | None,
              table_id: str, day: str, variant: str) -> None:
        for account, sign in ((transfer["source"], -1), (transfer["destination"], 1)):
            if not account.startswith("wallet:"):
                continue
            wallet_id = account.partition(":")[2]
            wallet = self.get(f"w|{wallet_id}")
            wallet["balance"] += sign * transfer["amount"]
            self.put(f"w|{wallet_id}", wallet)
            row = self.row(day, table_id, wallet["player"], variant)
            amount = transfer["amount"]
            row["paid_in" if sign < 0 else "paid_out"] += amount
            if sign < 0 and kind in BETS:
                row["handle"] += amount
            if sign > 0 and kind in RETURNS:
                row["returned"] += amount
            if kind == "BankFunded":
                row["banker_in"] += amount
            if kind == "BankCollected":
                row["banker_out"] += amount
            player = (deal or {}).get("players", {}).get(wallet["player"])
            if player is not None and sign < 0 and kind in BETS:
                player["bets"] += amount
            elif player is not None and sign > 0 and kind in RETURNS:
                player["returned"] += amount

    def _deal_fact(self, kind: str, data: dict[str, Any], deal: dict[str, Any],
                   table: dict[str, Any], day: str, variant: str, table_id: str) -> None:
        by_seat = {p["seat"]: name for name, p in deal["players"].items()}
        if kind == "CardDealt" and variant == "casino":
            player = next(iter(deal["players"]), None)
            if player:
                deal["players"][player]["cards"].append(data["card"])
        elif kind == "CardDealt":
            player = by_seat.get(data.get("seat"))
            if player:
                deal["players"][player]["positions"].append(data["position"])
        elif kind == "TargetTurned":
            player = by_seat.get(data.get("seat"))
            if player:
                deal["players"][player]["target"] = data["card"]
            else:
                deal["target"] = data["card"]
        elif kind == "SeedRevealed" and variant != "casino":
            pack = shuffled_pack(data["server_seed"], deal["client_seed"], deal["nonce"])
            for info in deal["players"].values():
                info["cards"] = [str(pack[p]) for p in info["positions"]]
        elif kind in ("PaidOut", "PartiallyPaid", "Settled"):
            player = by_seat.get(data.get("seat", 1)) if variant != "casino" else next(
                iter(deal["players"]))
            if player is None:
                return
            row = self.row(day, table_id, player, variant)
            row["turns"] += 1
            won = data["outcome"] == "win"
            row["wins"] += won
            row["partial_payouts"] += kind == "PartiallyPaid"
            deal["players"][player]["outcome"] = data["outcome"]
            winnings = data.get("winnings", max(data.get("returned", 0) - (
                deal["players"][player]["bets"]), 0))
            if won and winnings:
                row["top_wins"] = sorted(row["top_wins"] + [{
                    "winnings": winnings, "player": player, "deal": data.get("deal_id") or "",
                    "table": table_id}], key=lambda w: -w["winnings"])[:TOP_WINS]

    def _finish_deal(self, deal_id: str, deal: dict[str, Any], day: str, table_id: str,
                     variant: str, when: str) -> None:
        for player, info in deal["players"].items():
            if not info["bets"]:
                continue
            self.row(day, table_id, player, variant)["deals"] += 1
            wallet = self.get(f"w|{info['wallet']}")
            recall = self.get(f"r|{player}", [])
            recall.insert(0, {
                "deal_id": deal_id, "table_id": table_id, "variant": variant,
                "started": deal["started"], "ended": when, "seat": info["seat"],
                "cards": info["cards"], "target": info["target"] or deal["target"],
                "bets": info["bets"],
                "returned": info["returned"], "outcome": info["outcome"],
                "balance_before": info["balance_before"], "balance_after": wallet["balance"],
            })
            self.put(f"r|{player}", recall[:RECALL_KEPT])
        self.put(f"d|{deal_id}", None)
