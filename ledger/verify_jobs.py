"""The read models' comparison for `reddog verify`, in a process of its own when it can be.

Verification ends by comparing the kept read models with a fold of the log from the start
(`Projection.differences_from_a_rebuild`), and that fold is close to half of its work. It needs
nothing the other checks find, so on a store another process can open (SQLite, PostgreSQL) and
with two jobs, a worker process opens the store and folds and compares while this one reads and
checks the log; with one job, or a store in this process's memory, the fold goes on here as the
log is read. Its answer is used the same way either way: only for a log that passes every other
check, at the end. (The worker compares at the position the kept read models have reached when
it starts; this process at the one they reach when its reading ends. On a log nobody writes to
meanwhile they are the same position.)

The worker is started with `spawn`, never `fork` (this process holds database connections and
threads), and is given the application's class and settings, with which it opens the store as
any other process would. If it fails, the comparison is made here after all, so a worker that cannot run
costs time, never a finding.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from typing import Any

log = logging.getLogger(__name__)

#: Below this many positions one job is the default: starting a worker (a new interpreter that
#: imports the ledger and opens the store) costs more than it saves.
AUTO_POSITIONS = 50_000


def jobs_for(app: Any, jobs: int | None) -> int:
    """How many processes verification uses: `jobs` when given (at least 1; more than two work
    as two); by default two where a worker can open the store, two cores or more are there, and
    the log is long enough to repay a worker (`AUTO_POSITIONS`); else one."""
    if jobs is not None:
        return max(1, jobs)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if (cores or 1) < 2 or app.store.in_process:
        return 1
    return 2 if (app.recorder.max_notification_id() or 0) >= AUTO_POSITIONS else 1


class ComparisonElsewhere:
    """The read models' comparison (`differences_from_a_rebuild`) running in a worker process
    from the moment it is made; `close` ends the worker, finished or not."""

    def __init__(self, app: Any) -> None:
        self.pool = multiprocessing.get_context("spawn").Pool(1)
        self.result = self.pool.apply_async(differences_in_a_worker, (type(app), app.settings))

    def fold(self, page: list[Any]) -> None:
        """Nothing: the worker reads and folds the log itself."""

    def differences(self, app: Any) -> list[str]:
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
