"""The server's edge: how a server process reads requests off its sockets, whether it is
`reddog serve` alone (`serve`) or a worker of `reddog serve --workers N` (`api.worker`).

waitress reads each request whole, head and body, in one event loop per process (`poll`, so
a thousand connections and more) before one of the process's `--threads` threads runs it: a
client that sends slowly holds a socket, never a thread that requests need. Over waitress,
this module adds what it lacks:

- **Deadlines.** A request's head must have come within `REDDOG_HEAD_SECONDS` (10) of its
  first byte, its body within `REDDOG_BODY_SECONDS` (30) of the head's end; else the server
  answers 408 and closes the connection. waitress closes only connections silent for a while
  (here `IDLE_SECONDS`), which a client trickling a byte every few seconds never is. The
  loop looks once a second (`TICK_SECONDS`), so a deadline is kept to about a second.
- **Limits.** A request line over 8 KiB is 414, a head over 64 KiB 431, a body over 1 MiB 413
  (one sent chunked too, as its first byte over 1 MiB comes), before any of it reaches the
  app; at most `CONNECTIONS` connections a process, beyond which new ones wait in the listen
  backlog (the process's open-file limit is raised to fit them: `_fit_open_files`).
- **Its own errors as problem+json.** What the server answers itself (the above, and 400 for
  a request it cannot read: a NUL or a bare CR in a header, a bad chunk) is the same
  problem+json the app writes (`api.errors.http_error`), with `X-Content-Type-Options`.

Time here is the process's monotonic clock: deadlines are intervals, not instants of the
ledger (`ledger.core.clock`).
"""

from __future__ import annotations

import logging
import signal
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from socket import AF_UNIX, SHUT_WR, socket
from typing import Any

from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask, ThreadedTaskDispatcher, WSGITask
from waitress.utilities import Error
from werkzeug.exceptions import default_exceptions
from werkzeug.wrappers import Response

from api.errors import http_error
from api.headers import nosniff
from api.spread import TURN_SECONDS, Seat

log = logging.getLogger(__name__)
KIB = 1024
#: The largest body the service reads (Flask's `MAX_CONTENT_LENGTH` too).
MAX_BODY = 1024 * KIB
REQUEST_LINE_BYTES = 8 * KIB
HEAD_BYTES = 64 * KIB
#: Connections one process holds open at most.
CONNECTIONS = 1000
#: Seconds a connection may stay silent (between requests, or a client not reading).
IDLE_SECONDS = 15
#: Seconds between the loop's looks at the deadlines (and a worker's heartbeat, at most).
TICK_SECONDS = 1
#: Seconds between a worker's heartbeats, at least (`Edge.run`).
BEAT_SECONDS = 0.25
#: The interpreter's switch interval in a server process: how long a thread that wants the GIL
#: waits before the thread running is asked to let it go (Python's default is 5 ms). A group
#: commit's leader lets go of the GIL at every call into SQLite, its commit's flush among them,
#: and takes it back while it holds the store's write lock, which every other save of every
#: worker waits for: on the disk slowed by 2 ms, with two workers, 1 ms took the commands/s
#: from about 275 to about 315.
SWITCH_SECONDS = 0.001
#: Seconds a worker that leaves a waiting connection to another (`Server.handle_accept`) waits
#: before it looks again: the connection is still waiting only if the other has not taken it.
REFRAIN_SECONDS = 0.001
#: Seconds a connection closed after a refusal drains what its client still sends (so the
#: client reads the answer before its next send is refused by a reset).
LINGER_SECONDS = 5
#: Seconds a stopping server gives the requests it has read to be answered.
GRACEFUL_SECONDS = 20
#: Open files a process keeps beside its connections (store, logs, pipes).
SPARE_FILES = 200
#: What the server says of the limits it refuses a request for.
DETAILS = {
    413: f"the body is larger than {MAX_BODY // KIB // KIB} MiB, the most the service reads",
    414: f"the request line (method, address, version) is longer than {REQUEST_LINE_BYTES // KIB}"
         " KiB",
    431: f"the request's header fields are larger than {HEAD_BYTES // KIB} KiB in all",
}


