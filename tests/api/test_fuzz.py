"""Property-based fuzzing of the HTTP API against its own OpenAPI document (schemathesis).

The document at `/openapi.json` is the contract. Schemathesis reads it from the app itself,
in-process through WSGI (no network), generates requests from it, valid and invalid, and checks
every answer against it: never a 5xx; status code, content type, headers and body as documented;
a request the document calls invalid is refused, a valid one is not refused for its shape; no
answer without a good key; 405 with `Allow` for a method a path does not have. Our own checks add
what every error must be (problem+json with `type`, `title`, `status` equal to the HTTP status
and `detail`), `Allow` on every 405, `Retry-After` on every 429 and 503, and that a schema-valid
request is refused only by a game rule or by the state it meets.

It runs on the memory store (the document does not depend on the store), as an operator, a
player and an auditor, against real ids (wallets, a casino table with a finished and a waiting
deal, a multi-seat table in a deal) as well as random ones. Cases are bounded and derandomized:
every run sends the same requests. Below it, what schemathesis does not send: every method a
path does not have, malformed bodies to every command, audit reads while the gate is full, and
a lone surrogate and whole numbers past 64 bits (and past and at the documented bounds) in every
field of every operation, as every role.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import pytest
import schemathesis
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import allow_header_conformance, unsupported_method

from api import create_app
from api.gate import AuditGate
from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.settings import Settings
from tests.api.conftest import Casino, Keys
from tests.api.helpers import PROBLEM, assert_problem, auth, spread

ROLES = ("operator", "player", "auditor")
#: Generated cases per operation and role (the coverage phase adds its own boundary cases).
MAX_EXAMPLES = 10
#: Schema-valid requests the ledger refuses as `invalid-input` (not by a rule) because of the
#: state they meet or of how their fields go together, which the document cannot say.
#: (operation, field) → why.
REFUSED_BY_STATE = {
    ("POST /tables", "wallet_id"): "a casino table needs a wallet; a multi-seat table takes none",
    ("POST /tables/{table_id}/deals", "bet"): "a multi-seat table takes bets at /bets",
    ("GET /tables/{table_id}/as-of", "version"): "1 to the table's current version",
    ("GET /tables/{table_id}/as-of", "at"): "a version or an instant, not both",
    ("GET /wallets/{wallet_id}/as-of", "version"): "1 to the wallet's current version",
    ("GET /wallets/{wallet_id}/as-of", "at"): "a version or an instant, not both",
    ("GET /wallets/{wallet_id}/statement", "until"): "after `since`",
    ("GET /reports", "until"): "after `since`, and at most 400 days after it",
    ("GET /reports/series", "until"): "after `since`, and at most 400 days after it",
    ("POST /verification", "to"): "from `from`, at most the log's end and 2,000 positions on",
    ("POST /verification", "from"): "at most `to`",
    ("POST /keys", "player_id"): "a player key names its player; other roles' keys name none",
    ("POST /keys", "expires_at"): "in the future, and not beside expires_in_days",
    ("POST /keys", "expires_in_days"): "not beside expires_at",
    ("POST /deals/{deal_id}/disputes", "deal_id"): "a deal is disputed once it has finished",
    ("POST /disputes/{dispute_id}/resolve", "adjustment"): "more than 0 only when upheld",
    ("GET /disputes", "after"): "a dispute id from an earlier page",
    ("GET /deals", "until"): "after `since`",
    ("GET /log/proof/inclusion", "leaf"): "below `size`",
    ("GET /log/proof/inclusion", "size"): "at most the tree's size",
    ("GET /log/proof/consistency", "from"): "at most `to`",
    ("GET /log/proof/consistency", "to"): "at most the tree's size",
    ("POST /log/cosignatures", "body"): "a checkpoint the log signed, cosigned by a witness "
                                        "it names",
}


@dataclass
class World:
    """An app on a fresh memory store with real things in it, and a key of each role."""

    app: Flask
    client: FlaskClient
    headers: dict[str, dict[str, str]]
    #: Path parameter name → real values, the first of each refused by a rule for every
    #: body-less command: the multi-seat table mid-deal, the casino deal that has finished.
    real: dict[str, list[Any]]


def _document(phase: str) -> Any:
    """The app's own document, read through WSGI from an app on an empty memory store (the
    document does not depend on the store; `build_world` checks that its app serves the same),
    to test in one of schemathesis' phases: `coverage` (boundary values and every kind of
    invalid input, method and header, deterministic) or `fuzzing` (random cases, valid and
    invalid)."""
    app = create_app({"LEDGER": LedgerApplication.for_store("memory"), "TESTING": True})
    phases = ("examples", "coverage", "fuzzing")
    config = schemathesis.Config.from_dict({
        "phases": {name: {"enabled": name == phase} for name in phases},
        # A rule or the state may refuse a schema-valid request (422): `refused_by_rule_or_state`
        # below allows that only for a named rule or a listed reason.
        "checks": {"positive_data_acceptance": {
            "expected-statuses": ["2xx", "401", "403", "404", "409", "422", "429"]}},
    })
    return schemathesis.openapi.from_wsgi("/openapi.json", app, config=config)


schema = _document("fuzzing")
boundaries = _document("coverage")
#: The running test's key and real path parameters, for the auth provider and the hook below,
#: which schemathesis calls while it generates. Set by `as_role`.
CURRENT: dict[str, Any] = {}


def build_world(ledger: LedgerApplication) -> World:
    """Alice's wallet, casino table and deals (one finished, one waiting for her), and a
    multi-seat table where alice, bob and carol sit, in the middle of a deal."""
    app = create_app({"LEDGER": ledger, "TESTING": True})
    client = app.test_client()
    assert client.get("/openapi.json").get_json() == schema.raw_schema
    keys = Keys(*(auth(ledger.keys.issue_key(*who)[0]) for who in (
        ("operator",), ("auditor",), ("player", "alice"), ("player", "bob"))))
    # Keys for the fuzzer to read and revoke: never the world's own, which it must keep using;
    # the first is revoked already, so revoking it is refused like the other body-less commands.
    spare = [ledger.keys.issue_key("auditor", label=f"spare {n}")[1]["key_id"] for n in range(2)]
    ledger.keys.revoke_key(SYSTEM, UUID(spare[0]))
    carol = auth(ledger.keys.issue_key("player", "carol")[0])
    casino = Casino(client, keys)
    wallets = {name: casino.open_wallet(name)["id"] for name in ("alice", "bob", "carol")}
    table = casino.open_table(wallets["alice"])
    finished = casino.deal(table["id"], spread)
    assert client.post(f"/deals/{finished.id}/stand", headers=keys.alice).status_code == 200
    disputed = client.post(f"/deals/{finished.id}/disputes", headers=keys.alice,
                           json={"message": "fuzz"})
    assert disputed.status_code == 201, disputed.get_json()
    waiting = casino.deal(table["id"], spread)
    multi = client.post("/tables", json={"variant": "high_card_pool", "client_seed": "fuzz"},
                        headers=keys.operator).get_json()
    for seat, (name, headers) in enumerate(
            (("alice", keys.alice), ("bob", keys.bob), ("carol", carol)), start=1):
        seated = client.post(f"/tables/{multi['id']}/seats", headers=headers,
                             json={"seat": seat, "wallet_id": wallets[name]})
        assert seated.status_code == 201, seated.get_json()
    dealt = client.post(f"/tables/{multi['id']}/next-deal", json={}, headers=keys.operator)
    assert dealt.status_code == 201, dealt.get_json()
    signed = client.post("/log/checkpoints", headers=keys.operator).get_json()["size"]
    return World(app, client, {
        "operator": keys.operator, "player": keys.alice, "auditor": keys.auditor,
    }, {
        "wallet_id": list(wallets.values()),
        "table_id": [multi["id"], table["id"]],
        "deal_id": [finished.id, waiting.id, dealt.get_json()["current_deal"]["id"]],
        "player_id": ["alice", "bob"],
        "seat": [1, 2, 3],
        "key_id": spare,
        "dispute_id": [disputed.get_json()["dispute_id"]],
        "size": [signed],  # the public log's checkpoint, and a tile of it
        "path": [f"0/000.p/{signed}"],
    })


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[World]:
    """The world the fuzzer plays in, kept for the whole module: what the cases change (a deal
    stood on, a wallet granted, a table closed) is more to fuzz, and every check holds in any
    state. The explicit tests below get a world of their own."""
    ledger = LedgerApplication.for_store("memory")
    yield build_world(ledger)
    ledger.close()


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """The explicit tests' world. Its keys have no rate limit: the module's tests send their
    requests with the same few keys, faster on a quick machine than 50 a second, and what they
    check is the answer of the request, not the key's limit (tested in test_keys.py)."""
    ledger = LedgerApplication(Settings.from_env(store="memory", rate_limit=0))
    yield build_world(ledger)
    ledger.close()


