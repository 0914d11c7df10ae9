"""`reddog serve --workers N` (N > 1): gunicorn's master process and N workers serving with
waitress (`api.worker`, `api.edge`), each worker with `--threads` threads and one
`LedgerApplication` of its own, built in the worker after the fork (never before: a store's
connections and threads do not survive a fork).

The master opens the store once before it forks, so a new store's tables and chain key are made
by one process, and closes it again. Each worker then builds the app from the same settings,
without making the tables again (`Settings.tables_made`). Before the workers, the master forks its
loops process (`start_loops`): the fold of the read models (on an embedded store, SQLite), the
public log's publishing and the log's checkpoints run there, woken by the saves of every worker,
and the workers stand by to take any of them over should it end; the fold's lock
(`ledger.readmodels.readstore`) makes each page folded exactly once across them all. Then it
forks the readers process (`api.readers`), which serves the audit reads the workers pass on, at
a lower CPU priority than theirs, and starts it again should it end (`ReadersTending`).

Each worker counts what it answers in the Prometheus client's multiprocess files, in a folder
the master makes for the server (or `PROMETHEUS_MULTIPROC_DIR`, emptied as the server starts),
so `/metrics` sums every worker's counters whichever worker answers (`api.observe.Metrics`).

Each server process, a worker or `reddog serve` alone, settles its start-up heap before it
serves (`ledger.ops.heap.settle`): Python's cycle collector never walks it again, so its full
collections, which stop every thread of the process, stay short under load (measured under the
HTTP bench's load: 60-120 ms each before, 5-40 ms after).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from api.edge import GRACEFUL_SECONDS, Limits
from api.observe import count_in_files, multiprocess_dir
from api.readers import Readers, forwarded, restart_readers, start_readers
from api.spread import Spread
from ledger.core import private
from ledger.core.background import SharedLoop
from ledger.ops import heap
from ledger.settings import Settings

log = logging.getLogger(__name__)

#: Seconds a worker's main loop may stay silent (hung) before the master replaces it; a
#: worker's requests run in threads of their own and never silence the loop (`api.worker`).
WORKER_TIMEOUT = 30


def gunicorn_options(host: str, port: int, workers: int, threads: int,
                     log_level: str) -> dict[str, Any]:
    """gunicorn's settings for `reddog serve --workers N --threads T`."""
    from api.worker import WaitressWorker

    options: dict[str, Any] = {
        "bind": f"{host}:{port}",
        "workers": workers,
        "worker_class": WaitressWorker,
        "threads": threads,
        "timeout": WORKER_TIMEOUT,
        "graceful_timeout": GRACEFUL_SECONDS,
        "proc_name": "reddog-ledger",
        "preload_app": False,
        # The app writes its own access log (`reddog.access`); gunicorn's own lines go to stderr.
        "accesslog": None,
        "errorlog": "-",
        "loglevel": log_level,
        # No control socket (gunicorn 25.1+): one shared path per user would be fought over by
        # several servers on a host, and nothing here uses it.
        "control_socket_disable": True,
        # What gunicorn writes itself (a worker's heartbeat file) is private, as all else is.
        "umask": private.UMASK,
    }
    if os.path.isdir("/dev/shm"):  # the workers' heartbeat files: never on a slow disk
        options["worker_tmp_dir"] = "/dev/shm"
    return options


@contextmanager
def metrics_folder() -> Iterator[Path]:
    """The folder the workers keep their counters in while the server runs: the operator's
    `PROMETHEUS_MULTIPROC_DIR`, emptied of an earlier server's files (a new server counts from
    0, as one process does), else a new folder of its own, removed when the server (its master)
    stops."""
    given = multiprocess_dir()
    if given:
        folder = private.make_folder(Path(given))
        for stale in folder.glob("*.db"):
            stale.unlink()
        yield folder
        return
    folder = Path(tempfile.mkdtemp(prefix="reddog-metrics-"))
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(folder)
    maker = os.getpid()
    try:
        yield folder
    finally:
        # A worker leaves through here too (gunicorn ends a forked worker with SystemExit,
        # which unwinds the stack it inherited): only the master removes the folder, else a
        # worker stopping first would take it from those still running or booting.
        if os.getpid() == maker:
            os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
            shutil.rmtree(folder, ignore_errors=True)


