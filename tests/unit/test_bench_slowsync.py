"""The bench's slow disk (`tests.bench.slowsync`): with its library preloaded, a flush takes at
least the time it is told to add, and nothing else about the flush changes; without it, a flush
is as fast as the disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.bench.slowsync import build, environment

PROBE = """
import json, os, sys, time
path = sys.argv[1]
fd = os.open(path, os.O_WRONLY | os.O_CREAT)
times = []
for call in (os.fsync, os.fdatasync) * 5:
    os.write(fd, b"x" * 512)
    began = time.perf_counter()
    call(fd)
    times.append(time.perf_counter() - began)
os.close(fd)
print(json.dumps({"shortest": min(times), "size": os.path.getsize(path)}))
"""


def flushes(tmp_path: Path, env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "probe")],
                          env={**os.environ, **env}, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_a_flush_takes_at_least_the_time_added_and_still_writes(tmp_path):
    library = build(tmp_path)
    assert library is not None, "the bench machine has a C compiler (gcc)"
    slow = flushes(tmp_path, environment(library, 30_000))
    assert slow["shortest"] >= 0.030
    assert slow["size"] == 10 * 512
    (tmp_path / "probe").unlink()
    assert flushes(tmp_path, environment(library, 0))["shortest"] < 0.030
