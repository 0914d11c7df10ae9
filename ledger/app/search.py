"""Finding deals: `GET /deals`, read from the projection's deal index
(`ledger.readmodels.deals`), newest first, a page at a time.

A search reads one range of the index, the narrowest its filters allow (a player's deals, else a
table's, else the disputed ones, else a variant's, else every deal), between the bounds its
time filters give, and checks the other filters on each entry it reads. It examines at most
`SCAN` entries: a page that stops there answers `next` so the caller goes on, even when it found
nothing yet.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from ledger.app.access import Action, Principal, require
from ledger.app.base import LedgerBase
from ledger.core import validation
from ledger.core.errors import Forbidden, InvalidInput
from ledger.domain.access import Role
from ledger.readmodels.deals import DISPUTED, EVERY, INDEX, dimension, key_bound
from ledger.rules import variants

#: Index entries one search examines before it answers with a cursor instead.
SCAN = 2000
#: Sorts after every digit: the end of a dimension's entries.
END = "~"
#: The rule a player breaks by asking for another player's deals.
OWN_DEALS = "a player finds only the deals they played in"


class SearchService:
    """Finding finished deals by table, player, variant, outcome, time and dispute."""

    def __init__(self, ledger: LedgerBase) -> None:
        self.ledger = ledger

    def find_deals(
        self,
        actor: Principal,
        table: UUID | None = None,
        player: str | None = None,
        variant: str | None = None,
        outcome: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        disputed: bool | None = None,
        after: str | None = None,
        limit: int = validation.DEFAULT_PAGE,
    ) -> dict[str, Any]:
        """Finished deals matching every filter given, newest first (by the time each finished).

        A player finds only their own: without `player` it is taken to be them, and another
        player's id is Forbidden."""
        filters = _checked(table, player, variant, outcome, since, until, after, limit)
        if actor.role is Role.PLAYER and player is not None and player != actor.player_id:
            raise Forbidden(OWN_DEALS, field="player")
        require(actor, Action.FIND_DEALS, owner=player or actor.player_id)
        if actor.role is Role.PLAYER:
            filters["player"] = actor.player_id
        status = self.ledger.projection.status()
        driver = _driver(filters, disputed)
        prefix = f"{INDEX}{driver}|"
        first = prefix + (key_bound(until) if until is not None else "")
        if after is not None:
            first = max(first, f"{prefix}{after} ")
        last = prefix + (key_bound(since) if since is not None else END)
        given = sum(1 for k in ("player", "table", "variant", "outcome") if filters[k]) + (
            disputed is not None)
        narrowing = given > (0 if driver == EVERY else 1)  # a filter the range does not apply
        wanted = SCAN if narrowing else limit + 1
        rows = self.ledger.projection.store.read_range(first, last, limit=wanted)
        names = sorted(n for n in rows if n.startswith(prefix))
        found: list[dict[str, Any]] = []
        cursor = None
        for name in names:
            summary = rows[name]
            if _matches(summary, filters, disputed):
                if len(found) == limit:
                    cursor = found[-1]["cursor"]
                    break
                found.append(summary)
        else:
            if len(rows) == wanted:  # examined all it may: go on from the last one read
                cursor = rows[names[-1]]["cursor"] if names else None
        return {"deals": [_view(actor, s) for s in found], "next": cursor,
                "filters": {k: v for k, v in {**filters, "disputed": disputed}.items()
                            if k not in ("after", "limit")},
                "projection": status}


def _checked(table: UUID | None, player: str | None, variant: str | None, outcome: str | None,
             since: datetime | None, until: datetime | None, after: str | None,
             limit: int) -> dict[str, Any]:
    """The filters, each checked (InvalidInput naming the field)."""
    if table is not None:
        table = validation.check_uuid(table, "table")
    if player is not None:
        validation.PLAYER_ID.check(player, "player")
    if variant is not None:
        validation.check_choice(variant, variants.VARIANT_NAMES, "variant")
    if outcome is not None:
        validation.check_choice(outcome, validation.DEAL_OUTCOMES, "outcome")
    for name, at in (("since", since), ("until", until)):
        if at is not None and at.utcoffset() is None:
            raise InvalidInput(f"{name} must carry its UTC offset", field=name)
    if since is not None and until is not None and until <= since:
        raise InvalidInput("until must be after since", field="until")
    if after is not None:
        validation.DEAL_CURSOR.check(after, "after")
    validation.check_page(limit)
    return {"table": str(table) if table else None, "player": player, "variant": variant,
            "outcome": outcome, "since": since.isoformat() if since else None,
            "until": until.isoformat() if until else None, "after": after, "limit": limit}


def _driver(filters: dict[str, Any], disputed: bool | None) -> str:
    """The narrowest dimension of the index the filters allow."""
    if filters["player"]:
        return dimension("p", filters["player"])
    if filters["table"]:
        return dimension("t", filters["table"])
    if disputed:
        return DISPUTED
    if filters["variant"]:
        return dimension("v", filters["variant"])
    return EVERY


def _matches(summary: dict[str, Any], filters: dict[str, Any], disputed: bool | None) -> bool:
    players = {p["player_id"]: p for p in summary["players"]}
    player, outcome = filters["player"], filters["outcome"]
    if player is not None and player not in players:
        return False
    if outcome is not None:
        among = [players[player]] if player is not None else list(players.values())
        if not any(p["outcome"] == outcome for p in among):
            return False
    return ((filters["table"] is None or summary["table_id"] == filters["table"])
            and (filters["variant"] is None or summary["variant"] == filters["variant"])
            and (disputed is None or summary["disputed"] == disputed))


def _view(actor: Principal, summary: dict[str, Any]) -> dict[str, Any]:
    """A deal as the caller may see it: staff see every player's part; a player their own in
    full, the others' seat and id only, and no totals of the others' chips."""
    view = {k: v for k, v in summary.items() if k != "cursor"}
    if actor.role is not Role.PLAYER:
        return view
    view["players"] = [p if p["player_id"] == actor.player_id else
                       {"player_id": p["player_id"], "seat": p["seat"]}
                       for p in summary["players"]]
    view["disputes"] = [d for d in summary["disputes"] if d["player_id"] == actor.player_id]
    view.update(handle=None, returned=None, net=None)
    return view
