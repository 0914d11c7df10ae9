"""The bench's `http` section, run small (`quick`: SQLite, 2 s phases, 4 clients, 2 workers),
so that it cannot rot unnoticed: it still starts the production server and its clients, and
gives every figure it names with a positive value."""

from __future__ import annotations

import math

import pytest

from tests.bench import http
from tests.bench.common import Context
from tests.conftest import wrk_or_skip

# Slow (skipped by `-m "not slow"`), and a load test: `make test` runs it after the rest, alone.
pytestmark = [pytest.mark.slow, pytest.mark.load]

EXPECTED = {
    "/health/live requests/s",
    "server CPU per command",
    "requests/s at max rate",
    "commands/s at max rate, group commit on",
    "commands/s at max rate, group commit off",
    "p99 at half max rate (open loop)",
    "server RSS peak (all processes)",
    "server RSS after the 2nd half of the max-rate commands",
    "play p99 beside 4 audit readers",
}


def test_the_http_section_gives_its_figures(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("gunicorn")
    wrk_or_skip()  # the load's generator (skipped without it; CI=true fails instead)
    figures = http.run(Context(stores=["sqlite"], quick=True, workdir=tmp_path))
    names = {f.name for f in figures}
    assert EXPECTED <= names, sorted(names)
    kinds = {n.removeprefix("p99 at max rate: ") for n in names if n.startswith("p99 at max")}
    # Every kind is one the mix sends; the commonest are there even in a short, slow run.
    assert {"deal", "read table"} <= kinds <= set(http.COMMANDS + http.READS), sorted(kinds)
    for figure in figures:
        assert figure.section == "http" and figure.store == "sqlite"
        assert figure.value > 0 and math.isfinite(figure.value), figure
        if figure.ceiling is not None:
            assert figure.ceiling_value and figure.ceiling_value > 0, figure
            assert figure.ratio is not None and figure.ratio > 0, figure
    by_name = {f.name: f for f in figures}
    # The CPU per command: the commands-alone phase answered commands, and nothing but them.
    cpu = by_name["server CPU per command"]
    alone = cpu.extra["commands"]
    assert alone["commands"] > 0 and alone["failed"] == 0
    assert set(alone["kinds"]) <= set(http.COMMANDS) | {"read table"}, sorted(alone["kinds"])
    # Two pairs of phases, each side the less of its two (a disturbed phase does not decide).
    pairs = cpu.extra["pairs"]
    assert len(pairs) == 2
    assert cpu.ceiling_value == min(pair["live_cpu_ms"] for pair in pairs)
    assert cpu.value == min(pair["command_cpu_ms"] for pair in pairs)
    assert cpu.ratio == pytest.approx(cpu.value / cpu.ceiling_value)
    # Nothing went unanswered or answered 5xx, at full speed or on schedule.
    assert by_name["p99 at half max rate (open loop)"].extra["half"]["failed"] == 0
    assert by_name["commands/s at max rate, group commit on"].extra["result"]["failed"] == 0
    # Beside the audit readers: play measured at the same offered rate, kind by kind, and the
    # readers answered (or told to wait), never failed.
    audited = by_name["play p99 beside 4 audit readers"]
    assert audited.extra["audited"]["failed"] == 0
    assert audited.extra["quiet"]["played"] > 0 and audited.extra["audited"]["played"] > 0
    reads = {k: v for k, v in audited.extra["audited"]["statuses"].items()
             if k.startswith("audit ")}
    assert sum(n for v in reads.values() for s, n in v.items() if s in ("200", "429")) > 0
    assert "audit" not in " ".join(audited.extra["quiet"]["statuses"])  # alone means alone
    assert audited.ratio == pytest.approx(audited.extra["audited"]["play_p99_ms"]
                                          / audited.extra["quiet"]["play_p99_ms"])
