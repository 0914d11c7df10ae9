"""The headers every answer needs: nosniff on every kind of answer the app writes, and on what
the server writes itself; the docs page's Content-Security-Policy, which allows its one inline
script by hash and lets no page frame it."""

from __future__ import annotations

import base64
import hashlib
import re

import pytest
from waitress.utilities import (
    BadRequest,
    RequestEntityTooLarge,
    RequestHeaderFieldsTooLarge,
    ServerNotImplemented,
)

from api.edge import RequestTimeout, UriTooLong, problem
from tests.api.helpers import memory_only

pytestmark = memory_only

#: A sample of every kind of answer: (method, path, whether it needs a key, its type).
ANSWERS = {
    "JSON": ("GET", "/health", False, "application/json"),
    "JSON with a key": ("GET", "/me", True, "application/json"),
    "problem+json": ("GET", "/tables/not-a-uuid", False, "application/problem+json"),
    "405 problem+json": ("DELETE", "/tables", False, "application/problem+json"),
    "401 problem+json": ("GET", "/me", False, "application/problem+json"),
    "page": ("GET", "/pages/casino", False, "text/html"),
    "problem page": ("GET", "/problems/not-found", False, "text/html"),
    "script": ("GET", "/static/pages/casino.js", False, "text/javascript"),
    "CSS": ("GET", "/static/pages/common.css", False, "text/css"),
    "OpenAPI document": ("GET", "/openapi.json", False, "application/json"),
    "metrics": ("GET", "/metrics", True, "text/plain"),
    "docs page": ("GET", "/docs", False, "text/html"),
    "docs script": ("GET", "/docs/assets/swagger-ui-bundle.js", False, "text/javascript"),
    "docs CSS": ("GET", "/docs/assets/swagger-ui.css", False, "text/css"),
    "HEAD": ("HEAD", "/health", False, "application/json"),
}


@pytest.mark.parametrize("method, path, keyed, mimetype", ANSWERS.values(), ids=ANSWERS.keys())
def test_every_kind_of_answer_says_nosniff(client, keys, method, path, keyed, mimetype):
    response = client.open(path, method=method, headers=keys.operator if keyed else {})
    assert response.mimetype == mimetype, response.status
    assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("error, status", [
    (UriTooLong("long"), 414), (RequestHeaderFieldsTooLarge("big"), 431),
    (RequestEntityTooLarge("big"), 413), (RequestTimeout("late"), 408),
    (BadRequest("Invalid header"), 400), (ServerNotImplemented("gzip"), 400),
    (BadRequest('Bare CR or LF found in header line "Authorization: Bearer rdl_x"'), 400),
])
def test_what_the_server_refuses_itself_is_a_problem_with_nosniff_and_a_page(
        client, error, status):
    response = problem(error)
    body = response.get_json()
    assert response.status_code == status == body["status"]
    assert response.mimetype == "application/problem+json"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert body["title"] and body["detail"]
    assert "rdl_x" not in body["detail"]  # never the request's own bytes back
    assert client.get(body["type"]).status_code == 200, body["type"]


def test_the_docs_page_may_not_be_framed_and_runs_only_its_own_inline_script(client):
    response = client.get("/docs")
    policy = dict(part.strip().split(" ", 1)
                  for part in response.headers["Content-Security-Policy"].split(";"))
    assert policy["frame-ancestors"] == "'none'" and policy["default-src"] == "'self'"
    assert policy["object-src"] == "'none'" and policy["base-uri"] == "'none'"
    scripts = re.findall(r"<script>(.*?)</script>", response.get_data(as_text=True), re.DOTALL)
    hashes = {f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'"
              for s in scripts}
    assert len(scripts) == 1 and set(policy["script-src"].split()) == {"'self'", *hashes}
    assert "unsafe" not in response.headers["Content-Security-Policy"]
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert "validator.swagger.io" not in response.get_data(as_text=True)
