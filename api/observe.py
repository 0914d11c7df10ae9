"""Watching the service: a request id on every request and answer, one structured log line per
request, Prometheus metrics at `/metrics`, and liveness and readiness at `/health/*`.

- **Request ids.** A request's `X-Request-Id` is kept when it is a plain token (1-64 of
  `A-Z a-z 0-9 . _ -`), else one is made; it is returned in the `X-Request-Id` header and in
  every problem+json body (`request_id`).
- **Access log.** Logger `reddog.access`, one line per request: request id, key id (never the
  key), method, route (the rule, not the address, so ids do not make a new route), status,
  duration and the aggregate versions the request wrote (`ledger.app.telemetry.WRITTEN`). JSON, or
  a short line for a person when the log goes to a terminal (`configure_logging`).
- **Metrics.** Requests by method, route and status and their latency (histogram); commands
  applied, refused and conflicted, events appended (`ledger.app.telemetry`), on a SQLite file with
  group commit the groups committed and the saves they wrote (`ledger.store.groupcommit`), how far
  the read models are behind, chips by account kind and the last verification run (both from
  the read models), in a registry of the app's own. Under `reddog serve --workers N` the
  counters are summed over the workers, whichever one answers the scrape (`Metrics`).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from flask import Flask, Response, g, has_request_context, request
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from ledger.app.telemetry import WRITTEN
from ledger.readmodels.chips import chips_by_kind
from ledger.readmodels.verification import recent_runs

HEADER = "X-Request-Id"
_TOKEN = re.compile(r"[A-Za-z0-9._-]{1,64}")
access = logging.getLogger("reddog.access")
#: Seconds: the latency histogram's buckets, from a cached read to a slow audit read.
BUCKETS = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


def request_id() -> str | None:
    """The current request's id (None outside a request)."""
    if not has_request_context():
        return None
    if "request_id" not in g:
        given = request.headers.get(HEADER, "")
        g.request_id = given if _TOKEN.fullmatch(given) else uuid.uuid4().hex
    return g.request_id


class LedgerCollector:
    """The store's own figures, read when scraped: the same whichever process is asked."""

    def __init__(self, ledger: Any) -> None:
        self.ledger = ledger

    def collect(self) -> Any:
        try:
            status = self.ledger.projection.status()
        except Exception:  # noqa: BLE001 - a scrape never fails for a store that is away
            return
        yield GaugeMetricFamily("reddog_projection_behind_events",
                                "Events of the log the read models have not folded yet",
                                value=status["behind"])
        yield GaugeMetricFamily("reddog_log_head_position", "The last position of the event log",
                                value=status["head"])
        store = self.ledger.projection.store
        chips = GaugeMetricFamily("reddog_chips", "Chips held by each kind of account, as folded "
                                  "(operator: minus every chip granted; the kinds sum to 0)",
                                  labels=["account_kind"])
        for kind, balance in sorted(chips_by_kind(store).items()):
            chips.add_metric([kind], balance)
        yield chips
        runs = recent_runs(store)
        yield CounterMetricFamily("reddog_verify_runs", "Verification runs recorded in the log",
                                  value=runs["count"])
        if runs["runs"]:
            last = runs["runs"][0]
            yield GaugeMetricFamily("reddog_verify_last_ok",
                                    "1 if the last verification run passed, else 0",
                                    value=int(bool(last["ok"])))
            yield GaugeMetricFamily("reddog_verify_last_finished_timestamp_seconds",
                                    "When the last verification run finished (Unix time)",
                                    value=datetime.fromisoformat(last["finished_at"]).timestamp())
            yield GaugeMetricFamily("reddog_verify_last_positions",
                                    "Positions the last verification run checked",
                                    value=last.get("positions") or 0)


def count_in_files() -> None:
    """Make this process's new metrics count in the multiprocess folder: the client library
    chooses where values live when it is imported, which in the master was before the folder
    was named."""
    from prometheus_client import values

    values.ValueClass = values.get_value_class()


