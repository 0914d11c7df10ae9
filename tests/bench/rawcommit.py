"""The store's raw commit rate for `tests.bench.http`: the `eventsourcing` library alone, no
ledger code, one event of about the ledger's stored size per save (so one commit per save)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eventsourcing.application import Application

from tests.bench.common import Ledgerish, transfer_payload


class RawCommits(Application[uuid.UUID]):
    """Raw saves, one event each (tables of its own beside the ledger's)."""


def create(env: dict[str, str]) -> None:
    """Make the tables once (before writers in several processes race to)."""
    RawCommits(env=env).close()


def writer(spec: dict[str, Any], wait_for_start: Callable[[dict[str, Any]], None]) -> None:
    """`threads` threads saving from `start_at` (set by `wait_for_start`, called once the
    application is built) for `seconds`; counted after `warmup`."""
    # The tables are made (`create`); the library's setup, run again by writers starting
    # together, would collide in its `CREATE OR REPLACE FUNCTION` on PostgreSQL.
    env = {"SQLITE_LOCK_TIMEOUT": "30", **spec["env"], "CREATE_TABLE": "n"}
    app = RawCommits(env=env)
    wait_for_start(spec)
    start_at, warmup = spec["start_at"], spec["warmup"]
    end = start_at + spec["seconds"]
    counted = [0] * spec["threads"]
    latencies: list[list[float]] = [[] for _ in range(spec["threads"])]

    def save_loop(number: int) -> None:
        aggregate = Ledgerish()
        app.save(aggregate)  # its creation: before the clock
        item = transfer_payload()
        wait = start_at - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        while (began := time.monotonic()) < end:
            aggregate.record(item)
            app.save(aggregate)
            if began >= start_at + warmup:
                counted[number] += 1
                latencies[number].append(time.monotonic() - began)

    threads = [threading.Thread(target=save_loop, args=(n,)) for n in range(spec["threads"])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    app.close()
    Path(spec["out"]).write_text(json.dumps({
        "saves": sum(counted), "latencies": [round(x, 6) for xs in latencies for x in xs]}))
