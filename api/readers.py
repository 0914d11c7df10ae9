"""`reddog serve --workers N`: audit reads served by a process of their own, at a lower CPU
priority than play.

A worker runs Python on one core at a time (its GIL). An audit read there (a feed page, a report,
a statement, a replay) holds that GIL for milliseconds at a stretch, and every time a play
request in the same worker lets go of it (a call into the store, a socket write) the audit read
takes it back, so the play request waits out a switch interval at each of them. The audit gate
(`api.gate`) bounds the share of a worker's time audit reads take, but not that wait: under the
HTTP bench's 16 audit readers, play's p99 was 2.4 to 4.6 times its p99 alone.

So under `--workers N` the master forks a readers process (`start_readers`) before the workers,
as it forks the loops process (`api.production.start_loops`), with its own application over the
store and its own server (`api.edge`) on a Unix socket in a private folder, and lowers its
priority (`READERS_NICE`): the kernel gives play's processes the cores first, and the audit reads
take what is left. A worker passes each audit read it is sent (`Forward`: a GET or HEAD of a view
marked `api.gate.audit_read`, without a body) to that socket as it came, and writes the answer
back as it comes; its thread waits on the socket without the GIL. The readers process
authenticates, rate-limits (its own bucket per key, as a worker's), gates and logs each read as a
worker would; its counters are summed into `/metrics` with the workers'. It never folds, checkpoints
or publishes (the loops process and the workers do), and it writes nothing: audit reads that
record (a verification run, a POST) stay in the workers.

Should the readers process be gone (killed, or not started), or not answer a read within
`FORWARD_SECONDS`, the worker serves the read itself, as it did before; each worker says so once
in its log. The master starts a readers process again on the same socket once one has ended
(`restart_readers`, `api.production.ReadersTending`), and the workers pass their audit reads to
it as soon as it listens. `REDDOG_AUDIT_PROCESS=off` keeps audit reads in the workers.
`reddog serve` alone (one process) serves them itself.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple
from urllib.parse import quote

from werkzeug.exceptions import HTTPException
from werkzeug.routing import RequestRedirect

from api.edge import Edge, Limits, serve_until_stopped
from api.observe import count_in_files
from ledger.ops import heap
from ledger.settings import Settings

log = logging.getLogger(__name__)

#: What the readers process writes to the log once it serves, with its pid.
READERS_SERVING = "Audit readers serving"
#: How much lower the readers process's CPU priority is than the workers' (`os.nice`): the
#: kernel's share for it, while the workers want the cores, about a tenth of one of theirs.
READERS_NICE = 10
#: Seconds a worker waits for the readers process to answer an audit read (each read of the
#: socket) before it serves the read itself.
FORWARD_SECONDS = 30.0
#: Bytes of an answer a worker reads from the readers process at a time.
BLOCK = 64 * 1024
#: The socket's file in the readers' folder.
SOCKET_NAME = "readers.sock"
#: The longest path a Unix socket's address holds, with room to spare (108 bytes on Linux).
SOCKET_PATH_MOST = 100
#: Headers that belong to one connection, not to the request or answer passed on (RFC 9110,
#: 7.6.1).
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "te", "trailer",
                        "transfer-encoding", "upgrade"})
#: What the worker's own server writes into every answer: not passed on from the readers'.
OWN = HOP_BY_HOP | {"date", "server"}
#: Methods passed on: reads only (a read that records stays in the worker).
SAFE = frozenset({"GET", "HEAD"})
#: What a kept connection the readers closed meanwhile fails with: opened again, once.
STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)


class Readers(NamedTuple):
    """The readers process: its pid, and the private folder of the Unix socket it serves on."""

    pid: int
    folder: str

    @property
    def socket(self) -> str:
        return os.path.join(self.folder, SOCKET_NAME)


def start_readers(settings: Settings, threads: int, limits: Limits) -> Readers | None:
    """Fork the readers process (in the master, before the workers: no thread runs yet), its
    socket bound and listening before the fork, so a worker's first read finds it; None where
    the settings keep audit reads in the workers, or where no socket could be made (logged:
    the workers serve the audit reads then)."""
    if settings.audit_process != "on":
        return None
    try:
        folder, listener = _listening()
    except OSError as error:
        log.warning("no socket for the readers process (%s): the workers serve audit reads",
                    error)
        return None
    return Readers(_fork_readers(settings, listener, threads, limits), folder)


def restart_readers(readers: Readers, settings: Settings, threads: int, limits: Limits
                    ) -> Readers | None:
    """Fork a readers process again in place of one that ended (in the master: no thread runs
    in it), listening on the same socket, where the workers' `Forward` looks for it at every
    audit read; None where the socket cannot be made again (logged: the workers serve the
    audit reads then)."""
    try:
        listener = _listener(readers.socket)
    except OSError as error:
        log.warning("no socket for a new readers process (%s): the workers serve audit reads",
                    error)
        return None
    return readers._replace(pid=_fork_readers(settings, listener, threads, limits))


def _fork_readers(settings: Settings, listener: socket.socket, threads: int,
                  limits: Limits) -> int:
    """Fork the readers process serving on `listener`; its pid."""
    pid = os.fork()
    if pid == 0:  # the readers process: it never returns into the master's stack
        code = 1
        try:
            code = _run_readers(settings, listener, threads, limits)
        finally:
            os._exit(code)
    listener.close()
    return pid


def _listening() -> tuple[str, socket.socket]:
    """A new private folder (0700: only the server's user may reach the socket) and a Unix
    socket listening in it: in the temporary folder (`TMPDIR`), or in /tmp where that path is
    too long for a socket's address (about 100 bytes)."""
    base = tempfile.gettempdir()
    if len(os.path.join(base, "reddog-readers-xxxxxxxx", SOCKET_NAME)) > SOCKET_PATH_MOST:
        base = "/tmp"
    folder = tempfile.mkdtemp(prefix="reddog-readers-", dir=base)
    try:
        return folder, _listener(os.path.join(folder, SOCKET_NAME))
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _listener(path: str) -> socket.socket:
    """A Unix socket listening at `path`, in place of any socket a readers process that ended
    left there."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
        listener.listen(1024)
    except OSError:
        listener.close()
        raise
    return listener


def _run_readers(settings: Settings, listener: socket.socket, threads: int,
                 limits: Limits) -> int:
    """The readers process: its priority lowered, its own application (no fold, no checkpoints,
    no publishing), served on `listener` until it is stopped or its master is gone. A master
    that is gone (killed outright) removes nothing: its readers process removes the socket's
    folder then, as it ends."""
    master = os.getppid()
    folder = os.path.dirname(listener.getsockname())
    try:
        return _serve_readers(settings, listener, threads, limits, master)
    finally:
        if os.getppid() != master:  # orphaned: nobody else is left to remove it
            shutil.rmtree(folder, ignore_errors=True)


def _serve_readers(settings: Settings, listener: socket.socket, threads: int, limits: Limits,
                   master: int) -> int:
    """`_run_readers`, but for its folder."""
    from api import create_app
    from ledger.app.application import LedgerApplication

    os.nice(READERS_NICE)
    count_in_files()
    try:
        ledger = LedgerApplication(settings.tables_made())
    except Exception:
        log.exception("the readers process could not open the store: the workers serve "
                      "audit reads")
        return 1
    try:
        edge = Edge(create_app({"LEDGER": ledger}), threads, limits, sockets=[listener])
        heap.settle()
        log.info("%s (pid: %s)", READERS_SERVING, os.getpid())
        serve_until_stopped(edge, alive=lambda: os.getppid() == master)
    finally:
        ledger.close()
    return 0


class _UnixConnection(http.client.HTTPConnection):
    """HTTP/1.1 over the readers' Unix socket, kept open between reads."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self.unix_path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


class Forward:
    """A worker's WSGI app in front of its Flask app: an audit read goes to the readers
    process, everything else to the app. `app.wsgi_app = Forward(app, path)`."""

    def __init__(self, app: Any, path: str, timeout: float = FORWARD_SECONDS) -> None:
        self.app, self.inner, self.path, self.timeout = app, app.wsgi_app, path, timeout
        self._local = threading.local()  # each thread's connection to the readers
        self._audit: dict[str, bool] = {}  # endpoint → whether its view is an audit read
        self._warned = False

    def __call__(self, environ: dict[str, Any],
                 start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ["REQUEST_METHOD"] in SAFE and self.passes(environ):
            answer = self.forward(environ, start_response)
            if answer is not None:
                return answer
        return self.inner(environ, start_response)

    def passes(self, environ: dict[str, Any]) -> bool:
        """Whether the request is an audit read the readers serve: its view so marked, and no
        body (a body's bytes are read once, by the app)."""
        if environ.get("CONTENT_LENGTH") not in (None, "", "0") \
                or environ.get("HTTP_TRANSFER_ENCODING"):
            return False
        try:
            endpoint, _ = self.app.url_map.bind_to_environ(environ).match()
        except (HTTPException, RequestRedirect):  # the app answers 404, 405 or the redirect
            return False
        audit = self._audit.get(endpoint)
        if audit is None:
            view = self.app.view_functions.get(endpoint)
            audit = self._audit[endpoint] = bool(getattr(view, "audit_read", False))
        return audit

    def forward(self, environ: dict[str, Any],
                start_response: Callable[..., Any]) -> Iterable[bytes] | None:
        """The readers' answer, passed on as it comes; None (the worker serves the read) where
        the readers process cannot be reached or gives no answer in time. A kept connection
        the readers closed meanwhile is opened again once."""
        method, target, headers = request_of(environ)
        conn = self._local.__dict__.pop("conn", None)  # lent to this answer until it is read
        reused = conn is not None
        while True:
            if conn is None:
                conn = _UnixConnection(self.path, self.timeout)
            try:
                conn.request(method, target, headers=headers)
                answer = conn.getresponse()
                break
            except (OSError, http.client.HTTPException) as error:
                _close(conn)
                if not (reused and isinstance(error, STALE)):
                    self._fell_back(error)
                    return None
                conn, reused = None, False
        self._warned = False
        start_response(f"{answer.status} {answer.reason}",
                       [(name, value) for name, value in answer.getheaders()
                        if name.lower() not in OWN])
        return Body(answer, conn, method == "HEAD", self._keep)

    def _keep(self, conn: _UnixConnection) -> None:
        """An answer read whole, its connection left open: the thread's for its next read."""
        self._local.conn = conn

    def _fell_back(self, error: Exception) -> None:
        if not self._warned:
            self._warned = True
            log.warning("the readers process did not answer (%s: %s): this worker serves "
                        "audit reads itself until it does", type(error).__name__, error)


class Body:
    """The readers' answer's body, a block at a time. Its connection goes back to the thread
    (`keep`) as the last block is read, the readers keeping it open; one whose body was not
    read to its end (the client gone first) is closed with it."""

    def __init__(self, answer: http.client.HTTPResponse, conn: _UnixConnection, head: bool,
                 keep: Callable[[_UnixConnection], None]) -> None:
        self.answer, self.conn, self.head, self.keep = answer, conn, head, keep
        self._ended = False

    def __iter__(self) -> Iterator[bytes]:
        if not self.head:
            while block := self.answer.read(BLOCK):
                yield block
        else:
            self.answer.read()
        self._end(kept=not self.answer.will_close)

    def close(self) -> None:
        self._end(kept=False)

    def _end(self, kept: bool) -> None:
        if self._ended:
            return
        self._ended = True
        if kept:
            self.keep(self.conn)
        else:
            _close(self.conn)


def _close(conn: _UnixConnection) -> None:
    with contextlib.suppress(OSError):
        conn.close()


def request_of(environ: dict[str, Any]) -> tuple[str, str, dict[str, str]]:
    """The method, target and end-to-end headers of a WSGI request, as the client sent them
    (header names as WSGI keeps them: dashes for underscores, in title case)."""
    target = environ.get("REQUEST_URI") or (
        quote(environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", ""))
        + (f"?{environ['QUERY_STRING']}" if environ.get("QUERY_STRING") else ""))
    headers = {name.title(): value for key, value in environ.items()
               if key.startswith("HTTP_")
               and (name := key[5:].replace("_", "-")).lower() not in HOP_BY_HOP}
    return environ["REQUEST_METHOD"], target, headers


def forwarded(app: Any, readers: Readers | None) -> Any:
    """`app`, passing its audit reads to `readers` where there is such a process."""
    if readers is not None:
        app.wsgi_app = Forward(app, readers.socket)
    return app

