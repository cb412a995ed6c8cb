"""The Name cloze page's tab of the paper's tables: several models side by side per book (with the people who did the
name cloze, when asked), and the most-frequent-name baseline.

Everything is read by ``workbench.probes.cloze.models_table.paper_tables`` on a worker (this tab only chooses
and shows); the export buttons write the export registry's tables (``cloze-models-table``,
``cloze-frequent-name``) with the same choices.
"""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ui.widgets.frame_table import Column, FrameTable, count, is_missing, share

YEAR_NONE = 0  # the spin boxes' "any year"
BOOK_COLUMNS = [Column("book", "Book", stretch=True), Column("author", "Author"),
                Column("year", "Year", lambda v: "" if is_missing(v) else str(int(v)), numeric=True)]


def _interval(low: str, high: str):
    def write(row: pd.Series) -> str:
        if is_missing(row[low]) or is_missing(row[high]):
            return ""
        return f"{row[low]:.0%} – {row[high]:.0%}"
    return write


def table_columns(frame: pd.DataFrame) -> list[Column]:
    """The columns of a models table as it came from the core: a pair (accuracy, n) per model, and the people's
    interval where there is one."""
    columns = list(BOOK_COLUMNS)
    for name in frame.columns:
        if not name.startswith("accuracy: "):
            continue
        who = name[len("accuracy: "):]
        columns.append(Column(name, who, share, numeric=True, tooltip=f"Share of passages {who} named correctly"))
        columns.append(Column(f"passages: {who}", "n", count, numeric=True,
                              tooltip=f"Passages {who} answered (failures not counted)"))
        if f"ci_low: {who}" in frame.columns:
            columns.append(Column(f"ci_low: {who}", "95% CI", numeric=True,
                                  compose=_interval(f"ci_low: {who}", f"ci_high: {who}"),
                                  tooltip="Wilson 95% confidence interval"))
    return columns


BASELINE_COLUMNS = [
    Column("book", "Book", stretch=True),
    Column("baseline_name", "Name always answered"),
    Column("passages", "Passages", count, numeric=True),
    Column("accuracy", "Accuracy", share, numeric=True),
    Column("ci_low", "95% CI", numeric=True, compose=_interval("ci_low", "ci_high"), tooltip="Wilson 95% interval"),
    Column("note", "Note"),
]


