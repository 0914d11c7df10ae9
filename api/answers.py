"""The hot answers (a deal, a table, a wallet: every command of play and its reads) written by
orjson from the ledger's answer, as the response schema would have dumped it.

marshmallow still validates every request and still writes the OpenAPI document from the same
schemas; only the dump of these answers is done here, a few microseconds instead of a tenth of
a millisecond. The ledger's answers are JSON-ready already (`ledger.app.views`: text, numbers,
booleans, None, and lists and dicts of them), so dumping them with a schema comes down to what
a `Plan` does, once compiled from the schema: keep the fields the schema declares, in its order
(anything else in an answer is left out, as marshmallow leaves it out), apply the same to nested
schemas, and run the schema's own post-dump hooks (the `links`). The API tests check every such
answer they get against marshmallow's own dump of it (`tests/api/conftest.py`), so the two
cannot drift apart.

The bytes are compact JSON with a final newline, as Flask writes; text is UTF-8 rather than
`\\u` escapes (the same JSON values).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any

import orjson
from flask import Response
from marshmallow import Schema, fields
from marshmallow.decorators import POST_DUMP

from api.schemas import DealSchema, TableSchema, WalletSchema

#: The response schemas whose answers are dumped here (`fast`), not by marshmallow.
FAST = (DealSchema, TableSchema, WalletSchema)
MIMETYPE = "application/json"
_OPTIONS = orjson.OPT_APPEND_NEWLINE


class Plan:
    """A schema's dump of a JSON-ready dict: its declared fields present in the dict, in the
    schema's order, nested schemas likewise, then its post-dump hooks."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.fields: list[tuple[str, str, Callable[[Any], Any] | None]] = []
        for name, field in schema.dump_fields.items():
            key = field.data_key if field.data_key is not None else name
            attribute = field.attribute or name
            self.fields.append((attribute, key, _nested(field)))
        self.hooked = bool(schema._hooks[POST_DUMP])  # marshmallow's registry of its hooks

    def __call__(self, answer: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for attribute, key, nested in self.fields:
            if attribute in answer:
                value = answer[attribute]
                out[key] = value if nested is None or value is None else nested(value)
        if self.hooked:
            out = self.schema._invoke_dump_processors(POST_DUMP, out, many=False,
                                                      original_data=answer)
        return out


def _nested(field: fields.Field) -> Callable[[Any], Any] | None:
    """How a field's value is dumped when it is not taken as it is: a nested schema's plan, or
    a list of them."""
    if isinstance(field, fields.Nested):
        plan = plan_of(field.schema)
        if field.many:
            return lambda values: [plan(value) for value in values]
        return plan
    if isinstance(field, fields.List) and isinstance(field.inner, fields.Nested):
        item = plan_of(field.inner.schema)
        return lambda values: [None if value is None else item(value) for value in values]
    return None


_PLANS: dict[type[Schema], Plan] = {}


def plan_of(schema: Schema | type[Schema]) -> Plan:
    """The plan of a schema (one per schema class: answers dump with the class's fields)."""
    kind = schema if isinstance(schema, type) else type(schema)
    plan = _PLANS.get(kind)
    if plan is None:
        plan = _PLANS[kind] = Plan(schema() if isinstance(schema, type) else schema)
    return plan


def dump(schema: Schema | type[Schema], answer: dict[str, Any]) -> dict[str, Any]:
    """The answer as the schema dumps it (`Plan`)."""
    return plan_of(schema)(answer)


def encode(dumped: Any, *options: int) -> bytes:
    """Compact JSON of a dumped answer, with a final newline (`options`: orjson's, added). What
    orjson refuses (an integer past 64 bits) is written by `json` instead, never a 500."""
    flags = _OPTIONS
    for option in options:
        flags |= option
    try:
        return orjson.dumps(dumped, option=flags)
    except orjson.JSONEncodeError:
        text = json.dumps(dumped, separators=(",", ":"), ensure_ascii=False, default=str,
                          sort_keys=bool(flags & orjson.OPT_SORT_KEYS))
        return (text + "\n").encode()


def respond(dumped: Any) -> Response:
    """A 200 answer holding a dumped answer (the caller sets another status or headers)."""
    return Response(encode(dumped), mimetype=MIMETYPE)


def fast(schema: Schema | type[Schema]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wrap a view answering `schema` so that its answer leaves it as a Response written here;
    flask-smorest's response decorator above it passes a Response through, with the view's
    status and headers."""
    plan = plan_of(schema)

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(view)
        def answered(*args: Any, **kwargs: Any) -> Any:
            result = view(*args, **kwargs)
            if isinstance(result, tuple):
                body, *rest = result
                if isinstance(body, dict):
                    return (respond(plan(body)), *rest)
                return result
            if isinstance(result, dict):
                return respond(plan(result))
            return result

        return answered

    return decorate


def is_fast(schema: Any) -> bool:
    """Whether answers of this response schema are dumped here: one of `FAST`, one object
    (not `many`)."""
    if isinstance(schema, type):
        return issubclass(schema, FAST)
    return isinstance(schema, FAST) and not schema.many
