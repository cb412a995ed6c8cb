"""Opening SQLite connections the way every part of the program needs them.

WAL mode lets the GUI read while a worker writes; ``busy_timeout`` makes a second writer wait
instead of failing at once. Connections are never shared between threads: ``ThreadConnections``
hands each thread its own.
"""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
import threading
import weakref
from pathlib import Path
from typing import Iterator

import sqlite_utils

from workbench.errors import ProjectError
from workbench.project.file_checks import is_read_only_error, read_only_message, read_only_uri

BUSY_TIMEOUT_MS = 30_000


class ProjectDatabase(sqlite_utils.Database):
    """sqlite-utils' Database with one way to group writes: ``with db.transaction(): ...``.

    sqlite-utils commits every write statement run outside an open transaction at once, so a
    plain ``with db.conn:`` block would NOT make its statements atomic. ``transaction()`` opens one
    with ``BEGIN IMMEDIATE`` (taking the write lock up front, so a busy file makes it wait instead
    of failing half-way) and commits it at the end, or rolls everything back on an error. Nested
    blocks become savepoints.
    """

    #: set for a connection that may only read (a read-only project): the file, for messages
    read_only_path: Path | None = None

    @contextlib.contextmanager
    def transaction(self) -> Iterator["ProjectDatabase"]:
        """See the class. On a read-only project a write inside says so in plain words (``ProjectError``)."""
        try:
            with self._transaction() as db:
                yield db
        except sqlite3.OperationalError as exc:
            if self.read_only_path is not None and is_read_only_error(exc):
                raise ProjectError(read_only_message(self.read_only_path)) from exc
            raise

    @contextlib.contextmanager
    def _transaction(self) -> Iterator["ProjectDatabase"]:
        conn = self.conn
        if conn.in_transaction:
            savepoint = f"sp_{secrets.token_hex(8)}"
            conn.execute(f"SAVEPOINT {savepoint}")
            try:
                yield self
            except BaseException:
                if conn.in_transaction:
                    conn.execute(f"ROLLBACK TO SAVEPOINT {savepoint}")
                    conn.execute(f"RELEASE SAVEPOINT {savepoint}")
                raise
            else:
                conn.execute(f"RELEASE SAVEPOINT {savepoint}")
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        else:
            try:
                conn.execute("COMMIT")
            except BaseException:
                # A failed COMMIT (disk full, I/O error) leaves the transaction open, and with it the write
                # lock: every later transaction() on this connection would become a savepoint inside it and
                # never be committed. Roll it back so the error is reported and the connection stays usable.
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def atomic(self) -> Iterator["ProjectDatabase"]:
        """sqlite-utils' own grouping (used inside its table methods and by ``Migrations``), made a
        ``transaction()``: its plain ``BEGIN`` is *deferred*, and a deferred transaction that reads and
        then writes fails at once with "database is locked" when another connection wrote in between,
        whatever the busy timeout."""
        with self.transaction():
            yield self


def connect(path: str | Path, *, read_only: bool = False) -> "ProjectDatabase":
    """A connection for the calling thread only (``read_only``: one that never writes, for a read-only project).

    - ``check_same_thread`` stays on: a connection (or a cursor, or a ``Database`` captured in a closure)
      used from another thread fails at once instead of mixing two threads' statements into one
      transaction.
    - ``isolation_level=None``: Python's sqlite3 module would otherwise open a hidden *deferred*
      transaction before a write made outside ``transaction()`` (a bare ``db.conn.executemany``) and keep
      it, and the write lock, open until someone commits -- stalling every other writer and turning every
      later ``transaction()`` on this connection into a savepoint that never commits. Without it a stray
      write is simply its own transaction.
    - ``synchronous = FULL``: a commit is on disk when it returns, so a power cut or an OS crash (a laptop
      whose battery dies) cannot take back an answer or a response the program already reported saved.
    """
    if read_only:
        conn = sqlite3.connect(read_only_uri(Path(path)), uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                               isolation_level=None)
    else:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if not read_only:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    db = ProjectDatabase(conn, execute_plugins=False)
    if read_only:
        db.read_only_path = Path(path)
    return db


class ThreadConnections:
    """One connection per thread for one file.

    A thread's connection is closed by that thread (``release_current_thread``, or when the thread ends
    and its thread-local storage goes). ``close_all`` closes the calling thread's connection and stops new
    ones from being opened; a worker that is still finishing (writing its last batch) keeps its own
    connection until it releases it, so closing a project never pulls a connection out from under a
    write in progress.
    """

    def __init__(self, path: Path, *, read_only: bool = False):
        self.path = path
        self.read_only = read_only
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: "weakref.WeakSet[ProjectDatabase]" = weakref.WeakSet()
        self.closing = False

    def current(self) -> "ProjectDatabase | None":
        """This thread's connection if it has one open, else None."""
        return getattr(self._local, "db", None)

    def get(self) -> "ProjectDatabase":
        db = self.current()
        if db is None:
            db = connect(self.path, read_only=self.read_only)
            self._local.db = db
            with self._lock:
                self._open.add(db)
        return db

    def open_count(self) -> int:
        """Connections open now, in every thread (those of threads that ended are gone)."""
        with self._lock:
            return len(self._open)

    def release_current_thread(self) -> None:
        """Close this thread's connection (workers call this when they finish)."""
        db = self.current()
        if db is not None:
            self._local.db = None
            with self._lock:
                self._open.discard(db)
            try:
                if db.conn.in_transaction:  # never leave a half-done transaction to the next user
                    db.conn.execute("ROLLBACK")
                db.conn.close()
            except sqlite3.Error:
                pass

    def close_all(self) -> None:
        """Close this thread's connection; connections other threads still hold close when they let go."""
        self.closing = True
        self.release_current_thread()
