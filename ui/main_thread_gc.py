"""Python's cycle collector runs on the GUI thread only.

The collector frees a cycle in whichever thread happens to trigger it. When a garbage cycle holds a
widget (a closed dialog, a replaced page part) and a background worker triggers the collection, the
widget is destroyed in the worker: Qt forbids that, and with PySide6 it can deadlock the worker against
the GUI thread or crash. So the app turns automatic collection off and collects on a GUI-thread timer
instead (every ``INTERVAL_MS``), with the same generation thresholds Python would use. Objects without
cycles are still freed at once by reference counting, as always.

A full collection looks at every object the program holds, most of them the functions and classes of the
libraries it has imported (150,000 objects once pandas, scipy and a chart are loaded): 100-130 ms of a
frozen window, due every few seconds while a worker reads a large project. What survives a full collection
has lived long and will go on living, so it is frozen (``gc.freeze``): later collections skip it. The
first full collection is made when the collector starts, before the window shows. Once in
``FULL_SCAN_S`` every object is looked at again, so a cycle that died after it was frozen is freed too.
"""

from __future__ import annotations

import gc
import sys
import time
from typing import Callable

from PySide6.QtCore import QObject, QTimer

FULL_SCAN_S = 600.0
#: how often the collector looks whether a collection is due: a collection's cost grows with what was allocated
#: since the last one, and a worker reading a large project allocates hundreds of thousands of objects a
#: second (a young generation collected once a second took 40-90 ms; every 50 ms, 5-25 ms)
INTERVAL_MS = 50


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

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS, full_scan_s: float = FULL_SCAN_S,
                 clock: Callable[[], float] = time.monotonic):
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        self.full_scan_s, self.clock = full_scan_s, clock
        self._was_enabled = gc.isenabled()
        gc.disable()
        self.full_scan()  # what is loaded by now (the libraries) lives as long as the program: frozen at once
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(interval_ms)

    def check(self) -> None:
        if gc.isenabled():  # a library switched it back on (srsly does, whenever spaCy reads a pipeline)
            gc.disable()
        if _LIBRARIES_LOADING:
            return
        if self.clock() - self._last_full_scan >= self.full_scan_s:
            self.full_scan()
        elif collect_if_due(self.thresholds) == 2:
            gc.freeze()  # the survivors live long: the next collections skip them

    def full_scan(self) -> None:
        """Look at every object again, the frozen ones too (a cycle may have died since it was frozen)."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._last_full_scan = self.clock()

    def stop(self) -> None:
        self.timer.stop()
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()


_LIBRARIES_FROZEN = False
_LIBRARIES_LOADING = False


def libraries_loading() -> None:
    """The libraries of charts and statistics are being loaded on a worker: until ``freeze_libraries``, the
    collector leaves them be. Any collection meanwhile, even of the youngest generation, looked at the tens of
    thousands of objects the imports had made since the last one, on the window's thread (80-90 ms), only for
    them to be frozen moments later. A worker's import makes few cycles that die: they wait for the full scan."""
    global _LIBRARIES_LOADING
    _LIBRARIES_LOADING = True


def freeze_libraries() -> None:
    """On the window's thread, once the libraries of charts and statistics are loaded (on a worker: at start,
    ``ui.main_window``, or by the first chart drawn): matplotlib, 44,000 objects, and scipy and statsmodels,
    80,000 more, live as long as the program, so they are moved out of the cycle collector's sight at once
    (``gc.freeze``, as the collector does after each full collection): else the next full collection looks at
    them all while the window waits (130-190 ms on a busy laptop). What it freezes that is garbage after all
    waits for the collector's periodic full scan. Ends ``libraries_loading``."""
    global _LIBRARIES_FROZEN, _LIBRARIES_LOADING
    _LIBRARIES_LOADING = False
    if "matplotlib" in sys.modules and not gc.isenabled():
        gc.freeze()
        _LIBRARIES_FROZEN = True


def freeze_libraries_once() -> None:
    """``freeze_libraries`` unless done already (the chart view, at each chart it shows)."""
    if not _LIBRARIES_FROZEN:
        freeze_libraries()
