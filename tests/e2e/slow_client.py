"""Slow clients, run as their own process: `python -m tests.e2e.slow_client SPEC.json`.

SPEC (JSON) names the server (`host`, `port`), how many connections to open (`connections`),
what they send slowly (`kind`), a `seed`, how long to keep at it at most (`seconds`) and where
to write what happened (`records`). Each connection sends its first piece as it opens, then one
more piece every 2 to 3 seconds (its own period, from the seed), and never finishes its request:

- `head`: the request line, then one header line a period, never the blank line that ends a head;
- `blank`: a blank line a period, never a request line (blank lines before a request are allowed);
- `body`: a whole head announcing a 1,000-byte JSON body, then one byte of it a period.

The client says `ready` on stdout once every connection has sent its first piece, and runs until
the server has closed every connection (or `seconds` passed). It writes one JSON object: per
connection, when its first byte went and when the server closed it (this process's monotonic
clock, seconds), the pieces it sent, and the answer it read (latin-1), or the error that ended
it. The trickle follows each connection's own schedule; nothing here waits for the server but
`select` on the connections.
"""

from __future__ import annotations

import json
import random
import selectors
import socket
import sys
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

BODY_BYTES = 1000


@dataclass
class Slow:
    """One slow connection and what happened to it."""

    period: float
    first_byte: float = 0.0
    due: float = 0.0
    sent: int = 0
    closed: float | None = None
    answer: str = ""
    error: str | None = None
    sock: socket.socket | None = field(default=None, repr=False)

    def record(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "sock"}


def pieces(kind: str, host: str) -> tuple[bytes, bytes]:
    """The first piece a connection sends and each one after it."""
    if kind == "head":
        return f"POST /wallets HTTP/1.1\r\nHost: {host}\r\n".encode(), b"X-Slow: still coming\r\n"
    if kind == "blank":
        return b"\r\n", b"\r\n"
    head = (f"POST /wallets HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {BODY_BYTES}\r\n\r\n{{")
    return head.encode(), b" "


def parse_answer(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """An HTTP answer read whole: (status, headers by lower-case name, body)."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


def run(spec: dict[str, Any]) -> list[Slow]:
    rng = random.Random(spec["seed"])
    first, each = pieces(spec["kind"], spec["host"])
    selector = selectors.DefaultSelector()
    slow = []
    for _ in range(spec["connections"]):
        conn = Slow(period=rng.uniform(2.0, 3.0))
        conn.sock = socket.create_connection((spec["host"], spec["port"]), timeout=10)
        conn.sock.sendall(first)
        conn.first_byte = time.monotonic()
        conn.due, conn.sent = conn.first_byte + conn.period, 1
        conn.sock.setblocking(False)
        selector.register(conn.sock, selectors.EVENT_READ, conn)
        slow.append(conn)
    print("ready", flush=True)
    end = time.monotonic() + spec["seconds"]
    while (open_ := [c for c in slow if c.closed is None]) and time.monotonic() < end:
        wait = max(0.0, min(c.due for c in open_) - time.monotonic())
        for key, _ in selector.select(timeout=min(wait, end - time.monotonic())):
            read(key.data, selector)
        now = time.monotonic()
        for conn in open_:
            if conn.closed is None and conn.due <= now:
                send(conn, each, selector)
    for conn in slow:
        if conn.closed is None:
            conn.sock.close()
    return slow


def read(conn: Slow, selector: selectors.BaseSelector) -> None:
    try:
        data = conn.sock.recv(65536)
    except OSError as error:
        data, conn.error = b"", repr(error)
    conn.answer += data.decode("latin-1")
    if not data:
        finish(conn, selector)


def send(conn: Slow, piece: bytes, selector: selectors.BaseSelector) -> None:
    if conn.answer:  # answered already: a client sends no more of a refused request
        conn.due = float("inf")
        return
    try:
        conn.sock.send(piece)
        conn.sent += 1
        conn.due += conn.period
    except OSError as error:
        conn.error = repr(error)
        finish(conn, selector)


def finish(conn: Slow, selector: selectors.BaseSelector) -> None:
    conn.closed = time.monotonic()
    selector.unregister(conn.sock)
    conn.sock.close()


if __name__ == "__main__":
    config = json.loads(Path(sys.argv[1]).read_text())
    done = run(config)
    Path(config["records"]).write_text(json.dumps([c.record() for c in done]))
