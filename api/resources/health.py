"""Liveness and readiness, asked by a load balancer or an orchestrator with no key; the metrics,
scraped by Prometheus with a staff key (an auditor's, which may write nothing, is the one to
give it)."""

from __future__ import annotations

from typing import Any

from flask import abort, current_app
from flask_smorest import Blueprint
from marshmallow import fields

from api.auth import ledger, principal
from api.resources import problems
from api.schemabase import Schema
from ledger.app.access import Action, require
from ledger.integrity.checkpoints import readiness

blp = Blueprint("health", __name__, url_prefix="",
                description="Liveness and readiness (no key needed); metrics (a staff key)")
NO_KEY: dict[str, Any] = {"security": []}


class LiveSchema(Schema):
    status = fields.String(required=True, metadata={"description": "`ok`: the process answers"})
    store = fields.String(required=True, metadata={"description": "The kind of event store"})


class ProjectionSchema(Schema):
    position = fields.Integer(metadata={"description": "The last position folded"})
    head = fields.Integer(metadata={"description": "The last position of the log"})
    behind = fields.Integer(metadata={"description": "Events not folded yet"})


class ChecksSchema(Schema):
    store = fields.String(metadata={"description": "`ok` or `unreachable`"})
    chain_key = fields.String(metadata={"description": "`ok`, `missing` (the key file is gone "
                                                       "or changed), `wrong`, or `unchecked` "
                                                       "(the store did not answer)"})
    projection = fields.Nested(ProjectionSchema, allow_none=True)


class ReadySchema(Schema):
    ready = fields.Boolean(required=True)
    checks = fields.Nested(ChecksSchema, required=True)
    problems = fields.List(fields.String(), required=True)


def _live() -> dict[str, Any]:
    return {"status": "ok", "store": ledger().store.kind}


@blp.route("/health", methods=["GET"])
@blp.response(200, LiveSchema)
@blp.doc(**NO_KEY)
def health() -> dict[str, Any]:
    """Liveness (the same as `/health/live`)."""
    return _live()


@blp.route("/health/live", methods=["GET"])
@blp.response(200, LiveSchema)
@blp.doc(**NO_KEY)
def live() -> dict[str, Any]:
    """Liveness: the process answers HTTP. It touches nothing else, so a store that is away
    never gets a live process restarted."""
    return _live()


@blp.route("/health/ready", methods=["GET"])
@blp.response(200, ReadySchema, description="Ready: the store answers and the chain key seals it")
@blp.alt_response(503, schema=ReadySchema, description="Not ready: `problems` says why")
@blp.doc(**NO_KEY)
def ready() -> Any:
    """Readiness: the store answers, the chain key this process seals with is still in place and
    is the store's key, and how far the read models are behind (`checks.projection.behind`)."""
    answer = readiness(ledger())
    return answer, 200 if answer["ready"] else 503


@blp.route("/metrics", methods=["GET"])
@blp.response(200, description="Prometheus text exposition format",
              content_type="text/plain")
@problems(blp)
def metrics() -> Any:
    """Request counts and latency by route and status; commands applied, refused and conflicted;
    events appended; how far the read models are behind; chips by kind of account (a sealed
    bet's only once its table shows it). For an operator's or an auditor's key (403 to a
    player's); 404 when turned off (`REDDOG_METRICS=off`)."""
    if ledger().settings.metrics == "off":
        abort(404)
    require(principal(), Action.WATCH)
    return current_app.extensions["reddog_metrics"].exposition()
