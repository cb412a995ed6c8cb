"""The "Add items" dialog of the Annotate page, for one task.

- Narrative time: passages of whole sentences sampled from ticked books (``items.add_book_passages``).
- Summary validity: scenes from ticked books, summarized and then distorted by a model of the project
  (``probes.summary_plans``: a paid API first gets a cost estimate and a question), with Retry failed.
- Any kind: items from a CSV or TSV file (``item_import.import_items``; problems are listed by line and
  nothing is imported until the file is right).

Long work runs through the page's background helper with a progress row and Cancel. The dialog is modal
and deleted when closed: it lists books and models, which a blinded session must never leave behind.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ui import dialogs
from ui.annotate.book_list import BookList
from ui.annotate.tasks_view import KIND_NAMES, plural
from ui.background import Operation
from ui.widgets.progress_row import ProgressRow
from ui.widgets.screen_fit import resize_to_fit
from ui.work_op import WorkOp
from workbench.annotation.item_import import import_items
from workbench.annotation.items import PASSAGE_WORDS, SCENE_CHARS, add_book_passages
from workbench.annotation.overview import tasks_overview
from workbench.annotation.tasks import LABEL, NARRATIVE_TIME, SUMMARY_VALIDITY, Task
from workbench.errors import UserError
from workbench.models.catalog import choice_text
from workbench.summaries.plans import (
    SummaryPlan,
    is_paid,
    models_overview,
    retry_work,
    runnable_models,
    summary_items_work,
)
from workbench.summaries.runs import DEFAULT_MAX_ATTEMPTS, SUMMARY_PARAMS

TABLE_FILES = "Tables (*.csv *.tsv *.tab *.txt);;All files (*)"
FILE_COLUMNS = {
    NARRATIVE_TIME: "the columns item_id and text, and optionally gold (the known duration, e.g. 2 hours)",
    SUMMARY_VALIDITY: "the columns item_id, text (the scene), summary (the true summary) and distorted "
                      "(the changed one)",
    LABEL: "the columns item_id and text, and optionally gold (the correct label)",
}
HINT_STYLE = "color: #666;"
ERROR_STYLE = "color: #b00020;"
DEFAULT_PASSAGES = 20
DEFAULT_SCENES = 10


def _spin(name: str, low: int, high: int, value: int, tip: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setObjectName(name)
    spin.setRange(low, high)
    spin.setValue(value)
    spin.setToolTip(tip)
    return spin


def _hint(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet(HINT_STYLE)
    return label


def _row(*parts) -> QHBoxLayout:
    row = QHBoxLayout()
    row.setContentsMargins(0, 0, 0, 0)
    for part in parts:
        if isinstance(part, str):
            row.addWidget(QLabel(part))
        elif part is None:
            row.addStretch(1)
        else:
            row.addWidget(part)
    return row


class AddItemsDialog(QDialog):
    items_changed = Signal()  # items were added (the page refreshes its counts)

    def __init__(self, ops, project, task: Task, parent: QWidget | None = None):
        super().__init__(parent)
        self.project = project
        self.ops = ops  # planned model work (``WorkOp``) announces what it changed on its change bus
        self.task = task
        self.work = ops.slot(self)
        self.work.busy_changed.connect(self._set_busy)
        self.progress_seen: list = []  # every progress report of the current operation
        self.last_report = None  # the latest summary report
        self.setWindowTitle(f"Add items to '{task.name}'")
        self.setModal(True)
        resize_to_fit(self, 900, 720)

        layout = QVBoxLayout(self)
        self.have = QLabel()
        self.have.setObjectName("items-so-far")
        layout.addWidget(self.have)
        self.books: BookList | None = None
        self.inputs: list[QWidget] = []  # disabled while work runs
        if task.kind == NARRATIVE_TIME:
            layout.addWidget(self._passages_box(), 1)
        elif task.kind == SUMMARY_VALIDITY:
            layout.addWidget(self._scenes_box(), 1)
        else:
            hint = QLabel("A name-cloze task holds the passages the models answered; it is made with its passages "
                          "(palimpsest cloze human-task)." if task.kind == "name-cloze" else
                          "A label task takes its texts from a file (other probes, such as the judge check on the "
                          "Bias page, make their label tasks themselves).")
            hint.setWordWrap(True)
            layout.addWidget(hint)
        layout.addWidget(self._file_box())

        self.progress_row = ProgressRow(self.work)
        layout.addWidget(self.progress_row)
        self.result = QLabel()
        self.result.setObjectName("items-result")
        self.result.setWordWrap(True)
        self.result.setTextFormat(Qt.TextFormat.PlainText)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.result)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        if task.kind == LABEL:
            layout.addStretch(1)
            resize_to_fit(self, 720, 320)
        if self.books is not None:
            self.books.load(project)
        self._show_count()
        self.finished.connect(self._on_finished)

    @property
    def operation(self) -> Operation | None:
        return self.work.operation

    def _show_count(self) -> None:
        row = tasks_overview(self.project).set_index("task_id").loc[self.task.id]
        ready = f" ({row['ready']} ready to annotate)" if self.task.kind == SUMMARY_VALIDITY else ""
        blind = "blinded" if self.task.blinded else "not blinded"
        self.have.setText(f"{KIND_NAMES[self.task.kind].capitalize()} task, {blind}: "
                          f"{plural(row['items'], 'item')} so far{ready}.")

    # ------------------------------------------------------------------ sections
    def _passages_box(self) -> QGroupBox:
        box = QGroupBox("Passages from books")
        self.books = BookList()
        self.per_book = _spin("per-book", 1, 10_000, DEFAULT_PASSAGES, "How many passages to sample from each book")
        self.words = _spin("words", 50, 2_000, PASSAGE_WORDS, "About how many words a passage has (whole sentences)")
        self.seed = _spin("seed", 0, 2**31 - 1, self.task.seed, "The same seed gives the same passages again")
        self.sample_button = QPushButton("Sample passages")
        self.sample_button.setObjectName("sample-passages")
        self.sample_button.setDefault(True)
        self.sample_button.clicked.connect(self.sample_passages)
        self.inputs += [self.books, self.per_book, self.words, self.seed, self.sample_button]
        layout = QVBoxLayout(box)
        layout.addWidget(_hint("Tick the books; passages of whole sentences are drawn from each (never across a "
                               "chapter heading). Sampling again with the same settings adds nothing twice."))
        layout.addWidget(self.books, 1)
        layout.addLayout(_row("Passages per book", self.per_book, "Words per passage", self.words, "Seed",
                              self.seed, None, self.sample_button))
        return box

    def _scenes_box(self) -> QGroupBox:
        box = QGroupBox("Scenes from books, summarized by a model")
        self.books = BookList()
        self.model = QComboBox()
        self.model.setObjectName("summary-model")
        self.model.setMinimumContentsLength(18)
        self.model.setToolTip("The model that writes each summary and then a changed version of it")
        self.specs = {spec.label: spec for spec in runnable_models(self.project)}
        for spec in self.specs.values():
            self.model.addItem(choice_text(spec), spec.label)
        self.model.currentIndexChanged.connect(lambda _: self._update_model_notes())
        self.per_book = _spin("per-book", 1, 1_000, DEFAULT_SCENES, "How many scenes to take from each book")
        self.seed = _spin("seed", 0, 2**31 - 1, self.task.seed, "The same seed gives the same scenes again")
        self.chars = _spin("scene-chars", 100, 20_000, SCENE_CHARS,
                           "About how many characters a scene has (whole sentences); the model must read it whole")
        self.chars.setSingleStep(500)
        self.max_tokens = _spin("max-tokens", 1, 4_096, SUMMARY_PARAMS.max_tokens,
                                "The longest summary the model may write, in tokens (about three quarters of a word each)")
        self.attempts = _spin("attempts", 1, 10, DEFAULT_MAX_ATTEMPTS,
                              "How often to ask again when an answer is unusable (no summary after the marker)")
        self.summarize_button = QPushButton("Make items")
        self.summarize_button.setObjectName("make-summaries")
        self.summarize_button.setDefault(True)
        self.summarize_button.setToolTip("Take the scenes and have the model summarize and then distort each. "
                                         "Starting again with the same settings continues where it stopped.")
        self.summarize_button.clicked.connect(self.make_summaries)
        self.retry_button = QPushButton("Retry failed")
        self.retry_button.setObjectName("retry-summaries")
        self.retry_button.setToolTip("Ask the chosen model again only for the scenes where it failed")
        self.retry_button.clicked.connect(self.retry_failed_summaries)
        self.cost = _hint("")
        self.cost.setObjectName("cost-note")
        self.models_status = QLabel()
        self.models_status.setObjectName("models-status")
        self.models_status.setWordWrap(True)
        self.models_status.setTextFormat(Qt.TextFormat.PlainText)
        self.inputs += [self.books, self.model, self.per_book, self.seed, self.chars, self.max_tokens, self.attempts,
                        self.summarize_button, self.retry_button]
        layout = QVBoxLayout(box)
        layout.addWidget(_hint("Tick the books and choose a model. Each scene gets a summary from the model and then "
                               "a changed version of that summary; annotators see both and pick the true one."))
        layout.addWidget(self.books, 1)
        layout.addLayout(_row("Model", self.model, "Scenes per book", self.per_book, "Seed", self.seed, None))
        layout.addLayout(_row("Scene length (characters)", self.chars, "Longest answer (tokens)", self.max_tokens,
                              "Attempts", self.attempts, None))
        layout.addWidget(self.cost)
        actions = _row(self.retry_button, self.summarize_button)
        actions.insertWidget(0, self.models_status, 1)
        layout.addLayout(actions)
        self._update_model_notes()
        return box

    def _file_box(self) -> QGroupBox:
        box = QGroupBox("From a file")
        text = _hint(f"A CSV or TSV file (e.g. saved from a spreadsheet as 'CSV UTF-8') with "
                     f"{FILE_COLUMNS[self.task.kind]}. Other columns are kept as hidden details, shown only when the "
                     "task is not blinded. If any line has a problem, nothing is imported and every problem is listed "
                     "with its line number.")
        self.import_button = QPushButton("Import a file…")
        self.import_button.setObjectName("import-items")
        self.import_button.clicked.connect(self._choose_file)
        self.inputs.append(self.import_button)
        layout = QHBoxLayout(box)
        layout.addWidget(text, 1)
        layout.addWidget(self.import_button, 0, Qt.AlignmentFlag.AlignTop)
        return box

    # ------------------------------------------------------------------ narrative time
    def sample_passages(self) -> Operation | None:
        book_ids = self.books.checked_book_ids()
        if not book_ids:
            self.show_error("Tick at least one book to sample passages from.")
            return None
        project, task_id = self.project, self.task.id
        per_book, words, seed = self.per_book.value(), self.words.value(), self.seed.value()

        def work(state):
            return per_book, add_book_passages(project, task_id, book_ids, per_book=per_book, seed=seed, words=words,
                                               state=state)

        return self._start(work, "Sampling passages", self._passages_added)

    def _passages_added(self, result: tuple[int, dict[int, int]]) -> None:
        per_book, added = result
        total = sum(added.values())
        short = sum(1 for n in added.values() if n < per_book)
        text = f"Added {plural(total, 'passage')} from {plural(len(added), 'book')}."
        if short:
            text += (f" {short} book(s) gave fewer new passages than asked for (too short, or sampled before "
                     "with this seed).")
        self.result.setText(text)

    # ------------------------------------------------------------------ summary validity
    def plan(self) -> SummaryPlan:
        return SummaryPlan(model=self.model.currentData() or "", book_ids=tuple(self.books.checked_book_ids()),
                           per_book=self.per_book.value(), seed=self.seed.value(), chars=self.chars.value(),
                           max_tokens=self.max_tokens.value(), max_attempts=self.attempts.value())

    def _chosen_is_paid(self) -> bool:
        spec = self.specs.get(self.model.currentData())
        return spec is not None and is_paid(spec)

    def _update_model_notes(self) -> None:
        if self.model.count() == 0:
            self.cost.setText("The project has no models yet: add one on the Models page, then come back.")
        elif self._chosen_is_paid():
            self.cost.setText("This model is a paid API: before anything is sent you see the most it can cost, "
                              "and are asked to confirm.")
        else:
            self.cost.setText("A local model: nothing to pay per call.")
        self._update_models_status()

    def _failed_for_chosen(self) -> int:
        overview = models_overview(self.project, self.task.id)
        row = overview[overview["model"] == self.model.currentData()]
        return int(row["summaries_failed"].sum() + row["distorted_failed"].sum()) if len(row) else 0

    def _update_models_status(self) -> None:
        overview = models_overview(self.project, self.task.id)
        lines = []
        for row in overview.itertuples():
            failed = row.summaries_failed + row.distorted_failed
            lines.append(f"{row.model}: {row.scenes} scenes, {row.ready} ready"
                         + (f", {row.summaries_failed} summaries and {row.distorted_failed} changed versions failed"
                            if failed else ""))
        self.models_status.setText("Made so far — " + "; ".join(lines) if lines else "")
        self.retry_button.setEnabled(self.operation is None and self._failed_for_chosen() > 0)

    def make_summaries(self) -> Operation | None:
        """The chosen model summarizes the sampled scenes (a paid API is asked about first)."""
        plan = self.plan()
        try:
            plan.check()
        except UserError as exc:
            self.show_error(str(exc))
            return None
        project, task_id = self.project, self.task.id
        return self._start_work(lambda: summary_items_work(project, task_id, plan))

    def retry_failed_summaries(self) -> Operation | None:
        label = self.model.currentData()
        failed = self._failed_for_chosen() if label else 0
        if not failed:
            self.show_error("The chosen model has no failed summaries to ask again.")
            return None
        project, task_id = self.project, self.task.id
        return self._start_work(lambda: retry_work(project, task_id, label))

    def _start_work(self, plan) -> Operation | None:
        """Planned model work, the one way (``WorkOp``): its outcome said here, the page's counts reloaded."""
        if self.operation is not None:
            self.show_error("Wait for the work in progress to finish (or cancel it) first.")
            return None
        self._clear_result()
        return WorkOp(self, plan).progress(self._progressed).success(self._summaries_worked).run()

    def _summaries_worked(self, outcome) -> None:
        if outcome.value is not None:
            self._summaries_done((outcome.value, outcome.cancelled))

    # what ``WorkOp`` asks of the view that started it
    def show_status(self, text: str) -> None:
        self.result.setText(text)

    def work_failed(self, message: str, details: str) -> None:
        self._failed(message, details)

    def work_ended(self) -> None:
        self._ended()

    def _summaries_done(self, result) -> None:
        report, stopped = result
        self.last_report = report
        failed = report.summaries_failed + report.distorted_failed
        text = (f"{report.items} scenes: {report.summaries_ok} summaries ok, {report.summaries_failed} failed; "
                f"{report.distorted_ok} changed versions ok, {report.distorted_failed} failed. "
                f"{plural(report.ready, 'item')} ready to annotate.")
        if stopped:
            text += " Stopped at your request: press Make items again to continue where it stopped."
        elif failed:
            text += " Press Retry failed to ask the model again for the failed ones."
        self.result.setText(text)

    # ------------------------------------------------------------------ file
    def _choose_file(self) -> None:
        folder = Path(self.project.path).parent
        path, _ = QFileDialog.getOpenFileName(self, "Import items", str(folder), TABLE_FILES)
        if path:
            self.import_file(path)

    def import_file(self, path: str | Path) -> Operation | None:
        project, task_id, path = self.project, self.task.id, Path(path)
        return self._start(lambda state: (import_items(project, task_id, path), path.name), "Importing items",
                           self._imported)

    def _imported(self, result: tuple[int, str]) -> None:
        count, name = result
        self.result.setText(f"Imported {plural(count, 'item')} from {name}.")

    # ------------------------------------------------------------------ running
    def _start(self, fn, label: str, on_done) -> Operation | None:
        if self.operation is not None:
            self.show_error("Wait for the work in progress to finish (or cancel it) first.")
            return None
        return self._launch(fn, label, on_done)

    def _clear_result(self) -> None:
        self.result.clear()
        self.result.setStyleSheet("")
        self.progress_seen = []

    def _launch(self, fn, label: str, on_done) -> Operation:
        """Start ``fn`` on the dialog's slot."""
        self._clear_result()
        return self.work.start(fn, label=label, project=self.project, on_done=on_done, on_error=self._failed,
                               on_progress=self._progressed, on_cancelled=self._cancelled, on_end=self._ended)

    def _progressed(self, progress) -> None:
        self.progress_seen.append(progress)

    def _failed(self, message: str, details: str = "") -> None:
        self.result.setStyleSheet(ERROR_STYLE)
        self.result.setText(message)  # stays readable (line numbers of a file's problems) after the message box
        self.show_error(message, details)

    def _cancelled(self, message: str) -> None:
        self.result.setText(f"{message} What was finished before is kept.")

    def _ended(self) -> None:
        self.items_changed.emit()
        if not self.isVisible():  # closed while the work was finishing
            self.deleteLater()
            return
        self._show_count()
        if self.task.kind == SUMMARY_VALIDITY:
            self._update_models_status()

    def _set_busy(self, busy: bool) -> None:
        for widget in self.inputs:
            widget.setEnabled(not busy)
        if not busy and self.task.kind == SUMMARY_VALIDITY:
            self.retry_button.setEnabled(self._failed_for_chosen() > 0)

    def show_error(self, message: str, details: str = "") -> None:
        dialogs.show_error(self, message, details)

    # ------------------------------------------------------------------ closing
    def reject(self) -> None:
        if self.operation is not None:
            if not dialogs.ask(self, "Items are still being added. Stop? Everything finished so far is kept."):
                return
            self.work.cancel()
            if self.books is not None:
                self.books.load(None)  # nothing naming a book stays behind while the work winds down
        super().reject()

    def _on_finished(self, _result: int) -> None:
        if self.operation is None:
            self.deleteLater()
