"""The report's series, kept by the projection beside the day totals:

- `p|<day>|<variant>`: each finished deal of the day at tables of that variant, in order, as
  `[deals, handle, returned]`; past `POINTS_KEPT` points, neighbours are merged in pairs, so a
  day holds a bounded list whose sums stay exact (a busy day's points each cover a few deals).
- `b|<day>|<table>`: at tables whose dealer stakes a pot or bank, the bank after each deal as
  `[deal number at the table, bank, banker's player id]`, thinned the same way (the later deal
  of each merged pair stands).
- `t|<table>` gains `pot` (the chips in its pot or bank) and `deals` (deals finished there).
"""

from __future__ import annotations

from typing import Any

from ledger.core.transfers import Transfer
from ledger.rules.variants import VARIANTS, Bank, bank_of

POINTS_KEPT = 120


def banked(variant: str) -> bool:
    """Whether a dealer or banker stakes the pot of this variant's tables (a bank to chart)."""
    return variant in VARIANTS and bank_of(variant) is Bank.PLAYER


def track_pot(table: dict[str, Any], pot: str, transfer: Transfer) -> None:
    """Keep the table's pot or bank balance from the transfers in and out of it (`pot`: the
    table's `pot_account`)."""
    if transfer["destination"] == pot:
        table["pot"] = table.get("pot", 0) + transfer["amount"]
    elif transfer["source"] == pot:
        table["pot"] = table.get("pot", 0) - transfer["amount"]


def deal_finished(fold: Any, deal: dict[str, Any], table: dict[str, Any], table_id: str,
                  day: str, variant: str) -> None:
    """Add a finished deal to its day's points and, at a banked table, the bank after it."""
    players = deal["players"].values()
    name = f"p|{day}|{variant}"
    points = fold.get(name, {"points": []})
    points["points"] = thin([*points["points"], [1, sum(p["bets"] for p in players),
                                                 sum(p["returned"] for p in players)]], summed)
    fold.put(name, points)
    table["deals"] = table.get("deals", 0) + 1
    if not banked(variant):
        return
    dealer = table["seats"].get(str(table.get("dealer")), {}).get("player")
    name = f"b|{day}|{table_id}"
    bank = fold.get(name, {"variant": variant, "points": []})
    bank["points"] = thin([*bank["points"], [table["deals"], table.get("pot", 0), dealer]],
                          later)
    fold.put(name, bank)


def thin(points: list[list[Any]], merge: Any) -> list[list[Any]]:
    """The points, merged in pairs once there are more than POINTS_KEPT."""
    return points if len(points) <= POINTS_KEPT else halve(points, merge)


def halve(points: list[list[Any]], merge: Any) -> list[list[Any]]:
    """A line halved: neighbours merged in pairs by `merge` (`summed` or `later`)."""
    return [merge(points[i], points[i + 1]) if i + 1 < len(points) else points[i]
            for i in range(0, len(points), 2)]


def summed(a: list[Any], b: list[Any]) -> list[Any]:
    return [x + y for x, y in zip(a, b, strict=True)]


def later(_a: list[Any], b: list[Any]) -> list[Any]:
    return b
