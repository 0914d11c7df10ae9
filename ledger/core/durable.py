"""Flushing what was written to a file, or a new name in a folder, to the disk."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def fsync_path(path: Path) -> None:
    """Flush a file's contents (or a folder's entries) to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_folder(folder: Path) -> None:
    """Flush a folder's entries (a new file's name survives a crash), where the system can: a
    file system that cannot open or flush a folder is left as it is."""
    with contextlib.suppress(OSError):
        fsync_path(folder)


__all__ = ["fsync_folder", "fsync_path"]
