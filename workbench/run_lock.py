"""Which runs another program on this computer is executing right now.

A run being executed holds an operating-system lock on a small file in the temporary folder. The system
drops the lock when the process ends, however it ends, so a run left "running" by a killed program is
seen as interrupted and can be continued, while a run still going on in another window or command is not
started a second time (which would pay for every answer twice).

The file is removed when the run ends, and a file a killed program left behind when the run is next
looked at, so they do not pile up. It is removed while its lock is still held, never after: filelock (from
3.20.4) takes a lock whose file has meanwhile lost its name for no lock at all and tries again on the file
now at that name, so a program that was waiting on the removed file cannot hold the run's lock beside one
that created a new file.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import tempfile
from pathlib import Path

from filelock import FileLock, Timeout

log = logging.getLogger(__name__)

#: how long starting a run waits for the lock: long enough to ride out another window's quick look
START_WAIT_SECONDS = 2.0


@functools.lru_cache(maxsize=4)
def _folder(temporary: str) -> Path:
    # one folder per user: another user's folder in a shared /tmp is not ours to write in
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    folder = Path(temporary) / f"palimpsest-runs-{user}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def _lock_file(project_path: Path, run_id: int) -> Path:
    folder = _folder(tempfile.gettempdir())  # made once, not at every look at a run
    digest = hashlib.sha256(str(Path(project_path).resolve()).encode("utf-8")).hexdigest()[:24]
    return folder / f"{digest}-run-{run_id}.lock"


def _lock(project_path: Path, run_id: int) -> FileLock:
    return FileLock(_lock_file(project_path, run_id), thread_local=False, is_singleton=False)


class RunLock:
    """Held while this process executes a run; ``acquire`` is False if another process holds it."""

    def __init__(self, project_path: Path, run_id: int):
        self.project_path, self.run_id = project_path, run_id
        self._lock: FileLock | None = None

    def acquire(self) -> bool:
        try:
            lock = _lock(self.project_path, self.run_id)
            lock.acquire(timeout=START_WAIT_SECONDS)
        except Timeout:
            return False
        except OSError as exc:  # no writable temporary folder: run unguarded rather than not at all
            log.warning("Could not lock run %s against other programs: %s", self.run_id, exc)
            return True
        self._lock = lock
        return True

    def release(self) -> None:
        if self._lock is not None:
            _release_and_remove(self._lock)
            self._lock = None


def _release_and_remove(lock: FileLock) -> None:
    """Remove the lock's file while the lock is held, then let go (see the module's note)."""
    with contextlib.suppress(OSError):  # gone already; or Windows, where filelock removes it on release itself
        os.unlink(lock.lock_file)
    lock.release()


def held_elsewhere(project_path: Path, run_id: int) -> bool:
    """True while another process executes this run (call it only for runs this process is not running)."""
    try:
        if not _lock_file(project_path, run_id).exists():
            return False
        probe = _lock(project_path, run_id)
        probe.acquire(timeout=0)
    except Timeout:
        return True
    except OSError:
        return False  # nothing can be known; starting the run will say if it is locked
    _release_and_remove(probe)  # nobody holds it: a file left by a program that was killed
    return False
