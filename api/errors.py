"""Every error leaves as `application/problem+json` (RFC 9457), mapped here and nowhere else."""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, json
from werkzeug.exceptions import HTTPException

from api.observe import request_id
from ledger.core.errors import (
    Busy,
    Conflict,
    Forbidden,
    InvalidInput,
    LedgerError,
    NotFound,
    RateLimited,
    RuleViolation,
    Unauthenticated,
    Unavailable,
)

log = logging.getLogger(__name__)
PROBLEM = "application/problem+json"
#: What a problem names as its `field` when the body as a whole is wrong (not JSON, not an object).
BODY = "body"

#: Ledger error → (HTTP status, problem type, title).
STATUS: list[tuple[type[LedgerError], int, str, str]] = [
    (RuleViolation, 422, "rule-violation", "A game rule refused the command"),
    (InvalidInput, 422, "invalid-input", "Unprocessable Entity"),
    (NotFound, 404, "not-found", "Not found"),
    (Conflict, 409, "conflict", "Conflict"),
    (Forbidden, 403, "forbidden", "Forbidden"),
    (Unauthenticated, 401, "unauthenticated", "Authentication required"),
    (RateLimited, 429, "rate-limited", "Too many requests"),
    (Busy, 429, "busy", "Audit reads are busy"),
    (Unavailable, 503, "unavailable", "Service unavailable"),
]


def problem(status: int, kind: str, title: str, detail: str, **extra: Any) -> Response:
    """Build a problem+json response."""
    body = {"type": f"/problems/{kind}", "title": title, "status": status, "detail": detail}
    body.update({k: v for k, v in extra.items() if v is not None})
    if (rid := request_id()) is not None:
        body["request_id"] = rid
    response = Response(json.dumps(body), status=status, mimetype=PROBLEM)
    if status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="reddog-ledger"'
    return response


def ledger_error(error: LedgerError) -> Response:
    for kind, status, slug, title in STATUS:
        if isinstance(error, kind):
            response = problem(status, slug, title, error.detail, field=error.field,
                               rule=getattr(error, "rule", None),
                               errors={error.field: [error.detail]} if error.field else None)
            retry_after = getattr(error, "retry_after", None)
            if retry_after is not None:
                response.headers["Retry-After"] = str(retry_after)
            return response
    return problem(400, "bad-request", "Bad request", error.detail, field=error.field)


def http_error(error: HTTPException) -> Response:
    status = error.code or 500
    data = getattr(error, "data", None) or {}
    messages = data.get("messages") or {}
    errors: dict[str, Any] = {}
    for location, location_messages in messages.items():
        whole = BODY if location == "json" else location
        if isinstance(location_messages, dict):
            # marshmallow files errors of the whole (a JSON array or string, a name that is not
            # text) under `_schema`.
            errors.update({whole if name == "_schema" else name: message
                           for name, message in location_messages.items()})
        elif location_messages:
            errors[whole] = location_messages
    field = next(iter(errors), None)
    detail = error.description or error.name
    if errors:
        detail = "; ".join(f"{name}: {_flatten(msg)}" for name, msg in errors.items())
    kind = "invalid-input" if status == 422 else error.name.lower().replace(" ", "-")
    response = problem(status, kind, error.name, detail, field=field, errors=errors or None)
    # Keep what werkzeug says in headers (`Allow` on a 405) and what an `abort` passed along; the
    # body and its type are ours.
    headers = [*error.get_headers(), *(data.get("headers") or {}).items()]
    for name, value in headers:
        if name.lower() not in ("content-type", "content-length"):
            response.headers[name] = value
    return response


def too_deep(error: RecursionError) -> Response:
    detail = "the request body is nested too deeply"
    return problem(400, "bad-request", "Bad Request", detail, field=BODY, errors={BODY: [detail]})


def unexpected_error(error: Exception) -> Response:
    log.exception("unexpected error", exc_info=error)
    return problem(500, "internal", "Internal Server Error", "the server failed; nothing was recorded")


def _flatten(message: Any) -> str:
    if isinstance(message, dict):
        return "; ".join(f"{k}: {_flatten(v)}" for k, v in message.items())
    if isinstance(message, list):
        return " ".join(_flatten(m) for m in message)
    return str(message)


def init_app(app: Flask) -> None:
    """Register the handlers that turn every error into problem+json."""
    app.register_error_handler(LedgerError, ledger_error)
    app.register_error_handler(HTTPException, http_error)
    app.register_error_handler(RecursionError, too_deep)
    app.register_error_handler(Exception, unexpected_error)