@pytest.fixture
def as_role(request: pytest.FixtureRequest, fuzzed: World, role: str) -> Iterator[World]:
    """Generate and send this test's cases with this role's key and the world's real ids; then
    check the key was sent (else every answer is a 401, which would pass every check)."""
    statuses: list[int] = []
    CURRENT.update(token=fuzzed.headers[role]["Authorization"].removeprefix("Bearer "),
                   real=fuzzed.real, statuses=statuses)
    failed = request.session.testsfailed
    yield fuzzed
    CURRENT.clear()
    if request.session.testsfailed == failed:
        assert set(statuses) - {401}, "no case got past authentication: the key was not sent"


class RoleKey:
    """The running test's key as the bearer token; schemathesis leaves it out, or spoils it,
    where it checks that a request without a good key is refused."""

    def get(self, case: Any, context: Any) -> str | None:
        return CURRENT.get("token")

    def set(self, case: Any, token: str, context: Any) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}


def flatmap_case(context: Any, case: Any) -> Any:
    """Swap generated path parameters for real ones now and then, so requests reach real things
    (only in cases whose path is meant to be valid: a case about a bad path stays bad)."""
    real = CURRENT.get("real", {})
    names = [name for name in (case.path_parameters or {}) if name in real]
    if not names or case.meta is None or case.meta.is_negative_at(ParameterLocation.PATH):
        return st.just(case)

    def swap(values: dict[str, Any]) -> Any:
        case.path_parameters = {**case.path_parameters, **values}
        return case

    return st.fixed_dictionaries({
        name: st.sampled_from([case.path_parameters[name], *real[name]]) for name in names
    }).map(swap)


