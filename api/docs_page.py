"""The API docs page (`/docs`, Swagger UI as flask-smorest writes it) made to meet WCAG 2.2 A and
AA as the other pages do: its language said (`<html lang="en">`), and a stylesheet and a script
of the project's after Swagger UI's (`api/static/docs/`): colours whose text has enough
contrast, and operation buttons named by what they show. Nothing inline is added, so the page's
policy still allows only its one inline script (`api.headers`)."""

from __future__ import annotations

STYLESHEET = b'<link href="/static/docs/a11y.css" rel="stylesheet" type="text/css"/>'
SCRIPT = b'<script src="/static/docs/a11y.js"></script>'


def accessible(page: bytes) -> bytes:
    """The docs page with its language, and the project's stylesheet and script put in."""
    if b"<html>" in page:
        page = page.replace(b"<html>", b'<html lang="en">', 1)
    page = page.replace(b"</head>", STYLESHEET + b"\n</head>", 1)
    return page.replace(b"</body>", SCRIPT + b"\n</body>", 1)
