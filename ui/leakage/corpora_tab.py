"""The Corpora tab: the project's reference corpora; build a local index from files and folders, add a
remote infini-gram index, remove one."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
)

from ui import dialogs
from ui.leakage.analysis_tab import AnalysisTab, model_labels
from ui.widgets.combo import refill_names
from ui.widgets.frame_table import Column, count
from workbench.models.secrets import shown_address
from workbench.probes.leakage import corpora
from workbench.probes.leakage.views import corpora_table

CORPUS_FILES = "Corpus files (*.txt *.text *.md *.jsonl *.jsonl.gz);;All files (*)"
DEFAULT_REMOTE_INDEX = "v4_piletrain_llama"
WORD_TOKENS = "word-level (no download)"


def size(value) -> str:
    from workbench.probes.leakage.index_build import humanize_bytes

    return "" if value is None or value != value else humanize_bytes(int(value))


class CorporaTab(AnalysisTab):
    def __init__(self, ops, parent=None):
        super().__init__(ops, [
            Column("name", "Corpus"), Column("kind", "Kind"), Column("tokenizer", "Tokenizer"),
            Column("documents", "Documents", count, numeric=True), Column("tokens", "Tokens", count, numeric=True),
            Column("words", "Words", count, numeric=True, tooltip="White-space words: the n of the chance estimate"),
            Column("size_bytes", "Size", size, numeric=True), Column("where", "Where", stretch=True),
        ], key="name", parent=parent)
        self._build()

    def _build(self) -> None:
        self.name = QLineEdit()
        self.name.setPlaceholderText("e.g. gutenberg")
        self.tokenizer = QComboBox()
        self.paths = QListWidget()
        self.paths.setMaximumHeight(80)
        add_files = QPushButton("Add files…")
        add_files.clicked.connect(self._add_files)
        add_folder = QPushButton("Add a folder…")
        add_folder.clicked.connect(self._add_folder)
        self.build_button = QPushButton("Build the index")
        self.build_button.clicked.connect(self.build)
        buttons = QHBoxLayout()
        for button in (add_files, add_folder, self.build_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        local = QGroupBox("Build an index of text files (beside the project)")
        form = QFormLayout(local)
        form.addRow("Name", self.name)
        form.addRow("Tokens", self.tokenizer)
        form.addRow("Files", self.paths)
        form.addRow(buttons)

        self.remote_name = QLineEdit()
        self.remote_name.setPlaceholderText("e.g. pile")
        self.url = QLineEdit(corpora.PUBLIC_API)
        self.index = QLineEdit(DEFAULT_REMOTE_INDEX)
        self.remote_button = QPushButton("Add the remote index")
        self.remote_button.clicked.connect(self.add_remote)
        remote = QGroupBox("Or use a remote infini-gram index (the Pile, Dolma, C4 …)")
        remote_form = QFormLayout(remote)
        remote_form.addRow("Name", self.remote_name)
        remote_form.addRow("Address", self.url)
        remote_form.addRow("Index", self.index)
        remote_form.addRow(self.remote_button)

        self.remove_button = QPushButton("Remove the chosen corpus…")
        self.remove_button.clicked.connect(self.remove)
        top = QHBoxLayout()
        top.addWidget(local, 3)
        top.addWidget(remote, 2)
        settings = QVBoxLayout(self.settings)
        settings.setContentsMargins(0, 0, 0, 0)
        settings.addLayout(top)
        settings.addWidget(self.remove_button)

    def refresh_choices(self) -> None:
        refill_names(self.tokenizer, model_labels(self.project, ("hf",)), blank=WORD_TOKENS)

    def results_query(self):
        return lambda project, _choices: corpora_table(project)  # no choices: every corpus of the project

    # ---- actions -----------------------------------------------------------------------------------

    def _add_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Files of the reference corpus", str(Path.home()), CORPUS_FILES)
        self.add_paths(paths)

    def _add_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "A folder of the reference corpus", str(Path.home()))
        if folder:
            self.add_paths([folder])

    def add_paths(self, paths) -> None:
        known = {self.paths.item(i).text() for i in range(self.paths.count())}
        for path in paths:
            if str(path) not in known:
                self.paths.addItem(str(path))

    def build(self) -> None:
        paths = [self.paths.item(i).text() for i in range(self.paths.count())]
        if not paths:
            self.show_info("Add the files or folders of the corpus first.")
            return
        name, tokenizer = self.name.text().strip(), self.tokenizer.currentData() or "word"
        project = self.project

        def work(state):
            corpus = corpora.build_corpus(project, name, paths, tokenizer=tokenizer, state=state)
            return corpus, corpora.build_notes(project, corpus)

        self.start(work, f"Indexing {name[:40] or 'the corpus'}", self._built)

    def _built(self, result) -> None:
        corpus, corpus_notes = result
        self.paths.clear()
        self.name.clear()
        notes, more = corpus_notes[:3], len(corpus_notes) - 3
        note = (" " + " ".join(notes) + (f" (and {more} more)" if more > 0 else "")) if notes else ""
        self.summary.show_text(f"Indexed '{corpus.name}': {corpus.documents:,} documents, {corpus.tokens:,} tokens."
                               + note)

    def add_remote(self) -> None:
        name, url, index = self.remote_name.text().strip(), self.url.text().strip(), self.index.text().strip()
        project = self.project

        def work(state):
            return corpora.add_remote(project, name, url, index)

        self.start(work, f"Asking {shown_address(url)[:80]}", self._added)

    def _added(self, corpus) -> None:
        self.remote_name.clear()
        size_text = f" ({corpus.tokens:,} tokens)" if corpus.tokens else ""
        self.summary.show_text(f"Added '{corpus.name}': {corpus.remote_index}{size_text}.")

    def remove(self) -> None:
        chosen = self.table.selected_keys()
        if self.require_project() is None:
            return
        if not chosen:
            self.show_info("Choose a corpus in the table first.")
            return
        name, project = chosen[0], self.project
        corpus = corpora.get_corpus(project, name)
        local = corpus.kind == corpora.LOCAL
        question = (f"Remove '{name}' from the project and delete its index ({corpus.folder(project)})?" if local else
                    f"Remove '{name}' from the project?") + " Results already computed with it are kept."
        if not dialogs.ask(self, question):
            return

        def work(state):
            corpora.remove_corpus(project, name, delete_files=local)
            return name

        self.start(work, f"Removing {name}", self._removed)

    def _removed(self, name: str) -> None:
        self.summary.show_text(f"Removed '{name}'.")
