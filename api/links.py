"""Links to the next action: each table and deal answer carries `links`, a map from the actions
legal for the caller now to the request that takes each (`{"href", "method"}`), beside `self`.
A client follows them instead of building addresses; the server's rules decide which appear.
"""

from __future__ import annotations

from typing import Any

#: A multi-seat table's legal action → the path under `/tables/{id}` that takes it.
TABLE_ACTIONS = {
    "deal": "next-deal", "fund_bank": "bank", "decline_bank": "bank/decline",
    "choose": "dealer-choice", "bet": "bets", "buy": "centre-card", "pass": "passes",
    "split_pot": "pot-split", "close": "close", "ready": "ready",
}
#: A casino deal's legal actions, under `/deals/{id}`.
DEAL_ACTIONS = ("stand", "raise")


def _post(href: str) -> dict[str, str]:
    return {"href": href, "method": "POST"}


def deal_links(deal: dict[str, Any]) -> dict[str, Any]:
    """`self`, the deal's table, its replay once finished, and stand or raise while legal."""
    base = f"/deals/{deal['id']}"
    links: dict[str, Any] = {"self": {"href": base, "method": "GET"}}
    if deal.get("table_id"):
        links["table"] = {"href": f"/tables/{deal['table_id']}", "method": "GET"}
    for action in deal.get("legal_actions") or ():
        if action in DEAL_ACTIONS:
            links[action] = _post(f"{base}/{action}")
    if deal.get("phase") == "finished":
        links["replay"] = {"href": f"{base}/replay", "method": "GET"}
    return links


def table_links(table: dict[str, Any]) -> dict[str, Any]:
    """`self` and the table's legal actions: a casino table's (names: its next deal, and its
    current deal's stand or raise), a multi-seat table's (`{action, seat, …}`: next deal, bank,
    bets, passes, choice, split, close)."""
    base = f"/tables/{table['id']}"
    links: dict[str, Any] = {"self": {"href": base, "method": "GET"}}
    current = table.get("current_deal") if isinstance(table.get("current_deal"), dict) else None
    for action in table.get("legal_actions") or ():
        if isinstance(action, dict) and action.get("action") in TABLE_ACTIONS:
            links[action["action"]] = _post(f"{base}/{TABLE_ACTIONS[action['action']]}")
        elif action == "deal":
            links["deal"] = _post(f"{base}/deals")
        elif action in DEAL_ACTIONS and current is not None and current.get("id"):
            links[action] = _post(f"/deals/{current['id']}/{action}")
    return links