def multiprocess_dir() -> str | None:
    """Where the processes of one server keep their counters (`PROMETHEUS_MULTIPROC_DIR`, set
    by `reddog serve --workers N`, `api.production`), or None for a server of one process."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


class Metrics:
    """The app's metrics, in a registry of its own. The counters of what this process did
    (requests, commands, events, group commits) are the client library's, counted as each
    happens (commands through the ledger's `Telemetry`, groups through the group-commit
    recorder), so that with several worker processes a scrape, whichever worker answers it,
    sums every worker's (`prometheus_client.multiprocess`); the store's figures come from
    `LedgerCollector`."""

    def __init__(self, ledger: Any) -> None:
        self.ledger = ledger
        self.registry = CollectorRegistry()
        self.requests = Counter("reddog_http_requests", "HTTP requests answered",
                                ["method", "route", "status"], registry=self.registry)
        self.latency = Histogram("reddog_http_request_duration_seconds",
                                 "Time to answer an HTTP request", ["method", "route"],
                                 buckets=BUCKETS, registry=self.registry)
        self.commands = Counter("reddog_commands", "Commands by outcome: applied, refused by a "
                                "rule or a value, conflicted (lost every race)", ["outcome"],
                                registry=self.registry)
        self.events = Counter("reddog_events_appended", "Events appended",
                              registry=self.registry)
        self.groups: dict[str, Counter] = {}
        committed = getattr(ledger.recorder, "committed", None)
        if committed is not None:  # group commit on a SQLite file (ledger.store.groupcommit)
            self.groups = {
                "groups": Counter("reddog_group_commits", "Transactions that committed a group "
                                  "of saves (group commit on SQLite)", registry=self.registry),
                "saves": Counter("reddog_group_saves", "Saves written in committed groups "
                                 "(group commit on SQLite)", registry=self.registry)}
            counts = ledger.recorder.group_counts()
            self._count_group(counts["groups"], counts["saves"])
            committed.append(lambda saves: self._count_group(1, saves))
        # Counted where it happens, as it happens (from what the process counted before):
        # with several workers each counts into its files, and a scrape, whichever worker
        # answers it, sums every worker's (`prometheus_client.multiprocess`).
        counts = ledger.telemetry.snapshot()
        for outcome, n in counts["commands"].items():
            self.commands.labels(outcome).inc(n)
        self.events.inc(counts["events_appended"])
        ledger.telemetry.listen(self._count_command)
        if multiprocess_dir() is None:
            self.scraped = self.registry
        else:
            self.scraped = CollectorRegistry()
            multiprocess.MultiProcessCollector(self.scraped)
        self.scraped.register(LedgerCollector(ledger))

    def _count_command(self, outcome: str, recordings: list[Any]) -> None:
        self.commands.labels(outcome).inc()
        if recordings:
            self.events.inc(len(recordings))

    def _count_group(self, groups: int, saves: int) -> None:
        self.groups["groups"].inc(groups)
        self.groups["saves"].inc(saves)

    def exposition(self) -> Response:
        return Response(generate_latest(self.scraped),
                        mimetype="text/plain", content_type="text/plain; version=0.0.4")


def init_app(app: Flask, ledger: Any) -> Metrics:
    """Give every request an id, time it, log it and count it."""
    metrics = Metrics(ledger)
    # The metrics' children by their labels: `labels()` builds and checks its key each time.
    counted: dict[tuple[str, str, int], Any] = {}
    timed: dict[tuple[str, str], Any] = {}

    @app.before_request
    def start() -> None:
        request_id()
        ours = g._get_current_object()  # one lookup of the proxy, not one per name
        ours.started = time.perf_counter()
        ours.written = []
        ours.written_token = WRITTEN.set(ours.written)

    @app.after_request
    def finish(response: Response) -> Response:
        ours = g._get_current_object()
        asked = request._get_current_object()  # type: ignore[attr-defined]
        rid = request_id() or ""
        response.headers[HEADER] = rid
        seconds = time.perf_counter() - getattr(ours, "started", time.perf_counter())
        rule = asked.url_rule
        route = rule.rule if rule is not None else "(unmatched)"
        method, status = asked.method, response.status_code
        try:
            counter = counted[method, route, status]
        except KeyError:
            counter = counted[method, route, status] = metrics.requests.labels(
                method, route, str(status))
        counter.inc()
        try:
            histogram = timed[method, route]
        except KeyError:
            histogram = timed[method, route] = metrics.latency.labels(method, route)
        histogram.observe(seconds)
        if not access.isEnabledFor(logging.INFO):  # nobody reads the line: do not build it
            return response
        who = getattr(ours, "principal", None)
        written = getattr(ours, "written", None) or []
        access.info("%s %s %s", method, route, status, extra={"fields": {
            "request_id": rid, "key_id": getattr(who, "key_id", None),
            "method": method, "route": route, "path": asked.path,
            "status": status, "duration_ms": round(seconds * 1000, 2),
            "written": [{"aggregate": aggregate, "version": version}
                        for aggregate, version in written]}})
        return response

    @app.teardown_request
    def forget(_error: BaseException | None) -> None:
        token = g.pop("written_token", None)
        if token is not None:
            WRITTEN.reset(token)

    app.extensions["reddog_metrics"] = metrics
    return metrics


class JsonLines(logging.Formatter):
    """One JSON object per line: time (UTC), level, logger, the process (its pid: a server of
    several processes writes to one stream), message and the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(), "logger": record.name, "pid": record.process,
            "message": record.getMessage(), **getattr(record, "fields", {})}
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


class Console(logging.Formatter):
    """A short line for a person at a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "fields", {})
        stamp = datetime.fromtimestamp(record.created, UTC).strftime("%H:%M:%S")
        if "route" in fields:
            written = f" wrote {len(fields['written'])}" if fields["written"] else ""
            text = (f"{stamp} {fields['status']} {fields['method']} {fields['path']} "
                    f"{fields['duration_ms']:.1f} ms{written} [{fields['request_id'][:8]}]")
        else:
            text = f"{stamp} {record.levelname.lower()} {record.name}: {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def configure_logging(level: str = "INFO", fmt: str = "auto", stream: Any = None) -> None:
    """Send the service's logs to `stream` (stderr): JSON lines, or the console format when
    `fmt` is `auto` and the stream is a terminal."""
    stream = stream or sys.stderr
    console = fmt == "console" or (fmt == "auto" and stream.isatty())
    handler = logging.StreamHandler(stream)
    handler.setFormatter(Console() if console else JsonLines())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    logging.getLogger("waitress.queue").setLevel(logging.WARNING)
