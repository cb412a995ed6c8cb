"""Progress and cooperative cancel for long work, without any GUI.

Core functions that take a while accept a ``TaskState``. They call ``state.progress(...)`` now and
then and ``state.check()`` between steps (which raises ``CancelledError`` once the user pressed
Cancel). The CLI gives them a state that draws a progress bar; the GUI's background helper gives
them one that forwards to the main thread through queued signals.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from workbench.errors import CancelledError


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    message: str = ""
    failed: int = 0
    eta_seconds: float | None = None

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


class TaskState:
    """Shared between the code doing the work and whoever watches it.

    ``on_progress`` is throttled: it is called at most every ``min_interval`` seconds, and always
    for the final step, so a fast loop cannot flood the GUI.
    """

    def __init__(
        self,
        on_progress: Callable[[Progress], None] | None = None,
        on_partial: Callable[[Any], None] | None = None,
        min_interval: float = 0.1,
    ):
        self._cancel = threading.Event()
        self._on_progress = on_progress
        self._on_partial = on_partial
        self._min_interval = min_interval
        self._last_emit = 0.0
        self.last: Progress | None = None

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def check(self) -> None:
        if self._cancel.is_set():
            raise CancelledError("Stopped at your request.")

    def progress(
        self,
        done: int,
        total: int,
        message: str = "",
        *,
        failed: int = 0,
        eta_seconds: float | None = None,
        force: bool = False,
    ) -> None:
        self.last = Progress(done, total, message, failed, eta_seconds)
        if self._on_progress is None:
            return
        now = time.monotonic()
        if force or done >= total or now - self._last_emit >= self._min_interval:
            self._last_emit = now
            self._on_progress(self.last)

    def partial(self, result: Any) -> None:
        """Hand an intermediate result to the watcher (e.g. a row that just finished)."""
        if self._on_partial is not None:
            self._on_partial(result)


def describe_duration(seconds: float | None) -> str:
    """'about 42 s', 'about 2 min 05 s', 'about 3 h 01 min' ('estimating…' before there is a rate)."""
    if seconds is None:
        return "estimating…"
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"about {seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"about {seconds // 60} min {seconds % 60:02d} s"
    return f"about {seconds} s"


def quiet_state() -> TaskState:
    return TaskState()
