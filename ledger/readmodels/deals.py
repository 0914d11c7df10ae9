"""The index of finished deals, kept by the projection (called by `ledger.readmodels.fold.Fold`
and `ledger.readmodels.disputes`), so `GET /deals` is a range read, never a log scan.

Documents:
- `g|<deal>`: the deal's summary (`summary`), `index`, the names of its index entries, and
  `position`, the log position that finished it (its players' recall entries are named by it).
- `gi|<dimension>|<newest>|<deal>` → the same summary, one entry per way to find the deal:
  `*` (every deal), `t:<table>`, `v:<variant>`, `p:<player>` (each player seated for it: dealt
  in, or the dealer who deals without a hand, with no bet) and, once a
  player disputes it, `disputed`. `<newest>` is `NEWEST - <finished, microseconds>` in 16 digits,
  so names in ascending order list the newest deal first; `<newest>|<deal>` is the cursor.

A deal enters the index when it finishes (a casino deal's seed is revealed, a multi-seat deal
ends), so nothing hidden while it is played is ever in it; a voided deal never enters.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from ledger.rules.variants import VARIANTS

#: Above every time in microseconds the index will see (the year 2286).
NEWEST = 10**16 - 1
#: Above every position of the log (positions are 64-bit).
LAST_POSITION = 10**19 - 1
INDEX = "gi|"
#: Every deal's dimension.
EVERY = "*"
DISPUTED = "disputed"
#: The family letter of a casino deal; the high-card variants name theirs (`Variant.family`).
CASINO_FAMILY = "C"
#: A player dealt in whose bets none settled (`validation.DEAL_OUTCOMES`).
NO_BET = "no_bet"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _microseconds(at: datetime) -> int:
    return (at - EPOCH) // timedelta(microseconds=1)


def sort_key(finished: datetime, deal_id: str) -> str:
    """The deal's place in every list: newest first, then by id."""
    return f"{NEWEST - _microseconds(finished):016d}|{deal_id}"


def recall_name(player: str, position: int) -> str:
    """The name of a player's recall entry for the deal whose end is at this log position: in
    name order, the player's deals newest first, as the log ordered them (their times may be
    the same)."""
    return f"r|{player}|{LAST_POSITION - position:019d}"


def recall_range(player: str) -> tuple[str, str]:
    """The names of a player's recall entries, newest first: [first, last) for `read_range`.
    (`}` follows `|`, and no player id holds either.)"""
    return f"r|{player}|", f"r|{player}}}"


def key_bound(at: datetime) -> str:
    """Where deals finished before `at` start: every deal finished at or after it sorts before."""
    return f"{NEWEST - _microseconds(at) + 1:016d}"


def dimension(kind: str, value: str) -> str:
    """The dimension of a filter: `t` table, `v` variant, `p` player."""
    return f"{kind}:{value}"


def family_of_variant(variant: str) -> str:
    known = VARIANTS.get(variant)
    return known.family if known is not None else CASINO_FAMILY


def index_deal(fold: Any, deal_id: str, deal: dict[str, Any], table_id: str, variant: str,
               finished: datetime, wallets: dict[str, int], position: int) -> None:
    """Put a finished deal in the index. `deal` is the fold's `d|` document; `wallets` the
    balance of each player's wallet now; `position` the log position that finished it."""
    players = []
    seated = {name: {**info, "bets": 0, "returned": 0, "outcome": None}
              for name, info in deal.get("seated", {}).items()}
    for player, info in sorted({**seated, **deal["players"]}.items(),
                               key=lambda p: p[1]["seat"]):
        players.append({
            "player_id": player, "seat": info["seat"], "wallet_id": info["wallet"],
            "bets": info["bets"], "returned": info["returned"],
            "outcome": info["outcome"] or NO_BET,
            "balance_before": info["balance_before"],
            "balance_after": wallets.get(info["wallet"], info["balance_before"])})
    handle = sum(p["bets"] for p in players)
    returned = sum(p["returned"] for p in players)
    key = sort_key(finished, deal_id)
    summary = {
        "deal_id": deal_id, "table_id": table_id, "variant": variant,
        "family": family_of_variant(variant), "started_at": deal["started"],
        "finished_at": finished.isoformat(), "players": players, "handle": handle,
        "returned": returned, "net": handle - returned, "disputed": False, "disputes": [],
        "cursor": key}
    dimensions = [EVERY, dimension("t", table_id), dimension("v", variant),
                  *(dimension("p", p["player_id"]) for p in players)]
    index = [f"{INDEX}{d}|{key}" for d in dimensions]
    for name in index:  # (named by the deal's end, which one event of the log makes)
        fold.create(name, summary)
    fold.create(f"g|{deal_id}", {"summary": summary, "index": index, "position": position})


def mark_disputed(fold: Any, deal_id: str, dispute_id: str, player_id: str) -> None:
    """A player disputed the deal: mark every entry and list it under `disputed`."""
    doc = fold.get(f"g|{deal_id}")
    if doc is None:
        return
    summary = doc["summary"]
    summary["disputed"] = True
    summary["disputes"] = [*summary["disputes"],
                           {"dispute_id": dispute_id, "player_id": player_id}]
    disputed = f"{INDEX}{DISPUTED}|{summary['cursor']}"
    if disputed not in doc["index"]:
        doc["index"] = [*doc["index"], disputed]
    for name in doc["index"]:
        fold.put(name, summary)
    fold.put(f"g|{deal_id}", doc)
