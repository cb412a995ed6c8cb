"""The Jobs page: work running now (progress, time left, Cancel) and every run of the project.

A finished, stopped or crashed run can be continued, or just its failed items retried: the page plans it with
``workbench.work.continue_work`` (the probe that created the run rebuilds its work) and starts it the one way,
``ui.work_op.WorkOp``: a paid API is asked about first (about what the items left cost), and how it went is said
on the page. Several runs may continue at once (each beside the others, not on one slot).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from ui import wording
from ui.widgets.combo import refill
from ui.widgets.page import Page
from ui.widgets.progress_row import ProgressRow
from ui.widgets.table_filling import filling
from ui.widgets.table_style import one_line_rows
from ui.work_op import WorkOp
from workbench import jobs
from workbench.export.methods import write_methods
from workbench.runs.views import RUN_TABLE_COLUMNS, RunsChoices, run_details, run_kinds, runs_table
from workbench.work import continue_work

RUN_COLUMNS = RUN_TABLE_COLUMNS
ABOUT_MAX_PX = 220
ABOUT = RUN_COLUMNS.index("About")
HEADER_TIPS = {
    "About": "What the run covered: the imported file, the REP sets, samples per prompt",
    "Answered": "Items with an answer, of all the run's items (those that failed are counted under Failed)",
    "Model calls": "Requests sent to the model; answers taken from the project's response cache instead of asking "
                   "the model again are counted apart",
    "Tokens in / out": "Tokens the model read (prompts) and wrote (answers); API prices are per token",
}
NUMERIC_COLUMNS = ("Run", "Answered", "Failed", "Model calls", "Tokens in / out")
LIVE_REFRESH_MS = 1000
OPERATION_LABEL_PX = 260


def _item(text: str, data=None) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if data is not None:
        item.setData(Qt.ItemDataRole.UserRole, data)
    return item


class JobsPage(Page):
    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self._runs: dict[int, dict] = {}  # run id -> its row of ``runs_table``
        self._configs: dict[int, dict] = {}  # run id -> its stored configuration (it never changes)
        self.choices = RunsChoices()  # which runs are listed, kept as the widgets change
        self.shown = None  # the frame of ``runs_table`` on show
        self._build()
        self.ops.changed.connect(self._ops_changed)
        self.timer = QTimer(self)
        self.timer.setInterval(LIVE_REFRESH_MS)
        self.timer.timeout.connect(self._live_refresh)
        self.refresh()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        self.ops_hint = QLabel("Nothing is running.")
        self.op_rows: list[ProgressRow] = []
        ops_group = QGroupBox("Running now")
        self.ops_layout = QVBoxLayout(ops_group)
        self.ops_layout.addWidget(self.ops_hint)
        self.ops_layout.addStretch(1)

        self.continue_button = QPushButton("Continue")
        self.continue_button.setToolTip("Do the items this run has not done yet (finished items are kept)")
        self.continue_button.clicked.connect(lambda: self.resume_selected(retry_failed=False))
        self.retry_button = QPushButton("Retry failed only")
        self.retry_button.setToolTip("Ask the model again for the items that failed, and only those")
        self.retry_button.clicked.connect(lambda: self.resume_selected(retry_failed=True))
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.methods_button = QPushButton("Methods text…")
        self.methods_button.setToolTip("Write what a paper's methods section needs about these runs: models, "
                                       "parameters, prompts in full, seeds, counts, dates, statistics (Markdown, "
                                       "with a JSON record beside it)")
        self.methods_menu = QMenu(self.methods_button)
        self.methods_selected = self.methods_menu.addAction("Of the selected run…")
        self.methods_selected.triggered.connect(lambda: self.methods_dialog(self.selected_run_ids()))
        self.methods_all = self.methods_menu.addAction("Of all runs…")
        self.methods_all.triggered.connect(lambda: self.methods_dialog(None))
        self.methods_menu.aboutToShow.connect(self._methods_menu_shown)
        self.methods_button.setMenu(self.methods_menu)
        self.kind = QComboBox()
        self.kind.setToolTip("List the runs of one kind only, or of every kind")
        self.kind.addItem("every kind", None)
        self.kind.currentIndexChanged.connect(self._kind_chosen)
        buttons = QHBoxLayout()
        buttons.addWidget(QLabel("Kind"))
        buttons.addWidget(self.kind)
        buttons.addWidget(self.continue_button)
        buttons.addWidget(self.retry_button)
        buttons.addStretch(1)
        buttons.addWidget(self.methods_button)
        buttons.addWidget(self.refresh_button)

        self.runs_table = QTableWidget(0, len(RUN_COLUMNS))
        self.runs_table.setHorizontalHeaderLabels(RUN_COLUMNS)
        for column, title in enumerate(RUN_COLUMNS):
            if title in HEADER_TIPS:
                self.runs_table.horizontalHeaderItem(column).setToolTip(HEADER_TIPS[title])
        one_line_rows(self.runs_table)
        self.runs_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.runs_table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(ABOUT, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.setMinimumSectionSize(40)
        self.runs_table.itemSelectionChanged.connect(self._selection_changed)
        self.runs_hint = QLabel("")
        self.status_line = QLabel("")  # how the last run continued here went (or that nothing was started)
        self.status_line.setWordWrap(True)
        self.status_line.hide()
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setPlaceholderText("Select a run to see its notes and why items failed.")
        self.details.setMaximumHeight(140)

        runs_group = QGroupBox("Runs")
        runs_layout = QVBoxLayout(runs_group)
        runs_layout.addLayout(buttons)
        runs_layout.addWidget(self.runs_hint)
        runs_layout.addWidget(self.status_line)
        runs_layout.addWidget(self.runs_table, 1)
        runs_layout.addWidget(self.details)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(ops_group)
        splitter.addWidget(runs_group)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

    # ------------------------------------------------------------------ running operations
    def _ops_changed(self) -> None:
        self._load_operations()
        if not self.isVisible():  # shown again, the page reloads (on_shown)
            return
        if self.ops.busy:
            self.timer.start()
        else:
            self.timer.stop()
        self.refresh_runs()

    def _live_refresh(self) -> None:
        if not self.ops.busy:
            self.timer.stop()
        self.refresh_runs()

    def on_shown(self) -> None:
        self.refresh()
        if self.ops.busy:
            self.timer.start()

    def hideEvent(self, event) -> None:
        self.timer.stop()
        super().hideEvent(event)

    def _load_operations(self) -> None:
        """One row per running operation: rows of ended ones go, new ones come, the rest stay as they are."""
        operations = [op for op in self.ops.operations if op.running]
        for row in [r for r in self.op_rows if r.operation not in operations]:
            self.op_rows.remove(row)
            self.ops_layout.removeWidget(row)
            row.hide()
            row.setParent(None)
            row.deleteLater()
        shown = [row.operation for row in self.op_rows]
        for op in operations:
            if op not in shown:
                row = ProgressRow()
                row.label.setMinimumWidth(OPERATION_LABEL_PX)  # the rows' bars line up
                # in the page before it shows: shown without a parent, it was a window of its own for a moment,
                # and took the keyboard from the main window each time any work started
                self.ops_layout.insertWidget(self.ops_layout.count() - 1, row)
                row.watch(op)
                self.op_rows.append(row)
        self.ops_hint.setVisible(not operations)

    # ------------------------------------------------------------------ runs
    def refresh(self) -> None:
        self._load_operations()
        self.refresh_runs()

    def set_project(self, project) -> None:
        self._configs = {}
        super().set_project(project)

    def _kind_chosen(self, *_) -> None:
        self.choices = replace(self.choices, kind=self.kind.currentData())
        self.refresh_runs()

    def refresh_runs(self) -> None:
        selected = self.selected_run_id()
        self.runs_table.setRowCount(0)
        self._runs = {}
        self.shown = None
        if self.project is None or self.project.closed:
            refill(self.kind, [("every kind", None)])
            self.choices = replace(self.choices, kind=None)
            self.runs_hint.setText("Open or create a project to see its runs.")
            self.runs_hint.show()
            self._selection_changed()
            return
        refill(self.kind, [("every kind", None)] + run_kinds(self.project))
        self.choices = replace(self.choices, kind=self.kind.currentData())  # a kind no longer there: every kind
        frame = self.shown = runs_table(self.project, self.choices, configs=self._configs)
        self.runs_hint.setText("No runs yet. Runs appear here when a probe asks a model for answers."
                               if self.choices.kind is None else "No runs of this kind.")
        self.runs_hint.setVisible(frame.empty)
        with filling(self.runs_table):
            for record in frame.to_dict("records"):
                self._add_run_row(record)
        abouts = [self.runs_table.item(r, ABOUT).text() for r in range(self.runs_table.rowCount())]
        widest = max((self.runs_table.fontMetrics().horizontalAdvance(a) for a in abouts), default=0) + 16
        self.runs_table.setColumnWidth(ABOUT, max(60, min(widest, ABOUT_MAX_PX)))
        if selected is not None:
            self.select_run(selected)
        self._selection_changed()

    def _add_run_row(self, record: dict) -> None:
        self._runs[int(record["id"])] = record
        row = self.runs_table.rowCount()
        self.runs_table.insertRow(row)
        for column, value in enumerate(record[title] for title in RUN_COLUMNS):
            item = _item(str(value), int(record["id"]) if column == 0 else None)
            if RUN_COLUMNS[column] in NUMERIC_COLUMNS:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if column == ABOUT and value:
                item.setToolTip(str(value))
            self.runs_table.setItem(row, column, item)

    def selected_run_id(self) -> int | None:
        rows = {i.row() for i in self.runs_table.selectedIndexes()}
        if not rows:
            return None
        return int(self.runs_table.item(min(rows), 0).data(Qt.ItemDataRole.UserRole))

    def select_run(self, run_id: int) -> None:
        for row in range(self.runs_table.rowCount()):
            if int(self.runs_table.item(row, 0).data(Qt.ItemDataRole.UserRole)) == run_id:
                self.runs_table.selectRow(row)
                return

    def _selection_changed(self) -> None:
        run_id = self.selected_run_id()
        record = self._runs.get(run_id) if run_id is not None else None
        if record is None or self.project is None:
            self.continue_button.setEnabled(False)
            self.retry_button.setEnabled(False)
            self.details.setPlainText("")
            return
        active = jobs.is_active(self.project, run_id)
        resumable = jobs.can_resume(record["kind"]) and not active
        missing = int(record["total"]) - int(record["ok"]) - int(record["failed"])
        self.continue_button.setEnabled(resumable and record["status"] in jobs.RESUMABLE_STATUSES and
                                        (missing > 0 or record["status"] not in ("done", "failed")))
        self.retry_button.setEnabled(resumable and int(record["failed"]) > 0)
        tip = "" if jobs.can_resume(record["kind"]) else \
            "This kind of run can only be started again from the page that created it."
        self.continue_button.setToolTip(tip or "Do the items this run has not done yet (finished items are kept)")
        self.details.setPlainText(run_details(self.project, run_id, record))

    # ------------------------------------------------------------------ methods text
    def selected_run_ids(self) -> list[int]:
        rows = {i.row() for i in self.runs_table.selectedIndexes()}
        return sorted(int(self.runs_table.item(r, 0).data(Qt.ItemDataRole.UserRole)) for r in rows)

    def _methods_menu_shown(self) -> None:
        chosen = self.selected_run_ids()
        self.methods_selected.setEnabled(bool(chosen))
        self.methods_selected.setText(f"Of run {chosen[0]} (selected)…" if len(chosen) == 1 else
                                      f"Of the {len(chosen)} selected runs…" if chosen else "Of the selected run…")
        self.methods_all.setEnabled(bool(self._runs))

    def methods_dialog(self, run_ids: list[int] | None) -> None:
        if self.project is None:
            return
        suggested = Path(self.project.path).with_name(f"{Path(self.project.path).stem}-methods.md")
        path, _ = QFileDialog.getSaveFileName(self, "Save the methods text", str(suggested), "Markdown (*.md)")
        if path:
            self.export_methods(path, run_ids)

    def export_methods(self, path: str, run_ids: list[int] | None = None) -> None:
        """Write the methods text of ``run_ids`` (None: every run) to ``path``, and its JSON record beside it."""
        project = self.project
        if project is None:
            return
        self.ops.run(lambda state: write_methods(project, path, run_ids), label="Writing the methods text",
                     project=project, on_error=self.show_error, on_done=self._methods_written)

    def _methods_written(self, paths) -> None:
        self.show_info(f"Wrote the methods text to {paths[0]}, and its JSON record to {paths[1].name} beside it.")

    def resume_selected(self, retry_failed: bool) -> None:
        """Continue the selected run (or ask again for its failed items): a paid API is asked about first."""
        run_id = self.selected_run_id()
        if run_id is None or self.project is None:
            return None
        kind = wording.run_kind(self._runs[run_id]["kind"])
        project = self.project

        def plan():
            work = continue_work(project, run_id, retry_failed, next_step="use 'Retry failed only' to ask again")
            work.title = f"{work.title} ({kind})"
            return work

        self.continue_button.setEnabled(False)
        self.retry_button.setEnabled(False)
        operation = WorkOp(self, plan).success(self._resumed).declined(self._selection_changed).run()
        if operation is None:
            self._selection_changed()
        return operation

    def show_status(self, text: str) -> None:
        """What the last Continue or Retry did (``WorkOp`` says it here)."""
        self.status_line.setText(text)
        self.status_line.setVisible(bool(text))

    def _resumed(self, outcome) -> None:
        self.refresh_runs()
        if outcome.report is not None:
            self.select_run(outcome.report.run_id)
