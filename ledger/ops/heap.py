"""Python's cycle collector and the heaps this service keeps: what lives as long as the process
is taken out of the collector's runs.

A full run of the cycle collector walks every object it tracks, and while it walks no thread of
the process runs. Two heaps here are mostly objects that can never be cyclic garbage:

- a server's start-up heap (modules, the Flask app, its schemas, the OpenAPI document: about
  130,000 objects), which lives as long as the server (`settle`, called once it is ready:
  `api.production`);
- a long batch's growing data, above all the in-memory store's rows: `reddog simulate --store
  memory` keeps every event it records. Full runs come each time the tracked heap has grown by a
  quarter, and each walks all of it, so their cost grows with the run: measured over 100,000
  casino deals in memory, 18 full runs took 10.2 s of an 83 s run. `settling` settles such a
  batch's heap every `every` units of work: 1.44 s of full runs over the same deals.

Settling is `gc.collect()` then `gc.freeze()`: garbage is collected first, and what survives is
never walked again. It is still freed by reference counting; only a cycle among those objects
that becomes garbage later would outlive its use (nothing a batch keeps forms one).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: Units of work (a simulation's deals) between two settlings of a batch's heap.
SETTLE_EVERY = 1000


def settle() -> None:
    """Collect what is garbage now, then leave every object that survives out of every later
    run of the cycle collector (`gc.freeze`)."""
    gc.collect()
    gc.freeze()


@contextmanager
def settling(every: int | None = None) -> Iterator[Callable[[int], None]]:
    """A batch that settles its heap every `every` units of work (`SETTLE_EVERY` when not
    given): yields the function to call with each count of units done (a progress callback).
    When the batch ends, what it froze is handed back to the collector, unless the process had
    frozen objects before it (a server's start-up heap), which stay frozen."""
    every = every or SETTLE_EVERY
    frozen_before = gc.get_freeze_count()
    done = 0

    def worked(units: int) -> None:
        nonlocal done
        before, done = done, done + units
        if done // every > before // every:
            settle()

    try:
        yield worked
    finally:
        if not frozen_before:
            gc.unfreeze()


__all__ = ["SETTLE_EVERY", "settle", "settling"]
