"""The bench's `publiclog` section, run small (`quick`: SQLite, 2 s phases, a tree of 20,000
leaves, 200 requests a kind), so that it cannot rot unnoticed: it still starts the server with
the log off and on, builds a tree, serves it and gives every figure it names, each with a value
(no figure is checked against its goal here: that is the bench's job, not a test's)."""

from __future__ import annotations

import math

import pytest

from tests.bench import publiclog
from tests.bench.common import Context
from tests.conftest import wrk_or_skip

# Slow, and a load test: `make test` runs it after the rest, alone.
pytestmark = [pytest.mark.slow, pytest.mark.load]

KINDS = ("GET /log/proof/inclusion", "GET /log/proof/consistency", "GET /log/tile (full)",
         "GET /log/tile (partial)", "GET /log/tile/entries (full)")
EXPECTED = {
    "commands/s at max rate, log on",
    "commands' p99 at max rate, log on",
    "tree's backlog when the load stopped",
    "tree caught up, after the load stopped",
    "tree built to 20k leaves",
    "tree bytes per leaf at 20k leaves",
    *(f"p99 {kind} at 20k leaves" for kind in KINDS),
}


def test_the_publiclog_section_gives_its_figures(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("gunicorn")
    wrk_or_skip()  # the load's generator (skipped without it; CI=true fails instead)
    figures = publiclog.run(Context(stores=["sqlite"], quick=True, workdir=tmp_path))
    by_name = {f.name: f for f in figures}
    assert set(by_name) == EXPECTED, sorted(by_name)
    for figure in figures:
        assert figure.section == "publiclog" and figure.store == "sqlite"
        assert math.isfinite(figure.value) and figure.value >= 0, figure
        if figure.ceiling is not None:
            assert figure.ceiling_value and figure.ceiling_value > 0, figure
            assert figure.ratio is not None and figure.ratio > 0, figure
    on_off = by_name["commands/s at max rate, log on"].extra
    for run in on_off["off"] + on_off["on"]:
        assert run["failed"] == 0 and run["commands"] > 0
    # The tree reached the log's last event once the load stopped.
    for backlog in by_name["tree's backlog when the load stopped"].extra["runs"]:
        assert backlog["tree_last"] >= backlog["log_last"] > 0
    # Every answer timed was a 200, and the tree's file holds at least its hashes.
    for kind in KINDS:
        timed = by_name[f"p99 {kind} at 20k leaves"].extra
        assert timed["count"] == 200 and timed["not_200"] == 0
    assert by_name["tree bytes per leaf at 20k leaves"].ratio >= 1
