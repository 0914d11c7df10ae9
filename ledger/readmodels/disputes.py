"""How dispute events change the read models (called by `ledger.readmodels.fold.Fold`).

Documents:
- `x|<dispute>`: the dispute as `ledger.app.disputes.dispute_view` shows it.
- `q|<status>|<who>|<time>|<dispute>` → the dispute id: the queue of open disputes (oldest
  first, by the time opened) and the list of resolved ones (by the time resolved); `<who>` is
  `*` for everyone's list and the player id for the player's own (no player id starts with `*`).
- `s|<day>|<table>|<player>`: one UTC day's dispute totals: opened, resolved, upheld, chips
  adjusted and the seconds the resolved ones took.
- the player's recall entry for the disputed deal gains `dispute` (id, status, adjustment).
- the deal's entries in the deal index are marked disputed (`ledger.readmodels.deals`).
An adjustment also raises the wallet's balance in `w|<wallet>`: the dispute's `Resolved` holds
the transfer's first record, as a deal's events hold those of the chips they move.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ledger.domain.dispute import OPEN, Dispute
from ledger.readmodels.deals import mark_disputed, recall_name

EVERYONE = "*"
DISPUTE_COUNTS = ("disputes_opened", "disputes_resolved", "disputes_upheld", "chips_adjusted",
                  "seconds_to_resolve")


def queue_name(status: str, player: str | None, doc: dict[str, Any] | None = None) -> str:
    """The list's prefix, or (given a dispute document) the dispute's name in that list."""
    prefix = f"q|{status}|{player or EVERYONE}|"
    if doc is None:
        return prefix
    at = doc["opened_at"] if status == OPEN else doc["resolved_at"]
    return f"{prefix}{at}|{doc['dispute_id']}"


def dispute_doc(fold: Any, event: Any) -> dict[str, Any] | None:
    """The kept document of the dispute an event is about (none before it is opened)."""
    return None if isinstance(event, Dispute.Opened) else fold.get(f"x|{event.originator_id}")


def facts_of(doc: dict[str, Any] | None, data: dict[str, Any]) -> dict[str, Any]:
    """The deal, table, player and wallet a dispute event is about, for the feed index."""
    doc = doc or {}
    keys = ("deal_id", "table_id", "player_id", "wallet_id")
    return {**{key: doc.get(key) for key in keys if doc.get(key)}, **data}


def fold_dispute(fold: Any, event: Any, data: dict[str, Any],
                 doc: dict[str, Any] | None) -> None:
    """Keep the dispute's document (`doc`, as `dispute_doc` read it), its place in the lists,
    the day totals and the recall."""
    dispute_id = str(event.originator_id)
    when = event.timestamp.isoformat()
    if isinstance(event, Dispute.Opened):
        doc = {"dispute_id": dispute_id, **{k: str(data[k]) for k in (
            "deal_id", "table_id", "player_id", "wallet_id")},
            "message": data["message"], "opened_by": data["opened_by"], "opened_at": when,
            "status": OPEN, "finding": None, "upheld": None, "adjustment": None,
            "resolved_by": None, "resolved_at": None, "version": event.originator_version}
        _list(fold, doc, True)
        _day(fold, doc, event.timestamp)["disputes_opened"] += 1
        mark_disputed(fold, doc["deal_id"], dispute_id, doc["player_id"])
    elif isinstance(event, Dispute.Resolved):
        if doc is None:
            return
        _list(fold, doc, False)
        doc.update(status="resolved", finding=data["finding"], upheld=data["upheld"],
                   adjustment=data["adjustment"], resolved_by=data["resolved_by"],
                   resolved_at=when, version=event.originator_version)
        _list(fold, doc, True)
        amount = (data["adjustment"] or {}).get("amount", 0)
        if amount:
            wallet = fold.get(f"w|{doc['wallet_id']}")
            wallet["balance"] += amount
            fold.put(f"w|{doc['wallet_id']}", wallet)
        took = event.timestamp - datetime.fromisoformat(doc["opened_at"])
        row = _day(fold, doc, event.timestamp)
        row["disputes_resolved"] += 1
        row["disputes_upheld"] += bool(data["upheld"])
        row["chips_adjusted"] += amount
        row["seconds_to_resolve"] += round(took.total_seconds(), 6)
    else:
        return
    fold.put(f"x|{dispute_id}", doc)
    _recall(fold, doc)


def _list(fold: Any, doc: dict[str, Any], present: bool) -> None:
    for who in (None, doc["player_id"]):
        fold.put(queue_name(doc["status"], who, doc), doc["dispute_id"] if present else None)


def _day(fold: Any, doc: dict[str, Any], at: datetime) -> dict[str, Any]:
    day = at.date().isoformat()
    name = f"s|{day}|{doc['table_id']}|{doc['player_id']}"
    variant = (fold.get(f"t|{doc['table_id']}") or {}).get("variant")
    row = fold.get(name) or {"day": day, "table": doc["table_id"], "player": doc["player_id"],
                             "variant": variant, **dict.fromkeys(DISPUTE_COUNTS, 0)}
    fold.put(name, row)
    return row


def _recall(fold: Any, doc: dict[str, Any]) -> None:
    """The dispute on the player's recall entry of the deal (named by the position that
    finished it, in the deal's `g|<deal>`), where the player played it."""
    deal = fold.get(f"g|{doc['deal_id']}")
    if deal is None:
        return
    name = recall_name(doc["player_id"], deal["position"])
    entry = fold.get(name)
    if entry is None:
        return
    entry["dispute"] = {"dispute_id": doc["dispute_id"], "status": doc["status"],
                        "upheld": doc["upheld"],
                        "adjustment": (doc["adjustment"] or {}).get("amount", 0)}
    fold.put(name, entry)