for document in (schema, boundaries):
    document.auth(refresh_interval=None)(RoleKey)
    document.hook(flatmap_case)


# Our checks, beside schemathesis' own. Each takes (context, response, case).
def problem_details(ctx: Any, response: Any, case: Any) -> None:
    """Every 4xx and 5xx is problem+json whose `status` is the HTTP status."""
    if response.status_code < 400:
        return
    content_type = (response.headers.get("content-type") or [""])[0]
    assert content_type.split(";")[0].strip() == PROBLEM, content_type
    body = json.loads(response.content)
    assert isinstance(body, dict), body
    for name in ("type", "title", "detail"):
        assert isinstance(body.get(name), str) and body[name], (name, body)
    assert body["type"].startswith("/problems/"), body
    assert body.get("status") == response.status_code, body


def allow_on_405(ctx: Any, response: Any, case: Any) -> None:
    if response.status_code == 405:
        assert response.headers.get("allow"), "405 without Allow"


def retry_after(ctx: Any, response: Any, case: Any) -> None:
    if response.status_code in (429, 503):
        values = response.headers.get("retry-after") or [""]
        assert values[0].isdigit(), f"{response.status_code} without Retry-After in seconds"


def refused_by_rule_or_state(ctx: Any, response: Any, case: Any) -> None:
    """A request the document calls valid is not refused for its shape: a 422 names the game
    rule that refused it, or is a listed refusal by state."""
    if response.status_code != 422 or case.meta is None:
        return
    if case.meta.generation.mode is not GenerationMode.POSITIVE:
        return
    body = json.loads(response.content)
    if body.get("rule"):
        return
    where = (f"{case.method.upper()} {case.operation.path}", body.get("field"))
    assert where in REFUSED_BY_STATE, f"a schema-valid request was refused: {body}"


CHECKS = [problem_details, allow_on_405, retry_after, refused_by_rule_or_state]


# `as_role` only says which key to send, the same for every case of a test.
FUZZ = settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@schema.parametrize()
@pytest.mark.parametrize("role", ROLES)
@FUZZ
def test_every_answer_conforms_to_the_document(case: Any, as_role: World) -> None:
    response = case.call_and_validate(app=as_role.app, additional_checks=CHECKS,
                                      excluded_checks=excluded(case))
    CURRENT["statuses"].append(response.status_code)


@boundaries.parametrize()
@pytest.mark.parametrize("role", ["operator"])
@FUZZ
def test_every_answer_at_the_boundaries_conforms_to_the_document(case: Any,
                                                                 as_role: World) -> None:
    """The coverage phase's cases check the shapes of input, which every role's requests meet
    before the role is looked at: they run with the operator's key only. Their cases are made
    before the test runs, when no key is known, so the key is put in here (a case without the
    header at all is one that checks a missing key is refused, and stays so)."""
    if (case.headers or {}).get("Authorization") == "Bearer ":
        case.headers["Authorization"] = f"Bearer {CURRENT['token']}"
    response = case.call_and_validate(app=as_role.app, additional_checks=CHECKS,
                                      excluded_checks=excluded(case))
    CURRENT["statuses"].append(response.status_code)


