"""Bad input through the production start: a lone surrogate and whole numbers past 64 bits in
every field of every operation, sent over real HTTP to `reddog serve --workers 2` (gunicorn's
master, workers serving with waitress: `api/worker.py`), never get a 5xx, and every refusal is
problem+json; so are the requests the server refuses before the app sees them.

The fields and values are the in-process walk's (`tests/api/test_fuzz.py`, which also checks
that each refusal names its field and records nothing); here they go through the server's edge:
a body's surrogate as the JSON escape `\\ud800`, a query's or a path's as the bytes a client
would send for it, percent-encoded (`%ED%A0%80`, which is no UTF-8).
"""

from __future__ import annotations

import http.client
import json
import re
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from tests.api.test_fuzz import (
    PAST_64_BITS,
    REQUIRED_QUERY,
    SURROGATE,
    Field,
    fields_of,
    operations,
)
from tests.e2e.load_harness import ServerProcess, create_keys, process_env

PROBLEM = "application/problem+json"
#: A surrogate's bytes as a client puts them in an address: percent-encoded CESU-8.
SURROGATE_IN_ADDRESS = quote(SURROGATE.encode("utf-8", "surrogatepass"), safe="")


def url_of(path: str, operation: dict[str, Any], field: Field, value: Any) -> str:
    """The operation's address with placeholder ids, its required query, and `value` in
    `field` when the field is in the address."""
    text = SURROGATE_IN_ADDRESS if value == SURROGATE else quote(str(value), safe="")

    def part(match: re.Match[str]) -> str:
        name = match.group(1)
        if field.where == "path" and name == field.name:
            return text
        return "1" if name == "seat" else str(uuid.UUID(int=1))

    address = re.sub(r"{([^}]+)}", part, path)
    query = [f"{p['name']}={REQUIRED_QUERY[p['name']]}" for p in operation.get("parameters", [])
             if p["in"] == "query" and p.get("required") and p["name"] != field.name]
    if field.where == "query":
        query.append(f"{field.name}={text}")
    return address + ("?" + "&".join(query) if query else "")


def body_of(operation: dict[str, Any], field: Field, value: Any) -> bytes | None:
    content = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if content is None:
        return None
    data = json.loads(json.dumps(content.get("example", {})))
    if field.where == "body":
        holder = data
        for key in field.place[:-1]:
            holder = holder.setdefault(key, {})
        holder[field.place[-1]] = value
    # `ensure_ascii` writes a lone surrogate as the escape `\ud800`, as a JSON client would.
    return json.dumps(data).encode()


def test_every_field_through_the_production_server_never_fails_and_refuses_as_problem_json(
        tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    env = process_env()
    server = ServerProcess("workers", store, tmp_path / "server.log", env, workers=2).start()
    try:
        [operator] = create_keys(store, env, [("operator", None)], tmp_path)
        address = urlsplit(server.base)
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
        failures, sent = [], 0
        for method, path, operation in operations():
            for field in fields_of(path, operation):
                values = [SURROGATE, *(PAST_64_BITS if field.kind in ("integer", "number")
                                       else ())]
                for value in values:
                    headers = {"Authorization": f"Bearer {operator}",
                               "Content-Type": "application/json"}
                    if field.where == "header":
                        if value == SURROGATE:
                            continue  # a header is Latin-1 on the wire: no surrogate to send
                        headers[field.name] = str(value)
                    connection.request(method.upper(), url_of(path, operation, field, value),
                                       body=body_of(operation, field, value), headers=headers)
                    response = connection.getresponse()
                    body = response.read()
                    sent += 1
                    kind = response.getheader("Content-Type", "")
                    if response.status >= 500 or (response.status >= 400 and kind != PROBLEM):
                        failures.append((method, path, field.place, repr(value)[:20],
                                         response.status, kind, body[:200]))
                    if response.getheader("Connection", "").lower() == "close":
                        connection.close()
                        connection = http.client.HTTPConnection(address.hostname, address.port,
                                                                timeout=30)
        connection.close()
    finally:
        server.stop()
    assert sent > 250, sent  # every field of every operation (279 when written)
    assert not failures, "\n".join(map(repr, failures[:20])) + f"\n({len(failures)} in all)"
    assert "Traceback" not in server.output()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_json_surrogate_and_a_huge_number_are_refused_by_the_server_naming_the_field(
        tmp_path: Path, workers: int) -> None:
    """The two inputs a review found answered 500, sent to both ways the server runs."""
    store = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    env = process_env()
    server = ServerProcess("server", store, tmp_path / "server.log", env,
                           workers=workers).start()
    try:
        [operator] = create_keys(store, env, [("operator", None)], tmp_path)
        address = urlsplit(server.base)
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
        connection.request("POST", "/sign-in", body=b'{"token": "\\ud800"}',
                           headers={"Content-Type": "application/json"})
        signed = connection.getresponse()
        signed_body = json.loads(signed.read())
        connection.request("POST", "/wallets", body=b'{"player_id": "huge"}', headers={
            "Content-Type": "application/json", "Authorization": f"Bearer {operator}"})
        wallet = json.loads(connection.getresponse().read())["id"]
        connection.request("GET", f"/wallets/{wallet}/statement?after_version={2**63}",
                           headers={"Authorization": f"Bearer {operator}"})
        statement = connection.getresponse()
        statement_body = json.loads(statement.read())
        connection.close()
    finally:
        server.stop()
    assert signed.status == 422 and signed.getheader("Content-Type") == PROBLEM
    assert signed_body["field"] == "token"
    assert statement.status == 422 and statement_body["field"] == "after_version"
