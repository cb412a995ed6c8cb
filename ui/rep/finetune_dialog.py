"""The "Fine-tuning data" dialog: decade fine-tuning data (chat JSON lines) from chosen books.

Everything is done by ``workbench.probes.rep.finetune.export_finetune`` in the background; the dialog
collects the choices, shows progress with Cancel, and says how many examples it wrote and where.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ui import dialogs
from ui.rep.book_choice import BookChoice
from ui.widgets.progress_row import ProgressRow
from workbench.probes.rep.finetune import DEFAULT_INSTRUCTION, FinetuneReport, FinetuneSettings, export_finetune

if TYPE_CHECKING:
    from ui.background import BackgroundOps
    from workbench.project import Project

JSONL_FILES = "JSON lines (*.jsonl)"
INTRO = (
    "The chosen books are cut into passages of whole sentences. Each passage becomes one training example: "
    "its first part, after the instruction, is the user's turn, and the rest is the answer the model should "
    "learn to give. The file has one example per line (chat JSON lines), the form that OpenAI-compatible "
    "fine-tuning services and local trainers read."
)


def file_stem(tag: str | None, book_set: str | None) -> str:
    words = re.sub(r"[^A-Za-z0-9]+", "-", book_set or tag or "books").strip("-").lower()
    return f"finetune-{words or 'books'}"


class FinetuneDialog(QDialog):
    def __init__(self, ops: "BackgroundOps", parent: QWidget | None = None):
        super().__init__(parent)
        self.writing = ops.slot(self)
        self.writing.busy_changed.connect(self._set_busy)
        self.project: "Project | None" = None
        self.setObjectName("rep-finetune-dialog")
        self.setWindowTitle("Fine-tuning data for a decade model")
        self.setMinimumWidth(620)
        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        self.books = BookChoice()
        self.chunk_words = QSpinBox()
        self.chunk_words.setRange(10, 100_000)
        self.chunk_words.setValue(FinetuneSettings.chunk_words)
        self.chunk_words.setSuffix(" words")
        self.prompt_share = QDoubleSpinBox()
        self.prompt_share.setRange(0.1, 0.9)
        self.prompt_share.setSingleStep(0.05)
        self.prompt_share.setValue(FinetuneSettings.prompt_share)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2_000_000_000)
        self.max_examples = QSpinBox()
        self.max_examples.setRange(0, 100_000_000)
        self.max_examples.setSpecialValueText("all")
        self.instruction = QLineEdit(DEFAULT_INSTRUCTION)
        self.system = QLineEdit()
        self.system.setPlaceholderText("none")
        self.out = QLineEdit()
        self.out.setObjectName("rep-finetune-out")
        self.browse_button = QPushButton("Choose…")
        self.browse_button.clicked.connect(self.choose_file)
        self.progress = ProgressRow(self.writing)
        self.result = QLabel("")
        self.result.setObjectName("rep-finetune-result")
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.write_button = QPushButton("Write the file")
        self.write_button.setObjectName("rep-finetune-write")
        self.write_button.setDefault(True)
        self.write_button.clicked.connect(self.write)
        self.close_button = QPushButton("Close")
        self.close_button.clicked.connect(self.reject)

        form = QFormLayout()
        form.addRow("Books", self.books)
        form.addRow("Passage size (whole sentences)", self.chunk_words)
        form.addRow("Share of a passage given as its start", self.prompt_share)
        form.addRow("Seed of the order of examples", self.seed)
        form.addRow("At most this many examples", self.max_examples)
        form.addRow("Instruction before each start", self.instruction)
        form.addRow("System message", self.system)
        file_row = QHBoxLayout()
        file_row.addWidget(self.out, 1)
        file_row.addWidget(self.browse_button)
        form.addRow("Output file (.jsonl)", file_row)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.write_button)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.progress)
        layout.addWidget(self.result)
        layout.addLayout(buttons)

    def prepare(self, project: "Project", tag: str | None, book_set: str | None) -> None:
        """Fill the book choices from ``project`` and start from the books chosen on the tab."""
        changed = project is not self.project
        self.project = project
        self.books.refresh(project)
        if tag or book_set:
            self.books.set_choice(tag, book_set)
        if changed or not self.out.text().strip():
            self.out.setText(str(Path(project.path).parent / f"{file_stem(tag, book_set)}.jsonl"))
        if changed:
            self.result.clear()

    def settings(self) -> FinetuneSettings:
        return FinetuneSettings(chunk_words=self.chunk_words.value(), prompt_share=round(self.prompt_share.value(), 2),
                                seed=self.seed.value(), max_examples=self.max_examples.value() or None,
                                instruction=self.instruction.text(), system=self.system.text())

    def output_path(self) -> Path | None:
        text = self.out.text().strip()
        if not text:
            return None
        path = Path(text).expanduser()
        return path.with_suffix(".jsonl") if not path.suffix else path

    def choose_file(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save the fine-tuning data", self.out.text(), JSONL_FILES)
        if path:
            self.out.setText(path)

    def write(self) -> None:
        project = self.project
        if project is None or self.writing.busy:
            return
        tag, book_set = self.books.choice()
        out = self.output_path()
        if not (tag or book_set):
            dialogs.show_info(self, "Choose the books: a tag such as decade=1950s, or a book set.")
            return
        if out is None:
            dialogs.show_info(self, "Choose the file to write (it ends in .jsonl).")
            return
        if out.exists() and not dialogs.ask(self, f"{out.name} already exists. Replace it?"):
            return
        self.out.setText(str(out))
        settings = self.settings()
        self.result.setText("")
        self.writing.start(
            lambda state: export_finetune(project, out, tag=tag, book_set=book_set, settings=settings, state=state),
            label="Writing fine-tuning data", project=project, on_done=self._written, on_cancelled=self.result.setText)

    def _set_busy(self, busy: bool) -> None:
        self.write_button.setEnabled(not busy)

    def _written(self, report: FinetuneReport) -> None:
        books = f"{report.books} book{'s' if report.books != 1 else ''}"
        self.result.setText(f"Wrote {report.examples:,} examples ({report.words:,} words from {books}) "
                            f"to {report.path}.")