@dataclass(frozen=True)
class Limits:
    """A server's deadlines."""

    head_seconds: float = 10.0
    body_seconds: float = 30.0

    @classmethod
    def of(cls, settings: Any) -> Limits:
        """The limits `ledger.settings.Settings` give (`REDDOG_HEAD_SECONDS`, ...)."""
        return cls(head_seconds=settings.head_seconds, body_seconds=settings.body_seconds)

    def adjustments(self, threads: int, **listen: Any) -> Adjustments:
        """waitress's settings for these deadlines (its idle timeout; the deadlines are
        `Server.maintenance`'s), the limits of this module and `threads` threads."""
        return Adjustments(
            threads=threads, ident="reddog-ledger", asyncore_use_poll=True,
            asyncore_loop_timeout=TICK_SECONDS, cleanup_interval=TICK_SECONDS,
            channel_timeout=IDLE_SECONDS, connection_limit=_fit_open_files(CONNECTIONS),
            max_request_header_size=HEAD_BYTES,
            max_request_body_size=MAX_BODY + 1,  # waitress refuses a body of this size or more
            **listen)


class UriTooLong(Error):
    code = 414
    reason = "URI Too Long"


class RequestTimeout(Error):
    code = 408
    reason = "Request Timeout"


class Parser(HTTPRequestParser):
    """waitress's request parser, which also refuses a request line over REQUEST_LINE_BYTES
    (waitress counts it in the head) and notes when the request's head ended."""

    line_read = False
    head_ended: float | None = None
    completed: bool  # waitress's parser's own state

    def received(self, data: bytes) -> int:
        if not (self.line_read or self.completed) and self._line_too_long(data):
            self.parse_header(b"GET / HTTP/1.0\r\n")  # as waitress does for its own 431
            self.error = UriTooLong(DETAILS[414])
            self.completed = True
            return len(data)
        consumed = super().received(data)
        if self.headers_finished and self.head_ended is None:
            self.head_ended = time.monotonic()
        return consumed

    def _line_too_long(self, data: bytes) -> bool:
        head = (self.header_plus + data).lstrip()  # as waitress: blank lines before it go
        end = head.find(b"\n")
        self.line_read = end >= 0
        return (end if self.line_read else len(head)) > REQUEST_LINE_BYTES


class ProblemTask(ErrorTask):
    """Writes the error of a request the server refused as problem+json, and closes."""

    def execute(self) -> None:
        response = problem(self.request.error)
        body = response.get_data()
        self.status = response.status
        self.response_headers.extend(response.headers.to_wsgi_list())
        self.set_close_on_finish()
        self.channel.refused = True
        self.content_length = len(body)
        self.write(body)


def problem(error: Error) -> Response:
    """The problem+json answer to a request waitress (or `Parser`, or a deadline) refused. An
    unsupported transfer coding is 400 here, not waitress's 501: the client sent it."""
    status = 400 if error.code >= 500 else error.code
    detail = DETAILS.get(status) or error.body
    if status == 400:  # waitress's words, without the request's own bytes it quotes
        detail = "the request cannot be read: " + error.body.split(' "')[0].rstrip(".")
    return nosniff(http_error(default_exceptions[status](detail)))


class Task(WSGITask):
    """waitress's task, whose answer closes its connection when its worker holds more
    connections than its share (`api.spread`)."""

    def build_response_header(self) -> bytes:
        if self.channel.server.over_share():
            self.set_close_on_finish()
        return super().build_response_header()


