"""Refreshing a results table that is already full: pages reload per-book results after each batch of
answers, so a slow refill freezes the window while a run goes on. Measured side by side on the same frame in
a scrolling page: ``ui.widgets.frame_table.FrameTable`` (one model reset; a cell's text is made when Qt asks
for it) and a ``QTableWidget`` filled with one item per cell (``ui.widgets.cells_table.fill_cells``, the way
the smaller tables are filled). Goal: the model table at least 1.5 times faster, and under 0.1 s for 571 books.
"""

from __future__ import annotations

from benchmarks.common import Timer, line, qt_application, skipped


def run(quick: bool):
    app = qt_application()
    if app is None:
        yield skipped("table_refill_speedup", "the GUI extra is not installed")
        return
    import pandas as pd
    from PySide6.QtWidgets import QScrollArea, QTableWidget, QVBoxLayout, QWidget

    import ui.widgets.cells_table as cells_table
    import ui.widgets.frame_table as frame_table

    rows = 200 if quick else 571
    columns = [frame_table.Column(f"c{i}", f"Column {i}", stretch=(i == 2)) for i in range(9)]
    frame = pd.DataFrame({f"c{i}": [f"book {r} " + "x" * (r % 17) for r in range(rows)] for i in range(9)})
    cells = cells_table.table_cells(frame)

    def refill_seconds(make, fill) -> float:
        area = QScrollArea()
        area.setWidgetResizable(True)
        inner = QWidget()
        table = make()
        QVBoxLayout(inner).addWidget(table)
        area.setWidget(inner)
        area.resize(1200, 700)
        area.show()
        fill(table)
        app.processEvents()
        with Timer() as timer:
            fill(table)
            app.processEvents()
        area.close()
        return timer.seconds

    model = refill_seconds(lambda: frame_table.FrameTable(columns), lambda table: table.show_frame(frame))
    items = refill_seconds(QTableWidget, lambda table: cells_table.fill_cells(table, cells))
    ratio = items / model
    yield line("table_refill_speedup", ratio, "x", ">= 1.5 and under 0.1 s", ratio >= 1.5 and model < 0.1,
               rows=rows, columns=len(columns), model_s=round(model, 4), items_s=round(items, 3))
