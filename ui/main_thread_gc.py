"""Python's cycle collector runs on the GUI thread only.

The collector frees a cycle in whichever thread happens to trigger it. When a garbage cycle holds a
widget (a closed dialog, a replaced page part) and a background worker triggers the collection, the
widget is destroyed in the worker: Qt forbids that, and with PySide6 it can deadlock the worker against
the GUI thread or crash. So the app turns automatic collection off and collects on a GUI-thread timer
instead, with the same generation thresholds Python would use. Objects without cycles are still freed
at once by reference counting, as always.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer


def collect_if_due(thresholds: tuple[int, int, int]) -> int | None:
    """Collect the generations that Python's own rules say are due. Returns the generation collected."""
    young, middle, old = gc.get_count()
    if young <= thresholds[0]:
        return None
    generation = 0
    if middle > thresholds[1]:
        generation = 1
        if old > thresholds[2]:
            generation = 2
    gc.collect(generation)
    return generation


class MainThreadGarbageCollector(QObject):
    """Install once, on the GUI thread, after the QApplication exists; ``stop`` restores Python's own."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = 1000):
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        self._was_enabled = gc.isenabled()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(interval_ms)

    def check(self) -> None:
        collect_if_due(self.thresholds)

    def stop(self) -> None:
        self.timer.stop()
        if self._was_enabled:
            gc.enable()
