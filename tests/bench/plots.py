"""Plots of the last bench run for docs/performance.md, as SVG written by hand (no plotting
library): load time against history length, and latency against load; and the run's table.

`python -m tests.bench.plots [var/bench/last.json]` writes `docs/performance/*.svg` and puts the
run's machine and table in `docs/performance.md` between its `bench-table` markers.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from tests.bench.common import BENCH_DIR, ROOT

OUT = ROOT / "docs" / "performance"
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#e7969c"]
Series = dict[str, list[tuple[float, float]]]


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    if high <= low:
        return [low]
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = min((m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw),
               default=raw)
    first = math.floor(low / step) * step
    return [first + i * step for i in range(int((high - first) / step) + 2)
            if first + i * step <= high + step * 1e-9]


def _label(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if value >= 1_000:
        return f"{value / 1_000:g}k"
    return f"{value:g}"


def line_chart(title: str, x_label: str, y_label: str, series: Series, *,
               log_x: bool = False, width: int = 720, height: int = 400) -> str:
    """An SVG line chart with axes, ticks, units and a legend."""
    left, right, top, bottom = 70, 200, 40, 60
    points = [p for line in series.values() for p in line]
    if not points:
        return ""
    xs = [math.log10(x) if log_x else x for x, _ in points]
    x_low, x_high = min(xs), max(xs)
    if x_high == x_low:
        x_high = x_low + 1
    y_high = max(y for _, y in points) * 1.1 or 1.0
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        value = math.log10(x) if log_x else x
        return left + (value - x_low) / (x_high - x_low) * plot_w

    def py(y: float) -> float:
        return top + plot_h - y / y_high * plot_h

    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">'),
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="15" font-weight="bold">{escape(title)}</text>']
    for y in _ticks(0, y_high):
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{py(y):.1f}" y2="{py(y):.1f}" '
                   'stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end">'
                   f'{_label(y)}</text>')
    x_ticks = sorted({x for x, _ in points}) if log_x else _ticks(min(p[0] for p in points),
                                                                  max(p[0] for p in points))
    for x in x_ticks:
        out.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{top + plot_h}" '
                   f'y2="{top + plot_h + 5}" stroke="#333"/>')
        out.append(f'<text x="{px(x):.1f}" y="{top + plot_h + 18}" text-anchor="middle">'
                   f'{_label(x)}</text>')
    out.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#333"/>')
    out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" '
               f'y2="{top + plot_h}" stroke="#333"/>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 15}" text-anchor="middle">'
               f'{escape(x_label)}</text>')
    out.append(f'<text transform="translate(18 {top + plot_h / 2}) rotate(-90)" '
               f'text-anchor="middle">{escape(y_label)}</text>')
    for index, (name, line) in enumerate(series.items()):
        colour = COLOURS[index % len(COLOURS)]
        line = sorted(line)
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in line)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                   'stroke-width="2"/>')
        out.extend(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>'
                   for x, y in line)
        ly = top + 10 + index * 18
        out.append(f'<line x1="{width - right + 15}" x2="{width - right + 35}" y1="{ly}" '
                   f'y2="{ly}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{width - right + 40}" y="{ly + 4}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def series_from(figures: Sequence[dict[str, Any]], section: str, key: str) -> Series:
    """Lines a section put in its figures' `extra[key]`: {line name: [[x, y], ...]}."""
    series: Series = {}
    for figure in figures:
        if figure["section"] != section:
            continue
        for name, line in (figure.get("extra") or {}).get(key, {}).items():
            series.setdefault(name, []).extend((float(x), float(y)) for x, y in line)
    return series


DOC = ROOT / "docs" / "performance.md"
START, END = "<!-- bench-table -->", "<!-- /bench-table -->"


def doc_table(result: dict[str, Any]) -> str:
    """The run as markdown: when, on what, how long, and every figure beside its ceiling."""
    from tests.bench.__main__ import table
    from tests.bench.common import Figure

    info = result["machine"]
    figures = [Figure(**f) for f in result["figures"]]
    sections = ", ".join(f"{k} {v:.0f} s" for k, v in result["section_seconds"].items())
    lines = [
        (f"Run {info['date']} on {info.get('cpu', '?')}, {info['cpu_count']} CPUs, "
        f"{info.get('memory_gib', '?')} GiB ({info['platform']}); {info['python']}, "
        f"eventsourcing {info['eventsourcing']}, psycopg {info.get('psycopg')}. "
        f"Total {result['total_seconds']:.0f} s: {sections}."),
        "",
        table(figures),
    ]
    notes = [f"- {f.section} / {f.name} ({f.store}): {f.note}" for f in figures if f.note]
    if notes:
        lines += ["", "<details><summary>Notes on each figure</summary>", "", *notes, "",
                  "</details>"]
    if result.get("failed"):
        lines += ["", *(f"- section {k} failed: {v}" for k, v in result["failed"].items())]
    return "\n".join(lines)


def write_doc_table(result: dict[str, Any], doc: Path = DOC) -> bool:
    text = doc.read_text()
    if START not in text:
        return False
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    doc.write_text(f"{head}{START}\n{doc_table(result)}\n{END}{tail}")
    return True


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    source = Path(args[0]) if args else BENCH_DIR / "last.json"
    result = json.loads(source.read_text())
    figures = result["figures"]
    OUT.mkdir(parents=True, exist_ok=True)
    charts = {
        "load-vs-history.svg": line_chart(
            "Loading an aggregate against its history", "events in its history (log scale)",
            "load time (ms)", series_from(figures, "replay", "plot"), log_x=True),
        "latency-vs-load.svg": line_chart(
            "Latency of the mix against its load", "requests of the mix answered a second",
            "latency (ms)", series_from(figures, "http", "plot")),
    }
    if write_doc_table(result):
        print(f"wrote the run's table in {DOC}")
    for name, svg in charts.items():
        if svg:
            (OUT / name).write_text(svg)
            print(f"wrote {OUT / name}")
        else:
            print(f"no data for {name} in {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