class ModelsTableTab(QWidget):
    """Choose models, top N, years and the order; the table and the baseline are read on a worker."""

    def __init__(self, ops, parent: QWidget | None = None):
        super().__init__(parent)
        self.ops = ops
        self.work = ops.slot(self)
        self.project = None
        self.models = QListWidget()
        self.models.setObjectName("table-models")
        self.models.setToolTip("Tick the models to put side by side; the first ticked ranks the books")
        self.models.setMaximumWidth(220)
        self.models.itemChanged.connect(self._on_models_changed)
        self.top = QSpinBox()
        self.top.setRange(0, 100_000)
        self.top.setSpecialValueText("all books")
        self.top.setPrefix("")
        self.top.setToolTip("Only the N books the ranking model knows best (0: all)")
        self.year_from = self._year_box("from: any year", "Only books first published in this year or later")
        self.year_to = self._year_box("to: any year", "Only books first published in this year or earlier")
        self.humans = QCheckBox("People")
        self.humans.setToolTip("Add the people who did the name cloze (name-cloze tasks on the Annotate page)")
        self.sort_by = QComboBox()
        self.sort_by.setToolTip("Order of the rows (a model or the people: best first)")
        self.show_button = QPushButton("Show")
        self.show_button.clicked.connect(self.reload)
        self.export_button = QPushButton("Export table (CSV)…")
        self.export_button.clicked.connect(self.export_dialog)
        self.baseline_button = QPushButton("Export baseline (CSV)…")
        self.baseline_button.clicked.connect(lambda: self.export_dialog(baseline=True))
        controls = QHBoxLayout()
        for label, widget in (("Top", self.top), ("Years", self.year_from), ("", self.year_to)):
            if label:
                controls.addWidget(QLabel(label))
            controls.addWidget(widget)
        controls.addStretch(1)
        controls.addWidget(self.show_button)
        controls.addWidget(self.export_button)
        controls.addWidget(self.baseline_button)
        self.note = QLabel()
        self.note.setObjectName("table-note")
        self.note.setWordWrap(True)
        self.table = FrameTable(list(BOOK_COLUMNS))
        self.table.setObjectName("models-table")
        self.baseline = FrameTable(BASELINE_COLUMNS)
        self.baseline.setObjectName("baseline-table")
        baseline_box = QWidget()
        baseline_layout = QVBoxLayout(baseline_box)
        baseline_layout.setContentsMargins(0, 0, 0, 0)
        baseline_layout.addWidget(QLabel("Most-frequent-name baseline (each book's name chosen from the other "
                                         "books' passages):"))
        baseline_layout.addWidget(self.baseline, 1)
        self.tables = QSplitter(Qt.Orientation.Vertical)
        self.tables.addWidget(self.table)
        self.tables.addWidget(baseline_box)
        self.tables.setSizes([300, 120])
        for widget in (self.models, self.table, self.baseline):
            widget.setMinimumHeight(40)
        # the choice of models, people and order in a column of their own: the page stays narrow enough for a
        # 1024-pixel screen
        chooser = QVBoxLayout()
        chooser.addWidget(self.models, 1)
        chooser.addWidget(self.humans)
        sort_row = QHBoxLayout()
        sort_row.addWidget(QLabel("Sort by"))
        sort_row.addWidget(self.sort_by, 1)
        chooser.addLayout(sort_row)
        body = QHBoxLayout()
        body.addLayout(chooser)
        body.addWidget(self.tables, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(controls)
        layout.addWidget(self.note)
        layout.addLayout(body, 1)
        # no taller than the other result tabs need: the page must fit a laptop window (its tables shrink first)
        self.setMinimumHeight(110)

    def _year_box(self, none_text: str, tooltip: str) -> QSpinBox:
        box = QSpinBox()
        box.setRange(YEAR_NONE, 2100)
        box.setSpecialValueText(none_text)
        box.setToolTip(tooltip)
        return box

    # ------------------------------------------------------------------ choices
    def set_models(self, labels: list[str]) -> None:
        """The models with results; those ticked before stay ticked (the first two by default)."""
        ticked = self.chosen_models() or labels[:2]
        self.models.blockSignals(True)
        self.models.clear()
        for label in labels:
            item = QListWidgetItem(label)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if label in ticked else Qt.CheckState.Unchecked)
            self.models.addItem(item)
        self.models.blockSignals(False)
        self._on_models_changed()

    def chosen_models(self) -> list[str]:
        return [self.models.item(i).text() for i in range(self.models.count())
                if self.models.item(i).checkState() == Qt.CheckState.Checked]

    def _on_models_changed(self, *_) -> None:
        current = self.sort_by.currentData()
        self.sort_by.blockSignals(True)
        self.sort_by.clear()
        for text, value in [*((m, m) for m in self.chosen_models()), ("people", "humans"), ("title", "book"),
                            ("year", "year")]:
            self.sort_by.addItem(text, value)
        index = self.sort_by.findData(current)
        self.sort_by.setCurrentIndex(max(index, 0))
        self.sort_by.blockSignals(False)

    def options(self) -> dict:
        """The choices, as the core and the export registry take them."""
        sort_by = self.sort_by.currentData()
        humans = self.humans.isChecked()
        if sort_by == "humans" and not humans:
            sort_by = None
        models = self.chosen_models()
        if sort_by in models:  # the ranking model's column comes first, as in the paper's tables
            models = [sort_by] + [m for m in models if m != sort_by]
        return {"models": models, "top": self.top.value() or None,
                "year_from": self.year_from.value() or None, "year_to": self.year_to.value() or None,
                "humans": humans, "sort_by": sort_by}

    # ------------------------------------------------------------------ reading
    def set_project(self, project) -> None:
        self.project = project
        self.work.drop()
        self.show_result((pd.DataFrame(columns=["book", "author", "year"]), "", pd.DataFrame()))
        if project is not None:
            self.reload(models_only=True)

    def reload(self, models_only: bool = False) -> None:
        if self.project is None or self.project.closed:
            return
        project, options = self.project, self.options()

        def read(state):
            from workbench.probes.cloze.analysis import model_labels
            from workbench.probes.cloze.models_table import paper_tables

            labels = model_labels(project)
            chosen = options["models"] or labels[:2]
            if models_only and not chosen:
                return labels, None
            return labels, paper_tables(project, chosen, top=options["top"], year_from=options["year_from"],
                                        year_to=options["year_to"], humans=options["humans"],
                                        sort_by=options["sort_by"] if options["models"] else None)

        self.work.start(read, label="Reading the models table", project=project, background_read=True,
                        on_done=self._on_read, on_error=self._on_error)

    def _on_read(self, result) -> None:
        labels, tables = result
        if [self.models.item(i).text() for i in range(self.models.count())] != labels:
            self.set_models(labels)
        if tables is None:
            self.note.setText("No model has name-cloze answers yet: run the probe or import published results.")
            return
        self.show_result(tables)

    def _on_error(self, message: str, details: str = "") -> None:
        self.note.setText(message)

    def show_result(self, tables) -> None:
        table, note, baseline = tables
        columns = table_columns(table)
        if [c.field for c in columns] != [c.field for c in self.table.columns]:
            self.table.set_columns(columns)  # the same widget: one made while the window closes can crash PySide
        self.table.show_frame(table)
        self.baseline.show_frame(baseline)
        self.note.setText(note)
        self.note.setVisible(bool(note))

    # ------------------------------------------------------------------ exporting
    def export_dialog(self, baseline: bool = False) -> None:
        if self.project is None:
            return
        name = "cloze-frequent-name.csv" if baseline else "cloze-models-table.csv"
        path, _ = QFileDialog.getSaveFileName(self, "Export the table", name, "CSV (*.csv)")
        if path:
            self.export(path, baseline=baseline)

    def export(self, path: str, baseline: bool = False):
        """Write the table (or the baseline) through the export registry, on a worker."""
        project, options = self.project, self.options()
        options["models"] = ",".join(options["models"])
        options = {k: v for k, v in options.items() if v not in (None, "", False)}

        def write(state):
            from workbench.export.registry import export_table

            if baseline:
                return export_table(project, "cloze-frequent-name", path)
            return export_table(project, "cloze-models-table", path, **options)

        return self.ops.run(write, label="Exporting the table", project=project, on_done=self._exported,
                            on_error=self._on_error)

    def _exported(self, path) -> None:
        self.note.setText(f"Wrote {path}.")
        self.note.setVisible(True)
