"""Reports and game recall, read from the ledger projection's documents (`ledger.readmodels.fold`).

Each answer is what the projection has folded so far, with `projection`: the position folded,
the log's last position and how far behind that is. The folding itself runs elsewhere
(`ledger.readmodels.projection`), never inside a read.
"""

from __future__ import annotations

import csv
import io
from datetime import date, timedelta
from typing import Any

from ledger.app.access import Action, Principal, require
from ledger.app.base import LedgerBase
from ledger.core import validation
from ledger.readmodels.deals import recall_range
from ledger.readmodels.disputes import DISPUTE_COUNTS
from ledger.readmodels.fold import COUNTS, RECALL_KEPT, TABLE_ROW, TOP_WINS
from ledger.rules import variants
from ledger.rules.odds import theoretical_rtp

GROUPS = validation.REPORT_GROUPS
#: The dispute counts of each group, of the totals and of the CSV's rows.
GROUP_DISPUTES = ("disputes_opened", "disputes_resolved", "disputes_upheld", "chips_adjusted")
VARIANT_NAMES = variants.VARIANT_NAMES


class ReportService:
    """Reports and game recall, from the ledger projection."""

    def __init__(self, ledger: LedgerBase) -> None:
        self.ledger = ledger

    def recall(self, actor: Principal, player_id: str, count: int = 10) -> dict[str, Any]:
        """A player's last deals, newest first: cards, bets, outcome, balance before and after."""
        validation.PLAYER_ID.check(player_id)
        require(actor, Action.READ_WALLET, owner=player_id)
        validation.check_page(count, "count", RECALL_KEPT)
        status = self.ledger.projection.status()
        first, last = recall_range(player_id)
        deals = list(self.ledger.projection.store.read_range(first, last, limit=count).values())
        return {"player_id": player_id, "deals": deals, "projection": status,
                "log": self.ledger.log_state(status["position"])}

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
        if group_by is not None:
            validation.check_choice(group_by, GROUPS, "group_by")
        if table is not None:
            table = str(validation.check_uuid(table, "table"))
        if variant is not None:
            validation.check_choice(variant, VARIANT_NAMES, "variant")
        if player is not None:
            validation.PLAYER_ID.check(player, "player")
        validation.check_period(since, until)
        status = self.ledger.projection.status()
        rows = self.ledger.projection.store.read_range(f"a|{since.isoformat()}",
                                                f"a|{until.isoformat()}")
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
        disputes = self.ledger.projection.store.read_range(f"s|{since.isoformat()}",
                                                    f"s|{until.isoformat()}")
        period_disputes = _disputes(disputes.values(), table, variant, player)
        _group_disputes(result_groups, disputes.values(), group_by, (table, variant, player))
        totals = {**_finish(totals), **{c: period_disputes[c] for c in GROUP_DISPUTES}}
        return {
            "disputes": period_disputes,
            "since": since.isoformat(), "until": until.isoformat(), "group_by": group_by,
            "filters": {"table": table, "variant": variant, "player": player},
            "empty": not rows or not any(g["deals"] or g["handle"] for g in result_groups),
            "groups": result_groups, "totals": totals, "projection": status,
            "log": self.ledger.log_state(status["position"]),
        }


def _disputes(rows: Any, table: str | None, variant: str | None, player: str | None
              ) -> dict[str, Any]:
    """The period's disputes: opened, resolved, upheld, chips adjusted and the mean time to
    resolve (seconds, over those resolved in the period)."""
    totals = dict.fromkeys(DISPUTE_COUNTS, 0)
    for row in rows:
        if (table and row["table"] != table) or (variant and row["variant"] != variant) or (
                player and row["player"] != player):
            continue
        for count in DISPUTE_COUNTS:
            totals[count] += row[count]
    seconds = totals.pop("seconds_to_resolve")
    resolved = totals["disputes_resolved"]
    return {**totals, "mean_seconds_to_resolve": round(seconds / resolved, 3) if resolved
            else None}


def _group_disputes(groups: list[dict[str, Any]], rows: Any, group_by: str | None,
                    filters: tuple[str | None, str | None, str | None]) -> None:
    """Each group's disputes in the period: opened, resolved, upheld and chips adjusted."""
    by_key = {g["key"]: g for g in groups}
    for group in groups:
        group.update(dict.fromkeys(GROUP_DISPUTES, 0))
    table, variant, player = filters
    for row in rows:
        if (table and row["table"] != table) or (variant and row["variant"] != variant) or (
                player and row["player"] != player):
            continue
        key = {"table": row["table"], "variant": row["variant"], "player": row["player"],
               "banker": row["player"], None: "all"}[group_by]
        if key in by_key:
            for count in GROUP_DISPUTES:
                by_key[key][count] += row[count]


def _empty_group(key: str) -> dict[str, Any]:
    return {"key": key, **dict.fromkeys(COUNTS, 0), "house_handle": 0, "hold": 0,
            "top_wins": [], "variants": set(), "banked_by": set()}


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
    bank = variants.bank_of(row["variant"])
    group["banked_by"].add(bank.value)
    if bank is variants.Bank.HOUSE:  # C9: the house account alone holds; no pot or bank does
        group["house_handle"] += row["handle"]
        group["hold"] += row["paid_in"] - row["paid_out"]


def _finish(group: dict[str, Any]) -> dict[str, Any]:
    """A group's figures. `net` is every chip the players paid in less every chip paid back;
    of it, `hold` is the house's (Casino Red Dog, C9) and `pots_net` what went into the pots,
    banks and pools of multi-seat tables: players' chips, the dealer's or banker's or the
    pool's, never the house's (no rake). `hold_pct` is the hold on the bets made against the
    house (`house_handle`), and null where nobody bet against it."""
    names = sorted(group.pop("variants"))
    net = group["paid_in"] - group["paid_out"]
    handle, house_handle, hold = group["handle"], group["house_handle"], group["hold"]
    theoretical = theoretical_rtp(names[0]) if len(names) == 1 else None
    return {
        **group,
        "variants": names,
        "banked_by": sorted(group["banked_by"]),
        "net": net,
        "hold": hold,
        "hold_pct": round(100 * hold / house_handle, 4) if house_handle else None,
        "pots_net": net - hold,
        "rtp_actual": round(group["returned"] / handle, 6) if handle else None,
        "rtp_theoretical": theoretical,
        "win_rate": round(group["wins"] / group["turns"], 6) if group["turns"] else None,
        "banker_net": group["banker_out"] - group["banker_in"],
    }


def report_csv(report: dict[str, Any]) -> str:
    """A report's groups and totals as CSV; the totals' dispute columns are the period's."""
    fields = ["key", "variants", "banked_by", *COUNTS, "net", "house_handle", "hold",
              "hold_pct", "pots_net", "rtp_actual", "rtp_theoretical", "win_rate", "banker_net",
              "largest_win", *GROUP_DISPUTES]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, extrasaction="ignore")
    writer.writeheader()
    for group in [*report["groups"], report["totals"]]:
        row = {**group, "variants": " ".join(group["variants"]),
               "banked_by": " ".join(group["banked_by"]),
               "largest_win": group["top_wins"][0]["winnings"] if group["top_wins"] else ""}
        writer.writerow({name: csv_cell(value) for name, value in row.items()})
    return out.getvalue()


#: First characters that make a spreadsheet read a cell as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell a spreadsheet shows as text: text that could start a formula gets a
    leading apostrophe (numbers, negative ones included, stay numbers)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def days(since: date, until: date) -> list[date]:
    """The UTC days of a period."""
    return [since + timedelta(days=i) for i in range((until - since).days)]
