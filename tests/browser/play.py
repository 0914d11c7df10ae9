"""Deals played through the API of a browser tests' server: casino deals and a banked
multi-seat table's, so the reports and verification pages have something to show."""

from __future__ import annotations

import time
from typing import Any

#: The actions the players of a multi-seat deal take here (the smallest amount each time).
ACTIONS = {"fund_bank": ("/bank", lambda a: {"amount": a["min"]}),
           "deal": ("/next-deal", lambda a: {}),
           "bet": ("/bets", lambda a: {"seat": a["seat"], "amount": a["min"]}),
           "pass": ("/passes", lambda a: {"seat": a["seat"]}),
           "choose": ("/dealer-choice", lambda a: {"choice": "pass"})}
CAUGHT_UP_SECONDS = 10


def casino_table(server: Any, player: dict[str, Any]) -> str:
    """A new casino table of the player's (an operator opens it); its id."""
    table = server.api("POST", "/tables", body={"variant": "casino",
                                                "wallet_id": player["wallet"]["id"]})
    return str(table["id"])


def casino_deals(server: Any, player: dict[str, Any], count: int, bet: int = 10) -> str:
    """Play `count` casino deals at a new table of the player's, standing when asked; the id."""
    table = casino_table(server, player)
    for _ in range(count):
        deal = server.api("POST", f"/tables/{table}/deals", player["key"], {"bet": bet})
        if deal.get("phase") == "deciding":
            server.api("POST", f"/deals/{deal['id']}/stand", player["key"])
    return table


def banked_deals(server: Any, players: list[dict[str, Any]], variant: str, deals: int) -> str:
    """Seat the players at a new table of a banked variant and play until `deals` have ended."""
    table = server.api("POST", "/tables", body={"variant": variant})["id"]
    keys = {p["player_id"]: p["key"] for p in players}
    for seat, player in enumerate(players, start=1):
        server.api("POST", f"/tables/{table}/seats", player["key"],
                   {"seat": seat, "wallet_id": player["wallet"]["id"]})
    server.api("POST", f"/tables/{table}/next-deal", body={})  # the operator draws a dealer
    for _ in range(400):
        view = server.api("GET", f"/tables/{table}")
        if view["counters"]["deals"] >= deals and not view["current_deal"]:
            return table
        action = next((a for a in view["legal_actions"] if a["action"] in ACTIONS
                       and (a.get("player_id") in keys or a["action"] == "deal")), None)
        assert action is not None, (view["phase"], view["legal_actions"])
        path, body = ACTIONS[action["action"]]
        server.api("POST", f"/tables/{table}{path}", keys.get(action.get("player_id")),
                   body(action))
    raise AssertionError(f"{deals} deals did not end in 400 actions")


def caught_up(server: Any, key: str) -> dict[str, Any]:
    """Wait until the server's projection has folded its whole log; its status."""
    deadline = time.monotonic() + CAUGHT_UP_SECONDS
    while True:
        status = server.api("GET", "/verification", key)["projection"]
        if status["behind"] == 0 or time.monotonic() > deadline:
            assert status["behind"] == 0, status
            return status
        time.sleep(0.05)  # poll the condition, not a guess at how long folding takes
