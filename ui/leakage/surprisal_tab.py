"""The Surprisal tab: word-by-word surprisal of a text (bits), with the leading-white-space correction,
for reading-time studies; saved as CSV."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QComboBox, QFileDialog, QLabel, QPushButton

from ui.leakage.analysis_tab import NO_LOCAL_MODEL, AnalysisTab, model_labels, refill_or_hint
from ui.leakage.membership_tab import OPEN_MODELS
from ui.widgets.frame_table import Column, count, decimal, yes_no
from workbench.export.registry import write_csv
from workbench.probes.leakage import surprisal
from workbench.probes.leakage.views import SurprisalChoices, surprisal_table
from workbench.run_failures import describe_outcome

TEXT_FILES = "Text files (*.txt);;All files (*)"


class SurprisalTab(AnalysisTab):
    def __init__(self, ops, parent=None):
        super().__init__(ops, [
            Column("position", "Position", count, numeric=True), Column("word", "Word"),
            Column("surprisal", "Surprisal (bits)", decimal, numeric=True), Column("tokens", "Tokens", count, numeric=True),
            Column("pieces", "Model tokens", stretch=True), Column("corrected", "Corrected", yes_no),
        ], parent=parent)
        self.model = QComboBox()
        self.path: Path | None = None
        self.file_label = QLabel("no text chosen")
        choose = QPushButton("Choose a text…")
        choose.clicked.connect(self._choose)
        self.run_button = QPushButton("Compute surprisal")
        self.run_button.clicked.connect(self.run)
        self.save_button = QPushButton("Save as CSV…")
        self.save_button.clicked.connect(self._save)
        self.lay_out_settings((("Model", self.model), choose, self.file_label, self.run_button, self.save_button))
        self.choices = SurprisalChoices()
        self.bind("model", self.model.currentData, self.model.currentIndexChanged)

    def refresh_choices(self) -> None:
        refill_or_hint(self.model, model_labels(self.project, OPEN_MODELS), NO_LOCAL_MODEL)

    def _choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "A text to read", str(Path.home()), TEXT_FILES)
        if path:
            self.choose_file(Path(path))

    def choose_file(self, path: Path) -> None:
        self.path = path
        self.file_label.setText(path.name)

    def results_query(self):
        return surprisal_table if self.choices.model and self.choices.item is not None else None

    def run(self) -> None:
        model, path = self.choices.model, self.path
        if self.require_project() is None:
            return
        if not model or path is None:
            self.show_info("Choose a local model and a text file first.")
            return
        project = self.project

        def work(state):
            report, item = surprisal.run_surprisal(project, model, path, state=state)
            return describe_outcome(project, report, f"{path.name} read by {model}"), item

        self.start(work, f"Reading {path.name} with {model}", self._done)

    def _done(self, result) -> None:
        text, item = result
        self.choose(item=item)  # the text read: the table shows its words (read when the work is done)
        self.summary.show_text(text)

    def _save(self) -> None:
        if self.table.frame.empty:
            self.show_info("Compute the surprisal of a text first.")
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save surprisal", str(Path.home() / "surprisal.csv"), "CSV (*.csv)")
        if path:
            self.save_csv(Path(path))

    def save_csv(self, path: Path) -> None:
        frame = self.table.frame
        write_csv(frame, path)  # written beside it and put in place: never seen half written
        self.summary.show_text(f"Saved {len(frame):,} words to {path}.")
