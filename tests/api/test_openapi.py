"""The OpenAPI document and the interactive docs page the app serves (product.md "Operating it")."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.api.helpers import memory_only

pytestmark = memory_only  # the documents do not depend on the store

HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
#: Routes that are not part of the API proper: the documents themselves and their assets (the
#: pages and the problem types' pages are left out by their blueprints' names).
NOT_API = {"static", "docs_assets", "api-docs.openapi_json", "api-docs.openapi_swagger_ui"}


@pytest.fixture
def spec(client) -> dict[str, Any]:
    response = client.get("/openapi.json")
    assert response.status_code == 200 and response.mimetype == "application/json"
    return response.get_json()


def openapi_path(rule: str) -> str:
    """`/deals/<uuid:deal_id>/stand` → `/deals/{deal_id}/stand`."""
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule)


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for value in node.values() for r in refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in refs(value)]
    return []


def resolve(spec: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), f"only local references expected, got {ref}"
    node: Any = spec
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def test_openapi_document_is_openapi_3_with_bearer_security(spec):
    assert re.fullmatch(r"3\.\d+\.\d+", spec["openapi"])
    assert spec["info"]["title"] == "Red Dog Ledger" and spec["info"]["version"]
    assert spec["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http", "scheme": "bearer"}
    assert spec["security"] == [{"bearerAuth": []}]


def test_openapi_document_lists_every_api_route_and_method(app, spec):
    routes = [rule for rule in app.url_map.iter_rules()
              if rule.endpoint not in NOT_API
              and not rule.endpoint.startswith(("pages.", "problem_pages."))]
    assert len(routes) == 65
    for rule in routes:
        path = openapi_path(rule.rule)
        assert path in spec["paths"], f"{rule.rule} is not documented"
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            assert method.lower() in spec["paths"][path], f"{method} {path} is not documented"
    assert len(spec["paths"]) == len({openapi_path(rule.rule) for rule in routes})


def test_openapi_document_is_well_formed(spec):
    """Structural validity: operations answer, path parameters are declared, every $ref resolves."""
    operations = 0
    for path, item in spec["paths"].items():
        assert path.startswith("/")
        declared = {p["name"] for p in item.get("parameters", []) if p["in"] == "path"}
        for method, operation in item.items():
            if method == "parameters":
                continue
            assert method in HTTP_METHODS, f"{method} under {path}"
            operations += 1
            assert operation["responses"], f"{method} {path} documents no response"
            assert all(re.fullmatch(r"[1-5]\d\d|default", code) for code in operation["responses"])
            assert operation.get("summary"), f"{method} {path} has no summary"
            names = declared | {p["name"] for p in operation.get("parameters", [])
                                if p["in"] == "path"}
            assert names == set(re.findall(r"{([^}]+)}", path)), f"path parameters of {path}"
    assert operations == 65
    for param in (p for item in spec["paths"].values() for p in item.get("parameters", [])):
        assert param["required"] is True and param["in"] == "path"
    for ref in refs(spec):
        assert resolve(spec, ref) is not None, ref


def test_openapi_commands_document_idempotency_key_bodies_and_problem_answers(spec):
    # Signing in records no command of the caller's (it has no key yet): no Idempotency-Key.
    # Nor does a witness giving the public log its cosignatures (no key: the signatures are
    # checked, and the same one kept once).
    commands = [(path, item["post"]) for path, item in spec["paths"].items()
                if "post" in item and path not in ("/sign-in", "/log/cosignatures")]
    assert len(commands) == 25
    for path, operation in commands:
        headers = [p["name"] for p in operation.get("parameters", []) if p["in"] == "header"]
        assert "Idempotency-Key" in headers, path
        for status in ("401", "403", "404", "409", "422"):
            content = operation["responses"][status]["content"]
            assert list(content) == ["application/problem+json"], (path, status)
            assert resolve(spec, content["application/problem+json"]["schema"]["$ref"])[
                "properties"].keys() >= {"type", "title", "status", "detail", "rule", "field"}
    bodies = {path for path, operation in commands if "requestBody" in operation}
    assert bodies == {"/wallets", "/keys", "/wallets/{wallet_id}/grants", "/tables",
                      "/tables/{table_id}/client-seed", "/tables/{table_id}/deals",
                      "/tables/{table_id}/seats", "/tables/{table_id}/bank",
                      "/tables/{table_id}/next-deal", "/tables/{table_id}/bets",
                      "/tables/{table_id}/centre-card", "/tables/{table_id}/passes",
                      "/tables/{table_id}/dealer-choice", "/tables/{table_id}/ready",
                      "/deals/{deal_id}/disputes",
                      "/disputes/{dispute_id}/resolve", "/verification"}
    deal_body = spec["paths"]["/tables/{table_id}/deals"]["post"]["requestBody"]
    schema = resolve(spec, deal_body["content"]["application/json"]["schema"]["$ref"])
    assert schema["required"] == ["bet"] and schema["properties"]["bet"]["type"] == "integer"


#: The operations that take no key, and the failures they answer: readiness 503 (with its own
#: body, saying what is not ready).
UNAUTHENTICATED_PROBES = {"/health": set(), "/health/live": set(), "/health/ready": {"503"},
                          # and the public log's answers, for anyone (docs/transparency.md):
                          # each refuses a header it reads that is not text (422)
                          "/log/checkpoint": {"404", "422"}, "/log/checkpoints": {"422"},
                          "/log/checkpoints/{size}": {"404", "422"}, "/log/key": {"422"},
                          "/log/tile/{path}": {"404", "422"}, "/log/proof/inclusion": {"422"},
                          "/log/proof/consistency": {"422"}, "/log/leaf": {"404", "422"},
                          "/log/checker.py": {"422"}, "/log/cosignatures": {"413", "422"}}
#: The operations that answer 503 (with Retry-After) rather than record what a limit that cannot
#: be checked would have to allow: an auditor's verification run.
FAIL_CLOSED = {("post", "/verification"),
               # and what needs a checkpoint the public log can no longer sign
               ("post", "/log/checkpoints"), ("get", "/deals/{deal_id}/receipt")}


def test_openapi_every_operation_lists_its_problem_answers_and_no_catch_all(spec):
    """No `default` answer (it would make any status documented); every problem answer is
    problem+json with the Problem schema; 429 says when to retry; a body brings 400 and 413."""
    problem = spec["components"]["schemas"]["Problem"]
    assert set(problem["required"]) == {"type", "title", "status", "detail"}
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            responses = operation["responses"]
            assert "default" not in responses, (method, path)
            if operation.get("security") == []:  # the probes: no key, no rate limit
                assert path in UNAUTHENTICATED_PROBES, path
                assert {code for code in responses if code >= "400"} == UNAUTHENTICATED_PROBES[path]
                continue
            expected = {"401", "403", "404", "409", "422", "429"}
            if "requestBody" in operation:
                expected |= {"400", "413"}
            if (method, path) in FAIL_CLOSED:
                expected |= {"503"}
                assert responses["503"]["headers"]["Retry-After"]["required"] is True
            problems = {code for code in responses if code >= "400"}
            assert problems == expected, (method, path)
            for code in problems:
                assert list(responses[code]["content"]) == ["application/problem+json"]
                assert responses[code]["content"]["application/problem+json"]["schema"] == {
                    "$ref": "#/components/schemas/Problem"}
            assert responses["429"]["headers"]["Retry-After"]["required"] is True


def test_openapi_states_the_limits_the_rules_enforce(spec):
    schemas = spec["components"]["schemas"]
    bet = schemas["DealArgs"]["properties"]["bet"]
    assert (bet["minimum"], bet["maximum"], bet["multipleOf"]) == (10, 5000, 10)
    assert schemas["GrantArgs"]["properties"]["amount"]["maximum"] == 1_000_000_000
    assert schemas["TableBetArgs"]["properties"]["amount"]["minimum"] == 1
    assert schemas["TableLimitsArgs"]["properties"]["hand_size"]["enum"] == [3, 4, 5]
    recall = spec["paths"]["/players/{player_id}/recall"]["parameters"]
    assert recall[0]["schema"]["pattern"].startswith("^[A-Za-z0-9]")


def request_integers(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every integer a request may send, by where it is: parameters, and the properties of
    request bodies (nested ones and array items too)."""
    found: dict[str, dict[str, Any]] = {}

    def visit(where: str, node: dict[str, Any]) -> None:
        node = resolve(spec, node["$ref"]) if "$ref" in node else node
        for part in node.get("allOf", []):
            visit(where, part)
        if node.get("type") == "integer":
            found[where] = node
        for name, prop in node.get("properties", {}).items():
            visit(f"{where}.{name}", prop)
        if "items" in node:
            visit(f"{where}[]", node["items"])

    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method not in HTTP_METHODS:
                continue
            for parameter in (*operation.get("parameters", []), *item.get("parameters", [])):
                visit(f"{method.upper()} {path} {parameter['name']}", parameter["schema"])
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body:
                visit(f"{method.upper()} {path} body", body["schema"])
    return found