class Channel(HTTPChannel):
    """A connection: waitress's, whose unfinished request can be timed out, and which after a
    refusal stops sending and drains its client's rest for up to LINGER_SECONDS before it
    closes (as nginx's lingering close): a client still sending a body too large reads its
    413 instead of a reset."""

    parser_class = Parser
    task_class = Task
    error_task_class = ProblemTask
    refused = False  # its last answer was a refusal (`ProblemTask`): close after it
    request: Any  # waitress's: the request being read, if any
    lingering: float | None = None  # since when it drains
    first_byte = 0.0  # when the first byte came since it was ready

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ready_at = time.monotonic()  # since when it can read a request: opened, or answered

    def received(self, data: bytes) -> bool:
        if self.first_byte < self.ready_at:
            self.first_byte = time.monotonic()
        return super().received(data)

    def service(self) -> None:
        super().service()
        self.ready_at = time.monotonic()

    def overdue(self, now: float, limits: Limits) -> RequestTimeout | None:
        """The 408 of the request being read, if it missed its deadline. Its head's deadline
        counts from the first byte since the connection was ready (blank lines before a
        request, which waitress reads as no request at all, do not put it off)."""
        request = self.request
        if self.requests or self.will_close or self.close_when_flushed or (
                request is not None and request.completed):
            return None  # a request running (nothing is read meanwhile), or closing
        if request is not None and request.headers_finished:
            if now - max(request.head_ended or now, self.ready_at) <= limits.body_seconds:
                return None
            return RequestTimeout(f"the request's body did not come within "
                                  f"{limits.body_seconds:g} s of its head")
        reading = request is not None or self.first_byte >= self.ready_at  # a head, blank lines
        if not reading or now - max(self.first_byte, self.ready_at) <= limits.head_seconds:
            return None
        return RequestTimeout(f"the request's head did not come within "
                              f"{limits.head_seconds:g} s of its first byte")

    def handle_close(self) -> None:
        if self.refused and self.lingering is None and self.connected and not (
                self.total_outbufs_len):
            with suppress(OSError):
                self.socket.shutdown(SHUT_WR)
                self.lingering, self.will_close = time.monotonic(), False
                return
        super().handle_close()

    def readable(self) -> bool:
        return self.lingering is not None or super().readable()

    def writable(self) -> bool:
        return self.lingering is None and super().writable()

    def handle_read(self) -> None:
        if self.lingering is None:
            super().handle_read()
        else:
            self.recv(self.adj.recv_bytes)  # thrown away; at its end `recv` closes

    def time_out(self, error: RequestTimeout) -> None:
        """Answer the request being read with `error` (408) and close, as waitress does with a
        request it cannot parse."""
        with self.requests_lock:
            request: Any = self.request or self.parser_class(self.adj)
            self.request = None
            request.error = error
            request.completed = True
            self.requests.append(request)
        self.server.add_task(self)


class Server(TcpWSGIServer):
    """waitress's server over one listening socket, whose connections are `Channel`s and whose
    regular round (each TICK_SECONDS) also times out the requests that missed their deadlines
    and closes the connections that have drained long enough."""

    channel_class = Channel

    def __init__(self, application: Any, limits: Limits, seat: Seat | None = None,
                 **kwargs: Any) -> None:
        self.limits = limits
        self.seat = seat  # a worker's place among the others (`api.spread`); None alone
        super().__init__(application, **kwargs)

    def readable(self) -> bool:
        """Accepting and within the connection limit (waitress's), and, a worker, saying at each
        turn of its loop how many connections it holds (`api.spread`)."""
        if not super().readable():
            return False
        if self.seat is not None:
            self.seat.held(len(self._map))
        return True

    def handle_accept(self) -> None:
        """Take the connection waiting, unless (a worker) another serving worker holds fewer:
        then that one takes it, and this one looks again after a moment (it wakes as long as
        a connection waits, so it takes it after all if the other does not)."""
        if self.seat is not None and not self.seat.may_accept(len(self._map)):
            time.sleep(REFRAIN_SECONDS)
            return
        super().handle_accept()

    def over_share(self) -> bool:
        """Whether this worker holds two connections or more than another serving worker."""
        return self.seat is not None and self.seat.over_share(len(self._map))

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # the connections silent for IDLE_SECONDS
        clock = time.monotonic()
        for channel in list(self.active_channels.values()):
            if channel.lingering is not None and clock - channel.lingering > LINGER_SECONDS:
                channel.handle_close()
            elif (late := channel.overdue(clock, self.limits)) is not None:
                channel.time_out(late)


class UnixServer(Server):
    """The same over a Unix socket (the readers process's: `api.readers`): its address is its
    path, its clients have none, and TCP's options do not apply."""

    def getsockname(self) -> tuple[str, str]:
        return ("unix", self.socket.getsockname())

    def fix_addr(self, addr: Any) -> tuple[str, None]:
        return ("localhost", None)

    def set_socket_options(self, conn: Any) -> None:
        pass


