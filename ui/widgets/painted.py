"""Work that a change on screen starts on a worker waits until the window has painted the change.

Every call from Qt into Python (a table cell painted, an event filter) waits for the interpreter's lock, and a
worker in Python holds it between two such calls: made on workers while the window painted a table of 57,000
rows, a tab's charts slowed that painting to 100-500 ms. ``painted_soon(widget)`` gives an event the worker
waits on: set once the window's next painting pass that paints ``widget`` has ended (a timer of no delay
started from inside the paint fires after the whole pass), or after ``LONGEST_WAIT_MS`` should no painting come.
While the worker waits its operation counts as running, so nothing looks idle in between.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

LONGEST_WAIT_MS = 250


class _FirstPaint(QObject):
    def __init__(self, widget: QWidget, painted: threading.Event):
        super().__init__(widget)
        self.painted = painted
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self.painted.set)
            self.deleteLater()
        return False


def painted_soon(widget: QWidget, longest_ms: int = LONGEST_WAIT_MS) -> threading.Event:
    """An event set once ``widget`` (asked to paint again here) and whatever the same painting pass paints have
    been painted; at once for a widget not on screen."""
    painted = threading.Event()
    if not widget.isVisible():
        painted.set()
        return painted
    _FirstPaint(widget, painted)
    widget.update()
    QTimer.singleShot(longest_ms, painted.set)
    return painted
