"""Looking at a file before opening it as a project: is it a Palimpsest project, and may it be changed?

Both questions are answered without writing anything, so that a file of another program is refused exactly
as it was (an ordinary SQLite connection would switch it to WAL and leave -wal and -shm files beside it).

- **A Palimpsest project** carries the application id "PALI" in its header (every version has set it when
  creating a project), or Palimpsest's own migration records (``_sqlite_migrations``, set 'palimpsest').
  The header is read directly; only when it does not say "PALI" is the file opened read-only to look
  inside (a project left by a crash may still hold its marker in the -wal file beside it).
- **Read-only**: the file, or its folder (where SQLite keeps the -wal and -shm files), may not be written.
  A file or folder without any write permission bit counts as read-only even for an administrator, who
  could override the bits: whoever set them meant it not to change.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from pathlib import Path

from workbench.errors import ProjectError

SQLITE_MAGIC = b"SQLite format 3\x00"
_APPLICATION_ID_OFFSET = 68  # in the 100-byte database header, big-endian
_WRITE_BITS = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


def wal_file(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def shm_file(path: Path) -> Path:
    return path.with_name(path.name + "-shm")


def has_wal_content(path: Path) -> bool:
    wal = wal_file(path)
    return wal.is_file() and wal.stat().st_size > 0


def read_only_uri(path: Path) -> str:
    """The URI that opens ``path`` for reading only, creating no file beside it where that is possible.

    Without changes waiting in a -wal file the main file holds everything, and ``immutable=1`` reads it
    without the -shm file (which SQLite could not create in a read-only folder). With such changes, a
    plain read-only open reads them through the -shm file.
    """
    uri = Path(os.path.abspath(path)).as_uri() + "?mode=ro"
    return uri if has_wal_content(path) else uri + "&immutable=1"


def check_is_project(path: Path, application_id: int, migration_set: str) -> None:
    """Raise ``ProjectError`` unless ``path`` is a Palimpsest project; never writes to it or beside it."""
    if not path.exists():
        raise ProjectError(f"There is no project file at {path}. Check the name, or create a new project.")
    if path.is_dir():
        raise ProjectError(f"{path} is a folder, not a project file. Choose a .palimpsest file.")
    with open(path, "rb") as fh:
        header = fh.read(100)
    if not header and not has_wal_content(path):
        raise ProjectError(f"{path.name} is empty: it is not a Palimpsest project. Choose a .palimpsest file, "
                           "or create a new project.")
    if header and not header.startswith(SQLITE_MAGIC):
        raise ProjectError(f"{path.name} is not a Palimpsest project (it is not a database file). "
                           "Choose a .palimpsest file, or create a new project.")
    marker = header[_APPLICATION_ID_OFFSET:_APPLICATION_ID_OFFSET + 4]
    if len(marker) == 4 and int.from_bytes(marker, "big") == application_id:
        return
    if not _marked_inside(path, application_id, migration_set):
        raise ProjectError(f"{path.name} is a database, but not a Palimpsest project; it was left as it was. "
                           "Choose a .palimpsest file, or create a new project.")


def _marked_inside(path: Path, application_id: int, migration_set: str) -> bool:
    try:
        conn = sqlite3.connect(read_only_uri(path), uri=True)
    except sqlite3.Error:
        return False
    try:
        with contextlib.closing(conn):
            if conn.execute("PRAGMA application_id").fetchone()[0] == application_id:
                return True
            has_records = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlite_migrations'").fetchone()
            return bool(has_records) and conn.execute(
                "SELECT 1 FROM _sqlite_migrations WHERE migration_set = ? LIMIT 1", [migration_set]).fetchone() is not None
    except sqlite3.Error:
        return False


def _may_write(path: Path) -> bool:
    return os.access(path, os.W_OK) and bool(path.stat().st_mode & _WRITE_BITS)


def is_read_only(path: Path) -> bool:
    """Whether the project file or the folder it is in may not be written."""
    path = Path(os.path.abspath(path))
    return not (_may_write(path) and _may_write(path.parent))


def read_only_message(path: Path, what: str = "This change cannot be saved") -> str:
    return (f"{Path(path).name} is read-only (the file, or the folder it is in, may not be changed), so: "
            f"{what[0].lower() + what[1:]}. To work on it, save a copy to a folder where you can write "
            "('Save project as', or palimpsest save-as) and open the copy, or ask the owner for write permission.")


def is_read_only_error(exc: BaseException) -> bool:
    """SQLite's own words for a write to a file it may only read."""
    return isinstance(exc, sqlite3.OperationalError) and "readonly" in str(exc).replace("read-only", "readonly")
