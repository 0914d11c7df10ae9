"""A disk whose flush is slow, for the group-commit figures: `fsync` and `fdatasync` made to take
`REDDOG_BENCH_FSYNC_US` microseconds longer, by a small shared library loaded with `LD_PRELOAD`.

Group commit exists for the disks where a durable commit waits for the flush: a disk without a
write cache (or whose cache is not trusted) takes milliseconds to flush, and SQLite with
`synchronous=FULL` flushes once per commit, so one save per transaction caps every writer at one
flush at a time. The bench machine's virtual disk flushes in about 0.1 ms, so there the ceiling
is the CPU, and grouping has nothing to save. With this library the same runs are made on a disk
that flushes like one without a cache: the figures say both.

`build(folder)` compiles it with the machine's C compiler (None where there is none, or it
fails);
`environment(library, micros)` is what a process needs to run with it; `requested_micros(ctx)`
how much slower a bench run asks for (`--set flush_micros=N`; 0, and by default with `--quick`,
leaves the slow disk out).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

#: Microseconds a flush takes longer: about what a disk without a write cache takes to flush.
DEFAULT_MICROS = 2_000

SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

static long slower_by = -1;

static void wait_as_a_slow_disk(void) {
    if (slower_by < 0) {
        const char *text = getenv("REDDOG_BENCH_FSYNC_US");
        slower_by = text ? atol(text) : 0;
    }
    if (slower_by > 0) {
        int saved = errno;
        struct timespec left = {slower_by / 1000000, (slower_by % 1000000) * 1000};
        while (nanosleep(&left, &left) == -1 && errno == EINTR) {
        }
        errno = saved;
    }
}

/* `name`, then the wait: the real call found once, by name, in the library after this one. */
#define SLOWED(name)                                                       \
    int name(int fd) {                                                     \
        static int (*real)(int);                                           \
        if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, #name);           \
        int result = real(fd);                                             \
        wait_as_a_slow_disk();                                             \
        return result;                                                     \
    }

SLOWED(fsync)
SLOWED(fdatasync)
"""


def requested_micros(ctx: Any) -> int:
    """The flush's added microseconds a bench run asks for: `flush_micros`, else the default
    (none with `--quick`)."""
    return int(ctx.options.get("flush_micros", 0 if ctx.quick else DEFAULT_MICROS))


def build(folder: Path) -> Path | None:
    """The library, compiled into `folder`; None where no C compiler is found."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    source, library = folder / "slowsync.c", folder / "slowsync.so"
    source.write_text(SOURCE)
    try:
        subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(library), str(source),
                        "-ldl"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return library


def environment(library: Path, micros: int) -> dict[str, str]:
    """The variables that make a process flush like the slow disk."""
    return {"LD_PRELOAD": str(library), "REDDOG_BENCH_FSYNC_US": str(micros)}
