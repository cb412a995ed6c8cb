"""The one background-operation helper every page uses.

``BackgroundOps.run(fn, ...)`` calls ``fn(state)`` on a ``QThreadPool`` worker. ``state`` is a core
``TaskState``: the work reports throttled progress and partial results through it and checks it for
cancel. Everything reaches the page through queued signals, so callbacks run on the main thread and
worker code never touches a widget. The window joins all operations on close.

A widget whose work replaces its own earlier work (a recount, a reload, a run with a progress row) owns
an ``OperationSlot`` (``ops.slot(widget)``): starting there cancels and ignores the operation it replaces,
and the slot keeps the widget's busy state and drives its progress row. ``run`` stays for work the user
starts and that nothing replaces (an export, an import).

Worker threads get their own SQLite connection from the ``Project`` (one per thread) and release it
when the operation ends.
"""

from __future__ import annotations

import functools
import itertools
import logging
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtWidgets import QWidget

from ui import dialogs
from ui.changes import ChangeBus
from workbench.errors import CancelledError, UserError
from workbench.progress import Progress, TaskState

log = logging.getLogger(__name__)


class Callbacks:
    """What a signal of an operation is: functions called in order on the GUI thread. A bound method of a Qt
    object already deleted is skipped, as a Qt connection would have been dropped."""

    def __init__(self) -> None:
        self._functions: list[Callable[..., Any]] = []

    def connect(self, function: Callable[..., Any]) -> None:
        self._functions.append(function)

    def emit(self, *args: Any) -> None:
        for function in list(self._functions):
            if _receiver_alive(function):
                function(*args)


def _receiver_alive(function: Callable[..., Any]) -> bool:
    target = function.func if isinstance(function, functools.partial) else function
    owner = getattr(target, "__self__", None)
    return not isinstance(owner, QObject) or shiboken6.isValid(owner)


class Operation:
    """One piece of background work, as the GUI thread sees it: its signals (``Callbacks``) are emitted there.

    Not a Qt object: an operation's Python wrapper was now and then freed before its Qt object, which Qt then
    deleted (``deleteLater``) through the freed wrapper, crashing the window after an extraction. Everything a
    worker reports goes through one long-lived relay of its ``BackgroundOps`` instead."""

    def __init__(self, label: str, state: TaskState, background_read: bool = False):
        self.label = label
        # A read that only fills a view: dropped without asking when the project closes.
        self.background_read = background_read
        self.state = state
        self.running = True
        self.last_progress: Progress | None = None
        self.progressed = Callbacks()  # Progress
        self.partial = Callbacks()  # whatever the work hands over
        self.succeeded = Callbacks()  # the work's return value
        self.failed = Callbacks()  # plain message, technical details
        self.cancelled = Callbacks()  # message
        self.ended = Callbacks()

    def cancel(self) -> None:
        self.state.cancel()


# what a worker reports, through the relay
PROGRESS, PARTIAL, SUCCEEDED, FAILED, CANCELLED, ENDED = range(6)


class _Relay(QObject):
    """Carries what every worker reports to the GUI thread: (operation number, what, payload), in order."""

    report = Signal(int, int, object)


class _Worker(QRunnable):
    def __init__(self, number: int, op: Operation, fn: Callable[[TaskState], Any], project: Any, relay: _Relay):
        super().__init__()
        self.number = number
        self.state, self.label, self.background_read = op.state, op.label, op.background_read
        self.fn = fn
        self.project = project
        self.relay = relay
        self.setAutoDelete(True)

    def run(self) -> None:  # worker thread
        self._work()
        relay, number = self.relay, self.number
        self.fn = self.project = self.state = self.relay = None  # what the work held is freed here, not later
        relay.report.emit(number, ENDED, None)

    def _send(self, what: int, payload: Any) -> None:
        self.relay.report.emit(self.number, what, payload)

    def _work(self) -> None:
        try:
            result = self.fn(self.state)
        except CancelledError as exc:
            self._send(CANCELLED, str(exc) or "Stopped at your request.")
        except Exception as exc:
            if self.background_read and getattr(self.project, "closed", False):
                self._send(CANCELLED, "The project was closed.")  # a view's read cut short: nothing to tell
            elif isinstance(exc, UserError):
                self._send(FAILED, (str(exc), ""))
            else:  # a bug: say so plainly, keep the details for the log
                details = traceback.format_exc()
                log.error("Background operation %r failed:\n%s", self.label, details)
                self._send(FAILED, (
                    f"Something went wrong while {self.label.lower() or 'working'}: {exc}. "
                    "Nothing saved so far is lost. Please report this with the details.",
                    details,
                ))
        else:
            self._send(SUCCEEDED, result)
        finally:
            # Even when the project was closed meanwhile: this thread's connection (kept open so the work
            # could commit its last batch) must be closed here, by the thread that owns it.
            release = getattr(self.project, "release_thread_connection", None)
            if release is not None:
                try:
                    release()
                except Exception:  # never let cleanup hide the result the page is waiting for
                    log.exception("Could not close a worker's connection to the project")


