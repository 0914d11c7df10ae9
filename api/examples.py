"""An example body for every operation that reads one, by operationId, put into the OpenAPI
document (`LedgerApi.name_operations`). A test checks each against its operation's schema."""

from __future__ import annotations

from typing import Any

WALLET = "3f1e8c2a-9b4d-4e7f-a1c3-5d6e7f8a9b0c"
#: operationId → an example request body.
EXAMPLES: dict[str, dict[str, Any]] = {
    "open_wallet": {"player_id": "alice"},
    "grant": {"amount": 1000},
    "open_table": {"variant": "polish", "limits": {"min_bet": 10, "max_seats": 6},
                   "name": "Blue", "starts": "ready"},
    "seat": {"seat": 2, "wallet_id": WALLET},
    "deal": {"bet": 100},
    "next_deal": {},
    "fund_bank": {"amount": 500},
    "table_bet": {"seat": 2, "amount": 50},
    "buy_centre_card": {"seat": 2},
    "pass_turn": {"seat": 3},
    "say_ready": {"seat": 1},
    "dealer_choice": {"choice": "deal_fourth"},
    "change_client_seed": {"client_seed": "my-own-luck-42"},
    "open_dispute": {"message": "The third card was shown before I chose to raise"},
    "resolve_dispute": {"finding": "Display lag confirmed; the deal itself was fair",
                        "upheld": True, "adjustment": 100},
    "issue_key": {"role": "player", "player_id": "alice", "kind": "link",
                  "label": "sign-in link for alice"},
    "sign_in": {"token": "rdl_link_example"},
    "run_verification": {"from": 1001, "to": 3000},
}


def add_examples(paths: dict[str, Any]) -> None:
    """Set each operation's request example from EXAMPLES."""
    for item in paths.values():
        for operation in item.values():
            if not isinstance(operation, dict) or "requestBody" not in operation:
                continue
            example = EXAMPLES.get(operation.get("operationId", ""))
            json_body = operation["requestBody"]["content"].get("application/json")
            if example is not None and json_body is not None:
                json_body["example"] = example
