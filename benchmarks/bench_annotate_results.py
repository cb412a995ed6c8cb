"""Showing the disputed items of a large annotation task on the Results tab. An LLM-judge validation with a
few thousand labelled responses has thousands of disputed items; the table used to be made entirely on the
GUI thread: every cell formatted there and made a widget item, every row measured for the column widths.
Now the cell texts are made on the worker (``table_cells``) and the GUI thread hands them to a table model
(``CellsTable.show_cells``: one reset, columns measured on the first rows). Measured side by side: the
GUI-thread time of the former way (kept below as the reference) and of the present one. Goal: at least 3
times less, and under 0.05 s for 4,000 disputed items.

Also side by side: finding the disputed items (``adjudication.disagreements``, on the worker) grouped in
plain Python against the former pandas group per item, which held the GIL in long stretches (the window
stalled up to 0.6 s while the Results tab computed). Goal: at least 3 times faster.
"""

from __future__ import annotations

from benchmarks.common import Timer, line, qt_application, skipped


def _former_fill_table(table, frame, headers, cells_table):
    """The Results tab's table filling as it was: every cell formatted on the GUI thread, no ``filling``."""
    import pandas as pd
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTableWidgetItem

    table.clear()
    table.setRowCount(len(frame))
    table.setColumnCount(len(frame.columns))
    table.setHorizontalHeaderLabels([(headers or {}).get(str(c)) or cells_table._title(c) for c in frame.columns])
    table.verticalHeader().hide()
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
               for c in frame.columns]
    for r, row in enumerate(frame.itertuples(index=False)):
        for c, value in enumerate(row):
            text = cells_table._cell(value, frame.columns[c])
            item = QTableWidgetItem(text)
            if numeric[c] or cells_table._looks_numeric(text):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if len(text) > 40:
                item.setToolTip(text)
            table.setItem(r, c, item)
    table.resizeColumnsToContents()
    table.horizontalHeader().setStretchLastSection(True)


def run(quick: bool):
    app = qt_application()
    if app is None:
        yield skipped("annotate_results_gui_thread", "the GUI extra is not installed")
        return
    import pandas as pd
    from PySide6.QtWidgets import QTableWidget

    import ui.annotate.results_view as results_view
    import ui.widgets.cells_table as cells_table

    rows = 2_000 if quick else 4_000
    labels = ["woman", "man", "non-binary", "unclear"]
    frame = pd.DataFrame({
        "item_id": [f"B{k:05d}" for k in range(rows)],
        "Ann": [labels[k % 4] for k in range(rows)],
        "Bob": [labels[(k + 1) % 4] for k in range(rows)],
        "Cat": [labels[(k + 2) % 4] if k % 3 else "" for k in range(rows)],
        "spread": ["2 different" if k % 3 else "3 different" for k in range(rows)],
        "adjudicated": ["" if k % 5 else "woman" for k in range(rows)],
    })

    def gui_seconds(fill, kind) -> float:
        table = kind()
        table.resize(1100, 500)
        table.show()
        fill(table)  # once, so both ways refill a full table
        app.processEvents()
        with Timer() as timer:
            fill(table)
            app.processEvents()
        table.close()
        return timer.seconds

    cells = cells_table.table_cells(frame, results_view.DISPUTE_HEADERS)  # on the worker, in the page
    present = gui_seconds(lambda table: table.show_cells(cells), cells_table.CellsTable)
    former = gui_seconds(lambda table: _former_fill_table(table, frame, results_view.DISPUTE_HEADERS, cells_table),
                         QTableWidget)
    ratio = former / present
    yield line("annotate_results_gui_thread", ratio, "x", ">= 3 and under 0.05 s", ratio >= 3 and present < 0.05,
               rows=rows, present_s=round(present, 3), former_s=round(former, 3))
    yield _disagreements_line(rows)


def _former_disagreements(answers, annotators, factor=2.0):
    """The disputed items of a label task as ``disagreements`` found them before: one pandas group per item."""
    rows = []
    for item_id, group in answers.groupby("item_id", sort=True):
        if len(group) < 2 or group["value"].nunique() < 2:
            continue
        shown = dict(zip(group["annotator"], group["value"]))
        rows.append({"item_id": item_id, **{a: shown.get(a, "") for a in annotators},
                     "spread": f"{group['value'].nunique()} different", "adjudicated": ""})
    return rows


def _disagreements_line(items: int):
    import tempfile
    from pathlib import Path

    import pandas as pd

    from workbench.annotation.adjudication import disagreements
    from workbench.annotation.answers import annotations_frame
    from workbench.annotation.items import NewItem, add_items
    from workbench.annotation.session import open_session
    from workbench.annotation.tasks import create_task
    from workbench.project import Project

    labels = ["woman", "man", "non-binary", "unclear"]
    with tempfile.TemporaryDirectory() as folder:
        project = Project.create(Path(folder) / "bench.palimpsest")
        task = create_task(project, "judge", "label", labels=labels, seed=1)
        add_items(project, task, [NewItem(text=f"response {k}") for k in range(items)])
        for shift, name in enumerate(("Ann", "Bob")):
            session = open_session(project, task, name)
            for k in range(items):
                session.answer(labels[(k * (shift + 1)) % 4])
        with Timer() as present_timer:
            present = disagreements(project, task)
        answers = annotations_frame(project, task, answered_only=True)
        with Timer() as former_timer:
            former = pd.DataFrame(_former_disagreements(answers, sorted(answers["annotator"].unique())),
                                  columns=list(present.columns))
        same = former.equals(present)
        project.close()
    ratio = former_timer.seconds / present_timer.seconds  # the present one also reads the answers
    return line("annotate_disagreements_speedup", ratio, "x", ">= 3 and the same rows", ratio >= 3 and same,
                items=items, disputed=len(present), present_s=round(present_timer.seconds, 3),
                former_s=round(former_timer.seconds, 3))
