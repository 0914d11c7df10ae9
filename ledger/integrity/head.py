"""The log's head, kept outside the store, so that a cut of the newest part of the log is caught.

Checkpoints (`ledger.integrity.checkpoints`) are events of the log itself: whoever deletes the
newest events of a store (and the checkpoints among them, its newer snapshots and its read
models) leaves a shorter log that is consistent in itself. So each store also keeps its *head*
in a file of its own, beside the SQLite file or the chain key (`head_path`): every position the processes of this
host wrote since the last checkpoint, with the digest of the stored event there (the digest a
checkpoint records, `ledger.core.digests.stored_digest`, noted when the event was written), and how far the checkpoints have reached. Every
line carries a MAC under the chain key, so nobody without the key can write a head that says
more, or other, than the service wrote.

- **Written after the commit**: a process appends what it wrote once the store has committed it
  (`HeadKeeper`, a thread that takes what the saves of `GATHER_SECONDS` wrote in one line and one
  fsync), so the head can lag the log by what a killed process had not written yet, and never
  leads it.
- **Kept short**: when a checkpoint is recorded the file is written again with just the
  checkpoint's reach and the positions after it (also when it has grown long with no checkpoint
  of this host's: another host checkpoints).
- **Checked**: when a process opens the store (a log that ends before its head, or whose newest
  position holds another event than the head says, refuses to start), and in full by
  `reddog verify`, which names the positions that are gone or changed.
- **Begun** once per store, and recorded in the log itself (`ledger.domain.checkpoint.LogHead`),
  so that a head file deleted with the events it recorded is missed too: a store whose log says
  it keeps a head refuses to start without it (`reddog head begin` begins another, on purpose,
  and the log records that too).

Processes of one host share the file: an append or a rewrite holds an exclusive `flock` on it,
and a rewrite replaces the file whole (written beside it, flushed, renamed), so an appender that
finds its file renamed meanwhile opens the new one. Servers on several hosts each keep their own
head file, beside their own copy of the key (or `REDDOG_HEAD_FILE` names one they share).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ledger.core.background import Background
from ledger.core.durable import fsync_folder

if TYPE_CHECKING:
    from ledger.settings import Settings
    from ledger.store.locate import StoreLocation

try:
    import fcntl
except ImportError:  # pragma: no cover - not Unix: processes do not share a head file safely
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)
FORMAT = "reddog-log-head/1"
SUFFIX = ".head"
#: Positions a head may gather with no checkpoint before it is made short from the store's.
MOST_ENTRIES = 5000
#: Seconds a keeper, woken by a save, lets more saves gather before it writes them: a process
#: that saves one command after another writes its head in a line and an fsync every 50 ms,
#: not one each (which cost simulate a third more CPU on SQLite), and a process killed
#: meanwhile leaves its head at most that much behind.
GATHER_SECONDS = 0.05


def head_path(settings: Settings, store: StoreLocation, key_file: Path | None) -> Path | None:
    """Where a store's head file is: None for a store in the process (memory); else
    `REDDOG_HEAD_FILE`; else beside a SQLite file (`ledger.sqlite3` → `ledger.sqlite3.head`,
    wherever its key is); else beside the chain key file (`chain.key` → `chain.head`); None
    for PostgreSQL with its key in the environment."""
    if store.in_process:  # gone with its process: nothing outside it to keep a head for
        return None
    if settings.head_file:
        return Path(settings.head_file).expanduser().absolute()
    if store.sqlite_path is not None:
        return Path(f"{store.sqlite_path}{SUFFIX}").absolute()
    if key_file is not None:
        return key_file.with_suffix(SUFFIX) if key_file.suffix == ".key" else Path(
            f"{key_file}{SUFFIX}")
    return None


@dataclass
class Head:
    """What a head file says: the checkpoints' reach, the positions written after it (with
    the digest of each, as first recorded), the lines whose MAC fails, and the positions
    recorded again with another event (a log cut and written anew at the positions it lost,
    as SQLite numbers its rows)."""

    checkpointed: int = 0
    events: dict[int, str] = field(default_factory=dict)
    forged: list[int] = field(default_factory=list)
    rewritten: list[int] = field(default_factory=list)

    @property
    def newest(self) -> int:
        """The newest position the head knows the log reached."""
        return max(self.checkpointed, max(self.events, default=0))


def _mac(key: bytes, body: str) -> str:
    return hmac.new(key, f"{FORMAT}|{body}".encode(), hashlib.sha256).hexdigest()[:32]


def _line(key: bytes, body: str) -> str:
    return f"{body} {_mac(key, body)}\n"


def _entries_line(key: bytes, entries: Iterable[tuple[int, str]]) -> str:
    return _line(key, "e " + " ".join(f"{position}:{digest}" for position, digest in entries))


def parse(text: str, key: bytes) -> Head:
    """A head file's text, each line checked against its MAC (a line that fails is kept out,
    its number in `forged`). A last line without its newline is one another process is
    writing at this moment (each line is written whole, in one write): it is left for later."""
    head = Head()
    lines = text.split("\n")[:-1]  # the text after the last newline is not a line yet
    for number, line in enumerate(lines, start=1):
        if number == 1 and line.startswith(FORMAT):
            continue
        body, _, mac = line.rpartition(" ")
        if not body or not hmac.compare_digest(mac, _mac(key, body)):
            head.forged.append(number)
            continue
        kind, _, rest = body.partition(" ")
        try:
            if kind == "c":
                head.checkpointed = max(head.checkpointed, int(rest))
            elif kind == "e":
                for entry in rest.split():
                    position, _, digest = entry.partition(":")
                    first = head.events.setdefault(int(position), digest)
                    if first != digest:
                        head.rewritten.append(int(position))
            else:
                head.forged.append(number)
        except ValueError:
            head.forged.append(number)
    return head


class HeadFile:
    """One store's head file: read, appended to, made short at a checkpoint, begun. It keeps
    the file open between appends (opened again when a rewrite replaced it)."""

    def __init__(self, path: Path, key: bytes) -> None:
        self.path = path
        self._key = key
        self._fd: int | None = None
        self._opened = threading.Lock()

    def exists(self) -> bool:
        return self.path.exists()

    def read(self) -> Head | None:
        """What the file says; None when there is no file."""
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return None
        return parse(text, self._key)

    def append(self, entries: Sequence[tuple[int, str]]) -> None:
        """Add positions the store has committed, with their digests, in one line, flushed."""
        if not entries:
            return
        with self._locked() as fd:
            os.write(fd, _entries_line(self._key, entries).encode())
            os.fsync(fd)

    def checkpointed(self, through: int) -> None:
        """The checkpoints now reach `through`: keep just that and the positions after it."""
        with self._locked() as fd:
            head = parse(_read_all(fd), self._key)
            if through <= head.checkpointed and not any(p <= through for p in head.events):
                return
            self._write(max(through, head.checkpointed),
                        {p: d for p, d in head.events.items() if p > through})

    def begin(self, checkpointed: int, events: dict[int, str]) -> None:
        """Write a new head (replacing any): the checkpoints' reach and the positions after."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._write(checkpointed, events)

    def _write(self, checkpointed: int, events: dict[int, str]) -> None:
        text = f"{FORMAT}\n" + _line(self._key, f"c {checkpointed}")
        if events:
            text += _entries_line(self._key, sorted(events.items()))
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}.partial")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, text.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(partial, self.path)
        fsync_folder(self.path.parent)

    def close(self) -> None:
        with self._opened:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    @contextmanager
    def _locked(self) -> Iterator[int]:
        """The file, open for appending, under an exclusive lock; opened again if a rewrite
        (of this process or another) replaced it, as found once the lock is held."""
        with self._opened:
            while True:
                if self._fd is None:
                    self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
                fd = self._fd
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    try:
                        same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
                    except FileNotFoundError:
                        same = False
                    if same:
                        yield fd
                        return
                finally:
                    if fcntl is not None:
                        fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
                self._fd = None