#: Paths the API shares with a page: `GET /sign-in` serves the sign-in page's HTML (not an API
#: operation), so `Allow` names GET and HEAD beside the documented POST.
SHARED_WITH_PAGES = {"/sign-in": {"GET"}}


def excluded(case: Any) -> list[Any]:
    """Checks that do not apply to a case: on a path shared with a page, the page's GET is
    neither in the API's `Allow` nor a 405."""
    if case.path in SHARED_WITH_PAGES:
        return [allow_header_conformance, unsupported_method]
    return []


# Requests schemathesis does not make: wrong methods on every path, and malformed bodies.
def operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [(method.upper(), path, operation)
            for path, item in schema.raw_schema["paths"].items()
            for method, operation in item.items() if method != "parameters"]


def filled(path: str, real: dict[str, list[Any]]) -> str:
    """The path with the first real value of each parameter."""
    return re.sub(r"{([^}]+)}", lambda m: str(real[m.group(1)][0]), path)


@pytest.mark.parametrize("path", sorted(schema.raw_schema["paths"]))
def test_a_method_a_path_does_not_have_is_405_with_allow(world: World, path: str) -> None:
    """405 is not in the document: it answers an operation the document does not have, so there
    is no operation to document it on. It comes before the key is looked at (routing does), and
    carries `Allow` with the path's methods."""
    documented = {m.upper() for m in schema.raw_schema["paths"][path] if m != "parameters"}
    documented |= SHARED_WITH_PAGES.get(path, set())
    allowed = documented | {"OPTIONS"} | ({"HEAD"} if "GET" in documented else set())
    url = filled(path, world.real)
    for method in sorted({"GET", "POST", "PUT", "PATCH", "DELETE"} - documented):
        for headers in (world.headers["operator"], {}):
            response = world.client.open(url, method=method, headers=headers, json={})
            assert_problem(response, 405)
            assert set(re.split(r",\s*", response.headers["Allow"])) == allowed, (method, path)


MALFORMED = {
    "not-json": ("{bet: 100", 400, "body"),
    "nested-10000-deep": ("[" * 10_000 + "]" * 10_000, 400, "body"),
    "json-array": ('[{"bet": 100}]', 422, "body"),
}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("path", [path for method, path, op in operations() if method == "POST"
                                  and "text/plain" not in op.get("requestBody", {}).get(
                                      "content", {})])  # a signed note is text, not JSON
def test_a_malformed_body_is_a_documented_problem(world: World, path: str, role: str) -> None:
    """Every command that reads a body refuses a malformed one, before it looks at the role, as
    its document says: 400 for what is not JSON or too deep to read, 422 naming `body` for JSON
    that is not an object. A command without a body does not read one: it answers as it would
    without it (each is refused by a rule here, on the multi-seat table mid-deal or the
    finished deal, or for the auditor's role)."""
    operation = schema.raw_schema["paths"][path]["post"]
    url = filled(path, world.real)
    headers = world.headers[role]
    for kind, (data, status, field) in MALFORMED.items():
        response = world.client.post(url, data=data, content_type="application/json",
                                     headers=headers)
        if "requestBody" in operation:
            assert_problem(response, status, field=field)
        else:
            bare = world.client.post(url, headers=headers)
            assert response.status_code == bare.status_code != 200, (kind, response.get_json())
            without_id = [{k: v for k, v in answer.get_json().items() if k != "request_id"}
                          for answer in (response, bare)]
            assert without_id[0] == without_id[1], kind
        assert str(response.status_code) in operation["responses"], (kind, response.status_code)


#: The reads that take turns through the audit gate (api/gate.py).
AUDIT_READS = {"/events", "/deals", "/tables/{table_id}/as-of", "/wallets/{wallet_id}/as-of",
               "/wallets/{wallet_id}/statement", "/reports", "/reports/series", "/verification",
               "/players/{player_id}/recall", "/deals/{deal_id}/events", "/deals/{deal_id}/replay",
               "/deals/{deal_id}/history", "/deals/{deal_id}/fairness"}


