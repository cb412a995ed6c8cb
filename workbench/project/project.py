"""The project file: create, open (check, migrate), save a copy, close.

A project is one SQLite file. ``Project`` is also the entry point for notebooks::

    from workbench import Project, books_frame
    p = Project.open("my-study.palimpsest")
    books_frame(p)
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import weakref
from pathlib import Path
from typing import Any

import sqlite_utils

from workbench.errors import ProjectError
from workbench.project import file_checks, schema
from workbench.project.connection import ThreadConnections
from workbench.version import __version__

SUFFIX = ".palimpsest"


def now() -> str:
    """Timestamps stored in the project: UTC, ISO 8601, seconds."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _backup_to(source: sqlite3.Connection, target: Path) -> None:
    """Copy a live database with SQLite's online backup API (safe while others write)."""
    dest = sqlite3.connect(str(target))
    try:
        source.backup(dest)
        # The copy stands alone: no WAL file needed beside it.
        dest.execute("PRAGMA journal_mode = DELETE")
    finally:
        dest.close()


_OPEN: "weakref.WeakSet[Project]" = weakref.WeakSet()  # projects of this process, to refuse overwriting one


def with_project_suffix(path: str | Path) -> Path:
    """``path`` with the project suffix added when it has none (what create and save-as write)."""
    path = Path(path)
    return path.with_suffix(SUFFIX) if path.suffix == "" else path


def _wal_and_shm(path: Path) -> tuple[Path, Path]:
    return file_checks.wal_file(path), file_checks.shm_file(path)


def _remove_with_wal(path: Path) -> None:
    path.unlink(missing_ok=True)
    for extra in _wal_and_shm(path):
        extra.unlink(missing_ok=True)


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)  # a hard link, or another spelling
    except OSError:
        return False


def _is_open(path: Path) -> bool:
    target = path.resolve()
    return any(not p.closed and p.path.resolve() == target for p in list(_OPEN))


