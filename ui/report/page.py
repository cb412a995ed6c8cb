"""The Report page: did a model see each book? Every source of evidence side by side, with the verdict.

It shows ``workbench.export.report_views.report_table`` for the page's ``ReportChoices`` (read on a worker): one
row per book, one column per source (its signal, number and interval), the verdict and what it rests on. Choosing a book shows why, source by source;
double-clicking a source's cell (or "Show this evidence") opens the page of the probe that measured it. The
report is exported as one HTML page or a CSV on a worker, so the window never waits.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
)

from ui.widgets.combo import refill_names
from ui.widgets.frame_table import KEY_ROLE, Column, FrameTable
from ui.widgets.page import Page
from workbench.export import report_views
from workbench.export.report_views import ReportChoices

if TYPE_CHECKING:
    import pandas as pd

#: the table's first column of a source (after the book, the verdict and the flag)
SOURCES_FROM = 3


def source_cell(source: dict[str, Any]):
    """How a source's evidence is written in one cell: signal, number, interval (``report_views.cell_text``)."""
    return lambda row: report_views.cell_text(row, source)


def evidence_pages() -> dict[str, str]:
    """Source key -> the key of the page of the part that brings it (its first page), where it has one."""
    from workbench import parts
    from workbench.export.evidence import evidence_sources

    modules = {source.key: source.books.__module__ for source in evidence_sources()}
    pages = {}
    for part in parts.parts():
        for key, module in modules.items():
            if module in part.evidence and part.pages:
                pages[key] = part.pages[0].key
    return pages