@pytest.mark.parametrize("path", [path for method, path, _ in operations() if method == "GET"])
def test_a_busy_audit_gate_is_a_documented_429_with_retry_after(
        world: World, path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no audit slot free and no room to wait, every audit read answers 429 at once, with
    `Retry-After`, as the document says; every other read is served."""
    monkeypatch.setitem(world.app.extensions, "reddog_audit_gate", AuditGate(0, 0, 1.0))
    query = "?since=2026-01-01&until=2026-01-02" if path.startswith("/reports") else {
        "/log/proof/inclusion": "?leaf=0&size=1", "/log/proof/consistency": "?from=1&to=1",
        "/log/leaf": "?position=1"}.get(path, "")
    reader = "operator" if path.startswith("/keys") else "auditor"  # keys are operators' alone
    response = world.client.get(filled(path, world.real) + query,
                                headers=world.headers[reader])
    operation = schema.raw_schema["paths"][path]["get"]
    assert str(response.status_code) in operation["responses"]
    if path in AUDIT_READS:
        assert_problem(response, 429)
        assert response.get_json()["type"] == "/problems/busy"
        assert response.headers["Retry-After"].isdigit()
        assert "Retry-After" in operation["responses"]["429"]["headers"]
    elif path == "/tables/{table_id}/bet-slip":  # a play aid, not an audit read
        assert response.status_code in (403, 404), response.get_json()  # the player's alone
    else:
        assert response.status_code == 200, response.get_json()


# Text that is not text, and numbers past what the stores hold, in every field there is.
# Schemathesis generates neither: it leaves lone surrogates out of every string (its transports
# encode what they send as UTF-8), and integers stop at the document's bounds, past which its
# coverage phase sends one value only. These requests are made from the document itself, field
# by field, through WSGI as a server hands them on.
@dataclass(frozen=True)
class Field:
    """One field of an operation: where it goes, the name a refusal names, the keys that lead
    to it in a body, and its schema."""

    where: str
    name: str
    place: tuple[str, ...]
    schema: dict[str, Any]

    @property
    def kind(self) -> str:
        """The type of its values (of its items, for an array)."""
        return str(self.schema.get("items", self.schema).get("type", "string"))


#: The headers the API reads that the document does not list as parameters: every operation
#: reads them, but the health endpoints, which a probe asks and which read none.
READ_HEADERS = ("Authorization", "X-Request-Id")
#: Values for the query parameters an operation requires, so a request is refused for the
#: field spoiled and no other.
REQUIRED_QUERY = {"since": "2026-01-01", "until": "2026-01-02",
                  # the public log's proofs and leaves
                  "leaf": "0", "size": "1", "from": "1", "to": "1", "position": "1"}
SURROGATE = "\ud800"
#: A lone surrogate's bytes (CESU-8), as a server hands a query string or path on (Latin-1).
SURROGATE_BYTES = SURROGATE.encode("utf-8", "surrogatepass").decode("latin-1")
PAST_64_BITS = (2**64, -(2**64), 2**63, -(2**63) - 1)


def resolved(part: dict[str, Any]) -> dict[str, Any]:
    """A schema with its `$ref` (alone or the one of an `allOf`) followed."""
    ref = part.get("$ref") or next((s["$ref"] for s in part.get("allOf", [])), None)
    if ref is None:
        return part
    return resolved(schema.raw_schema["components"]["schemas"][ref.rpartition("/")[2]])


def body_fields(body: dict[str, Any], place: tuple[str, ...] = ()) -> Iterator[Field]:
    for name, prop in resolved(body).get("properties", {}).items():
        prop = resolved(prop)
        if prop.get("type") == "object":
            yield from body_fields(prop, (*place, name))
        else:
            yield Field("body", (*place, name)[0], (*place, name), prop)


def fields_of(path: str, operation: dict[str, Any]) -> list[Field]:
    """Every field of an operation: its parameters, its body's properties (nested ones too)
    and the headers the API reads."""
    item = schema.raw_schema["paths"][path]
    found = [Field(p["in"], p["name"], (p["name"],), p["schema"])
             for p in (*operation.get("parameters", []), *item.get("parameters", []))]
    body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if body is not None:
        found.extend(body_fields(body["schema"]))
    if "health" not in operation.get("tags", []):
        found.extend(Field("header", name, (name,), {"type": "string"}) for name in READ_HEADERS)
    return found


def spoiled_values(field: Field) -> list[tuple[str, Any]]:
    """(what, value) pairs to send in the field: `refused` ones every operation refuses naming
    the field; `past` its documented bounds, refused (by a rule, maybe); `bound` the bounds,
    which may be refused but never fail."""
    values: list[tuple[str, Any]] = [("refused", SURROGATE)]
    if field.kind in ("integer", "number"):
        values += [("refused", value) for value in PAST_64_BITS]
        bounds = field.schema.get("items", field.schema)
        for name, step in (("maximum", 1), ("minimum", -1)):
            if name in bounds:
                values += [("past", bounds[name] + step), ("bound", bounds[name])]
    return values


def send(world: World, role: str, method: str, path: str, operation: dict[str, Any],
         field: Field, value: Any) -> Any:
    """The operation's request, valid but for `value` in `field`: real ids in the path, the
    required query parameters, the documented example body, the role's key."""
    text = value if isinstance(value, str) else str(value)
    url = filled(path, world.real)
    environ: dict[str, str] = {}
    query = [f"{p['name']}={REQUIRED_QUERY[p['name']]}" for p in operation.get("parameters", [])
             if p["in"] == "query" and p.get("required")]
    headers = dict(world.headers[role])
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
    data = json.loads(json.dumps(body.get("example", {}))) if body else None
    if field.where == "path":
        raw = SURROGATE_BYTES if text == SURROGATE else text
        environ["PATH_INFO"] = re.sub(r"{([^}]+)}", lambda m: raw if m.group(1) == field.name
                                      else str(world.real[m.group(1)][0]), path)
    elif field.where == "query":
        query = [q for q in query if not q.startswith(f"{field.name}=")]
        query.append(f"{field.name}={SURROGATE_BYTES if text == SURROGATE else text}")
    elif field.where == "header":
        headers[field.name] = f"Bearer {value}" if field.name == "Authorization" else text
    else:
        holder = data
        for key in field.place[:-1]:
            holder = holder.setdefault(key, {})
        holder[field.place[-1]] = value
    environ["QUERY_STRING"] = "&".join(query)
    return world.client.open(url, method=method, headers=headers, environ_overrides=environ,
                             **({"data": json.dumps(data), "content_type": "application/json"}
                                if data is not None else {}))


def named(field: Field, value: Any, status: int, body: dict[str, Any]) -> bool:
    """Whether a refusal is 422 naming the field; or, in a path, 404 for a value no route has
    there (a UUID's place, or a whole number's given anything but digits: no route matched; or
    one the parameter's documented pattern does not match, as a tile's path)."""
    if status == 422 and body.get("field") == field.name:
        return True
    digits = isinstance(value, int) and value >= 0
    pattern = field.schema.get("pattern")
    no_route = (field.schema.get("format") == "uuid" or field.kind == "integer" and not digits
                or pattern is not None and re.search(pattern, str(value)) is None)
    return field.where == "path" and status == 404 and no_route


@pytest.mark.parametrize("store", ["memory", "sqlite"], indirect=True)
@pytest.mark.parametrize("role", ROLES)
def test_every_field_refuses_a_lone_surrogate_and_numbers_past_64_bits_naming_it(
        make_app: Any, role: str) -> None:
    """Every field of every operation, as every role, refuses a lone surrogate and a whole
    number past 64 bits with 422 naming it (in a path, 404 for a value no route has there), and
    records nothing; past its documented bounds it is refused (by a rule or for the role, maybe),
    and at them no request fails. On memory and on SQLite, whose driver cannot take a number
    past 64 bits at all (PostgreSQL's compares it as a `numeric`; test_input_patterns.py runs
    the statement that once failed on every store)."""
    world = build_world(make_app(rate_limit=0))
    position = world.app.extensions["reddog_ledger"].recorder.max_notification_id
    failures, sent = [], 0
    for method, path, operation in operations():
        for field in fields_of(path, operation):
            for what, value in spoiled_values(field):
                before = position()
                response = send(world, role, method, path, operation, field, value)
                sent += 1
                status, body = response.status_code, response.get_json(silent=True) or {}
                where = (method, path, field.where, field.place, value, status, body)
                if status >= 500 or (status >= 400 and response.mimetype != PROBLEM):
                    failures.append(("failed", *where))
                elif what == "bound":
                    continue
                elif status < 400 or position() != before:
                    failures.append(("not refused, or recorded", *where))
                elif what == "refused" and not named(field, value, status, body):
                    failures.append(("not refused naming the field", *where))
    assert sent > 500, sent
    assert not failures, "\n".join(map(repr, failures[:20])) + f"\n({len(failures)} in all)"
