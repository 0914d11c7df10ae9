"""The headers every answer carries: `X-Content-Type-Options: nosniff` on each one the app
writes (JSON, problem+json, pages, scripts, CSS, the documents, `/metrics`) and on those the
server writes itself (`api.edge`), so no browser reads an answer as another type than it says;
and the pages' Content-Security-Policy on `/docs`, the Swagger UI page (made accessible by
`api.docs_page` first), whose one inline script is allowed by its hash and nothing else inline.
"""

from __future__ import annotations

import base64
import hashlib
import re

from flask import Flask, Response, request

from api import docs_page

NOSNIFF = ("X-Content-Type-Options", "nosniff")
#: No script, style or connection from anywhere but this server; no page may frame them.
POLICY = ("default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
          "form-action 'self'; frame-ancestors 'none'")
#: Every page's headers (`api.pages`, `api.problem_pages`, `/docs`): the policy; no address (a
#: sign-in link's fragment never is one, but a table id is) leaves in a Referer.
PAGE_HEADERS = {
    "Content-Security-Policy": POLICY,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}
#: flask-smorest's endpoint for the Swagger UI page (`OPENAPI_SWAGGER_UI_PATH`).
DOCS_ENDPOINT = "api-docs.openapi_swagger_ui"
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def nosniff(response: Response) -> Response:
    """The answer with `X-Content-Type-Options: nosniff`."""
    response.headers.setdefault(*NOSNIFF)
    return response


def docs_policy(page: bytes) -> str:
    """The pages' policy, its scripts also allowed each inline script of `page` by its SHA-256
    (the Swagger UI page starts the bundle with one: its text is flask-smorest's template and
    the app's settings, the same on every answer)."""
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(script).digest()).decode()}'"
                      for script in _INLINE_SCRIPT.findall(page))
    return f"{POLICY}; script-src 'self' {hashes}".rstrip()


def init_app(app: Flask) -> None:
    """Put the headers on every answer of `app`."""

    @app.after_request
    def headers(response: Response) -> Response:
        if request.endpoint == DOCS_ENDPOINT:
            response.set_data(docs_page.accessible(response.get_data()))
            response.headers.update(PAGE_HEADERS)
            response.headers["Content-Security-Policy"] = docs_policy(response.get_data())
        return nosniff(response)
