"""The one background-operation helper every page uses.

``BackgroundOps.run(fn, ...)`` calls ``fn(state)`` on a ``QThreadPool`` worker. ``state`` is a core
``TaskState``: the work reports throttled progress and partial results through it and checks it for
cancel. Everything reaches the page through queued signals, so callbacks run on the main thread and
worker code never touches a widget. The window joins all operations on close.

Worker threads get their own SQLite connection from the ``Project`` (one per thread) and release it
when the operation ends.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from workbench.errors import CancelledError, UserError
from workbench.progress import Progress, TaskState

log = logging.getLogger(__name__)


class Operation(QObject):
    """One piece of background work. Lives on the main thread; its signals are delivered there."""

    progressed = Signal(object)  # Progress
    partial = Signal(object)  # whatever the work hands over
    succeeded = Signal(object)  # the work's return value
    failed = Signal(str, str)  # plain message, technical details
    cancelled = Signal(str)
    ended = Signal()

    def __init__(self, label: str, parent: QObject | None = None, background_read: bool = False):
        super().__init__(parent)
        self.label = label
        # A read that only fills a view: dropped without asking when the project closes.
        self.background_read = background_read
        self.state = TaskState(on_progress=self.progressed.emit, on_partial=self.partial.emit)
        self.running = True
        self.last_progress: Progress | None = None
        self.progressed.connect(self._remember)
        self.ended.connect(self._mark_ended)

    def cancel(self) -> None:
        self.state.cancel()

    def _remember(self, progress: Progress) -> None:
        self.last_progress = progress

    def _mark_ended(self) -> None:
        self.running = False


class _Worker(QRunnable):
    def __init__(self, op: Operation, fn: Callable[[TaskState], Any], project: Any):
        super().__init__()
        self.op = op
        self.fn = fn
        self.project = project
        self.setAutoDelete(True)

    def run(self) -> None:  # worker thread
        op = self.op
        try:
            result = self.fn(op.state)
        except CancelledError as exc:
            op.cancelled.emit(str(exc) or "Stopped at your request.")
        except Exception as exc:
            if op.background_read and getattr(self.project, "closed", False):
                op.cancelled.emit("The project was closed.")  # a view's read cut short: nothing to tell
            elif isinstance(exc, UserError):
                op.failed.emit(str(exc), "")
            else:  # a bug: say so plainly, keep the details for the log
                details = traceback.format_exc()
                log.error("Background operation %r failed:\n%s", op.label, details)
                op.failed.emit(
                    f"Something went wrong while {op.label.lower() or 'working'}: {exc}. "
                    "Nothing saved so far is lost. Please report this with the details.",
                    details,
                )
        else:
            op.succeeded.emit(result)
        finally:
            # Even when the project was closed meanwhile: this thread's connection (kept open so the work
            # could commit its last batch) must be closed here, by the thread that owns it.
            release = getattr(self.project, "release_thread_connection", None)
            if release is not None:
                try:
                    release()
                except Exception:  # never let cleanup hide the result the page is waiting for
                    log.exception("Could not close a worker's connection to the project")
            op.ended.emit()


class BackgroundOps(QObject):
    """Owns the worker pool of one window; tracks, cancels and joins its operations."""

    changed = Signal()  # an operation started or ended (for job lists, busy indicators)

    def __init__(self, parent: QObject | None = None, max_threads: int = 4):
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)
        self.operations: list[Operation] = []

    def run(
        self,
        fn: Callable[[TaskState], Any],
        *,
        label: str = "",
        project: Any = None,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[str, str], None] | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        on_partial: Callable[[Any], None] | None = None,
        on_cancelled: Callable[[str], None] | None = None,
        on_end: Callable[[], None] | None = None,
        background_read: bool = False,
    ) -> Operation:
        """Start ``fn(state)`` on a worker. ``background_read=True`` marks work that only fills a view
        (nothing the user would miss if it stopped), so closing the project does not ask about it."""
        op = Operation(label, self, background_read)
        if on_done:
            op.succeeded.connect(on_done)
        if on_error:
            op.failed.connect(on_error)
        if on_progress:
            op.progressed.connect(on_progress)
        if on_partial:
            op.partial.connect(on_partial)
        if on_cancelled:
            op.cancelled.connect(on_cancelled)
        if on_end:
            op.ended.connect(on_end)
        op.ended.connect(self._on_ended)
        self.operations.append(op)
        self.pool.start(_Worker(op, fn, project))
        self.changed.emit()
        return op

    def _on_ended(self) -> None:
        op = self.sender()
        if op in self.operations:
            self.operations.remove(op)
        op.deleteLater()
        self.changed.emit()

    @property
    def busy(self) -> bool:
        return bool(self.operations)

    @property
    def user_work_running(self) -> bool:
        """True while work the user started (an import, a run) is going on."""
        return any(not op.background_read for op in self.operations)

    def cancel_all(self) -> None:
        for op in list(self.operations):
            op.cancel()

    def join(self, timeout_ms: int = 30_000) -> bool:
        """Cancel everything and wait for the workers to stop. True if they all did."""
        self.cancel_all()
        return self.pool.waitForDone(timeout_ms)
