"""The read models' comparison for `reddog verify`, in a process of its own when asked.

Verification asked to compare the read models (`verify_store(read_models=True)`, `reddog verify
--read-models`) ends by comparing the kept read models with a fold of the log from the start
(`Projection.differences_from_a_rebuild`), and that fold is more than half of its work. It needs
nothing the other checks find, so with two jobs, on a store another process can open (SQLite,
PostgreSQL), a worker process opens the store, folds and compares while this one reads and
checks the log. With one job (the default), or a store in this process's memory, the fold goes
on here as the log is read. The answer is used the same way either way: only for a log that
passes every other check, at the end. (The worker compares at the position the kept read models
have reached when it starts; this process at the one they reach when its reading ends. On a log
nobody writes to meanwhile they are the same position.)

Two jobs pay only where a second core is free: measured on two cores, a run took a third less
time when the second was idle, and longer when another process was using it, for about a
quarter more CPU in all either way. Hence one job by default.

The worker is started with `spawn`, never `fork` (this process holds database connections and
threads), and is given the application's class and settings, with which it opens the store as
any other process would. If it fails, the comparison is made here after all: a worker that
cannot run costs time, never a finding.
"""

from __future__ import annotations

import logging
import multiprocessing
from typing import Any

from ledger.integrity.ledger import SealedLedger

log = logging.getLogger(__name__)


class ComparisonElsewhere:
    """The read models' comparison (`differences_from_a_rebuild`) running in a worker process
    from the moment it is made; `close` ends the worker, finished or not."""

    def __init__(self, app: SealedLedger) -> None:
        self.pool = multiprocessing.get_context("spawn").Pool(1)
        self.result = self.pool.apply_async(differences_in_a_worker,
                                             (type(app), app.settings.tables_made()))

    #: Given no pages: the worker reads and folds the log itself.
    folds = False

    def fold(self, page: list[Any]) -> None:
        """Nothing: the worker reads and folds the log itself."""

    def differences(self, app: SealedLedger) -> list[str]:
        """The worker's answer; the comparison made here instead if the worker failed."""
        try:
            return list(self.result.get())
        except Exception:  # whatever went wrong there, the answer is made here
            log.warning("the read models' comparison failed in its worker; comparing here",
                        exc_info=True)
            return list(app.projection.differences_from_a_rebuild())

    def close(self) -> None:
        """End the worker, finished or not (again: nothing more)."""
        self.pool.terminate()
        self.pool.join()


def differences_in_a_worker(application: type, settings: Any) -> list[str]:
    """In the worker: open the store as the application did (its class, sent by name, and its
    settings), and compare its kept read models with a fold of its log from the start."""
    app = application(settings)
    try:
        return app.projection.differences_from_a_rebuild()
    finally:
        app.close()