class SharedLoops(NamedTuple):
    """The background loops that the processes of a server share, made by its master before
    the first fork: one process runs each, woken by the saves of all (`ledger.core.background`):
    the server's loops process where it runs (`start_loops`), else one of its workers.
    Measured with the HTTP bench's commands alone on SQLite, the fold in one worker instead of
    both: 3.19 to 3.37 ms of server CPU a command against 3.31 to 3.43, alternating runs."""

    fold: SharedLoop | None
    publish: SharedLoop | None
    checkpoint: SharedLoop | None


#: A server of one process: nothing shared.
ALONE = SharedLoops(None, None, None)


def serving_app(ledger: Any, shared: SharedLoops = ALONE) -> Any:
    """The Flask app a server process serves over its ledger: folding the read models when
    its settings say the server does, checkpointing the log and publishing its public tree in
    the background, its start-up heap settled (`reddog serve` alone, or a worker:
    `worker_app`, whose workers share the fold and the publishing)."""
    from api import create_app

    app = create_app({"LEDGER": ledger})
    if ledger.settings.follows_in_serve:
        ledger.follow(shared=shared.fold)
    ledger.checkpoint_in_background(shared.checkpoint)  # no request waits for a checkpoint
    ledger.publish_in_background(shared.publish)  # nor for the public tree of it
    heap.settle()  # once ready to serve: its full collections walk what requests make
    return app


def worker_app(settings: Settings, shared: SharedLoops = ALONE,
               readers: Readers | None = None) -> Any:
    """A worker's own app over its own ledger (the store's tables made already by the master),
    passing its audit reads to the readers process where there is one (`api.readers`)."""
    from ledger.app.application import LedgerApplication

    return forwarded(serving_app(LedgerApplication(settings.tables_made()), shared), readers)


#: What the loops process writes to the log once it runs the shared loops, with its pid.
LOOPS_RUNNING = "Shared loops running"
#: Seconds the loops process waits between looks at whether its master is still there.
LOOPS_LOOK_SECONDS = 1.0


def start_loops(settings: Settings, shared: SharedLoops) -> int | None:
    """Fork the server's loops process: the fold of the read models (where the server folds
    them, `Settings.follows_in_serve`), the public log's publishing and the log's checkpoints,
    run in a process of their own beside the workers, woken by the saves of every worker through the shared loops'
    pipes. Its pid once it holds the loops' locks (taken at once, before it opens the store,
    so the workers forked after find them held); None when it did not take them (the workers
    run the loops then, one of them each, as before).

    Why a process of its own: a worker's threads share its GIL, and the fold lets go of it and
    takes it back at every call into SQLite, many a page. Folded in a worker, under the HTTP
    bench's commands alone on SQLite, the fold took 0.56 ms of the workers' CPU a command;
    in a process of its own, folding as often, 0.26 ms, and the workers' CPU a command fell
    from 2.77 to 2.21 ms (docs/performance.md). Forked by the master before the workers, as
    they are (no thread runs in it yet). The workers still stand by to run each loop: one takes
    a loop over within its poll if this process ends (killed too, or unable to open the store).
    It ends when the master asks (`stop_child`), on SIGTERM or SIGINT, or when its master is
    gone."""
    wanted = SharedLoops(shared.fold if settings.follows_in_serve else None, shared.publish,
                         shared.checkpoint)
    if not any(wanted):
        return None
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the loops process: it never returns into the master's stack
        os.close(read_end)
        code = 1
        try:
            code = _run_loops(settings, wanted, write_end)
        finally:
            os._exit(code)
    os.close(write_end)
    with open(read_end, "rb") as said:  # until the loops process closes its end (or ends)
        taken = said.read() == b"taken"
    if taken:
        return pid
    log.warning("the loops process did not take the shared loops: the workers run them")
    stop_child(pid, "loops")
    return None


