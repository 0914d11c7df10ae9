"""One blueprint per resource: wallets, tables, deals, the audit reads and keys."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask_smorest import Blueprint

from api.auth import IDEMPOTENCY_HEADER, principal
from api.schemas import ProblemSchema

IDEMPOTENCY_PARAMETER = {
    "in": "header",
    "name": IDEMPOTENCY_HEADER,
    "required": False,
    "schema": {"type": "string", "maxLength": 255},
    "description": "A retry with the same key returns the first answer and records nothing new.",
}


def resource_blueprint(name: str, import_name: str, url_prefix: str, description: str) -> Blueprint:
    """A blueprint whose every request is authenticated before anything else is looked at."""
    blp = Blueprint(name, import_name, url_prefix=url_prefix, description=description)
    blp.before_request(lambda: principal() and None)
    return blp


def command(blp: Blueprint) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Document a POST: the Idempotency-Key header and the problem answers."""

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        view = blp.doc(parameters=[IDEMPOTENCY_PARAMETER])(view)
        return problems(blp)(view)

    return decorate


RETRY_AFTER = {"Retry-After": {"description": "Whole seconds to wait before trying again",
                                "schema": {"type": "integer", "minimum": 1}}}


def problems(blp: Blueprint) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Document the problem+json answers every endpoint may give: 429 is the API key's rate
    limit (or, on audit reads, busy slots), with Retry-After."""

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        for status in (401, 403, 404, 409, 422):
            view = blp.alt_response(
                status, schema=ProblemSchema, content_type="application/problem+json"
            )(view)
        return blp.alt_response(429, schema=ProblemSchema, content_type="application/problem+json",
                                headers=RETRY_AFTER)(view)

    return decorate
