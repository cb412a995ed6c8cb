"""The dialog that adds or edits one model: backend, reference, server, where the key comes from, tags.

Saving calls ``workbench.models.catalog`` (``add_model``/``update_model``); a mistake is shown in the
dialog itself, which stays open so nothing typed is lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui import dialogs
from workbench.errors import UserError
from workbench.models import catalog
from workbench.models.catalog import ModelSpec

if TYPE_CHECKING:
    from workbench.project import Project

BACKEND_CHOICES = [
    ("openai", "OpenAI-compatible server (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio)"),
    ("gguf", "GGUF file on this computer (llama.cpp)"),
    ("hf", "Hugging Face model (transformers)"),
    ("external", "Imported results (not run from here)"),
]
REF_HINTS = {
    "openai": "The model's name on the server, e.g. gpt-4o-mini, or the name your local server lists",
    "gguf": "The .gguf file",
    "hf": "A Hugging Face id such as gpt2, or the model's folder",
    "external": "The model's name in the imported results (optional)",
}
KEY_NONE, KEY_ENV, KEY_KEYRING = "none", "env", "keyring"
KEY_EXPLANATION = (
    "Palimpsest never stores the key itself, only where to find it: the NAME of an environment variable "
    "(for example OPENAI_API_KEY, set before starting Palimpsest) or of an entry in your system's keyring "
    "(save it with: python -m keyring set palimpsest NAME). Local servers usually need no key."
)
CHAT_CHOICES = [("Automatic", None), ("Chat (instruct models)", True), ("Plain completion (base models)", False)]


class ModelDialog(QDialog):
    def __init__(self, project: "Project", parent: QWidget | None = None, spec: ModelSpec | None = None):
        super().__init__(parent)
        self.project = project
        self.original = spec
        self.saved: ModelSpec | None = None
        self.setWindowTitle("Edit model" if spec else "Add a model")
        self.setMinimumWidth(640)
        self._build()
        self._load(spec or ModelSpec(label="", backend="openai"))

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        self.label_edit = QLineEdit()
        self.label_edit.setPlaceholderText("A short name, e.g. gpt4o-2024 or llama-1950s")
        self.backend_box = QComboBox()
        for key, text in BACKEND_CHOICES:
            self.backend_box.addItem(text, key)
        self.backend_box.currentIndexChanged.connect(self._backend_changed)
        self.ref_edit = QLineEdit()
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(self._browse)
        ref_row = QHBoxLayout()
        ref_row.setContentsMargins(0, 0, 0, 0)
        ref_row.addWidget(self.ref_edit, 1)
        ref_row.addWidget(self.browse_button)
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText("e.g. http://127.0.0.1:8000/v1 — leave empty for OpenAI itself")
        self.key_box = QComboBox()
        self.key_box.addItem("No key (local server)", KEY_NONE)
        self.key_box.addItem("Environment variable", KEY_ENV)
        self.key_box.addItem("System keyring entry", KEY_KEYRING)
        self.key_box.currentIndexChanged.connect(self._key_changed)
        self.key_name_edit = QLineEdit()
        key_row = QHBoxLayout()
        key_row.setContentsMargins(0, 0, 0, 0)
        key_row.addWidget(self.key_box)
        key_row.addWidget(self.key_name_edit, 1)
        self.key_note = QLabel(KEY_EXPLANATION)
        self.key_note.setWordWrap(True)
        self.key_note.setStyleSheet("color: palette(mid);")
        self.chat_box = QComboBox()
        for text, value in CHAT_CHOICES:
            self.chat_box.addItem(text, value)
        self.chat_box.setToolTip("Automatic: API servers get chat messages; local models use their chat template "
                                 "when they have one, else the bare prompt.")
        self.free_box = QCheckBox("Costs nothing (your own or your lab's server): no cost question before runs")
        self.free_box.setToolTip("Tick it for llama.cpp, vLLM, Ollama or LM Studio running here. Leave it unticked "
                                 "for a paid service, and for an address that only forwards to one (a tunnel or a "
                                 "proxy), so that you are asked before money is spent.")
        self.concurrency_box = QSpinBox()
        self.concurrency_box.setRange(1, catalog.MAX_CONCURRENCY)
        self.concurrency_box.setValue(catalog.DEFAULT_CONCURRENCY)
        self.concurrency_box.setSuffix(" requests at once")
        self.concurrency_box.setToolTip(
            f"How many questions are sent to the server at the same time ({catalog.DEFAULT_CONCURRENCY} unless you "
            "change it). A vLLM server on several GPUs, or several servers behind a router such as LiteLLM, can take "
            "more; lower it if the service answers that its rate limit is reached.")
        self.params_edit = QLineEdit()
        self.params_edit.setPlaceholderText("Optional, e.g. timeout=60 (or n_ctx=4096, device=cuda)")

        self.tags_table = QTableWidget(0, 2)
        self.tags_table.setHorizontalHeaderLabels(["Tag", "Value"])
        self.tags_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.tags_table.verticalHeader().hide()
        self.tags_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tags_table.setMaximumHeight(130)
        add_tag = QPushButton("Add tag")
        add_tag.clicked.connect(lambda: self.add_tag_row("", ""))
        remove_tag = QPushButton("Remove tag")
        remove_tag.clicked.connect(self._remove_tag_rows)
        tag_buttons = QVBoxLayout()
        tag_buttons.addWidget(add_tag)
        tag_buttons.addWidget(remove_tag)
        tag_buttons.addStretch(1)
        tags_row = QHBoxLayout()
        tags_row.setContentsMargins(0, 0, 0, 0)
        tags_row.addWidget(self.tags_table, 1)
        tags_row.addLayout(tag_buttons)

        form = QFormLayout()
        form.addRow("Label", self.label_edit)
        form.addRow("Kind", self.backend_box)
        self.ref_label = QLabel("Model")
        form.addRow(self.ref_label, ref_row)
        self.url_label = QLabel("Server address")
        form.addRow(self.url_label, self.url_edit)
        self.key_label = QLabel("API key")
        form.addRow(self.key_label, key_row)
        form.addRow("", self.key_note)
        form.addRow("", self.free_box)
        self.concurrency_label = QLabel("Speed")
        form.addRow(self.concurrency_label, self.concurrency_box)
        form.addRow("Prompts", self.chat_box)
        form.addRow("Parameters", self.params_edit)
        form.addRow("Tags", tags_row)

        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #b00020;")
        self.error_label.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)

    # ------------------------------------------------------------------ fields
    def _load(self, spec: ModelSpec) -> None:
        self.label_edit.setText(spec.label)
        self.backend_box.setCurrentIndex(max(0, self.backend_box.findData(spec.backend)))
        self.ref_edit.setText(spec.ref)
        self.url_edit.setText(spec.base_url or "")
        if spec.api_key_env:
            self.key_box.setCurrentIndex(self.key_box.findData(KEY_ENV))
            self.key_name_edit.setText(spec.api_key_env)
        elif spec.api_key_keyring:
            self.key_box.setCurrentIndex(self.key_box.findData(KEY_KEYRING))
            self.key_name_edit.setText(spec.api_key_keyring)
        else:
            self.key_box.setCurrentIndex(self.key_box.findData(KEY_NONE))
        params = dict(spec.params)
        chat = params.pop("chat", None)
        self.free_box.setChecked(params.pop("free", None) is True)
        self.concurrency_box.setValue(int(params.pop("concurrency", None) or catalog.DEFAULT_CONCURRENCY))
        self.chat_box.setCurrentIndex([v for _, v in CHAT_CHOICES].index(chat if chat is None else bool(chat)))
        self.params_edit.setText(", ".join(f"{k}={v}" for k, v in sorted(params.items())))
        self.tags_table.setRowCount(0)
        for key, value in spec.tags.items():
            self.add_tag_row(key, value)
        self._backend_changed()
        self._key_changed()

    def add_tag_row(self, key: str, value: str) -> None:
        row = self.tags_table.rowCount()
        self.tags_table.insertRow(row)
        self.tags_table.setItem(row, 0, QTableWidgetItem(key))
        self.tags_table.setItem(row, 1, QTableWidgetItem(value))
        if not key:
            self.tags_table.editItem(self.tags_table.item(row, 0))

    def _remove_tag_rows(self) -> None:
        for row in sorted({i.row() for i in self.tags_table.selectedIndexes()}, reverse=True):
            self.tags_table.removeRow(row)

    def tags(self) -> dict[str, str]:
        tags = {}
        for row in range(self.tags_table.rowCount()):
            key = (self.tags_table.item(row, 0) or QTableWidgetItem("")).text().strip()
            value = (self.tags_table.item(row, 1) or QTableWidgetItem("")).text().strip()
            if key:
                tags[key] = value
        return tags

    def backend(self) -> str:
        return self.backend_box.currentData()

    def _backend_changed(self) -> None:
        backend = self.backend()
        is_api = backend == "openai"
        for widget in (self.url_label, self.url_edit, self.key_label, self.key_box, self.key_name_edit, self.key_note,
                       self.free_box, self.concurrency_label, self.concurrency_box):
            widget.setVisible(is_api)
        self.browse_button.setVisible(backend in ("gguf", "hf"))
        self.ref_edit.setPlaceholderText(REF_HINTS[backend])
        self.ref_label.setText({"gguf": "Model file", "hf": "Model id or folder"}.get(backend, "Model"))

    def _key_changed(self) -> None:
        source = self.key_box.currentData()
        self.key_name_edit.setEnabled(source != KEY_NONE)
        self.key_name_edit.setPlaceholderText(
            {KEY_ENV: "the variable's NAME, e.g. OPENAI_API_KEY (not the key)",
             KEY_KEYRING: "the keyring entry's NAME, e.g. openai (not the key)"}.get(source, ""))

    def _browse(self) -> None:
        if self.backend() == "gguf":
            path, _ = QFileDialog.getOpenFileName(self, "Choose a GGUF model file", "", "GGUF models (*.gguf);;All files (*)")
        else:
            path = QFileDialog.getExistingDirectory(self, "Choose the model's folder")
        if path:
            self.ref_edit.setText(path)

    def spec_from_fields(self) -> ModelSpec:
        backend = self.backend()
        text = self.params_edit.text().strip()
        params = catalog.parse_pairs([p for p in (s.strip() for s in text.split(",")) if p], what="parameter",
                                      typed=True) if text else {}
        chat = self.chat_box.currentData()
        if chat is not None:
            params["chat"] = chat
        params.pop("free", None)
        typed = params.pop("concurrency", None)  # typed among the parameters: what the person wrote wins
        if backend == "openai":
            if self.free_box.isChecked():
                params["free"] = True
            at_once = self.concurrency_box.value() if typed is None else typed
            if at_once != catalog.DEFAULT_CONCURRENCY:
                params["concurrency"] = at_once
        source = self.key_box.currentData() if backend == "openai" else KEY_NONE
        name = self.key_name_edit.text().strip()
        if source != KEY_NONE and not name:
            raise UserError("Enter the NAME of the variable or keyring entry that holds the key, "
                            "or choose 'No key'.")
        return ModelSpec(
            label=self.label_edit.text(), backend=backend, ref=self.ref_edit.text(),
            base_url=self.url_edit.text() if backend == "openai" else None,
            api_key_env=name if source == KEY_ENV else None,
            api_key_keyring=name if source == KEY_KEYRING else None,
            params=params, tags=self.tags(),
        )

    # ------------------------------------------------------------------ saving
    def _save(self, spec: ModelSpec, confirm_free: bool) -> ModelSpec:
        if self.original is None:
            return catalog.add_model(self.project, spec, confirm_free=confirm_free)
        return catalog.update_model(
            self.project, self.original.id, confirm_free=confirm_free, label=spec.label, backend=spec.backend,
            ref=spec.ref, base_url=spec.base_url, api_key_env=spec.api_key_env, api_key_keyring=spec.api_key_keyring,
            params=spec.params, tags=spec.tags)

    def accept(self) -> None:
        try:
            spec = self.spec_from_fields()
            try:
                self.saved = self._save(spec, confirm_free=False)
            except catalog.FreeOnPaidHost as exc:
                question = str(exc).replace(" (on the command line: --yes)", "") + "\n\nMark it as costing nothing?"
                if not dialogs.ask(self, question):
                    return
                self.saved = self._save(spec, confirm_free=True)
        except UserError as exc:
            self.error_label.setText(str(exc))
            self.error_label.show()
            return
        super().accept()

    def show_error_text(self) -> str:
        return self.error_label.text() if not self.error_label.isHidden() else ""