class BackgroundOps(QObject):
    """Owns the worker pool of one window; tracks, cancels and joins its operations."""

    changed = Signal()  # an operation started or ended (for job lists, busy indicators)

    def __init__(self, parent: QObject | None = None, max_threads: int = 4):
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)
        self.operations: list[Operation] = []
        self._relay = _Relay(self)
        self._relay.report.connect(self._deliver)
        self._running: dict[int, Operation] = {}
        self._numbers = itertools.count()
        self.changes = ChangeBus(self)  # work that changed the project says what; views showing it reload

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
        (nothing the user would miss if it stopped), so closing the project does not ask about it.

        Callbacks are bound methods (never lambdas holding a widget: the operation would keep it alive);
        ``fn`` may be a lambda over plain data, but not over a widget (it is freed on the worker)."""
        number = next(self._numbers)
        send = self._relay.report.emit
        state = TaskState(on_progress=functools.partial(send, number, PROGRESS),
                          on_partial=functools.partial(send, number, PARTIAL))
        op = Operation(label, state, background_read)
        for signal, callback in ((op.succeeded, on_done), (op.failed, on_error), (op.progressed, on_progress),
                                 (op.partial, on_partial), (op.cancelled, on_cancelled), (op.ended, on_end)):
            if callback is not None:
                signal.connect(callback)
        self.operations.append(op)
        self._running[number] = op
        self.pool.start(_Worker(number, op, fn, project, self._relay))
        self.changed.emit()
        return op

    def _deliver(self, number: int, what: int, payload: Any) -> None:
        op = self._running.get(number)
        if op is None:
            return
        if what == PROGRESS:
            op.last_progress = payload  # a view that starts watching later still shows it (the Jobs page)
            op.progressed.emit(payload)
        elif what == PARTIAL:
            op.partial.emit(payload)
        elif what == SUCCEEDED:
            op.succeeded.emit(payload)
        elif what == FAILED:
            op.failed.emit(*payload)
        elif what == CANCELLED:
            op.cancelled.emit(payload)
        elif what == ENDED:
            del self._running[number]
            op.running = False
            op.ended.emit()
            if op in self.operations:
                self.operations.remove(op)
            self.changed.emit()

    def slot(self, owner: QObject) -> "OperationSlot":
        """The slot for ``owner``'s one operation at a time (see ``OperationSlot``)."""
        return OperationSlot(self, owner)

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


@dataclass
class _Callbacks:
    """What the owner of a slot wants to hear of its current operation."""

    on_done: Callable[[Any], None] | None = None
    on_error: Callable[[str, str], None] | None = None
    on_progress: Callable[[Progress], None] | None = None
    on_partial: Callable[[Any], None] | None = None
    on_cancelled: Callable[[str], None] | None = None
    on_end: Callable[[], None] | None = None


@dataclass
class _Request:
    """An operation a slot is asked to run."""

    fn: Callable[[TaskState], Any]
    label: str
    project: Any
    background_read: bool
    callbacks: _Callbacks