class Edge:
    """One process's server: waitress's event loop over its listening sockets (given, as a
    worker's are, or bound here to `host` and `port`) and its threads running the app."""

    def __init__(self, app: Any, threads: int, limits: Limits, sockets: Sequence[socket] = (),
                 seat: Seat | None = None, **listen: Any) -> None:
        adj = limits.adjustments(threads, **listen)
        #: Seconds the loop waits for something to do: a worker that spreads connections with
        #: others turns more often, so they see it serving (`api.spread`).
        self.turn = TICK_SECONDS if seat is None else TURN_SECONDS
        self.map: dict[int, Any] = {}
        self.threads = ThreadedTaskDispatcher()
        self.threads.set_thread_count(threads)
        places: list[tuple[socket | None, Any]] = (
            [(sock, (sock.family, sock.type, sock.proto, sock.getsockname())) for sock in sockets]
            or [(None, info) for info in adj.listen])
        self.servers = [(UnixServer if info[0] == AF_UNIX else Server)(
            app, limits, seat, map=self.map, _sock=sock, dispatcher=self.threads, adj=adj,
            sockinfo=info, bind_socket=sock is None) for sock, info in places]

    @property
    def addresses(self) -> list[str]:
        return [f"http://{server.effective_host}:{server.effective_port}"
                for server in self.servers]

    def run(self, alive: Callable[[], bool], tick: Callable[[], None] = lambda: None) -> None:
        """Serve while `alive()`, calling `tick` at least once a second, and at most every
        `BEAT_SECONDS`: a busy loop turns several times a request, and a worker's heartbeat
        is a write to a file's times (a system call each)."""
        sys.setswitchinterval(SWITCH_SECONDS)
        beaten = -BEAT_SECONDS
        while alive():
            now = time.monotonic()
            if now - beaten >= BEAT_SECONDS:
                tick()
                beaten = now
            wasyncore.loop(timeout=self.turn, map=self.map, use_poll=True, count=1)

    def wake(self) -> None:
        """End the loop's wait now (a byte to its trigger): safe in a signal's handler."""
        self.servers[0].pull_trigger()

    def stop(self, seconds: float = GRACEFUL_SECONDS,
             tick: Callable[[], None] = lambda: None) -> None:
        """Accept no more connections, answer within `seconds` the requests read already (and
        any a client had sent before), then close every connection."""
        for server in self.servers:
            server.accepting = False
        deadline = time.monotonic() + seconds
        while self._busy() and time.monotonic() < deadline:
            tick()
            wasyncore.loop(timeout=TICK_SECONDS, map=self.map, use_poll=True, count=1)
        self.threads.shutdown(timeout=max(1.0, deadline - time.monotonic()))
        wasyncore.close_all(self.map)

    def _busy(self) -> bool:
        return any(channel.requests or channel.total_outbufs_len
                   for server in self.servers for channel in server.active_channels.values())


def serve(app: Any, host: str, port: int, threads: int, limits: Limits) -> None:
    """`reddog serve` alone: serve `app` on `host:port` until SIGTERM or SIGINT, then stop as
    a worker does (`Edge.stop`)."""
    serve_until_stopped(Edge(app, threads, limits, host=host, port=port))


def serve_until_stopped(edge: Edge, alive: Callable[[], bool] = lambda: True) -> None:
    """Run `edge` until SIGTERM or SIGINT (or until `alive()` is false), then stop it: a
    process that serves alone, `serve`'s or the readers process of `api.readers`."""
    stopping: list[int] = []

    def stop(number: int, _frame: Any) -> None:
        # The loop waits up to a second in poll(), which Python resumes after this handler has
        # run: the trigger's byte ends that wait, so the stop begins at once.
        stopping.append(number)
        edge.wake()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
    for address in edge.addresses:
        log.info("serving on %s", address)
    edge.run(alive=lambda: not stopping and alive())
    edge.stop()


def _fit_open_files(connections: int) -> int:
    """Raise this process's open-file limit (its soft limit, up to the hard one) to fit
    `connections`, each with a file of its own for a large body, and the process's own files;
    the connections that fit (fewer, with a warning, if the hard limit is lower)."""
    try:
        import resource
    except ImportError:  # not Unix: the system decides
        return connections
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2 * connections + SPARE_FILES
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return connections
    raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
    fits = min(connections, (raised - SPARE_FILES) // 2)
    if fits < connections:
        log.warning("open files are limited to %d: %d connections a process, not %d",
                    raised, fits, connections)
    return max(fits, 1)