def _read_all(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks).decode()


@dataclass(frozen=True)
class Gone:
    """A way the log differs from its head: the first position concerned, and what."""

    position: int
    problem: str


def compare(head: Head, path: Path, log_end: int, checkpointed: int,
            digest_at: dict[int, str]) -> list[Gone]:
    """How the log differs from its head: `log_end`, its last position; `checkpointed`, how far
    its checkpoints reach; `digest_at`, the digest of each stored position after that (those
    the head names, at least)."""
    found: list[Gone] = [Gone(0, f"line {n} of the head file {path} is not sealed by the "
                                 "store's chain key") for n in head.forged]
    rewritten = sorted({p for p in head.rewritten if p > checkpointed})
    if rewritten:
        found.append(Gone(rewritten[0], f"{_positions(rewritten)} "
                                        f"{'was' if len(rewritten) == 1 else 'were'} written "
                                        "twice, with other events the second time: the log "
                                        "was cut there and written again"))
    newest = head.newest
    if log_end < newest:
        found.append(Gone(log_end + 1, f"positions {log_end + 1:,}–{newest:,} are gone: the "
                                       f"log ends at position {log_end:,}, but its head "
                                       f"({path}) recorded it up to position {newest:,}"))
    elif checkpointed < head.checkpointed:
        found.append(Gone(checkpointed + 1, f"the checkpoints end at position {checkpointed:,},"
                                            " but the head recorded them up to position "
                                            f"{head.checkpointed:,}: checkpoints are gone"))
    missing = [p for p in sorted(head.events) if checkpointed < p <= log_end
               and p not in digest_at]
    if missing:
        found.append(Gone(missing[0], f"{_positions(missing)} {'is' if len(missing) == 1 else 'are'}"
                                      f" gone: the head ({path}) recorded an event at each"))
    changed = [p for p in sorted(head.events) if p > checkpointed and p in digest_at
               and digest_at[p] != head.events[p]]
    if changed:
        found.append(Gone(changed[0], f"{_positions(changed)} {'holds' if len(changed) == 1 else 'hold'}"
                                      " another event than the head recorded there (deleted, "
                                      "inserted, swapped or altered)"))
    return sorted(found, key=lambda gone: gone.position)


