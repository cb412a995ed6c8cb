"""The Name cloze page's tab of the paper's tables: several models side by side per book (with the people who did the
name cloze, when asked), and the most-frequent-name baseline.

The tab's choices are ``self.choices`` (``workbench.probes.cloze.views.ModelsTableChoices``), changed by its
widgets; everything is read by ``views.models_table_view`` for them on a worker (this tab only chooses and
shows); the export buttons write the export registry's tables (``cloze-models-table``, ``cloze-frequent-name``)
with the same choices.
"""

from __future__ import annotations

from dataclasses import replace

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

from ui.cloze.results import columns
from ui.widgets.frame_table import FrameTable
from workbench.probes.cloze.views import (
    BASELINE_VIEW_COLUMNS,
    BOOK_VIEW_COLUMNS,
    ModelsTableChoices,
    ModelsTableView,
    empty_models_table,
    models_table_view,
)

YEAR_NONE = 0  # the spin boxes' "any year"


class ModelsTableTab(QWidget):
    """Choose models, top N, years and the order; the table and the baseline are read on a worker."""

    def __init__(self, ops, parent: QWidget | None = None):
        super().__init__(parent)
        self.ops = ops
        self.work = ops.slot(self)
        self.project = None
        self.choices = ModelsTableChoices()
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
        self.top.valueChanged.connect(lambda value: self._choose(top=value or None))
        self.year_from.valueChanged.connect(lambda value: self._choose(year_from=value or None))
        self.year_to.valueChanged.connect(lambda value: self._choose(year_to=value or None))
        self.humans.toggled.connect(lambda on: self._choose(humans=on))
        self.sort_by.currentIndexChanged.connect(lambda _: self._choose(sort_by=self.sort_by.currentData()))
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
        self.table = FrameTable(columns(BOOK_VIEW_COLUMNS))
        self.table.setObjectName("models-table")
        self.baseline = FrameTable(columns(BASELINE_VIEW_COLUMNS))
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
        self._choose(models=tuple(self.chosen_models()), sort_by=self.sort_by.currentData())

    def _choose(self, **changes) -> None:
        """A widget changed: the tab's choices follow (the table is read again with Show)."""
        self.choices = replace(self.choices, **changes)

    # ------------------------------------------------------------------ reading
    def set_project(self, project) -> None:
        self.project = project
        self.work.drop()
        self.models.blockSignals(True)
        self.models.clear()  # another project's models
        self.models.blockSignals(False)
        self._on_models_changed()
        self.show_result(ModelsTableView([], empty_models_table()))
        if project is not None:
            self.reload(models_only=True)

    def reload(self, models_only: bool = False) -> None:
        """Read the table for ``self.choices`` on a worker (``models_only``: only which models have results, while
        none is ticked yet: the first two are then ticked and shown)."""
        if self.project is None or self.project.closed:
            return
        project, choices = self.project, self.choices
        self.work.start(lambda state: models_table_view(project, choices), label="Reading the models table",
                        project=project, background_read=True, on_done=self._on_read, on_error=self._on_error)

    def _on_read(self, view: ModelsTableView) -> None:
        if [self.models.item(i).text() for i in range(self.models.count())] != view.labels:
            self.set_models(view.labels)
        if view.table is None:
            self.note.setText("No model has name-cloze answers yet: run the probe or import published results.")
            return
        self.show_result(view)

    def _on_error(self, message: str, details: str = "") -> None:
        self.note.setText(message)

    def show_result(self, view: ModelsTableView) -> None:
        shown = columns(view.columns)
        if [c.field for c in shown] != [c.field for c in self.table.columns]:
            self.table.set_columns(shown)  # the same widget: one made while the window closes can crash PySide
        self.table.show_frame(view.table)
        self.baseline.show_frame(view.baseline)
        self.note.setText(view.note)
        self.note.setVisible(bool(view.note))

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
        project, options = self.project, self.choices.export_options()

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
