"""Work a change starts on a worker waits until the window has painted the change (``painted_soon``): a worker
making charts while the window painted a large table slowed the painting, both needing the interpreter's lock.
The Leakage tabs make their charts so, after their table is shown and painted, and a chart view draws once
its new layout is painted."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QWidget

from ui.background import BackgroundOps
from ui.widgets.painted import painted_soon


class Recording(QWidget):
    def __init__(self):
        super().__init__()
        self.painted_at: list[float] = []

    def paintEvent(self, event) -> None:  # noqa: N802
        self.painted_at.append(time.perf_counter())


def test_work_waiting_for_the_painting_starts_after_it(qtbot):
    widget = Recording()
    qtbot.addWidget(widget)
    widget.resize(300, 200)
    widget.show()
    qtbot.waitExposed(widget)
    qtbot.wait(50)
    ops = BackgroundOps()
    started: list[float] = []
    widget.painted_at.clear()
    painted = painted_soon(widget)  # a change to paint, and work that waits for its painting

    def work(state):
        painted.wait(5)
        started.append(time.perf_counter())

    ops.run(work, background_read=True)
    assert ops.busy  # waiting counts as running: nothing looks idle in between
    qtbot.waitUntil(lambda: not ops.busy, timeout=5000)
    assert widget.painted_at and started and widget.painted_at[0] < started[0]


def test_a_widget_off_screen_or_never_painted_holds_nothing_up(qtbot):
    hidden = Recording()
    qtbot.addWidget(hidden)
    assert painted_soon(hidden).is_set()  # not on screen: nothing to wait for
    shown = Recording()
    qtbot.addWidget(shown)
    shown.show()
    qtbot.waitExposed(shown)
    shown.setUpdatesEnabled(False)  # it will not paint: the wait ends all the same, soon
    waited = painted_soon(shown, longest_ms=100)
    qtbot.waitUntil(waited.is_set, timeout=2000)