class ReportPage(Page):
    #: the page key and book id of evidence the user asked to see (the window switches to the page)
    evidence_requested = Signal(str, int)

    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.work = ops.slot(self)
        self.choices = ReportChoices()
        self.frame: "pd.DataFrame" = report_views.empty_report()
        self.sources: list[dict[str, Any]] = []
        self.pages: dict[str, str] = {}
        self.last_export: Path | None = None

        self.model = QComboBox()
        self.model.setMinimumWidth(220)
        self.model.currentIndexChanged.connect(self._model_chosen)
        self.export_html = QPushButton("Export report (HTML)…")
        self.export_html.clicked.connect(self.export_html_dialog)
        self.export_csv = QPushButton("Export CSV…")
        self.export_csv.clicked.connect(self.export_csv_dialog)
        self.show_evidence = QPushButton("Show this evidence")
        self.show_evidence.setToolTip("Open the page of the probe behind the chosen cell (or the book's first "
                                      "measure)")
        self.show_evidence.clicked.connect(self.open_chosen)
        top = QHBoxLayout()
        top.addWidget(QLabel("Model:"))
        top.addWidget(self.model)
        top.addStretch(1)
        for button in (self.show_evidence, self.export_html, self.export_csv):
            top.addWidget(button)

        self.summary = QLabel("Open a project to see the evidence of exposure, book by book.")
        self.summary.setWordWrap(True)
        self.table = FrameTable([Column("book", "Book")], key="book_id")
        self.why = QTextBrowser()
        self.why.setMaximumHeight(170)
        self.rule = QLabel(self._rule_text())
        self.rule.setWordWrap(True)
        self.rule.setStyleSheet("color: #555;")
        self.status = QLabel("")
        self.status.setWordWrap(True)

        self.box = QVBoxLayout(self)
        self.box.addLayout(top)
        self.box.addWidget(self.summary)
        self.box.addWidget(self.table, 1)
        self.box.addWidget(QLabel("Why (the chosen book, source by source):"))
        self.box.addWidget(self.why)
        self.box.addWidget(self.rule)
        self.box.addWidget(self.status)
        self.evidence_requested.connect(self._go_to)
        self._connect_table()

    @staticmethod
    def _rule_text() -> str:
        from workbench.export.verdict import RULE

        return "How the verdict is reached: " + " ".join(f"<b>{name}</b>: {text}" for name, text in RULE)

    # ------------------------------------------------------------------ loading
    def refresh(self) -> None:
        if self.project is None:
            refill_names(self.model, [])
            self.choices = replace(self.choices, model=None)
            self.table.show_frame(report_views.empty_report())
            return
        from workbench.export.report import report_models

        refill_names(self.model, report_models(self.project))
        self.choices = replace(self.choices, model=self.model.currentData())  # refilled without signals
        self.load()

    def _model_chosen(self, *_: Any) -> None:
        self.choices = replace(self.choices, model=self.model.currentData())
        self.load()

    def load(self) -> None:
        model = self.choices.model
        if self.project is None or not model:
            self.summary.setText("Add a model and run a probe first: the report sets their evidence side by side.")
            return
        project, choices = self.project, self.choices

        def read(state):
            from_parts = evidence_pages()
            return report_views.report_table(project, choices, state=state), from_parts

        self.summary.setText(f"Reading the evidence for {model}…")
        self.work.start(read, label="Reading the evidence of exposure", project=project, background_read=True,
                        on_done=self._loaded, on_error=self._failed)

    def _loaded(self, result) -> None:
        table, pages = result
        self.frame, self.pages = table, pages
        sources = table.attrs.get("sources", [])
        if [s["key"] for s in sources] != [s["key"] for s in self.sources]:
            self.sources = sources
            self._rebuild_table()
        self.summary.setText(report_views.summary_text(table))
        self.table.show_frame(table)
        self._show_why()

    def _failed(self, message: str, details: str) -> None:
        self.summary.setText(message)

    def _rebuild_table(self) -> None:
        # the verdict beside the book (on screen without scrolling), then each source, then what it rests on
        columns = [Column("book", "Book"), Column("verdict", "Verdict"),
                   Column("measures_disagree", "Flag", report_views.flag_text)]
        columns += [Column(f"{s['key']}_signal", s["label"], compose=source_cell(s),
                           tooltip=f"{s['measure']}. {s['rule']}") for s in self.sources]
        columns += [Column("verdict_rests_on", "Rests on", stretch=True)]
        self.table.set_columns(columns)  # the same widget: one made anew while the window closes can crash PySide

    def _connect_table(self) -> None:
        self.table.itemSelectionChanged.connect(self._show_why)
        self.table.cellDoubleClicked.connect(self._double_clicked)

    # ------------------------------------------------------------------ evidence
    def _chosen_book(self) -> int | None:
        """The book chosen in the table (a selection, not a choice of what the table shows)."""
        keys = self.table.selected_keys()
        return int(keys[0]) if keys and report_views.book_title(self.frame, int(keys[0])) is not None else None

    def _show_why(self) -> None:
        self.why.setPlainText(report_views.why_text(self.frame, self._chosen_book()))

    def source_at(self, column: int) -> str | None:
        """The source shown in ``column`` of the table (None: the book, verdict, flag or rests-on columns)."""
        index = column - SOURCES_FROM
        return self.sources[index]["key"] if 0 <= index < len(self.sources) else None

    def _double_clicked(self, row: int, column: int) -> None:
        self.open_evidence(int(self.table.item(row, 0).data(KEY_ROLE)), self.source_at(column))

    def open_chosen(self) -> None:
        book_id = self._chosen_book()
        if book_id is None:
            self.status.setText("Choose a book first.")
            return
        current = self.table.currentIndex()
        self.open_evidence(book_id, self.source_at(current.column()) if current.isValid() else None)

    def open_evidence(self, book_id: int, source: str | None) -> None:
        """Ask for the page of ``source`` (or of the book's first measured source)."""
        measured = report_views.measured_sources(self.frame, book_id)
        if measured is None:
            return
        key = source if source is not None else (measured[0] if measured else None)
        if key is None or key not in self.pages:
            self.status.setText("No page shows this evidence." if key else "Nothing has measured this book yet.")
            return
        self.status.setText(f"Showing the {key} evidence of {report_views.book_title(self.frame, book_id)}.")
        self.evidence_requested.emit(self.pages[key], book_id)

    def _go_to(self, page: str, book_id: int) -> None:
        window = self.window()
        if hasattr(window, "show_page"):
            window.show_page(page)

    # ------------------------------------------------------------------ export
    def export_html_dialog(self) -> None:
        self.export_dialog("html")

    def export_csv_dialog(self) -> None:
        self.export_dialog("csv")

    def export_dialog(self, fmt: str) -> None:
        if self.require_project() is None or not self.choices.model:
            return
        suffix = ".html" if fmt == "html" else ".csv"
        suggested = str(self.project.path.parent / f"exposure-report-{self.choices.model}{suffix}")
        path, _ = QFileDialog.getSaveFileName(self, "Export the exposure report", suggested,
                                              "Web page (*.html)" if fmt == "html" else "CSV files (*.csv)")
        if path:
            self.export(Path(path) if path.lower().endswith(suffix) else Path(path + suffix), fmt)

    def export(self, out: Path, fmt: str):
        """Write the report for the model chosen to ``out`` on a worker."""
        project, model = self.project, self.choices.model

        def work(state):
            from workbench.export.report import write_report

            return write_report(project, model, out, fmt=fmt, state=state)

        self.status.setText("Writing the report…")
        return self.ops.run(work, label="Writing the exposure report", project=project, on_done=self._exported,
                            on_error=self._export_failed)

    def _exported(self, path: Path) -> None:
        self.last_export = Path(path)
        self.status.setText(f"Saved {path}.")

    def _export_failed(self, message: str, details: str) -> None:
        self.status.setText(message)
        self.show_error(message, details)
