"""The report's series, for charts: handle, the house's hold and the bankers' results by day,
the actual return to player as deals accumulate beside the theoretical one, and banks deal by
deal (a banker's bank is a player's chips, never the house's).

Read from the projection's documents (`ledger.readmodels.fold`, `ledger.readmodels.series`):
the day totals, one bounded list of deal points per day and variant, and one of bank points per
day and banked table. An answer holds at most `MAX_POINTS` points per line (neighbours merged,
sums kept exact) and the `MAX_BANKS` tables with the most deals in the period.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from ledger.app.access import Action, Principal, require
from ledger.app.base import LedgerBase
from ledger.app.reports import days
from ledger.core import validation
from ledger.readmodels.fold import TABLE_ROW
from ledger.readmodels.series import halve, later, summed
from ledger.rules import variants
from ledger.rules.odds import theoretical_rtp

MAX_POINTS = 240
MAX_BANKS = 12
#: A day's sums: as the report's groups (`ledger.app.reports`): the house's hold on the bets
#: made against it apart from the chips that went into players' pots, banks and pools, and
#: the bankers' collections less their stakes.
DAY_SUMS = ("deals", "handle", "returned", "house_handle", "hold", "pots_net", "banker_net")


class SeriesService:
    """The series behind the reports page's charts."""

    def __init__(self, ledger: LedgerBase) -> None:
        self.ledger = ledger

    def report_series(self, actor: Principal, since: date, until: date,
                      table: str | None = None, variant: str | None = None) -> dict[str, Any]:
        """Per day, per deal and per banked table, for the UTC days since..until (exclusive)."""
        require(actor, Action.AUDIT)
        if table is not None:
            table = str(validation.check_uuid(table, "table"))
        if variant is not None:
            validation.check_choice(variant, variants.VARIANT_NAMES, "variant")
        validation.check_period(since, until)
        status = self.ledger.projection.status()
        store, first, last = self.ledger.projection.store, since.isoformat(), until.isoformat()
        by_day: dict[str, dict[str, Any]] = {day.isoformat(): {
            "day": day.isoformat(), **dict.fromkeys(DAY_SUMS, 0)} for day in days(since, until)}
        for row in store.read_range(f"a|{first}", f"a|{last}").values():
            if (table and row["table"] != table) or (variant and row["variant"] != variant):
                continue
            day = by_day[row["day"]]
            day["deals"] += row["deals"] if row["player"] == TABLE_ROW else 0
            day["handle"] += row["handle"]
            day["returned"] += row["returned"]
            paid = row["paid_in"] - row["paid_out"]
            if variants.bank_of(row["variant"]) is variants.Bank.HOUSE:  # the hold (C9)
                day["house_handle"] += row["handle"]
                day["hold"] += paid
            else:
                day["pots_net"] += paid
            day["banker_net"] += row["banker_out"] - row["banker_in"]
        for day in by_day.values():
            day["hold_pct"] = (round(100 * day["hold"] / day["house_handle"], 4)
                               if day["house_handle"] else None)
        convergence = [] if table else _convergence(
            store.read_range(f"p|{first}", f"p|{last}"), variant)
        banks = _banks(store.read_range(f"b|{first}", f"b|{last}"), table, variant)
        listed = list(by_day.values())
        return {"since": first, "until": last, "filters": {"table": table, "variant": variant},
                "empty": not any(d["deals"] or d["handle"] for d in listed),
                "days": listed, "convergence": convergence, "banks": banks,
                "projection": status}


def _convergence(documents: dict[str, Any], variant: str | None) -> list[dict[str, Any]]:
    """Per variant: the cumulative actual return to player after each point's deals."""
    points: dict[str, list[list[int]]] = {}
    for name in sorted(documents):  # p|<day>|<variant>: in day order
        _p, _day, name_variant = name.split("|", 2)
        if variant is None or name_variant == variant:
            points.setdefault(name_variant, []).extend(documents[name]["points"])
    lines = []
    for name, steps in sorted(points.items()):
        while len(steps) > MAX_POINTS:
            steps = halve(steps, summed)
        deals = handle = returned = 0
        line = []
        for count, bet, paid in steps:
            deals, handle, returned = deals + count, handle + bet, returned + paid
            line.append({"deals": deals, "handle": handle, "returned": returned,
                         "rtp": round(returned / handle, 6) if handle else None})
        lines.append({"variant": name, "theoretical": theoretical_rtp(name), "deals": deals,
                      "handle": handle, "returned": returned, "points": line})
    return lines


def _banks(documents: dict[str, Any], table: str | None, variant: str | None
           ) -> list[dict[str, Any]]:
    """The banked tables with the most deals in the period: the bank after each deal."""
    tables: dict[str, dict[str, Any]] = {}
    for name in sorted(documents):  # b|<day>|<table>: in day order
        table_id = name.split("|", 2)[2]
        document = documents[name]
        if (table and table_id != table) or (variant and document["variant"] != variant):
            continue
        line = tables.setdefault(table_id, {"table": table_id, "variant": document["variant"],
                                            "points": []})
        line["points"].extend(document["points"])
    chosen = sorted(tables.values(), key=lambda t: (-t["points"][-1][0], t["table"]))
    result = []
    for line in chosen[:MAX_BANKS]:
        steps = line["points"]
        while len(steps) > MAX_POINTS:
            steps = halve(steps, later)
        result.append({**line, "last_deal": line["points"][-1][0], "points": [
            {"deal": deal, "bank": bank, "banker": banker} for deal, bank, banker in steps]})
    return result

