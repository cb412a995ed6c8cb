"""Which runs another program on this computer is executing right now.

A run being executed holds an operating-system lock on a small file in the temporary folder. The system
drops the lock when the process ends, however it ends, so a run left "running" by a killed program is
seen as interrupted and can be continued, while a run still going on in another window or command is not
started a second time (which would pay for every answer twice).
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from filelock import FileLock, Timeout

#: how long starting a run waits for the lock: long enough to ride out another window's quick look
START_WAIT_SECONDS = 2.0


def _lock_file(project_path: Path, run_id: int) -> Path:
    folder = Path(tempfile.gettempdir()) / "palimpsest-runs"
    folder.mkdir(exist_ok=True)
    digest = hashlib.sha256(str(Path(project_path).resolve()).encode("utf-8")).hexdigest()[:24]
    return folder / f"{digest}-run-{run_id}.lock"


def _lock(project_path: Path, run_id: int) -> FileLock:
    return FileLock(_lock_file(project_path, run_id), thread_local=False, is_singleton=False)


class RunLock:
    """Held while this process executes a run; ``acquire`` is False if another process holds it."""

    def __init__(self, project_path: Path, run_id: int):
        self._lock = _lock(project_path, run_id)

    def acquire(self) -> bool:
        try:
            self._lock.acquire(timeout=START_WAIT_SECONDS)
        except Timeout:
            return False
        return True

    def release(self) -> None:
        self._lock.release()


def held_elsewhere(project_path: Path, run_id: int) -> bool:
    """True while another process executes this run (call it only for runs this process is not running)."""
    if not _lock_file(project_path, run_id).exists():
        return False
    probe = _lock(project_path, run_id)
    try:
        probe.acquire(timeout=0)
    except Timeout:
        return True
    probe.release()
    return False
