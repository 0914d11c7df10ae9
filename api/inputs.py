"""What the API reads besides its schemas, held to the same two limits (`ledger.core.validation`):
every string is text UTF-8 can encode, every whole number one the stores hold.

- The query string: werkzeug decodes its bytes strictly, so bytes that are not UTF-8 failed the
  request where it was first read. They are read with `surrogateescape` instead, as lone
  surrogates, which `api.schemas.Args` refuses naming their field (percent-encoded bytes that
  are not UTF-8 stay percent-encoded text, as werkzeug leaves them).
- A path's values: a number past what the stores hold is refused naming its parameter (422).
  Path text is text already: werkzeug replaces bytes that are not UTF-8 as it decodes a path.
- The headers the API reads (`Authorization`, `Idempotency-Key`, `X-Request-Id`): one that is
  not text is refused naming it (422). A server reads headers as Latin-1, which always is text,
  but a caller in the same process (a WSGI test client) may pass any string.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from flask import Request, request
from werkzeug.datastructures import MultiDict
from werkzeug.utils import cached_property

from api.auth import AUTHORIZATION, IDEMPOTENCY_HEADER
from api.observe import HEADER as REQUEST_ID_HEADER
from ledger.core import validation

#: Every header the API reads.
HEADERS = (AUTHORIZATION, IDEMPOTENCY_HEADER, REQUEST_ID_HEADER)


class LedgerRequest(Request):
    """A request whose query string's bytes that are not UTF-8 become lone surrogates."""

    @cached_property
    def args(self) -> MultiDict[str, str]:
        return self.parameter_storage_class(parse_qsl(
            self.query_string.decode("utf-8", "surrogateescape"), keep_blank_values=True,
            errors="werkzeug.url_quote"))


def check_path(_endpoint: str | None, values: dict[str, Any] | None) -> None:
    """Refuse a path whose values break the two limits, naming the parameter."""
    for name, value in (values or {}).items():
        if isinstance(value, str):
            validation.check_text(value, name)
        elif isinstance(value, int):
            validation.check_stored(value, name)


def check_headers() -> None:
    """Refuse a request whose headers the API reads are not text, naming the header."""
    for name in HEADERS:
        value = request.headers.get(name)
        if value is not None:
            validation.check_text(value, name)
