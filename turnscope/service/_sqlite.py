"""SQLite session store: the embedded default (one file, WAL mode, survives a restart)."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from turnscope._exceptions import ConfigError
from turnscope._paths import default_state_path
from turnscope.service._exceptions import NotFound, StoreUnavailable, VersionConflict
from turnscope.service._records import SessionMeta, SessionRecord, StoredTurn, lock_slot

__all__ = ["SQLiteStore"]

T = TypeVar("T")

logger = logging.getLogger("turnscope.service")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    meta TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
    expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS turns (
    session_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (session_id, idx)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sessions_expires ON sessions (expires);
"""

#: how often (seconds) a process sweeps expired sessions out of the file
_PURGE_EVERY = 60.0


@dataclass
class _Pending:
    """An append waiting for the group commit that will carry it."""

    session_id: str
    expected: int
    turn: StoredTurn
    done: bool = False
    error: Exception | None = None


def _rollback(conn: sqlite3.Connection) -> None:
    # SQLite may already have rolled the transaction back itself (e.g. on SQLITE_FULL)
    if conn.in_transaction:
        conn.execute("ROLLBACK")


class SQLiteStore:
    """Sessions in one SQLite file, shared safely by threads and worker processes.

    >>> import tempfile, os
    >>> store = SQLiteStore(os.path.join(tempfile.mkdtemp(), "s.db"), ttl_seconds=3600)
    >>> store.create(SessionMeta("abc", "", "default", "bundled", 0.0))
    >>> store.load("abc").version
    0

    Each thread has its own connection (a connection is not shareable across threads).
    An append runs in ``BEGIN IMMEDIATE``: the write lock is taken before the version is
    read, so check-and-write is atomic across processes; it is held only for that check
    and one insert, never while a rewrite is computed. ``synchronous=FULL`` makes a
    committed turn survive a power cut as well as a crash.
    """

    kind = "sqlite"

    def __init__(self, path: str | Path, *, ttl_seconds: float, busy_timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.ttl = float(ttl_seconds)
        self._busy = busy_timeout
        self._local = threading.local()
        self._last_purge = 0.0
        self._writer_lock = threading.Lock()
        self._queue_lock = threading.Lock()
        self._queue: list[_Pending] = []
        if self.path.is_dir():
            raise ConfigError(f"--store sqlite:{self.path}: is a directory, not a file")
        if not self.path.parent.is_dir() and self.path.resolve() == default_state_path().resolve():
            # the per-user data folder is ours to create; any other missing folder is a typo
            self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.parent.is_dir():
            raise ConfigError(f"--store sqlite:{self.path}: folder {self.path.parent} does not exist")
        conn = self._conn()
        self._guard(lambda: conn.executescript(_SCHEMA))
        # per-session locks across processes: POSIX record locks on one byte per slot of a
        # side file. The kernel queues waiters and drops a dead process's locks by itself.
        try:
            self._lock_fd: int | None = os.open(f"{self.path}.locks", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            self._lock_fd = None  # e.g. a read-only folder: appends still serialise by version

    # -- connections ---------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                # isolation_level=None: we issue BEGIN ourselves, so we choose IMMEDIATE
                conn = sqlite3.connect(self.path, timeout=self._busy, isolation_level=None,
                                       check_same_thread=True)
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy * 1000)}")
                # another process may be switching the file to WAL at this moment: retry
                for attempt in range(50):
                    try:
                        conn.execute("PRAGMA journal_mode = WAL")
                        break
                    except sqlite3.OperationalError:
                        if attempt == 49:
                            raise
                        time.sleep(0.05)
                conn.execute("PRAGMA synchronous = FULL")
            except sqlite3.Error as exc:
                raise StoreUnavailable(f"cannot open the session store {self.path}: {exc}") from None
            self._local.conn = conn
        return conn

    def _guard(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"session store error: {exc}") from None

    # -- the interface ---------------------------------------------------------------
    def create(self, meta: SessionMeta) -> None:
        conn = self._conn()
        now = time.time()

        def run() -> None:
            conn.execute("INSERT INTO sessions (id, meta, version, expires) VALUES (?, ?, 0, ?)",
                         (meta.session_id, json.dumps(meta.to_dict()), now + self.ttl))

        self._guard(run)
        if now - self._last_purge > _PURGE_EVERY:
            self._last_purge = now
            self._guard(lambda: self._purge(conn, now))

    def _purge(self, conn: sqlite3.Connection, now: float) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            ids = [r[0] for r in conn.execute(
                "SELECT id FROM sessions WHERE expires < ? LIMIT 1000", (now,))]
            for sid in ids:
                conn.execute("DELETE FROM turns WHERE session_id = ?", (sid,))
                conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise

    def load(self, session_id: str, since: int = 0) -> SessionRecord | None:
        conn = self._conn()

        def run() -> SessionRecord | None:
            # one read transaction: in WAL mode it is a snapshot, so version and turns agree
            conn.execute("BEGIN")
            try:
                row = conn.execute("SELECT meta, version, expires FROM sessions WHERE id = ?",
                                   (session_id,)).fetchone()
                if row is None or row[2] < time.time():
                    return None
                rows = conn.execute(
                    "SELECT data FROM turns WHERE session_id = ? AND idx > ? ORDER BY idx",
                    (session_id, since)).fetchall()
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")
            meta = SessionMeta.from_dict(json.loads(row[0]))
            return SessionRecord(meta, int(row[1]), since, tuple(StoredTurn.from_json(r[0]) for r in rows))

        return self._guard(run)

    def append(self, session_id: str, expected_version: int, turn: StoredTurn) -> int:
        if turn.index != expected_version + 1:
            raise ValueError(f"turn index {turn.index} does not follow version {expected_version}")
        mine = _Pending(session_id, expected_version, turn)
        with self._queue_lock:
            self._queue.append(mine)
        # group commit: whichever thread holds the writer lock commits every append queued so
        # far in one transaction, so one fsync covers them all; the others find theirs done.
        # (Threads also queue here in order instead of racing for SQLite's lock, whose busy
        # handler sleeps in growing steps and starves some writers for a second or more.)
        with self._writer_lock:
            if not mine.done:
                with self._queue_lock:
                    batch, self._queue = self._queue, []
                self._commit(batch)
        if mine.error is not None:
            raise mine.error
        return turn.index

    def _commit(self, batch: list[_Pending]) -> None:
        committed = False
        try:
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                now = time.time()
                for p in batch:
                    # the check sees this transaction's own earlier inserts: two appends to one
                    # session in one batch are checked in order, like separate transactions
                    row = conn.execute("SELECT version, expires FROM sessions WHERE id = ?",
                                       (p.session_id,)).fetchone()
                    if row is None or row[1] < now:
                        p.error = NotFound(f"no session {p.session_id!r}", code="session_not_found")
                    elif int(row[0]) != p.expected:
                        p.error = VersionConflict(f"session is at version {row[0]}, not {p.expected}")
                    else:
                        conn.execute("INSERT INTO turns (session_id, idx, data) VALUES (?, ?, ?)",
                                     (p.session_id, p.turn.index, p.turn.to_json()))
                        conn.execute("UPDATE sessions SET version = ?, expires = ? WHERE id = ?",
                                     (p.turn.index, now + self.ttl, p.session_id))
                conn.execute("COMMIT")
                committed = True
            except BaseException:
                _rollback(conn)
                raise
        except (sqlite3.Error, StoreUnavailable) as exc:
            logger.warning("group commit of %d turn(s) failed: %s", len(batch), exc)
        finally:
            for p in batch:
                if not committed and p.error is None:
                    # nothing of this batch was stored: every waiting request learns so
                    p.error = StoreUnavailable("session store error: the turn could not be written")
                p.done = True

    @contextmanager
    def session_lock(self, session_id: str, timeout: float) -> Iterator[bool]:
        # POSIX locks belong to the process, not the thread: the engine's own per-slot
        # thread lock (same lock_slot) keeps two threads of one process apart
        fd = self._lock_fd
        slot = lock_slot(session_id)
        got = False
        if fd is not None:
            try:
                # blocking: the kernel wakes a waiting process the moment the holder lets go,
                # before the holder's next thread can take the slot again, so two workers
                # alternate instead of one starving the other
                fcntl.lockf(fd, fcntl.LOCK_EX, 1, slot)
                got = True
            except OSError:
                # EDEADLK: the kernel sees two processes each waiting for a slot the other
                # holds (different threads, so not a real deadlock): poll until the timeout
                deadline = time.monotonic() + timeout
                while not got and time.monotonic() < deadline:
                    try:
                        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot)
                        got = True
                    except OSError:
                        time.sleep(0.002)
        try:
            yield got
        finally:
            if got and fd is not None:
                fcntl.lockf(fd, fcntl.LOCK_UN, 1, slot)

    def delete(self, session_id: str) -> bool:
        conn = self._conn()

        def run() -> bool:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("DELETE FROM turns WHERE session_id = ?", (session_id,))
                n = conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                raise
            return bool(n)

        return self._guard(run)

    def ping(self) -> None:
        conn = self._conn()
        self._guard(lambda: conn.execute("SELECT 1 FROM sessions LIMIT 1").fetchall())

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
