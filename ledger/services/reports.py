"""Reports and game recall: read models kept by a projection that follows the event log.

The projection reads the log in order a page at a time, folds each event into small documents,
and writes the page's documents with the tracking record of its last position in one
transaction (`ledger.readmodel`): a restart resumes after the last page written, so nothing is
lost or counted twice, and a rebuild from position zero gives the same documents.

Documents:
- `w|<wallet>`: the player and the balance (from grants and the first record of each transfer).
- `t|<table>`: variant, seats and dealer.
- `d|<deal>`: a deal in progress: who plays, their bets, returns and cards seen.
- `a|<day>|<table>|<player or ->`: one UTC day's totals at a table for a player (`-`: the
  table's own counts: deals, stitch rounds, pot splits).
- `r|<player>`: the player's most recent deals, newest first.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from datetime import date, timedelta
from fractions import Fraction
from typing import Any

from eventsourcing.persistence import Tracking

from ledger.errors import InvalidInput
from ledger.fairness import shuffled_pack
from ledger.readmodel import read_model_for
from ledger.rules.highcard_state import transfers_of
from ledger.rules.odds import exact_win_rate
from ledger.rules.variants import VARIANTS
from ledger.services import views
from ledger.services.access import Action, Principal, require

PAGE = 500
RECALL_KEPT = 50
TOP_WINS = 5
TABLE_ROW = "-"
GROUPS = ("table", "variant", "player", "banker")
COUNTS = ("deals", "turns", "wins", "handle", "returned", "paid_in", "paid_out", "banker_in",
          "banker_out", "stitch_rounds", "pot_splits", "partial_payouts")
BETS = {"Wagered", "Raised", "BetPlaced"}
RETURNS = {"Settled", "PaidOut", "PartiallyPaid"}
UNFOLDED = ("SealedSeed.", "ApiKey.", "CommandRecord.", "Checkpoints.")


def theoretical_rtp(variant: str) -> float | None:
    """Return to player per chip bet where the rules fix it exactly."""
    if variant == "casino":
        return float(1 + Fraction(-523, 16575))  # per opening bet, raising on spreads 7-11
    spec = VARIANTS.get(variant)
    rate = exact_win_rate(spec, spec.default_hand_size) if spec else None
    if rate is None or spec.short_pot.value == "partial":
        return None
    return float(Fraction(1 + spec.win_multiple) * rate)


class Fold:
    """Folds events into documents, reading unchanged ones from `read`."""

    def __init__(self, read: Callable[[str], Any]) -> None:
        self._read = read
        self.changed: dict[str, Any] = {}

    def get(self, name: str, default: Any = None) -> Any:
        if name in self.changed:
            return self.changed[name]
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
        kind = views.event_name(event)
        data = event.data if isinstance(getattr(event, "data", None), dict) else vars(event)
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


class ReportQueries:
    """Catch-up of the report projection, reports and game recall (mixed into the app)."""

    recorder: Any
    mapper: Any
    name: str

    @property
    def read_model(self) -> Any:
        if getattr(self, "_read_model", None) is None:
            self._read_model = read_model_for(self)
        return self._read_model

    def catch_up(self, limit: int | None = None, read_model: Any = None) -> int:
        """Fold the log into the read model from where it stopped; returns events folded."""
        model = read_model or self.read_model
        done = 0
        while limit is None or done < limit:
            start = (model.max_tracking_id(self.name) or 0) + 1
            size = PAGE if limit is None else min(PAGE, limit - done)
            page = self.recorder.select_notifications(start=start, limit=size)
            if not page:
                break
            fold = Fold(model.read)
            for notification in page:
                if notification.topic.rsplit(":", 1)[-1].startswith(UNFOLDED):
                    continue
                fold.fold(notification.id, self.mapper.to_domain_event(notification))
            model.write(fold.changed, Tracking(self.name, page[-1].id))
            done += len(page)
        return done

    def read_models_match_a_rebuild(self) -> list[str]:
        """Names of documents that differ between the kept read model and a fresh fold."""
        from ledger.readmodel import MemoryReadModel

        self.catch_up()
        fresh = MemoryReadModel()
        self.catch_up(read_model=fresh)
        kept = self.read_model.read_range("", "\uffff")
        rebuilt = fresh.read_range("", "\uffff")
        names = set(kept) | set(rebuilt)
        return sorted(n for n in names if kept.get(n) != rebuilt.get(n))

    def recall(self, actor: Principal, player_id: str, count: int = 10) -> dict[str, Any]:
        """A player's last deals, newest first: cards, bets, outcome, balance before and after."""
        require(actor, Action.READ_WALLET, owner=player_id)
        if not 1 <= count <= RECALL_KEPT:
            raise InvalidInput(f"count must be 1 to {RECALL_KEPT}", field="count")
        self.catch_up()
        return {"player_id": player_id,
                "deals": (self.read_model.read(f"r|{player_id}") or [])[:count]}

    def report(
        self,
        actor: Principal,
        since: date,
        until: date,
        group_by: str | None = None,
        table: str | None = None,
        variant: str | None = None,
        player: str | None = None,
    ) -> dict[str, Any]:
        """Totals for the UTC days since..until (exclusive), grouped by table, variant, player or
        banker; a period with no activity says so."""
        require(actor, Action.AUDIT)
        if group_by is not None and group_by not in GROUPS:
            raise InvalidInput(f"group_by must be one of {GROUPS}", field="group_by")
        if until <= since:
            raise InvalidInput("until must be after since", field="until")
        self.catch_up()
        rows = self.read_model.read_range(f"a|{since.isoformat()}", f"a|{until.isoformat()}")
        groups: dict[str, dict[str, Any]] = {}
        totals = _empty_group("all")
        for row in rows.values():
            if (table and row["table"] != table) or (variant and row["variant"] != variant) or (
                    player and row["player"] not in (player, TABLE_ROW)):
                continue
            if group_by == "banker" and not (row["banker_in"] or row["banker_out"]):
                continue
            key = {"table": row["table"], "variant": row["variant"], "player": row["player"],
                   "banker": row["player"], None: "all"}[group_by]
            if group_by in ("player", "banker") and key == TABLE_ROW:
                continue
            for target in (groups.setdefault(key, _empty_group(key)), totals):
                _add(target, row, group_by)
        result_groups = [_finish(g) for g in sorted(groups.values(), key=lambda g: g["key"])]
        return {
            "since": since.isoformat(), "until": until.isoformat(), "group_by": group_by,
            "filters": {"table": table, "variant": variant, "player": player},
            "empty": not rows or not any(g["deals"] or g["handle"] for g in result_groups),
            "groups": result_groups, "totals": _finish(totals),
        }


