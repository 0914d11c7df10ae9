"""Files and folders the service makes are its owner's alone: files 0600, folders 0700.

A store's file and its WAL hold every unrevealed server seed in plain text until its deal
ends, and so do its backups; its chain key lets whoever holds it write events the verifier
accepts. No other local user may read any of them. Two measures, each enough alone:

- every `reddog` command sets its process's umask to `UMASK` first (`api.cli`): whatever it,
  the libraries or gunicorn's workers (which inherit it) create is private;
- where the ledger creates a file or a folder itself it gives the private mode, for a process
  whose umask is another's (one that embeds the ledger, a test). SQLite creates a database's
  `-wal` and `-shm` with the mode of the database file, so a database is created private
  before SQLite first opens it (`create_file`).

What is there already is never changed: a file or folder the operator made keeps its mode.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The umask of every `reddog` process: nothing it creates is readable by others.
UMASK = 0o077
FILE_MODE = 0o600
FOLDER_MODE = 0o700


def make_folder(path: Path) -> Path:
    """Make a folder and the parents it lacks, each private; those there are left as they are."""
    missing = []
    folder = path
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=FOLDER_MODE)
        except FileExistsError:  # another process made it first
            pass
    return path


def create_file(path: Path | str) -> bool:
    """Create an empty private file unless one is there; whether this call made it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    except FileExistsError:
        return False
    os.close(fd)
    return True