def _run_loops(settings: Settings, wanted: SharedLoops, taken: int) -> int:
    """The loops process: the locks of the loops in `wanted` taken at once (the master forks
    the workers once told), then its own application over the store running them until it is
    stopped."""
    from ledger.app.application import LedgerApplication

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    master = os.getppid()
    if all(loop.lead() for loop in wanted if loop is not None):
        os.write(taken, b"taken")
    os.close(taken)
    try:
        ledger = LedgerApplication(settings.tables_made())
    except Exception:
        log.exception("the loops process could not open the store: the workers run the loops")
        return 1
    try:
        if wanted.fold is not None:
            ledger.follow(shared=wanted.fold)
        if wanted.publish is not None:
            ledger.publish_in_background(wanted.publish)
        if wanted.checkpoint is not None:
            ledger.checkpoint_in_background(wanted.checkpoint)
        heap.settle()
        log.info("%s (pid: %s)", LOOPS_RUNNING, os.getpid())
        while not stop.wait(LOOPS_LOOK_SECONDS) and os.getppid() == master:
            pass
    finally:
        ledger.close()
    return 0


def ended(pid: int) -> bool:
    """Whether a child of this process has ended (reaped here, or by gunicorn's master loop,
    which reaps every child)."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return True


def stop_child(pid: int, name: str, seconds: float = GRACEFUL_SECONDS) -> None:
    """Ask a process the master forked beside its workers (the `name` process) to end
    (SIGTERM) and wait `seconds` at most for it (it may have been reaped already by gunicorn's
    master, which reaps every child), then kill it."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ended(pid):
            return
        time.sleep(0.05)
    log.warning("the %s process %s did not end in %.0f s: killed", name, pid, seconds)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


#: Seconds the master waits before it starts a readers process again in place of one that
#: ended; doubled for the next each time one ends within `READERS_STEADY_SECONDS` of its start
#: (one that cannot open the store, say), up to `READERS_PAUSE_MOST`.
READERS_PAUSE_FIRST = 1.0
READERS_PAUSE_MOST = 60.0
READERS_STEADY_SECONDS = 60.0


class ReadersTending:
    """In the master: the readers process (`api.readers`) started again once it has ended,
    killed, say, or run out of memory. Looked at each turn of gunicorn's loop (at least once a
    second, and as a child is reaped). Meanwhile the workers serve the audit reads
    themselves, and they pass them on again as soon as the new one listens on the socket.
    A readers process that ends soon after it started waits twice as long before the next one,
    so a store that cannot be opened is not retried in a loop. (The loops process is not
    started again: a worker takes over each of its loops within a poll.)"""

    def __init__(self, readers: Readers | None, start: Callable[[Readers], Readers | None],
                 clock: Callable[[], float] = time.monotonic,
                 gone: Callable[[int], bool] = ended) -> None:
        self.readers, self._start, self._clock, self._gone = readers, start, clock, gone
        self._started = clock()
        self._pause = READERS_PAUSE_FIRST
        self._due: float | None = None

    def tend(self, workers: Collection[int] = ()) -> None:
        """Start the readers process again if it has ended and its pause is over (`workers`:
        the pids of gunicorn's workers, which a pid the readers process had may now be)."""
        readers = self.readers
        if readers is None or not (readers.pid in workers or self._gone(readers.pid)):
            return
        now = self._clock()
        if self._due is None:
            if now - self._started >= READERS_STEADY_SECONDS:  # it ran: a pause of the first
                self._pause = READERS_PAUSE_FIRST
            self._due, wait = now + self._pause, self._pause
            self._pause = min(2 * self._pause, READERS_PAUSE_MOST)  # should the next one not
            log.warning("the readers process %s ended: the workers serve audit reads until "
                        "another starts, in %.0f s", readers.pid, wait)
        if now < self._due:
            return
        self._due, self._started = None, now
        self.readers = self._start(readers)
        if self.readers is not None:
            log.info("readers process started again (pid: %s)", self.readers.pid)