def _empty_group(key: str) -> dict[str, Any]:
    return {"key": key, **dict.fromkeys(COUNTS, 0), "top_wins": [], "variants": set()}


def _add(group: dict[str, Any], row: dict[str, Any], group_by: str | None) -> None:
    table_row = row["player"] == TABLE_ROW
    for count in COUNTS:
        if count == "deals" and group_by in ("player", "banker") and table_row:
            continue
        if count == "deals" and group_by not in ("player", "banker") and not table_row:
            continue
        group[count] += row[count]
    group["top_wins"] = sorted(group["top_wins"] + row["top_wins"],
                               key=lambda w: -w["winnings"])[:TOP_WINS]
    group["variants"].add(row["variant"])


def _finish(group: dict[str, Any]) -> dict[str, Any]:
    variants = sorted(group.pop("variants"))
    net = group["paid_in"] - group["paid_out"]
    handle = group["handle"]
    theoretical = theoretical_rtp(variants[0]) if len(variants) == 1 else None
    return {
        **group,
        "variants": variants,
        "net": net,
        "hold": net,
        "hold_pct": round(100 * net / handle, 4) if handle else None,
        "rtp_actual": round(group["returned"] / handle, 6) if handle else None,
        "rtp_theoretical": theoretical,
        "win_rate": round(group["wins"] / group["turns"], 6) if group["turns"] else None,
        "banker_net": group["banker_out"] - group["banker_in"],
    }


def report_csv(report: dict[str, Any]) -> str:
    """A report's groups and totals as CSV."""
    fields = ["key", "variants", *COUNTS, "net", "hold", "hold_pct", "rtp_actual",
              "rtp_theoretical", "win_rate", "banker_net", "largest_win"]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, extrasaction="ignore")
    writer.writeheader()
    for group in [*report["groups"], report["totals"]]:
        writer.writerow({**group, "variants": " ".join(group["variants"]),
                         "largest_win": group["top_wins"][0]["winnings"] if group["top_wins"]
                         else ""})
    return out.getvalue()


def days(since: date, until: date) -> list[date]:
    """The UTC days of a period."""
    return [since + timedelta(days=i) for i in range((until - since).days)]
