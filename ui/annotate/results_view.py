"""The Results tab: the agreement table, the disputed items, adjudication and exports."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ui import dialogs
from ui.widgets.cells_table import CellsTable, table_cells
from workbench.annotation.adjudication import adjudicate
from workbench.annotation.tasks import Task
from workbench.annotation.views import AnnotationChoices, agreement_shown, disputes_table
from workbench.errors import UserError
from workbench.export.registry import export_table

if TYPE_CHECKING:
    from ui.background import BackgroundOps

AGREEMENT_HEADERS = {"statistic": "Statistic", "value": "Value", "ci": "95% CI", "p_value": "p", "items": "Items",
                     "annotators": "Annotators", "note": "Note"}
DISPUTE_HEADERS = {"item_id": "Item", "spread": "How far apart", "adjudicated": "Agreed value"}


def compute_agreement(project, choices: AnnotationChoices, state) -> tuple:
    """Everything but making the widgets' items: the bootstrap, the disputed items, and the texts of
    thousands of cells (which took half a second of the GUI thread on a large task). The frames are the core's
    (``agreement_shown``, ``disputes_table``) for the page's choices."""
    agreement = agreement_shown(project, choices)
    state.check()
    disputes = disputes_table(project, choices)
    state.check()
    return (agreement.empty, len(disputes), table_cells(agreement, AGREEMENT_HEADERS),
            table_cells(disputes, DISPUTE_HEADERS), agreement, disputes)


class ResultsView(QWidget):
    def __init__(self, ops: "BackgroundOps", parent: QWidget | None = None):
        super().__init__(parent)
        self.ops = ops
        self.computing = ops.slot(self)  # the agreement of the task on show: a newer request replaces it
        self.computing.busy_changed.connect(self._update_button)
        self.project = None
        self.task: Task | None = None
        self.choices = AnnotationChoices()  # the page's, as it was when the task was chosen
        self.frames: tuple = (None, None)  # the agreement and the disputes on show (the core's frames)

        self.refresh_button = QPushButton("Compute agreement")
        self.refresh_button.clicked.connect(self.refresh)
        self.export_answers = QPushButton("Export answers…")
        self.export_answers.clicked.connect(lambda: self._export("annotations", "annotations"))
        self.export_agreement = QPushButton("Export agreement…")
        self.export_agreement.clicked.connect(lambda: self._export("annotation-agreement", "agreement"))
        top = QHBoxLayout()
        top.addWidget(self.refresh_button)
        top.addStretch(1)
        top.addWidget(self.export_answers)
        top.addWidget(self.export_agreement)

        self.agreement = CellsTable()
        self.agreement.setObjectName("agreement-table")
        self.disputes = CellsTable()
        self.disputes.setObjectName("disagreements")
        self.disputes.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.disputes.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.value_field = QLineEdit()
        self.value_field.setObjectName("adjudicated-value")
        self.value_field.setPlaceholderText("agreed value for the selected item, e.g. 2 hours or a label")
        self.save_button = QPushButton("Save adjudication")
        self.save_button.clicked.connect(self._adjudicate)
        adjudication = QHBoxLayout()
        adjudication.addWidget(self.value_field, 1)
        adjudication.addWidget(self.save_button)
        self.value_field.returnPressed.connect(self._adjudicate)
        self.status = QLabel()
        self.status.setObjectName("results-status")

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(QLabel("<b>Agreement</b> (each statistic with the items and annotators it used)"))
        layout.addWidget(self.agreement, 1)
        layout.addWidget(QLabel("<b>Disagreements</b> (select one, type the agreed value; the answers are kept)"))
        layout.addWidget(self.disputes, 1)
        layout.addLayout(adjudication)
        layout.addWidget(self.status)

    def set_task(self, project, task: Task | None, choices: AnnotationChoices | None = None) -> None:
        same = (project is self.project and task is not None and self.task is not None and task.id == self.task.id)
        self.project, self.task = project, task
        self.choices = choices or AnnotationChoices(task=task.id if task is not None else None)
        if same:  # the page was reloaded: the tables stay until Compute agreement (or the tab) asks again
            return
        self.computing.drop()  # a computation still running for the task before is not shown
        for table in (self.agreement, self.disputes):
            table.show_cells(None)
        self.status.clear()
        self._update_button()
        if task is not None and self.isVisible():  # another task chosen while these tables are on screen
            self.refresh()

    def refresh(self) -> None:
        if self.project is None or self.task is None:
            return
        project, task = self.project, self.task
        self.status.setText(f"Computing agreement for '{task.name}'…")
        self.computing.start(partial(compute_agreement, project, self.choices), label="Computing agreement",
                             project=project, background_read=True, on_done=self._show)

    def _update_button(self, *_) -> None:
        self.refresh_button.setEnabled(self.task is not None and not self.computing.busy)

    def _show(self, result) -> None:
        agreement_empty, disputed, agreement, disputes, *frames = result
        self.frames = tuple(frames)
        self.agreement.show_cells(agreement)
        self.disputes.show_cells(disputes)
        if agreement_empty:
            self.status.setText("Nothing to compare yet: agreement needs at least two annotators who answered the "
                                "same items (each task shares some items between all its annotators).")
        else:
            self.status.setText(f"{disputed} disputed item(s)." if disputed else "No disagreements.")

    def _adjudicate(self) -> None:
        row = self.disputes.currentRow()
        if row < 0 or self.task is None:
            self.show_error("Select a disputed item first.")
            return
        item_key = self.disputes.item(row, 0).text()
        try:
            saved = adjudicate(self.project, self.task.id, item_key, self.value_field.text())
        except UserError as exc:
            self.show_error(str(exc))
            return
        self.value_field.clear()
        # The answers and the agreement do not change: only this row's agreed value does. Show it in place
        # and move to the next disputed item, rather than computing everything again (seconds on a large
        # task) and losing the place in the list.
        agreed = self._agreed_column()
        if agreed is not None:
            self.disputes.set_text(row, agreed, str(saved["value"]))
        if row + 1 < self.disputes.rowCount():
            self.disputes.selectRow(row + 1)
            self.disputes.scrollTo(self.disputes.model().index(row + 1, 0))
        self.status.setText(f"Saved the agreed value of item {saved['item_id']}: {saved['value']}.")

    def _agreed_column(self) -> int | None:
        title = DISPUTE_HEADERS["adjudicated"]
        return next((c for c in range(self.disputes.columnCount())
                     if self.disputes.horizontalHeaderItem(c).text() == title), None)

    def _export(self, table: str, stem: str) -> None:
        if self.task is None:
            return
        folder = Path(self.project.path).parent
        path, _ = QFileDialog.getSaveFileName(self, "Export", str(folder / f"{stem}.csv"), "CSV files (*.csv)")
        if not path:
            return
        self.export_to(table, path)

    def export_to(self, table: str, path: str | Path):
        """Write one of the task's tables (agreement takes a moment: its intervals are bootstrapped)."""
        project, task_id = self.project, self.task.id
        return self.ops.run(lambda state: export_table(project, table, path, task=task_id), label="Exporting",
                            project=project, on_done=self._written, on_error=self.show_error)

    def _written(self, path) -> None:
        self.status.setText(f"Wrote {path}.")

    def show_error(self, message: str, details: str = "") -> None:
        dialogs.show_error(self, message, details)
