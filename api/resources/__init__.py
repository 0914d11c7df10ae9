"""One blueprint per resource: wallets, tables, deals, the audit reads and keys.

The problem answers each operation may give are documented here, once, as
`application/problem+json` with the `Problem` schema (what `api.errors` answers).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from flask_smorest import Blueprint

from api import answers
from api.auth import IDEMPOTENCY_HEADER, principal
from api.errors import PROBLEM
from api.inputs import check_headers, check_path
from api.schemas import Args, ProblemSchema
from ledger.core import validation

IDEMPOTENCY_PARAMETER = {
    "in": "header",
    "name": IDEMPOTENCY_HEADER,
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 255,
               "pattern": validation.IDEMPOTENCY_KEY.anchored},
    "description": "A retry with the same key returns the first answer and records nothing new "
                   f"({validation.IDEMPOTENCY_KEY.explain}).",
}

#: The problem answers of every operation (each is authenticated), and when each is given.
PROBLEMS: dict[int, str] = {
    401: "No API key, or an unknown, revoked or expired one",
    403: "The key's role, or its player, may not do this",
    404: "No such wallet, table, deal or player",
    409: "The Idempotency-Key was used for another request, or the command lost its races",
    422: "A game rule refused it (`rule` names it), or a value has the wrong shape (`field`)",
    429: "Too many requests from this key, or every audit read slot is taken: try again after "
         "`Retry-After` seconds",
}
#: Operations that read a JSON body also answer these.
BODY_PROBLEMS: dict[int, str] = {
    400: "The body is not JSON, or is nested too deeply (`field` is `body`)",
    413: "The body is larger than the service reads (1 MiB)",
}
RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again",
        "required": True,
        "schema": {"type": "integer", "minimum": 0},
    },
}


def location(what: str) -> dict[str, Any]:
    """The `Location` header of a 201, documented: where `what` is read."""
    return {"Location": {"description": what, "required": True, "schema": {"type": "string"}}}


@functools.cache
def _made(schema: type) -> Any:
    """The one instance of a schema class that every operation reading, answering or
    documenting it shares (a schema is a description: nothing changes it once made)."""
    return schema()


class ResourceBlueprint(Blueprint):
    """A blueprint of API operations: each reads its body and query string through an `Args`
    schema, and its path and the headers it reads are held to the same limits (`api.inputs`);
    those that read a JSON body document the problems of a body; those that answer a deal, a
    table or a wallet have it written by orjson (`api.answers`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.url_value_preprocessor(check_path)
        self.before_request(check_headers)

    def arguments(self, schema: Any, *, location: str = "json", **kwargs: Any) -> Callable:
        # One instance for every request: given a class, webargs makes an instance of it (and
        # of each nested schema) per request, a tenth of a millisecond each time.
        if isinstance(schema, type):
            schema = _made(schema)
        if not isinstance(schema, Args):
            raise TypeError(f"{type(schema).__name__} reads a request: make it an api.schemas.Args")
        parse = super().arguments(schema, location=location, **kwargs)
        if location != "json":
            return parse

        def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
            view = parse(view)
            for status, description in BODY_PROBLEMS.items():
                view = self.alt_response(status, schema=ProblemSchema, content_type=PROBLEM,
                                         description=description)(view)
            return view

        return decorate

    def alt_response(self, status_code: Any, *args: Any, schema: Any = None,
                     **kwargs: Any) -> Callable:
        """Document another answer as flask-smorest does, on the view itself rather than on a
        wrapper of it: a view documents up to nine (`problems`, `BODY_PROBLEMS`), and a wrapper
        is a call through `ensure_sync` for each, on every request. A schema given as a class
        is made once for every answer that documents it (flask-smorest would make one per
        answer: some 400 problem schemas at each start)."""
        if isinstance(schema, type):
            schema = _made(schema)
        document = super().alt_response(status_code, *args, schema=schema, **kwargs)

        def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
            view._apidoc = document(view)._apidoc  # type: ignore[attr-defined]
            return view

        return decorate

    def response(self, status_code: Any, schema: Any = None, **kwargs: Any) -> Callable:
        if isinstance(schema, type):
            schema = _made(schema)
        document = super().response(status_code, schema, **kwargs)
        if schema is None or not answers.is_fast(schema):
            return document
        dump = answers.fast(schema)
        return lambda view: document(dump(view))


def resource_blueprint(name: str, import_name: str, url_prefix: str, description: str) -> Blueprint:
    """A blueprint whose every request is authenticated before anything else is looked at."""
    blp = ResourceBlueprint(name, import_name, url_prefix=url_prefix, description=description)
    blp.before_request(lambda: principal() and None)
    return blp


def command(blp: Blueprint) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Document a POST: the Idempotency-Key header and the problem answers."""

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        view = blp.doc(parameters=[IDEMPOTENCY_PARAMETER])(view)
        return problems(blp)(view)

    return decorate


def problems(blp: Blueprint) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Document the problem+json answers every endpoint may give: 429 is the API key's rate
    limit (or, on audit reads, busy slots), with Retry-After."""

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        for status, description in PROBLEMS.items():
            view = blp.alt_response(
                status, schema=ProblemSchema, content_type=PROBLEM, description=description,
                headers=RETRY_AFTER if status == 429 else None,
            )(view)
        return view

    return decorate