def test_openapi_states_both_bounds_of_every_integer_a_request_sends_within_64_bits(spec):
    """What the stores hold (signed 64-bit), or the field's narrower range, or its listed
    values: a client can tell every number the service takes from the document."""
    integers = request_integers(spec)
    assert {"GET /wallets/{wallet_id}/statement after_version", "POST /tables body.limits.ante",
            "GET /tables/{table_id}/bet-slip chips[]",
            "POST /tables/{table_id}/seats/{seat}/leave seat"} <= set(integers)
    for where, node in integers.items():
        if "enum" in node and "minimum" not in node:
            continue
        assert -(2**63) <= node["minimum"] <= node["maximum"] <= 2**63 - 1, (where, node)
    statement = integers["GET /wallets/{wallet_id}/statement after_version"]
    assert (statement["minimum"], statement["maximum"]) == (0, 2**63 - 1)


def test_openapi_documents_the_key_endpoints_and_that_a_key_is_shown_once(spec):
    assert set(spec["paths"]["/keys"]) == {"get", "post"}
    assert set(spec["paths"]["/keys/{key_id}"]) - {"parameters"} == {"get"}
    assert set(spec["paths"]["/keys/{key_id}/revoke"]) - {"parameters"} == {"post"}
    created = spec["paths"]["/keys"]["post"]["responses"]["201"]
    assert "Location" in created["headers"]
    issued = resolve(spec, created["content"]["application/json"]["schema"]["$ref"])
    assert "once" in issued["properties"]["key"]["description"]
    record = spec["components"]["schemas"]["Key"]["properties"]
    assert "key" not in record and not any("hash" in name for name in record)


