"""What every tab of the Leakage page has: its one background operation with a progress row, a line
saying what the last piece of work came to, a results table read in the background, the choices
(corpus, model, passages) its settings offer, and (most tabs) its charts above the table.

A tab's choices are a Qt-free state object of the core (``workbench.probes.leakage.views``, ``...Choices``) held
in ``choices``: its widgets change it as the person changes them (``bind``), and the table is read by the core's
query for that state (``results_query``) on a worker: no option is read from a widget when the table is read."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from ui.leakage.tab_charts import TabCharts
from ui.widgets.combo import refill_names
from ui.widgets.frame_table import Column, FrameTable
from ui.widgets.one_operation import OneOperation
from ui.widgets.page import ProjectView
from ui.widgets.painted import painted_soon
from ui.widgets.progress_row import ProgressRow
from ui.widgets.summary_box import SummaryBox
from workbench.run_failures import describe_outcome

if TYPE_CHECKING:
    import pandas as pd
    from PySide6.QtCore import SignalInstance

    from workbench.jobs import JobReport
    from workbench.project import Project

#: a view's query: the project and the tab's choices -> the frame its table shows
Query = Callable[["Project", Any], "pd.DataFrame"]

CLOZE_SOURCE = "Name-cloze passages (name put back)"
FILE_SOURCE = "Passages from a file…"
NO_LOCAL_MODEL = "(add a local model on the Models page)"
NO_CORPUS = "(build or add a corpus first)"
CHART_TABLE_SHARES = (55, 45)  # the height the charts and the table get at first
PASSAGE_FILES = "Passages (*.txt *.csv *.tsv);;All files (*)"


class AnalysisTab(ProjectView, OneOperation):
    """A tab with one operation at a time (``work``), a progress row, a summary line and a results table;
    with ``charts`` (the page of the export registry's charts shown on the tab), the charts above the table
    (``chart_options``)."""

    def __init__(self, ops, columns: list[Column], key: str | None = None, parent: QWidget | None = None,
                 charts: str = ""):
        super().__init__(ops, parent)
        self.choices: Any = None  # the tab's ``...Choices`` (set by each tab)
        self._bound: list[tuple[str, Callable[[], Any]]] = []
        self.work = ops.slot(self)
        self.reading = ops.slot(self)
        self.progress = ProgressRow(self.work)
        self.summary = SummaryBox()
        self.table = FrameTable(columns, key=key)
        self.settings = QWidget()
        layout = QVBoxLayout(self)
        layout.addWidget(self.settings)
        layout.addWidget(self.progress)
        layout.addWidget(self.summary)
        self.note = hint("")  # what the results come to (a correlation, an AUC), above the charts
        self.note.setVisible(self.keeps_note_room and bool(charts))
        if self.keeps_note_room:
            self.note.setMinimumHeight(2 * self.note.fontMetrics().lineSpacing() + 4)
        self.charts: TabCharts | None = None
        if charts:
            self.charts = TabCharts(ops, charts)
            self.charts.picked.connect(self.point_picked)
            self.charts.saved.connect(self.summary.show_text)
            upper = QWidget()  # in the splitter, so a wrapped note never makes the page taller than the window
            upper_layout = QVBoxLayout(upper)
            upper_layout.setContentsMargins(0, 0, 0, 0)
            upper_layout.addWidget(self.note)
            upper_layout.addWidget(self.charts, 1)
            split = QSplitter(Qt.Orientation.Vertical)
            split.setChildrenCollapsible(False)
            split.addWidget(upper)
            split.addWidget(self.table)
            split.setSizes(list(CHART_TABLE_SHARES))
            layout.addWidget(split, 1)
        else:
            layout.addWidget(self.table, 1)

    def lay_out_settings(self, *rows: tuple) -> None:
        """The settings as rows (short enough for a laptop screen), each a run of ``(label, widget)`` pairs and
        bare widgets (buttons), left-aligned."""
        layout = QVBoxLayout(self.settings)
        layout.setContentsMargins(0, 0, 0, 0)
        for fields in rows:
            row = QHBoxLayout()
            for field in fields:
                if isinstance(field, tuple):
                    row.addWidget(QLabel(field[0]))
                    field = field[1]
                row.addWidget(field)
            row.addStretch(1)
            layout.addLayout(row)

    #: a tab whose results come with a note over its charts keeps room for two lines of it from the start: a
    #: note appearing once the charts were drawn shrank them, and they were drawn again (a second rendering of
    #: 5,700 passages on a worker: 100-200 ms of a stuttering window)
    keeps_note_room = False

    def show_note(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(bool(text) or (self.keeps_note_room and self.charts is not None))

    # ---- choices ---------------------------------------------------------------------------------

    def choose(self, **changes: Any) -> None:
        """Change the tab's choices (``dataclasses.replace``)."""
        self.choices = replace(self.choices, **changes)

    def bind(self, field: str, value: Callable[[], Any], *signals: "SignalInstance") -> None:
        """Keep ``choices.<field>`` at ``value()`` (a widget's value): set now, and again whenever one of
        ``signals`` fires (connect these before the signals that reload the table)."""
        self._bound.append((field, value))
        for signal in signals:
            signal.connect(lambda *_, f=field, v=value: self.choose(**{f: v()}))
        self.choose(**{field: value()})

    def take_refilled(self) -> None:
        """The bound widgets' values into the choices after their lists were refilled from the project (a
        refill emits no signals)."""
        if self._bound:
            self.choose(**{field: value() for field, value in self._bound})

    def refresh_on_choice(self, *combos: QComboBox) -> None:
        """Reload the results and the charts when the person picks another entry in ``combos``."""
        for combo in combos:
            combo.activated.connect(self._choice_made)

    def _choice_made(self, *_: Any) -> None:
        self.refresh()

    # ---- work ------------------------------------------------------------------------------------

    def start(self, work: Callable[[Any], Any], label: str, on_done: Callable[[Any], None]) -> None:
        if self.require_project() is not None:
            self.start_work(work, label, on_done)

    def start_run(self, work: Callable[[Any], "JobReport"], label: str, what: str) -> None:
        """Start ``work``, a run of the job runner, and say afterwards how it ended: what failed, why, and
        how to retry just the failures (worked out on the worker: it reads the stored failures)."""
        project = self.project
        self.start(lambda state: describe_outcome(project, work(state), what), label, self.summary.show_text)

    # ---- results ---------------------------------------------------------------------------------

    def results_query(self) -> Query | None:
        """The core's query of the tab's table (called with the project and ``choices`` on a worker); None when
        the choices leave nothing to show."""
        return None

    #: the charts are drawn from the results table's own frame (it holds every column they draw), so that the
    #: answers are read once: 57,000 passages' overlaps take seconds to read and derive
    charts_from_results = False

    def refresh(self) -> None:
        from workbench.probes.leakage.views import empty_frame

        self.refresh_choices()
        self.take_refilled()
        query = self.results_query() if self.project is not None else None
        if self.charts is not None:
            options, nothing = self.chart_options()
            if query is not None and options is not None:
                self.charts.drawing.drop()  # drawn once the table is shown and painted (``_results_read``)
            else:
                self.charts.show_for(self.project, options, nothing)
        if query is None:
            self.table.show_frame(empty_frame([c.field for c in self.table.columns]))
            return
        project, choices = self.project, self.choices
        self.reading.queue(lambda state: query(project, choices), label="Reading results", project=project,
                           background_read=True, on_done=self._results_read, on_error=self._results_failed)

    def _results_read(self, frame: "pd.DataFrame") -> None:
        """The results on show, then their charts made (``painted_soon``): made while the window painted a table
        of 57,000 rows, on workers that need the interpreter's lock as much as the painting does, they slowed it
        to 100-500 ms."""
        self.show_results(frame)
        self._draw_charts(frame)

    def _results_failed(self, message: str, details: str) -> None:
        self.work_failed(message, details)
        self._draw_charts(None)

    def _draw_charts(self, frame: "pd.DataFrame | None") -> None:
        if self.charts is None:
            return
        options, nothing = self.chart_options()
        if options is not None and frame is not None and self.charts_from_results:
            self.charts.show_frames(self.project, options, frame, nothing, after=painted_soon(self.table.viewport()))
        else:
            self.charts.show_for(self.project, options, nothing, after=painted_soon(self.table.viewport()))

    def show_results(self, frame: "pd.DataFrame") -> None:
        """Show the results read (tabs show their note too)."""
        self.table.show_frame(frame)

    def refresh_choices(self) -> None:
        """Fill the settings' lists (corpora, models) from the project: cheap reads on the GUI thread."""

    # ---- charts ----------------------------------------------------------------------------------

    def chart_options(self) -> tuple[dict[str, Any] | None, str]:
        """The charts' options for the tab's choices (None: nothing to draw), and what the charts say
        when there is nothing to draw: what to do next."""
        return None, ""

    def point_picked(self, picked: dict) -> None:
        """A point of a chart was clicked: show its book in the table (a tab of passages opens the passage)."""
        if "book_id" in picked:
            self.table.select_keys([picked["book_id"]])
            selected = self.table.selectionModel().selectedRows()
            if selected:
                self.table.scrollTo(selected[0])


def refill_or_hint(combo: QComboBox, names: list[str], empty: str) -> None:
    """Refill ``combo`` with ``names``; with none, one entry saying how to get some (standing for none)."""
    refill_names(combo, names, blank=None if names else empty)


def corpus_names(project) -> list[str]:
    from workbench.probes.leakage.corpora import list_corpora

    return [c.name for c in list_corpora(project)] if project is not None else []


def model_labels(project, backends: tuple[str, ...]) -> list[str]:
    from workbench.models.catalog import list_models

    return [m.label for m in list_models(project) if m.backend in backends] if project is not None else []


class SourceChooser(QComboBox):
    """Which passages: the name-cloze passages, or a file chosen when the entry is picked (``changed``: another
    source chosen, a file chosen again included)."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.path: Path | None = None
        self.addItem(CLOZE_SOURCE, "cloze")
        self.addItem(FILE_SOURCE, "file")
        self.currentIndexChanged.connect(self._changed)
        self.activated.connect(self._picked)

    def _changed(self, index: int) -> None:
        if self.itemData(index) != "file":  # the file's entry itself: ``changed`` when a file is chosen
            self.changed.emit()

    def _picked(self, index: int) -> None:
        if self.itemData(index) != "file":
            return
        path, _ = QFileDialog.getOpenFileName(self, "Passages to analyse", str(Path.home()), PASSAGE_FILES)
        if path:
            self.choose_file(Path(path))
        else:
            self.setCurrentIndex(0)

    def choose_file(self, path: Path) -> None:
        self.path = path
        label = f"File: {path.name}"
        if self.count() > 2:
            self.setItemText(2, label)
            self.setItemData(2, str(path))
        else:
            self.addItem(label, str(path))
        self.blockSignals(True)
        self.setCurrentIndex(2)
        self.blockSignals(False)
        self.changed.emit()

    def source(self) -> str:
        data = self.currentData()
        return "cloze" if data in (None, "file") else str(data)


def hint(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    return label