def serve_workers(settings: Settings, host: str, port: int, workers: int, threads: int) -> None:
    """Run gunicorn in this process (its master) until it is stopped (SIGTERM, SIGINT)."""
    with metrics_folder():
        _serve_workers(settings, host, port, workers, threads)


def _serve_workers(settings: Settings, host: str, port: int, workers: int, threads: int) -> None:
    from gunicorn.app.base import BaseApplication

    class LedgerServer(BaseApplication):
        def __init__(self) -> None:
            self.options = gunicorn_options(host, port, workers, threads, settings.log_level)
            self.limits = Limits.of(settings)  # the workers' deadlines (`api.worker`)
            # The connections each worker holds, shared with the workers forked after this
            # (`api.spread`): a slot for each, and as many again for a worker started while one
            # that stops is still being reaped.
            self.spread = Spread(2 * workers)
            self.shared = SharedLoops(SharedLoop(), SharedLoop(), SharedLoop())
            # The readers process, forked before the workers (`start_readers`), and each one
            # the master starts again in its place.
            self.tending = ReadersTending(None, lambda readers: restart_readers(
                readers, settings, threads, self.limits))
            self.ledgers: list[Any] = []
            super().__init__()

        def run(self) -> None:
            """gunicorn's master loop, tending the readers process at each of its turns."""
            from gunicorn.arbiter import Arbiter

            tending = self.tending

            class Tending(Arbiter):
                def manage_workers(self) -> None:
                    super().manage_workers()
                    tending.tend(self.WORKERS)

            try:
                Tending(self).run()
            except RuntimeError as error:  # as gunicorn's own `run`
                print(f"\nError: {error}\n", file=sys.stderr)
                sys.stderr.flush()
                sys.exit(1)

        def load_config(self) -> None:
            for key, value in self.options.items():
                if key in self.cfg.settings:  # settings an older gunicorn lacks are left out
                    self.cfg.set(key, value)
            self.cfg.set("worker_exit", self.worker_exit)
            self.cfg.set("pre_fork", self.pre_fork)
            self.cfg.set("child_exit", self.child_exit)

        def pre_fork(self, server: Any, worker: Any) -> None:
            """In the master, before a worker is forked: its slot in the spread."""
            worker.slot = self.spread.assign(w.slot for w in server.WORKERS.values())

        def child_exit(self, _server: Any, worker: Any) -> None:
            """In the master, as it reaps a worker: the slot no longer counts."""
            self.spread.free(worker.slot)

        def load(self) -> Any:
            """Called in each worker after the fork: the worker's own application."""
            count_in_files()
            app = worker_app(settings, self.shared, self.tending.readers)
            self.ledgers.append(app.config["LEDGER"])
            return app

        def worker_exit(self, _server: Any, _worker: Any) -> None:
            """Close the worker's application (its store connections, its fold thread)."""
            for ledger in self.ledgers:
                ledger.close()

    server = LedgerServer()
    loops = start_loops(settings, server.shared)  # before the workers: it takes the loops first
    # Its socket listens before the workers are forked, so their first reads find it.
    readers = server.tending.readers = start_readers(settings, threads, server.limits)
    master = os.getpid()
    try:
        server.run()
    finally:
        # A worker leaves through here too (gunicorn ends a forked worker with SystemExit,
        # which unwinds the stack it inherited): only the master stops the processes it forked.
        if os.getpid() == master:
            if readers is not None:
                if server.tending.readers is not None:  # the one running now
                    stop_child(server.tending.readers.pid, "readers")
                shutil.rmtree(readers.folder, ignore_errors=True)
            if loops is not None:
                stop_child(loops, "loops")
