"""The audit gate (api/gate.py) holds an audit read's slot for the whole request: reading its
arguments, the view and writing its answer (the schema's dump and the JSON), so that what an
audit read costs after its view returns is also taken in turns, not beside play."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from api.gate import AuditGate
from api.schemas_audit import FeedSchema
from tests.api.conftest import Keys
from tests.api.helpers import assert_problem


def test_an_audit_read_holds_its_slot_while_its_answer_is_written(
        app: Flask, client: FlaskClient, keys: Keys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(app.extensions, "reddog_audit_gate", AuditGate(1, 0, 0.5))
    writing, written = threading.Event(), threading.Event()
    dump = FeedSchema.dump

    def slow_dump(schema: Any, *args: Any, **kwargs: Any) -> Any:
        if not writing.is_set():  # the first read's answer: held until the test lets it go
            writing.set()
            assert written.wait(30)
        return dump(schema, *args, **kwargs)

    monkeypatch.setattr(FeedSchema, "dump", slow_dump)
    first: dict[str, Any] = {}

    def read() -> None:
        answer = app.test_client().get("/events", headers=keys.auditor)
        first.update(status=answer.status_code, body=answer.get_json())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        assert writing.wait(30), "the first read never reached its answer"
        refused = client.get("/events", headers=keys.auditor)  # its slot is still taken
        assert_problem(refused, 429)
        assert refused.get_json()["type"] == "/problems/busy"
    finally:
        written.set()
        reader.join(30)
    assert first["status"] == 200, first
    assert "entries" in first["body"]
    assert client.get("/events", headers=keys.auditor).status_code == 200  # the slot is free again


def test_every_request_but_an_audit_read_tells_the_gate_play_goes_on(
        app: Flask, client: FlaskClient, keys: Keys, alice_table: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Its start and its end (the share of time applies while play goes on, api/gate.py)."""
    audit = AuditGate(1, 8, 2.0, share=0.25)
    monkeypatch.setitem(app.extensions, "reddog_audit_gate", audit)
    told: list[str] = []
    monkeypatch.setattr(audit, "played", lambda: told.append("played"))
    for path, key in ((f"/tables/{alice_table['id']}", keys.alice), ("/health", None),
                      ("/no-such-page", None)):
        client.get(path, headers=key or {})
        assert told == ["played", "played"], path
        told.clear()
    for path in ("/events", "/verification", f"/deals?table={alice_table['id']}"):
        assert client.get(path, headers=keys.auditor).status_code == 200, path
        assert told == [], path