def test_openapi_documents_that_a_deal_gives_its_server_seed_only_once_finished(spec):
    deal = spec["components"]["schemas"]["Deal"]["properties"]
    assert "once finished" in deal["server_seed"]["description"].lower()


def test_docs_page_serves_html_and_its_assets_locally_without_a_cdn(client):
    page = client.get("/docs")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert "/openapi.json" in html
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assets = [s for s in sources if s.startswith("/docs/assets/")]
    assert {a.rsplit("/", 1)[-1] for a in assets} >= {
        "swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js"}
    assert not [s for s in sources if re.match(r"(https?:)?//", s)], "docs page loads from a CDN"
    for asset in assets:
        response = client.get(asset)
        assert response.status_code == 200, asset
        assert len(response.get_data()) > 1000, asset
        expected = "text/css" if asset.endswith(".css") else "javascript"
        assert expected in response.mimetype, (asset, response.mimetype)
    assert client.get("/docs/assets/../../../etc/passwd").status_code == 404


def test_health_says_ok_and_names_the_store(client):
    response = client.get("/health")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "store": "memory"}


def test_every_operation_has_a_unique_operation_id_named_after_its_view(spec):
    ids = [operation["operationId"] for item in spec["paths"].values()
           for method, operation in item.items() if method in HTTP_METHODS]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", i) for i in ids), ids
    assert spec["paths"]["/wallets/{wallet_id}/grants"]["post"]["operationId"] == "grant"


#: Answer fields whose values form a closed set, and the set the document must declare.
CLOSED_SETS = {
    ("Deal", "phase"): {"deciding", "in_progress", "finished"},
    ("Deal", "outcome"): {"win", "lose", "push", None},
    ("Table", "family"): {"C", "H", "S", "SS", "FW", "P", "X", "XB"},
    ("Table", "phase"): {"ready", "funding", "betting", "choice", "closed", "deciding"},
    ("Dispute", "status"): {"open", "resolved"},
    ("Key", "role"): {"operator", "player", "auditor"},
    ("Key", "status"): {"active", "expired", "revoked"},
}


def test_closed_sets_of_the_answers_are_enums(spec):
    schemas = spec["components"]["schemas"]
    for (schema, field), values in CLOSED_SETS.items():
        assert set(schemas[schema]["properties"][field]["enum"]) == values, (schema, field)
    from ledger.rules.variants import VARIANT_NAMES

    assert schemas["Table"]["properties"]["variant"]["enum"] == list(VARIANT_NAMES)


def test_every_schema_the_api_declares_is_shared_by_the_documents_copies_not_copied(app):
    """flask-smorest deep-copies what documents an operation at each decorator, route and app:
    every schema the API declares is an `api.schemabase.Schema`, which such a copy shares (a
    copied schema instance was half of each process's start); the documents' own dicts are
    still copied, so one app filling in its document leaves the next one's as it was."""
    import copy
    import importlib
    import inspect
    import pkgutil

    import marshmallow

    import api
    from api.schemabase import Schema

    declared = {cls for info in pkgutil.walk_packages(api.__path__, "api.")
                for _, cls in inspect.getmembers(importlib.import_module(info.name),
                                                 inspect.isclass)
                if issubclass(cls, marshmallow.Schema) and cls.__module__.startswith("api.")}
    assert len(declared) > 40
    assert {cls.__qualname__ for cls in declared if not issubclass(cls, Schema)} == set()
    answers = [doc for view in app.view_functions.values()
               for docs in getattr(view, "_apidoc", {}).get("response", {})
               .get("responses", {}).values() for doc in docs]
    documented = [doc["schema"] for doc in answers
                  if isinstance(doc.get("schema"), marshmallow.Schema)]
    assert documented and all(isinstance(schema, Schema) for schema in documented)
    document = {"responses": {404: [{"schema": documented[0], "description": "gone"}]}}
    copied = copy.deepcopy(document)
    assert copied["responses"][404][0]["schema"] is documented[0]
    copied["responses"][404][0]["schema"] = {"$ref": "#/components/schemas/X"}
    assert document["responses"][404][0]["schema"] is documented[0]
