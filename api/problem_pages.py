"""The pages a problem's `type` names: `/problems/<kind>` explains each kind of error a caller
can get, what it means and what to do about it; `/problems` lists them. RFC 9457 asks that a
problem type be a URI a person can read."""

from __future__ import annotations

from html import escape
from typing import Any

from flask import Blueprint, Response, abort

from api.headers import PAGE_HEADERS

#: kind → (status, title, what it means, what to do).
KINDS: dict[str, tuple[int, str, str, str]] = {
    "invalid-input": (422, "Unprocessable Entity",
                      ("A value has the wrong shape or is out of range. `field` names it and "
                      "`errors` lists each field's messages."),
                      "Correct the named field and send the request again. Nothing was recorded."),
    "rule-violation": (422, "A game rule refused the command",
                       ("The command is well formed but a rule of the game forbids it now: a bet "
                       "over the limit or the balance, an action out of turn, a deal not in the "
                       "phase that allows it. `rule` names the rule's ID (see the rules catalogue "
                       "in the project's docs)."),
                       ("Read the table or deal again for its legal actions, then send one of "
                       "them. Nothing was recorded.")),
    "bad-request": (400, "Bad Request",
                    ("The body could not be read: it is not JSON, or it is nested too deeply. "
                    "Or the server could not read the request itself: a NUL, a bare CR or LF "
                    "or another character HTTP forbids in a header, a bad chunk of a chunked "
                    "body, a transfer coding other than `chunked`; the connection is then "
                    "closed."),
                    ("Send a JSON object with `Content-Type: application/json`, in a request "
                    "HTTP/1.1 allows.")),
    "request-timeout": (408, "Request Timeout",
                        ("The request did not come in time: its head within the server's "
                        "`REDDOG_HEAD_SECONDS` (10 s unless set) of its first byte, or its body "
                        "within `REDDOG_BODY_SECONDS` (30 s) of its head. The connection is "
                        "closed; nothing was recorded."),
                        "Send the request again, whole, on a new connection."),
    "unauthenticated": (401, "Authentication required",
                        ("No API key was sent, or it is unknown, revoked or expired. The answer "
                        "carries `WWW-Authenticate: Bearer`."),
                        ("Send `Authorization: Bearer <key>`; ask an operator for a new key if "
                        "yours was revoked or has expired.")),
    "forbidden": (403, "Forbidden",
                  ("The key's role may not do this, or it is a player's key asking about another "
                  "player's wallet, deal or records."),
                  "Use a key of a role that may (operator, auditor) or the player's own key."),
    "not-found": (404, "Not found",
                  "No such wallet, table, deal, dispute, key or player; or no such address.",
                  "Check the id (a UUID from an earlier answer) and the path."),
    "method-not-allowed": (405, "Method Not Allowed",
                           ("The path exists but not with this method. The `Allow` header lists "
                           "the methods it has."),
                           "Use one of the methods in `Allow`."),
    "conflict": (409, "Conflict",
                 ("The Idempotency-Key was already used for a different request, the thing asked "
                 "for already happened (a dispute already opened, a key already revoked), or "
                 "the command kept losing races with concurrent commands."),
                 ("For a lost race, read the state again and retry with a new Idempotency-Key; "
                 "for a reused key, use a fresh one per distinct request.")),
    "request-entity-too-large": (413, "Request Entity Too Large",
                                 ("The body is larger than the service reads (1 MiB), by its "
                                 "`Content-Length` or, sent chunked, as it comes."),
                                 "Send a smaller body; no command needs more."),
    "request-uri-too-long": (414, "Request URI Too Long",
                             ("The request line (method, address and query, version) is longer "
                             "than 8 KiB. The connection is closed."),
                             "Send a shorter address: no query of the API needs one this long."),
    "request-header-fields-too-large": (431, "Request Header Fields Too Large",
                                        ("The request's header fields are larger than 64 KiB "
                                        "in all. The connection is closed."),
                                        "Send fewer or smaller headers."),
    "rate-limited": (429, "Too many requests",
                     ("This key sent more requests than its rate allows, or a key without write "
                     "rights (an auditor's) asked to record more verification runs than it may "
                     "(10 a minute, 5 at once). Nothing was recorded."),
                     ("Wait the number of seconds in `Retry-After`, then continue at a lower "
                     "rate.")),
    "busy": (429, "Audit reads are busy",
             ("Every audit read slot of this server is taken and its queue is full, so play is "
             "never starved by audit reads."),
             "Wait the number of seconds in `Retry-After` and ask again."),
    "unavailable": (503, "Service unavailable",
                    ("What the command needs before it may record anything could not be reached: "
                    "the store that keeps the limit on verification runs of keys without write "
                    "rights, which refuses rather than lets a run through unchecked. Nothing "
                    "was recorded."),
                    "Wait the number of seconds in `Retry-After` and send the request again."),
    "internal": (500, "Internal Server Error",
                 "The server failed. Nothing was recorded: a command is all or nothing.",
                 ("Try again; if it repeats, give the operator the `request_id` of the answer, "
                 "which finds its line in the server's log.")),
}

blp = Blueprint("problem_pages", __name__)


def _html(title: str, body: str) -> Response:
    page = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{escape(title)} · Red Dog Ledger</title>'
            f'<link rel="stylesheet" href="/static/pages/common.css"></head><body>'
            f'<header class="top"><div><span class="brand">Red Dog Ledger</span></div></header>'
            f"<main>{body}</main></body></html>")
    response = Response(page, mimetype="text/html")
    response.headers.update(PAGE_HEADERS)
    return response


def _code(text: str) -> str:
    """Backticks as code, the rest escaped."""
    parts = escape(text).split("`")
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))


@blp.get("/problems")
def index() -> Any:
    """Every kind of problem the API answers."""
    rows = "".join(f'<tr><td><a href="/problems/{kind}">{kind}</a></td><td class="num">{status}'
                   f"</td><td>{escape(title)}</td></tr>"
                   for kind, (status, title, _, _) in KINDS.items())
    return _html("Problems", "<h1>Problems the API answers</h1><p>Every error is "
                 "<code>application/problem+json</code> whose <code>type</code> is one of these "
                 "pages.</p><div class=\"scroll\"><table><tr><th>Type</th><th class=\"num\">"
                 f"Status</th><th>Title</th></tr>{rows}</table></div>")


@blp.get("/problems/<kind>")
def explain(kind: str) -> Any:
    """What one kind of problem means and what to do about it."""
    if kind not in KINDS:
        abort(404)
    status, title, meaning, remedy = KINDS[kind]
    return _html(title, f"<h1>{escape(title)}</h1><p>HTTP status <strong>{status}</strong>, "
                 f"type <code>/problems/{kind}</code>.</p><h2>What it means</h2>"
                 f"<p>{_code(meaning)}</p><h2>What to do</h2><p>{_code(remedy)}</p>"
                 '<p><a href="/problems">Every kind of problem</a></p>')
