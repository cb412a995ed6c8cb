"""Refreshing a results table that is already full: the Probes page reloads per-book accuracy after each
batch of answers, so a slow refill freezes the window while a run goes on. Measured side by side on the
same table in a scrolling page: refilling with ``ui.widgets.table_filling.filling`` (columns measured once) and
without it (Qt re-measures a content-sized column after every cell: quadratic). Goal: at least 10 times
faster, and under a second for a few hundred books.
"""

from __future__ import annotations

import contextlib

from benchmarks.common import Timer, line, qt_application, skipped


def run(quick: bool):
    app = qt_application()
    if app is None:
        yield skipped("table_refill_speedup", "the GUI extra is not installed")
        return
    import pandas as pd
    from PySide6.QtWidgets import QScrollArea, QVBoxLayout, QWidget

    import ui.widgets.frame_table as frame_table

    rows = 120 if quick else 264
    columns = [frame_table.Column(f"c{i}", f"Column {i}", stretch=(i == 2)) for i in range(9)]
    frame = pd.DataFrame({f"c{i}": [f"book {r} " + "x" * (r % 17) for r in range(rows)] for i in range(9)})

    def refill_seconds() -> float:
        area = QScrollArea()
        area.setWidgetResizable(True)
        inner = QWidget()
        table = frame_table.FrameTable(columns)
        QVBoxLayout(inner).addWidget(table)
        area.setWidget(inner)
        area.resize(1200, 700)
        area.show()
        table.show_frame(frame)
        app.processEvents()
        with Timer() as timer:
            table.show_frame(frame)
            app.processEvents()
        area.close()
        return timer.seconds

    with_filling = refill_seconds()
    original = frame_table.filling
    frame_table.filling = lambda table: contextlib.nullcontext()
    try:
        without = refill_seconds()
    finally:
        frame_table.filling = original
    ratio = without / with_filling
    yield line("table_refill_speedup", ratio, "x", ">= 10 and under 1 s", ratio >= 10 and with_filling < 1.0,
               rows=rows, columns=len(columns), with_s=round(with_filling, 3), without_s=round(without, 2))
