"""What verification runs and checkpoints do to the read models:

- `v|runs`: the most recent verification runs (`RUNS_KEPT`), newest first, and `v|count`;
- `v|checkpoints`: the most recent checkpoints (`CHECKPOINTS_KEPT`), newest first: the last
  position each covers, its first, the events it recorded, its time and a prefix of its MAC.
"""

from __future__ import annotations

from typing import Any

from ledger.domain.checkpoint import Checkpoints
from ledger.domain.verification import VerificationRun
from ledger.readmodels.readstore import ReadStore

RUNS_KEPT = 20
CHECKPOINTS_KEPT = 50
DIGEST_PREFIX = 16
RUNS = "v|runs"
CHECKPOINTS = "v|checkpoints"


def recent_runs(store: ReadStore) -> dict[str, Any]:
    """The count of verification runs folded, and the most recent ones, newest first."""
    return store.read(RUNS) or {"count": 0, "runs": []}


def recent_checkpoints(store: ReadStore) -> dict[str, Any]:
    """The count of checkpoints folded, and the most recent ones, newest first."""
    return store.read(CHECKPOINTS) or {"count": 0, "checkpoints": []}


def fold_run(fold: Any, event: Any) -> None:
    """A finished verification run joins the list of recent runs."""
    if not isinstance(event, VerificationRun.Finished):
        return
    run = {"id": str(event.originator_id), "by": event.by, "scope": event.scope,
           "first": event.first, "last": event.last, **event.figures, "ok": event.ok,
           "first_bad_position": event.first_bad_position, "problem": event.problem,
           "started_at": event.started_at, "finished_at": event.timestamp.isoformat(),
           "seconds": event.seconds}
    runs = fold.get(RUNS, {"count": 0, "runs": []})
    runs["count"] += 1
    runs["runs"] = [run, *runs["runs"]][:RUNS_KEPT]
    fold.put(RUNS, runs)


def fold_checkpoint(fold: Any, position: int, event: Any) -> None:
    """A recorded checkpoint joins the list of recent checkpoints."""
    if not isinstance(event, Checkpoints.Recorded):
        return
    listed = fold.get(CHECKPOINTS, {"count": 0, "checkpoints": []})
    listed["count"] += 1
    listed["checkpoints"] = [{
        "position": position, "first": event.first, "last": event.last,
        "events": len(event.digests), "time": event.timestamp.isoformat(),
        "digest": event.mac[:DIGEST_PREFIX]}, *listed["checkpoints"]][:CHECKPOINTS_KEPT]
    fold.put(CHECKPOINTS, listed)
