"""The "New task" dialog: name, kind, codebook, blinding and how items are handed out.

Everything is checked by ``workbench.annotation.tasks.create_task``; its message is shown in the dialog
(in red, above the buttons) and nothing is created until it passes.

A name-cloze task is made with its items, the passages the models answered: the dialog then shows the books
that have name-cloze passages and how many to draw from each, and creates it on a worker
(``ui.background``) with ``workbench.probes.cloze.human.create_human_task``, the function behind
``palimpsest cloze human-task``.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ui.annotate.book_list import BookList
from ui.widgets.screen_fit import resize_to_fit
from workbench.annotation.codebooks import default_codebook, read_codebook_file
from workbench.annotation.tasks import LABEL, NAME_CLOZE, NARRATIVE_TIME, SUMMARY_VALIDITY, Task, create_task, get_task
from workbench.errors import UserError

KIND_CHOICES = [
    (NARRATIVE_TIME, "Narrative time", "how much story time passes in a passage of about 250 words"),
    (SUMMARY_VALIDITY, "Summary validity", "which of two summaries of a scene is true to it"),
    (LABEL, "Labels", "choose one label from a fixed list for each text (e.g. a model's answer)"),
    (NAME_CLOZE, "Name cloze", "type the character's name hidden in a passage the models answered"),
]
SHIPPED, OWN = "shipped", "own"
ERROR_STYLE = "color: #b00020;"
HINT_STYLE = "color: #666;"


class ClozeBooks(BookList):
    """The books that have name-cloze passages (the others cannot give a name-cloze task any)."""

    NO_BOOKS = ("No book has name-cloze passages yet: extract them on the Name cloze page (or import published "
                "results), then come back.")

    def load(self, project) -> None:
        from workbench.corpus.library import list_books
        from workbench.probes.cloze.human import passage_counts

        self.project = project
        self.passages = passage_counts(project) if project is not None else {}
        books = list_books(project) if project is not None else []
        self.show_rows([b for b in books if b.id in self.passages])


class NewTaskDialog(QDialog):
    def __init__(self, project, parent: QWidget | None = None, ops=None):
        super().__init__(parent)
        self.project = project
        self.task: Task | None = None
        self.work = ops.slot(self) if ops is not None else None
        self._own_text_touched = False
        self.setWindowTitle("New annotation task")
        resize_to_fit(self, 720, 700)

        self.name = QLineEdit()
        self.name.setObjectName("task-name")
        self.name.setPlaceholderText("e.g. narrative time, pilot")
        self.name.textChanged.connect(lambda _: self._update_codebook())

        self.kind_group = QButtonGroup(self)
        self.kind_buttons: dict[str, QRadioButton] = {}
        kinds = QVBoxLayout()
        kinds.setSpacing(2)
        for number, (kind, title, description) in enumerate(KIND_CHOICES):
            button = QRadioButton(f"{title}: {description}")
            button.setProperty("kind", kind)
            self.kind_group.addButton(button, number)
            self.kind_buttons[kind] = button
            kinds.addWidget(button)
        self.kind_buttons[NARRATIVE_TIME].setChecked(True)
        self.kind_group.buttonToggled.connect(lambda *_: self._on_kind())

        self.labels = QLineEdit()
        self.labels.setObjectName("task-labels")
        self.labels.setPlaceholderText("the labels, separated by commas, e.g. woman, man, non-binary, unclear")
        self.labels.textChanged.connect(lambda _: self._update_codebook())
        self.labels_label = QLabel("Labels")

        self.codebook_choice = QComboBox()
        self.codebook_choice.setObjectName("codebook-choice")
        self.codebook_choice.addItem("The codebook shipped for this kind", SHIPPED)
        self.codebook_choice.addItem("My own version (edit the text below)", OWN)
        self.codebook_choice.currentIndexChanged.connect(lambda _: self._on_codebook_choice())
        load = QPushButton("Load from a file…")
        load.setToolTip("Use a codebook you wrote (Markdown or plain text, UTF-8)")
        load.clicked.connect(self._load_codebook)
        codebook_row = QHBoxLayout()
        codebook_row.setContentsMargins(0, 0, 0, 0)
        codebook_row.addWidget(self.codebook_choice, 1)
        codebook_row.addWidget(load)
        # the shipped codebook is shown as annotators will see it; one's own version is edited as Markdown
        self.preview = QTextBrowser()
        self.preview.setObjectName("codebook-preview")
        self.preview.setOpenExternalLinks(False)
        self.codebook = QPlainTextEdit()
        self.codebook.setObjectName("codebook-text")
        self.codebook.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.codebook.setPlaceholderText("Write the instructions annotators read (Markdown: # heading, **bold**, - list)")
        self.codebook.textChanged.connect(self._on_codebook_edited)
        self.codebook_stack = QStackedWidget()
        self.codebook_stack.addWidget(self.preview)
        self.codebook_stack.addWidget(self.codebook)
        self.codebook_stack.setMinimumHeight(200)

        self.blinded = QCheckBox("Blinded: annotators never see the book, author, model or condition")
        self.blinded.setObjectName("task-blinded")
        self.blinded.setChecked(True)

        self.per_annotator = QSpinBox()
        self.per_annotator.setObjectName("per-annotator")
        self.per_annotator.setRange(0, 1_000_000)
        self.per_annotator.setSpecialValueText("all items")
        self.per_annotator.setToolTip("How many items each annotator gets; 'all items' gives everyone every item")
        self.per_annotator.valueChanged.connect(lambda _: self._update_overlap())
        self.overlap = QSpinBox()
        self.overlap.setObjectName("overlap")
        self.overlap.setRange(0, 100)
        self.overlap.setSuffix(" %")
        self.overlap.setValue(20)
        self.overlap.setToolTip("The share of each annotator's items that every annotator gets: agreement is "
                                "measured on these")
        self.overlap.valueChanged.connect(lambda _: self._update_overlap())
        self.seed = QSpinBox()
        self.seed.setObjectName("task-seed")
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setToolTip("Fixes every random choice: which passages, who gets which items, in which order")
        handout = QHBoxLayout()
        handout.setContentsMargins(0, 0, 0, 0)
        handout.addWidget(self.per_annotator)
        handout.addSpacing(16)
        handout.addWidget(QLabel("Shared by every annotator"))
        handout.addWidget(self.overlap)
        handout.addSpacing(16)
        handout.addWidget(QLabel("Seed"))
        handout.addWidget(self.seed)
        handout.addStretch(1)
        self.overlap_hint = QLabel()
        self.overlap_hint.setWordWrap(True)
        self.overlap_hint.setStyleSheet(HINT_STYLE)
        self.overlap_hint.setMinimumHeight(2 * self.overlap_hint.fontMetrics().lineSpacing() + 4)  # two lines, whole

        self.cloze_box = self._cloze_box()

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Name", self.name)
        form.addRow("Annotators judge", kinds)
        form.addRow(self.labels_label, self.labels)
        form.addRow(self.cloze_label, self.cloze_box)
        form.addRow("Codebook", codebook_row)
        form.addRow("", self.codebook_stack)
        form.addRow("", self.blinded)
        form.addRow("Items per annotator", handout)
        form.addRow("", self.overlap_hint)

        self.message = QLabel()
        self.message.setObjectName("task-message")
        self.message.setWordWrap(True)
        self.message.setStyleSheet(ERROR_STYLE)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.create_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.create_button.setText("Create task")
        self.create_button.setObjectName("create-task")
        buttons.accepted.connect(self.create)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addLayout(form, 1)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self._on_kind()
        self._update_overlap()

    def _cloze_box(self) -> QWidget:
        """Name cloze: the books with passages, passages per book (0: all of them)."""
        self.cloze_label = QLabel("Passages")
        box = QWidget()
        self.cloze_books = ClozeBooks()
        self.cloze_books.setObjectName("cloze-books")
        self.cloze_books.setMinimumHeight(160)
        self.cloze_books.setMaximumHeight(220)  # the rest of the room is the codebook's
        self.cloze_per_book = QSpinBox()
        self.cloze_per_book.setObjectName("cloze-per-book")
        self.cloze_per_book.setRange(0, 100_000)
        self.cloze_per_book.setSpecialValueText("all of them")
        self.cloze_per_book.setValue(20)
        self.cloze_per_book.setToolTip("How many of each ticked book's passages to draw at random (with the seed); "
                                       "'all of them' takes every passage")
        self.cloze_per_book.valueChanged.connect(lambda _: self._update_cloze_hint())
        self.cloze_books.table.itemChanged.connect(lambda _: self._update_cloze_hint())
        self.cloze_hint = QLabel()
        self.cloze_hint.setObjectName("cloze-hint")
        self.cloze_hint.setWordWrap(True)
        self.cloze_hint.setStyleSheet(HINT_STYLE)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Passages per book"))
        row.addWidget(self.cloze_per_book)
        row.addStretch(1)
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.cloze_books, 1)
        layout.addSpacing(4)
        layout.addLayout(row)
        layout.addWidget(self.cloze_hint)
        return box

    def _update_cloze_hint(self) -> None:
        chosen = self.cloze_books.checked_book_ids()
        counts = getattr(self.cloze_books, "passages", {})
        per_book = self.cloze_per_book.value()
        total = sum(min(counts.get(b, 0), per_book) if per_book else counts.get(b, 0) for b in chosen)
        if chosen and self.message.text().startswith("Tick at least one book"):
            self.message.clear()
        if not chosen:
            self.cloze_hint.setText("Tick the books whose passages people will see (the same passages the models "
                                    "answered; the book is never shown).")
        else:
            self.cloze_hint.setText(f"The task will hold {total:,} passage{'s' if total != 1 else ''} from "
                                    f"{len(chosen)} book{'s' if len(chosen) != 1 else ''}.")

    # ------------------------------------------------------------------ reading the form
    @property
    def kind(self) -> str:
        return self.kind_group.checkedButton().property("kind")

    def choose_kind(self, kind: str) -> None:
        self.kind_buttons[kind].setChecked(True)

    def _label_list(self) -> list[str]:
        return [label.strip() for label in self.labels.text().split(",") if label.strip()]

    def _on_kind(self) -> None:
        is_label = self.kind == LABEL
        self.labels.setVisible(is_label)
        self.labels_label.setVisible(is_label)
        is_cloze = self.kind == NAME_CLOZE
        if is_cloze and self.cloze_books.project is None:
            self.cloze_books.load(self.project)
            self._update_cloze_hint()
        self.cloze_box.setVisible(is_cloze)
        self.cloze_label.setVisible(is_cloze)
        self.codebook_stack.setMinimumHeight(120 if is_cloze else 200)  # the books need the room
        if is_cloze and self.height() < 880:  # room for the books as well as the codebook
            resize_to_fit(self, max(self.width(), 760), 880)
        self._update_codebook()

    def _update_overlap(self) -> None:
        n = self.per_annotator.value()
        self.overlap.setEnabled(n > 0)
        if n > 0:
            shared = round(self.overlap.value() / 100 * n)
            self.overlap_hint.setText(f"Each annotator gets {n} items: {shared} shared by everyone (agreement is "
                                      f"measured on them) and {n - shared} of their own.")
        else:
            self.overlap_hint.setText("Every annotator gets every item, each in their own random order.")

    # ------------------------------------------------------------------ codebook
    def _shipped_text(self) -> str:
        try:
            return default_codebook(self.kind, self.name.text().strip(), self._label_list())
        except UserError as exc:
            return str(exc)

    def _update_codebook(self) -> None:
        if self.codebook_choice.currentData() == SHIPPED:
            self.preview.setMarkdown(self._shipped_text())

    def _set_codebook_text(self, text: str) -> None:
        self.codebook.blockSignals(True)
        self.codebook.setPlainText(text)
        self.codebook.blockSignals(False)

    def _on_codebook_choice(self) -> None:
        own = self.codebook_choice.currentData() == OWN
        self.codebook_stack.setCurrentWidget(self.codebook if own else self.preview)
        if own:
            if not self._own_text_touched:  # start from the shipped text
                self._set_codebook_text(self._shipped_text())
            self.codebook.setFocus()
        else:
            self._update_codebook()

    def _on_codebook_edited(self) -> None:
        self._own_text_touched = True

    def _load_codebook(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Codebook", str(Path.home()),
                                              "Markdown or text (*.md *.markdown *.txt);;All files (*)")
        if path:
            self.load_codebook(path)

    def load_codebook(self, path: str | Path) -> bool:
        try:
            text = read_codebook_file(path)
        except UserError as exc:
            self.message.setText(str(exc))
            return False
        self.codebook_choice.setCurrentIndex(self.codebook_choice.findData(OWN))
        self._set_codebook_text(text)
        self._own_text_touched = True
        self.message.clear()
        return True

    # ------------------------------------------------------------------ creating
    def create(self) -> None:
        own = self.codebook_choice.currentData() == OWN
        codebook = self.codebook.toPlainText() if own else None
        try:
            if own and not codebook.strip():
                raise UserError("The codebook is empty. Write the instructions annotators should read, or choose "
                                "the shipped codebook.")
            if self.kind == NAME_CLOZE:
                self._create_name_cloze(codebook)
                return
            self.task = create_task(
                self.project, self.name.text(), self.kind,
                labels=self.labels.text() if self.kind == LABEL else None,
                codebook=codebook, blinded=self.blinded.isChecked(),
                per_annotator=self.per_annotator.value() or None, overlap=self.overlap.value() / 100,
                seed=self.seed.value(),
            )
        except UserError as exc:
            self.message.setStyleSheet(ERROR_STYLE)
            self.message.setText(str(exc))
            return
        self.accept()

    def reject(self) -> None:
        if self.work is not None and self.work.operation is not None:  # the task is being made: it will be there
            self.message.setText("The task is being made; the dialog closes when it is ready.")
            return
        super().reject()

    # ------------------------------------------------------------------ a name-cloze task, on a worker
    def _create_name_cloze(self, codebook: str | None) -> None:
        """Check the form here, then make the task with its passages on a worker (``create_human_task``, as
        ``palimpsest cloze human-task`` does); the dialog closes when it is made, or shows why not."""
        from workbench.probes.cloze.human import create_human_task

        name = self.name.text().strip()
        if not name:
            raise UserError("Give the task a name, e.g. 'name cloze, pilot'.")
        book_ids = self.cloze_books.checked_book_ids()
        if not book_ids:
            raise UserError("Tick at least one book whose name-cloze passages people should see.")
        if self.work is None:
            raise UserError("This window cannot run work in the background; make the task with "
                            "palimpsest cloze human-task.")
        if self.work.operation is not None:
            raise UserError("The task is being made; wait a moment.")
        project, blinded, seed = self.project, self.blinded.isChecked(), self.seed.value()
        per_book = self.cloze_per_book.value() or None
        per_annotator, overlap = self.per_annotator.value() or None, self.overlap.value() / 100

        def work(_state):
            return create_human_task(project, name, book_ids, per_book=per_book, per_annotator=per_annotator,
                                     overlap=overlap, seed=seed, blinded=blinded, codebook=codebook).id

        self.message.setStyleSheet(HINT_STYLE)
        self.message.setText("Making the task from the books' passages…")
        self.create_button.setEnabled(False)
        self.work.start(work, label=f"Making the name-cloze task '{name}'", project=project,
                        on_done=self._name_cloze_made, on_error=self._name_cloze_failed, on_end=self._name_cloze_ended)

    def _name_cloze_made(self, task_id: int) -> None:
        self.task = get_task(self.project, task_id)
        self.message.clear()
        self.accept()

    def _name_cloze_failed(self, message: str, _details: str = "") -> None:
        self.message.setStyleSheet(ERROR_STYLE)
        self.message.setText(message)

    def _name_cloze_ended(self) -> None:
        self.create_button.setEnabled(True)