def _positions(positions: list[int]) -> str:
    """`position 7`, or `positions 7–9, 12`."""
    runs: list[list[int]] = []
    for p in positions:
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    text = ", ".join(f"{a:,}" if a == b else f"{a:,}–{b:,}" for a, b in runs)
    return f"position {text}" if len(positions) == 1 else f"positions {text}"


class HeadKeeper(Background):
    """Appends what this process's saves wrote to the head file, from a thread of its own: each
    wake writes everything queued since the last in one line and one fsync, so a save never
    waits for the head and a burst of saves costs one write. `stop` writes what is queued.
    A write that fails is logged and tried again at the next wake (the entries are kept)."""

    thread_name = "reddog-log-head"

    def __init__(self, head: HeadFile, store_checkpoint: Any) -> None:
        """`store_checkpoint()`: how far the store's checkpoints reach now (read when the head
        has gathered `MOST_ENTRIES` positions without a checkpoint of this host's)."""
        super().__init__()
        self.head = head
        self._store_checkpoint = store_checkpoint
        self._queued: list[tuple[int, str]] = []
        self._checkpoint: int | None = None
        self._lock = threading.Lock()
        self._writing = threading.Lock()  # one flush at a time: a flush returns once written
        self._since_short = 0

    def wrote(self, digests: Iterable[tuple[int, str]]) -> None:
        """Queue the positions a save committed, each with its digest (`stored_digest`, worked
        out when it was written: `ledger.core.digests.recorded_digest`)."""
        with self._lock:
            self._queued.extend(digests)
        self.notify()

    def checkpointed(self, through: int) -> None:
        """Queue the making short of the head: the checkpoints reach `through`."""
        with self._lock:
            self._checkpoint = max(through, self._checkpoint or 0)
        self.notify()

    def flush(self) -> None:
        """Write what is queued now, in this thread: when it returns, every position queued
        before the call is in the file (a write the keeper's thread had begun is waited for)."""
        with self._writing:
            self._flush()

    def _flush(self) -> None:
        with self._lock:
            queued, self._queued = self._queued, []
            through, self._checkpoint = self._checkpoint, None
        try:
            if queued:
                self.head.append(queued)
                self._since_short += len(queued)
            if through is None and self._since_short > MOST_ENTRIES:
                through = self._store_checkpoint()
            if through is not None:
                self.head.checkpointed(through)
                self._since_short = 0
        except Exception:
            log.exception("the log's head could not be written; trying again at the next save")
            with self._lock:
                self._queued[:0] = queued
                if through is not None:
                    self._checkpoint = max(through, self._checkpoint or 0)

    def run(self) -> None:
        while not self._stop.is_set():
            self._waited(None)
            self._clear_wake()
            self._stop.wait(GATHER_SECONDS)  # let a burst gather (a stop writes at once)
            self.flush()
        self.flush()
        self.head.close()
