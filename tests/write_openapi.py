"""Write the served OpenAPI document to `docs/openapi.json`, the contract
`tests/api/test_contract.py` holds the service to (`make openapi`)."""

from __future__ import annotations

import json
from pathlib import Path

from api import create_app
from ledger.app.application import LedgerApplication
from ledger.settings import Settings

CONTRACT = Path(__file__).resolve().parents[1] / "docs" / "openapi.json"


def main() -> None:
    app = create_app({"LEDGER": LedgerApplication(Settings(store="memory")), "TESTING": True})
    document = app.test_client().get("/openapi.json").get_json()
    CONTRACT.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    print(f"wrote {CONTRACT} ({len(document['paths'])} paths)")


if __name__ == "__main__":
    main()