class Project:
    """An open project file. Safe to use from several threads: each gets its own connection."""

    def __init__(self, path: Path, *, read_only: bool = False):
        self.path = Path(path)
        #: opened for reading only: the file or its folder may not be written (``file_checks.is_read_only``)
        self.read_only = read_only
        self._connections = ThreadConnections(self.path, read_only=read_only)
        self.closed = False
        _OPEN.add(self)

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def create(cls, path: str | Path, *, overwrite: bool = False) -> "Project":
        path = with_project_suffix(path)
        if path.exists():
            if not overwrite:
                raise ProjectError(f"{path.name} already exists. Open it, or choose another name.")
            if _is_open(path):
                # deleting it would pull the file from under the connections (and any run) using it
                raise ProjectError(f"{path.name} is the project open now, so it cannot be replaced. Choose "
                                   "another name, or close the project first.")
            _remove_with_wal(path)
        if not path.parent.exists():
            raise ProjectError(f"The folder {path.parent} does not exist. Choose an existing folder.")
        project = cls(path)
        try:
            db = project.db
            db.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
            schema.apply(db)
            project._record_version(db)
        except sqlite3.Error as exc:
            project.close()
            raise ProjectError(f"Could not create {path.name}: {exc}. Check that the folder is writable.") from exc
        return project

    @classmethod
    def open(cls, path: str | Path, *, migrate: bool = True, read_only: bool | None = None) -> "Project":
        """Open a project. Any other file is refused as it was, before anything is written.

        ``read_only``: None opens the project read-only when the file or its folder may not be written
        (``project.read_only`` says so); True opens it read-only anyway.
        """
        path = Path(path)
        file_checks.check_is_project(path, schema.APPLICATION_ID, schema.PLATFORM_SET)
        read_only = file_checks.is_read_only(path) if read_only is None else read_only
        project = cls(path, read_only=read_only)
        try:
            project._check_and_migrate(migrate)
        except sqlite3.DatabaseError as exc:
            project.close()
            if read_only and isinstance(exc, sqlite3.OperationalError) and file_checks.has_wal_content(path):
                raise ProjectError(
                    f"{path.name} is read-only and its latest changes are still in {path.name}-wal beside it, which "
                    "can only be read where the folder may be written. Copy both files to a folder where you can "
                    "write and open the copy, or ask the owner for write permission."
                ) from exc
            raise ProjectError(
                f"{path.name} could not be read ({exc}). It may be damaged; open a backup copy if you have one."
            ) from exc
        except BaseException:
            project.close()
            raise
        return project

    def _check_and_migrate(self, migrate: bool) -> None:
        db = self.db
        problems = self.integrity_problems(quick=True)  # at every open: the full check grows with the file
        if problems:
            raise ProjectError(
                f"{self.path.name} is damaged: SQLite's integrity check found {len(problems)} problem(s) "
                f"(first: {problems[0]}). Open a backup copy, or use 'Save as' on a copy to rescue what is readable."
            )
        unknown = schema.unknown_migrations(db)
        file_format = db.execute("PRAGMA user_version").fetchone()[0]
        if unknown or file_format > schema.FORMAT:
            what = (f"changes to the project format that this version does not know ({', '.join(unknown[:3])}"
                    f"{', ...' if len(unknown) > 3 else ''})" if unknown else
                    f"project format {file_format}, and this version reads up to {schema.FORMAT}")
            raise ProjectError(
                f"{self.path.name} was saved by a newer version of Palimpsest: it holds {what}. "
                "Update Palimpsest to open it."
            )
        if not schema.pending(db):
            if file_format < schema.FORMAT and not self.read_only:
                self._record_version(db)  # made by this version, but cut short before its format was written
            return
        if not migrate:
            raise ProjectError(f"{self.path.name} needs updating to the current project format before use.")
        if self.read_only:
            raise ProjectError(file_checks.read_only_message(
                self.path, "It was saved by an earlier version of Palimpsest and must be updated to the current "
                           "project format before use, which cannot be done here"))
        # the file as it was, beside it, before anything is written: an earlier release still opens the backup
        stamp = dt.date.today().isoformat()
        backup = self.path.with_name(f"{self.path.stem}.before-update-{stamp}{SUFFIX}")
        counter = 1
        while backup.exists():
            counter += 1
            backup = self.path.with_name(f"{self.path.stem}.before-update-{stamp}-{counter}{SUFFIX}")
        _backup_to(db.conn, backup)
        self.migration_backup = backup
        schema.apply(db)
        self._record_version(db)

    @staticmethod
    def _record_version(db: sqlite_utils.Database) -> None:
        db.execute(f"PRAGMA user_version = {schema.FORMAT}")
        with db.transaction():
            db["settings"].upsert({"key": "written_by", "value": json.dumps(__version__)}, pk="key")

    def close(self) -> None:
        """Checkpoint the WAL into the main file so it stands alone, then close this thread's connection.

        After this no thread can open a new connection. A worker still finishing (its last batch being
        written) keeps the connection it has until it releases it -- its writes are committed, never cut
        off half-way -- and the last connection to close folds the WAL into the file.
        """
        if self.closed:
            return
        self.closed = True
        try:
            db = self._connections.get()
            if db.conn.in_transaction:
                db.conn.execute("COMMIT")
            # TRUNCATE waits (up to the busy timeout) for every other connection to be idle: with a worker
            # still writing that would freeze the window, so then only fold in what can be folded now --
            # the worker's own close finishes the job.
            alone = self._connections.open_count() <= 1
            db.execute(f"PRAGMA wal_checkpoint({'TRUNCATE' if alone else 'PASSIVE'})")
        except sqlite3.Error:
            pass
        self._connections.close_all()

    def __enter__(self) -> "Project":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Project({str(self.path)!r})"

    # ------------------------------------------------------------------ connections
    @property
    def db(self) -> sqlite_utils.Database:
        """This thread's connection to the project file."""
        if self.closed:
            still_open = self._connections.current()  # a worker finishing after the project was closed
            if still_open is None:
                raise ProjectError("This project has been closed. Open it again to continue.")
            return still_open
        return self._connections.get()

    def change_stamp(self) -> tuple[int, int]:
        """Differs from the last call's (on this thread) whenever anything was written to the project meanwhile: by
        this thread's connection (its count of rows changed) or by any other, another thread's or another
        program's (SQLite's ``data_version``). Reads no table: a view shown again compares it with the stamp of
        its last read, and reads again only when something was written."""
        conn = self.db.conn
        return int(conn.execute("PRAGMA data_version").fetchone()[0]), int(conn.total_changes)

    def open_connections(self) -> int:
        """How many connections to the file this project has open, in all threads."""
        return self._connections.open_count()

    def release_thread_connection(self) -> None:
        """Worker threads call this when done so their connection does not linger."""
        self._connections.release_current_thread()

    # ------------------------------------------------------------------ file operations
    def integrity_problems(self, *, quick: bool = False) -> list[str]:
        """SQLite's integrity check: [] when the file is sound. ``quick`` skips checking that indexes agree with
        their tables (``PRAGMA quick_check``): several times faster on a large file, and still finds damaged pages
        and records."""
        rows = self.db.execute("PRAGMA quick_check" if quick else "PRAGMA integrity_check").fetchall()
        messages = [row[0] for row in rows]
        return [] if messages == ["ok"] else messages

    def save_copy(self, target: str | Path, *, overwrite: bool = False) -> Path:
        """Write a consistent copy of the project to ``target`` (the backup API, never a file copy).

        An existing file there is replaced only with ``overwrite`` (the user confirmed), and never when it is
        this project, its -wal or -shm file, or another project open in this program.
        """
        target = with_project_suffix(target)
        if _same_file(target, self.path) or any(_same_file(target, extra) for extra in _wal_and_shm(self.path)):
            raise ProjectError(f"{target.name} belongs to the project open now. Choose a different file name "
                               "for the copy.")
        if target.exists():
            if target.is_dir():
                raise ProjectError(f"{target} is a folder. Choose a file name for the copy.")
            if not overwrite:
                raise ProjectError(f"{target.name} already exists, and Save as does not replace a file unless you "
                                   "say so. Choose another name, or confirm that it may be replaced (on the command "
                                   "line: --overwrite).")
            if _is_open(target):
                raise ProjectError(f"{target.name} is a project open in this program, so it cannot be replaced. "
                                   "Choose another name, or close that project first.")
        if not target.parent.is_dir():
            raise ProjectError(f"The folder {target.parent} does not exist. Choose an existing folder.")
        # Written beside the target under another name, then put in its place: a failed copy leaves any file
        # that was there as it was.
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
        try:
            _backup_to(self.db.conn, partial)
            if target.exists():
                _remove_with_wal(target)  # a stale -wal left beside the new file would be read into it
            os.replace(partial, target)
        except (sqlite3.Error, OSError) as exc:
            _remove_with_wal(partial)
            raise ProjectError(f"Could not save a copy to {target}: {exc}. Check that the folder is writable.") from exc
        return target

    def save_as(self, target: str | Path, *, overwrite: bool = False) -> "Project":
        """Copy to ``target`` (``overwrite`` as in ``save_copy``), close this project and return the copy, opened."""
        written = self.save_copy(target, overwrite=overwrite)
        self.close()
        return Project.open(written)

    # ------------------------------------------------------------------ settings
    def get_setting(self, key: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM settings WHERE key = ?", [key]).fetchone()
        return default if row is None else json.loads(row[0])

    def set_setting(self, key: str, value: Any) -> None:
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO settings (key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [key, json.dumps(value)],
            )
