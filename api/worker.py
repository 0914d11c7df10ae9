"""The worker class of `reddog serve --workers N`: gunicorn's master forks, restarts and
signals the workers (`api.production`), and each worker serves with waitress (`api.edge`) over
the listening sockets it inherited, so a slow client holds a socket in the worker's event loop,
never one of its threads (gunicorn's own gthread worker gives a connection a thread as its first
bytes come, which then reads the head with no deadline).

The loop calls `notify()` at least once a second (and at most every `BEAT_SECONDS`), the
heartbeat by which the master sees the worker alive (its requests run in the worker's threads
and never silence the loop). On SIGTERM
(gunicorn's `alive` false) the worker stops as `Edge.stop` does, within gunicorn's
`graceful_timeout`; SIGINT and SIGQUIT end it at once (gunicorn's); a worker whose master is
gone stops too. It takes a new connection only while it holds no more than the other workers
(`api.spread`).
"""

from __future__ import annotations

import os

from gunicorn.workers.base import Worker

from api.edge import Edge
from api.spread import FREE

#: What a worker logs once it serves: its application built, its loop about to run.
SERVING = "Worker serving"


class WaitressWorker(Worker):
    """A gunicorn worker serving `self.wsgi` with waitress (`api.edge.Edge`)."""

    alive: bool  # gunicorn's worker state: cleared when the worker is told to stop
    slot = FREE  # its place in the master's `Spread`, given before the fork (`api.production`)

    def run(self) -> None:
        spread = getattr(self.app, "spread", None)
        edge = Edge(self.wsgi, self.cfg.threads, self.app.limits,
                    sockets=[listener.sock for listener in self.sockets],
                    seat=None if spread is None else spread.seat(self.slot))
        self.log.info("%s (pid: %s)", SERVING, self.pid)
        edge.run(alive=self._serving, tick=self.notify)
        edge.stop(self.cfg.graceful_timeout, tick=self.notify)

    def _serving(self) -> bool:
        if self.alive and self.ppid != os.getppid():
            self.log.info("Parent changed, shutting down: %s", self)
            self.alive = False
        return self.alive
