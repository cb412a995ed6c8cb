"""The Name cloze page: the name-cloze memorization probe, from books to per-book accuracy.

1. Tick books (or tick by tag) and extract passages with one hidden name (in the background).
2. Tick models, choose the kind of run, the prompt template and its settings; API models show what
   the run will cost and ask before it starts.
3. The run goes through ``self.ops`` with progress, time left and Cancel; the accuracy table fills in
   as answers arrive (a throttled reload from the project, on this thread's own connection).
Runs continue where they stopped (the same settings again, or Continue on the Runs tab), failures can
be retried alone, and published gpt4-books results can be imported.

The results tabs show views the core builds (``workbench.probes.cloze.views``) for the page's choices:
``self.choices`` (``AccuracyChoices``: the model shown, whether flagged books are left out) and
``self.runs_choices``; the widgets change them, and the background read hands them to the core queries.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QFileDialog,
    QInputDialog,
    QSizePolicy,
    QSplitter,
)

from ui import dialogs
from ui.background import Operation
from ui.cloze.books_chooser import BooksChooser
from ui.cloze.models_tab import ModelsTableTab
from ui.cloze.results import ResultsPanel
from ui.cloze.run_settings import RunSettings
from ui.cloze.template_dialog import TemplateDialog
from ui.widgets.one_operation import OneOperation
from ui.widgets.page import Page
from ui.work_op import WorkOp
from workbench.errors import UserError
from workbench.models.catalog import list_models
from workbench.probes.cloze.overview import books_overview
from workbench.probes.cloze.plan import CHANGES, RETRY_ON_PAGE, ModelStarted, ProbePlan, plan_work, prompt_preview
from workbench.probes.cloze.views import (
    AccuracyChoices,
    RunsChoices,
    accuracy_view,
    books_to_extract,
    empty_accuracy_view,
    empty_overview,
    empty_runs_view,
    extraction_text,
    runs_view,
)
from workbench.prompt_templates import get_template, templates_frame
from workbench.work import continue_work

LIVE_REFRESH_MS = 800  # while a run goes, reload the accuracy table at most this often
BOOKS_REFRESH_S = 1.0  # while extracting, reload the books table at most this often
RESULT_FILES = "gpt4-books results (*.tsv *.txt);;All files (*)"
DEFAULT_IMPORT_LABEL = "gpt-4 (published)"
CHOICES_SETTING = "probes.choices"  # the page's choices, kept in the project
NO_PROJECT = "Open or create a project (File menu) to probe what models remember of its books."


def extraction_workers(books: int) -> int:
    """Processes for reading books with spaCy: one per book, leaving a core for the window, at most 4."""
    return max(1, min(books, (os.cpu_count() or 1) - 1, 4))


class ClozePage(Page, OneOperation):
    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.work = ops.slot(self)  # extracting, estimating, running, importing: one at a time
        self.work.busy_changed.connect(self._update_busy)
        self.reading = ops.slot(self)  # the background read of the results tables
        self.template_dialog: TemplateDialog | None = None
        self.last_result = None
        self._project_shown = None
        self._about: dict[str, dict[int, str]] = {}  # project -> run id -> what the run was about
        self.choices = AccuracyChoices()  # what the accuracy tab shows
        self.runs_choices = RunsChoices()  # what the runs tab shows
        self._books_refreshed = 0.0
        self._live_timer = QTimer(self)
        self._live_timer.setSingleShot(True)
        self._live_timer.setInterval(LIVE_REFRESH_MS)
        self._live_timer.timeout.connect(self.refresh_results)
        self._build()
        self.refresh()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        self.books = BooksChooser()
        self.books.extract_requested.connect(self.extract)
        self.settings = RunSettings()
        self.settings.run_requested.connect(lambda retry: self.start_run(retry_failed=retry))
        self.settings.view_template_requested.connect(lambda: self.open_template_dialog(new=False))
        self.settings.new_template_requested.connect(lambda: self.open_template_dialog(new=True))
        self.settings.import_requested.connect(self.import_dialog)
        self.settings.prompt_changed.connect(self.update_preview)
        self.books.checked_changed.connect(self.update_preview)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.books)
        top.addWidget(self.settings)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        top.setChildrenCollapsible(False)

        self.results = ResultsPanel()
        self.results.continue_requested.connect(self.continue_run)
        self.results.model_chosen.connect(self._choose_model)
        self.results.flagged_changed.connect(self._choose_flagged)
        self.models_tab = ModelsTableTab(self.ops)
        self.results.addTab(self.models_tab, "Models side by side")
        self.results.currentChanged.connect(self._on_results_tab)

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(top)
        self.splitter.addWidget(self.results)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([430, 330])
        self.splitter.setChildrenCollapsible(False)
        # the panes take the height that is left: their preferred height would make the page taller than the
        # window as soon as a message shows above them (the page then scrolled, cutting off the results)
        self.splitter.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        self.splitter.setMinimumHeight(self.splitter.minimumSizeHint().height())

        self.lay_out_work(NO_PROJECT, self.splitter)

    # ------------------------------------------------------------------ reloading
    def refresh(self) -> None:
        if not self.show_whether_open():
            self._project_shown = None
            self.reading.drop()
            self.books.load(None, empty_overview(), keep_ticks=False)
            self.settings.load_models([])
            self.settings.show_preview("")
            self.results.show_accuracy(empty_accuracy_view())
            self.results.show_runs(empty_runs_view())
            self.results.reset_filters()
            self.models_tab.set_project(None)
            self.summary.hide()
            return
        changed = self._project_shown is not self.project
        self._project_shown = self.project
        if changed:
            self.reading.drop()  # the tables of the project before are not shown here
            self.choices, self.runs_choices = AccuracyChoices(), RunsChoices()  # its models are not this one's
            self.results.reset_filters()
            self.models_tab.set_project(self.project)
        self.books.load(self.project, books_overview(self.project), keep_ticks=not changed)
        self.settings.load_models(list_models(self.project))
        self.settings.load_templates(templates_frame(self.project, kind="cloze"))
        if changed:
            self._restore_choices()
        self.refresh_results()  # the preview was redone when the books were loaded (their ticks changed)
        self._update_busy()

    def _restore_choices(self) -> None:
        saved = self.project.get_setting(CHOICES_SETTING) or {}
        self.settings.apply_choices(saved.get("run") or {})
        extraction = saved.get("extraction") or {}
        if extraction.get("per_book"):
            self.books.per_book.setValue(int(extraction["per_book"]))
        if extraction.get("seed") is not None:
            self.books.seed.setValue(int(extraction["seed"]))
        self.books.fast.setChecked(bool(extraction.get("fast", False)))

    def _remember_choices(self) -> None:
        """Keep the page's choices in the project, so it opens as it was last used."""
        self.project.set_setting(CHOICES_SETTING, {
            "run": self.settings.choices(),
            "extraction": {"per_book": self.books.per_book.value(), "seed": self.books.seed.value(),
                           "fast": self.books.fast.isChecked()},
        })

    def update_preview(self) -> None:
        """Show what the model reads for the first ticked passage (or the template, before extraction)."""
        if self.project is None:
            self.settings.show_preview("")
            return
        plan = self.current_plan()
        try:
            text = prompt_preview(self.project, plan)
            if text is None:
                template = get_template(self.project, plan.template, kind="cloze")
                text = ("(No passages in the ticked books yet: this is the template; {passage} is where each "
                        f"passage goes.)\n\n{template.body}")
        except UserError as exc:
            text = str(exc)
        self.settings.show_preview(text)

    @property
    def operation(self) -> Operation | None:
        """The page's work under way (an extraction, an estimate, a run, an import), if any."""
        return self.work.operation

    def on_shown(self) -> None:
        if self.operation is None and self.show_due():
            self.refresh()

    def refresh_results(self) -> None:
        """Reload accuracy per book and the runs from the project (answers land there batch by batch).

        Scoring every stored answer takes a second or more in a project of published results, so it is read
        in the background; a reload asked for meanwhile runs once the current one has ended."""
        if self.project is None or self.project.closed:
            return
        project, choices, runs_choices = self.project, self.choices, self.runs_choices
        known = dict(self._about.get(str(project.path), {}))  # a copy: the worker adds to it

        def read(state):
            from workbench.probes.cloze.analysis import model_labels

            labels = model_labels(project)
            shown = choices if set(choices.models) <= set(labels) else replace(choices, models=())  # one deleted
            return str(project.path), labels, accuracy_view(project, shown), runs_view(project, runs_choices, known), known

        self.reading.queue(read, label="Reading the results", project=project, background_read=True,
                           on_done=self._show_results, on_error=self.show_error)

    def _show_results(self, result: tuple) -> None:
        path, labels, accuracy, runs, about = result
        self._about[path] = about
        self.results.offer_models(labels, self.choices.models[0] if self.choices.models else None)
        hint = "" if len(accuracy) else ("No answers yet. Extract passages, tick one or more models and press "
                                         "Run probe; the accuracy of each book appears here as answers arrive.")
        self.results.show_accuracy(accuracy, hint)
        self.results.show_runs(runs)

    def _choose_model(self, label: str) -> None:
        """Show one model's accuracy (all models' for an empty label)."""
        self.choices = replace(self.choices, models=(label,) if label else ())
        self.refresh_results()

    def _choose_flagged(self, leave_out: bool) -> None:
        self.choices = replace(self.choices, exclude_flagged=leave_out)
        self.refresh_results()

    def _on_results_tab(self, index: int) -> None:
        if self.results.widget(index) is self.models_tab:
            self.models_tab.reload()  # answers may have arrived since it was read

    def _live_refresh(self, *_) -> None:
        if not self._live_timer.isActive():
            self._live_timer.start()

    def _update_busy(self, *_) -> None:
        busy = self.operation is not None
        self.settings.set_busy(busy)
        self.results.set_busy(busy)
        self.books.extract_button.setEnabled(not busy)

    # ------------------------------------------------------------------ messages
    # ------------------------------------------------------------------ extracting passages
    def extract(self) -> Operation | None:
        if not self.can_start():
            return None
        from workbench.probes.cloze.extract import extract_books
        from workbench.probes.cloze.passages import extracted_usage
        from workbench.probes.cloze.rules import project_settings

        titles = books_to_extract(self.books.overview, self.books.checked_book_ids())
        if not titles:
            self.show_info("Tick the books to extract passages from (books known only from imported results "
                           "have no text to read).")
            return None
        ids = list(titles)
        usage = {b: n for b, (_, n) in extracted_usage(self.project, ids).items() if n}
        replace = False
        if usage:
            names = ", ".join(f"{titles[b]} ({n} answers)" for b, n in usage.items())
            if not dialogs.ask(self, f"Runs already answered passages of {len(usage)} book(s): {names}. Extracting "
                                     "again deletes those passages and their answers. Extract again anyway?"):
                return None
            replace = True
        try:
            settings = project_settings(self.project, per_book=self.books.per_book.value(),
                                        seed=self.books.seed.value(), fast=self.books.fast.isChecked())
        except UserError as exc:
            self.show_error(str(exc))
            return None
        project, workers = self.project, extraction_workers(len(ids))
        self._remember_choices()

        def work(state):
            return extract_books(project, ids, settings, workers=workers, replace=replace, state=state)

        return self.start_work(work, f"Extracting passages from {len(ids)} book(s)", on_done=self._extracted,
                               on_progress=self._live_refresh_books)

    def _live_refresh_books(self, *_) -> None:
        if self.project is not None and time.monotonic() - self._books_refreshed >= BOOKS_REFRESH_S:
            self._books_refreshed = time.monotonic()
            self.books.load(self.project, books_overview(self.project))

    def _extracted(self, summary) -> None:
        self.show_summary(extraction_text(summary))

    # ------------------------------------------------------------------ running
    def current_plan(self, *, retry_failed: bool = False) -> ProbePlan:
        return self.settings.plan(self.books.checked_book_ids(), retry_failed=retry_failed)

    def start_run(self, *, retry_failed: bool = False) -> Operation | None:
        """Run the plan through ``WorkOp``: a key not set is said first; API models first get a cost estimate (in
        the background) and the one cost question; the summary says how it went."""
        if not self.can_start():
            return None
        plan = self.current_plan(retry_failed=retry_failed)
        project = self.project
        self._remember_choices()
        return (WorkOp(self, lambda: plan_work(project, plan))
                .success(self._run_done).partial(self._run_partial).progress(self._live_refresh).run())

    def _run_partial(self, item) -> None:
        if isinstance(item, ModelStarted):
            prefix = f"Model {item.index + 1} of {item.count}: " if item.count > 1 else ""
            self.progress.set_label(f"{prefix}{item.label}")
        self._live_refresh()

    def _run_done(self, outcome) -> None:
        self.last_result = outcome.value

    def continue_run(self, run_id: int, retry_failed: bool) -> Operation | None:
        """Continue a stopped run, or ask again only where it failed (through the job runner); a paid API says
        about what the items left cost and asks first."""
        if not self.can_start():
            return None
        project = self.project
        return (WorkOp(self, lambda: continue_work(project, run_id, retry_failed, changes=CHANGES,
                                                   next_step=RETRY_ON_PAGE))
                .partial(self._live_refresh).progress(self._live_refresh).run())

    # ------------------------------------------------------------------ importing published results
    def import_dialog(self) -> None:
        if self.require_project() is None:
            return
        paths, _ = QFileDialog.getOpenFileNames(self, "Import published name-cloze results", str(Path.home()),
                                                RESULT_FILES)
        if not paths:
            return
        label, ok = QInputDialog.getText(
            self, "Import published results",
            "Which model gave these answers? Its label here (e.g. gpt-4-0314, published):", text=DEFAULT_IMPORT_LABEL)
        if ok and label.strip():
            self.import_results(paths, label.strip())

    def import_results(self, paths: list[str | Path], label: str) -> Operation | None:
        if not self.can_start():
            return None
        from workbench.probes.cloze.gpt4books import import_gpt4books

        project = self.project
        return self.start_work(lambda state: (import_gpt4books(project, paths, label, state=state), label),
                               "Importing published results", on_done=self._imported)

    def _imported(self, imported: tuple) -> None:
        from workbench.probes.cloze.gpt4books import import_summary_text

        summary, label = imported
        self.show_summary(import_summary_text(summary, label))

    # ------------------------------------------------------------------ prompt templates
    def open_template_dialog(self, *, new: bool) -> TemplateDialog | None:
        """Open the template dialog (window-modal, not blocking); a saved template is chosen for runs."""
        if self.require_project() is None:
            return None
        template = None
        if not new:
            name = self.settings.template.currentData()
            if not name:
                return self.open_template_dialog(new=True)
            template = get_template(self.project, name, kind="cloze")
        self.template_dialog = TemplateDialog(self.project, template, self)
        self.template_dialog.accepted.connect(self._template_saved)
        self.template_dialog.open()
        return self.template_dialog

    def _template_saved(self) -> None:
        saved = self.template_dialog.saved if self.template_dialog else None
        if saved is None or self.project is None:
            return
        self.settings.load_templates(templates_frame(self.project, kind="cloze"))
        self.settings.choose_template(saved.name)
        self.show_summary(f"Saved the prompt template {saved.label}; runs now use it.")

    # ------------------------------------------------------------------ one background operation at a time
    def work_ended(self) -> None:
        self._live_timer.stop()
        super().work_ended()
