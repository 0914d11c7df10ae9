"""The contract: the OpenAPI document the service serves equals the checked-in copy
`docs/openapi.json`, so every change to the API's shape is deliberate and reviewed. After an
intended change, write the copy again with `make openapi` and commit it with the change."""

from __future__ import annotations

import json
from pathlib import Path

from tests.api.helpers import memory_only

pytestmark = memory_only
CONTRACT = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def _differences(served: object, kept: object, where: str = "") -> list[str]:
    if isinstance(served, dict) and isinstance(kept, dict):
        found = []
        for key in sorted(set(served) | set(kept)):
            if key not in kept:
                found.append(f"{where}/{key}: served, not in the contract")
            elif key not in served:
                found.append(f"{where}/{key}: in the contract, not served")
            else:
                found.extend(_differences(served[key], kept[key], f"{where}/{key}"))
        return found
    return [] if served == kept else [f"{where}: served {served!r}, contract {kept!r}"]


def test_the_served_document_is_the_checked_in_contract(client):
    served = client.get("/openapi.json").get_json()
    kept = json.loads(CONTRACT.read_text())
    differences = _differences(served, kept)
    assert not differences, ("the API's document changed; if that is intended, run "
                             "`make openapi` and commit docs/openapi.json:\n"
                             + "\n".join(differences[:20]))