class OperationSlot(QObject):
    """The one background operation of a widget: starting another one replaces it.

    What Orange's ``ConcurrentWidgetMixin.start`` does, as an object the widget owns (``ops.slot(widget)``):

    - ``start`` cancels the operation it replaces and ignores that operation from then on: none of its
      callbacks reach the widget, so a stale computation is never shown;
    - ``queue`` starts once the current operation has ended instead (only the newest queued one is kept):
      for reloads asked for faster than they finish, where each finished one is still worth showing;
    - ``busy`` and ``busy_changed`` follow the current operation; ``started`` and ``progressed`` drive one
      ``ProgressRow`` (``ProgressRow(slot)``);
    - the slot is a child of its owner: once the owner is deleted, nothing more reaches it.

    Callbacks run on the GUI thread; pass bound methods. The slot keeps them only while their operation
    is the current one. Errors go to ``on_error``, or to a message box over the owner when there is none.
    """

    started = Signal(object)  # the Operation that is now the current one
    progressed = Signal(object)  # Progress of the current operation
    busy_changed = Signal(bool)

    def __init__(self, ops: BackgroundOps, owner: QObject):
        super().__init__(owner)
        self.ops = ops
        self.operation: Operation | None = None
        self._callbacks = _Callbacks()
        self._queued: _Request | None = None

    @property
    def busy(self) -> bool:
        return self.operation is not None

    def start(self, fn: Callable[[TaskState], Any], *, label: str = "", project: Any = None,
              background_read: bool = False, **callbacks: Callable[..., None]) -> Operation:
        """Run ``fn(state)`` on a worker in place of the current operation. ``callbacks`` are those of
        ``BackgroundOps.run``: ``on_done``, ``on_error``, ``on_progress``, ``on_partial``, ``on_cancelled``,
        ``on_end``."""
        replaced = self.operation
        request = _Request(fn, label, project, background_read, _Callbacks(**callbacks))
        if replaced is not None:
            replaced.cancel()
        self._queued = None
        self._run(request)
        if replaced is None:
            self.busy_changed.emit(True)
        return self.operation

    def queue(self, fn: Callable[[TaskState], Any], *, label: str = "", project: Any = None,
              background_read: bool = False, **callbacks: Callable[..., None]) -> Operation | None:
        """``start`` once the current operation has ended (at once when none runs); a later ``queue`` takes
        this one's place while it waits. Returns the operation if it started now."""
        if self.operation is None:
            return self.start(fn, label=label, project=project, background_read=background_read, **callbacks)
        self._queued = _Request(fn, label, project, background_read, _Callbacks(**callbacks))
        return None

    def cancel(self) -> None:
        """Ask the current operation to stop (as a Cancel button does); what it reports still arrives."""
        if self.operation is not None:
            self.operation.cancel()

    def drop(self) -> None:
        """Cancel the current operation and ignore everything it still reports; forget a queued one."""
        self._queued = None
        if self.operation is None:
            return
        self.operation.cancel()
        self.operation, self._callbacks = None, _Callbacks()
        self.busy_changed.emit(False)

    def _run(self, request: _Request) -> None:
        self._callbacks = request.callbacks
        op = self.ops.run(request.fn, label=request.label, project=request.project,
                          background_read=request.background_read)
        for signal, handler in ((op.succeeded, self._succeeded), (op.failed, self._failed),
                                (op.progressed, self._progressed), (op.partial, self._partial),
                                (op.cancelled, self._cancelled), (op.ended, self._ended)):
            signal.connect(functools.partial(handler, op))
        self.operation = op
        self.started.emit(op)

    # -------------------------------------------------------------- what the current operation reports
    def _current(self, op: Operation) -> bool:
        return self.operation is not None and op is self.operation

    def _succeeded(self, op: Operation, result: Any) -> None:
        if self._current(op) and self._callbacks.on_done is not None:
            self._callbacks.on_done(result)

    def _failed(self, op: Operation, message: str, details: str) -> None:
        if not self._current(op):
            return
        if self._callbacks.on_error is not None:
            self._callbacks.on_error(message, details)
        else:
            owner = self.parent()
            dialogs.show_error(owner if isinstance(owner, QWidget) else None, message, details)

    def _progressed(self, op: Operation, progress: Progress) -> None:
        if self._current(op):
            self.progressed.emit(progress)
            if self._callbacks.on_progress is not None:
                self._callbacks.on_progress(progress)

    def _partial(self, op: Operation, item: Any) -> None:
        if self._current(op) and self._callbacks.on_partial is not None:
            self._callbacks.on_partial(item)

    def _cancelled(self, op: Operation, message: str) -> None:
        if self._current(op) and self._callbacks.on_cancelled is not None:
            self._callbacks.on_cancelled(message)

    def _ended(self, op: Operation) -> None:
        if not self._current(op):
            return
        on_end = self._callbacks.on_end
        if self._queued is not None:
            request, self._queued = self._queued, None
            self._run(request)  # still busy: nothing to announce
        else:
            self.operation, self._callbacks = None, _Callbacks()
            self.busy_changed.emit(False)
        if on_end is not None:
            on_end()
