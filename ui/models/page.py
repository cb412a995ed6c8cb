"""The Models page: the project's models (add, edit, remove, test), the response cache, API prices.

Testing a model sends one short prompt in the background (``self.ops``) and shows the answer and how
long it took. Everything else is a quick call into ``workbench.models``.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui import dialogs
from ui.models.model_dialog import ModelDialog
from ui.widgets.frame_table import count
from ui.widgets.page import Page
from ui.widgets.table_filling import filling
from ui.widgets.table_style import one_line_rows
from workbench.errors import UserError
from workbench.models import catalog, prices
from workbench.models.cache import cache_size, clear_cache, describe_size
from workbench.models.catalog import ModelSpec
from workbench.models.secrets import how_to_set_variable
from workbench.work import KIND_TOPICS, MODELS, RUNS

MODEL_COLUMNS = ["Label", "Kind", "Model", "Server", "API key from", "Costs", "At once", "Tags", "Runs"]
PRICE_COLUMNS = ["Model", "Input $/M tokens", "Output $/M tokens", "Source"]
NOT_SET = " (not set)"
COST_TIPS = {
    "paid": "Runs on this model show what they will cost and ask before anything is sent.",
    "marked free": "Marked 'Costs nothing' (a server of your own): runs start without a cost question.",
    "free (this computer)": "Runs on this computer; it costs nothing.",
}
WARNING_COLOUR = QColor("#b35900")
TEST_HINT = "Select a model and press Test to send it a one-line prompt and see its answer and how long it took."
NO_PROJECT = "Open or create a project to add models."
NO_MODELS = ("No models yet. Add one: an API model (OpenAI or any OpenAI-compatible server such as vLLM, "
             "Ollama or llama.cpp's server), a GGUF file, or a Hugging Face model.")


def _item(text: str, data=None, editable: bool = False) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    if data is not None:
        item.setData(Qt.ItemDataRole.UserRole, data)
    if not editable:
        item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    return item


class ModelsPage(Page):
    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.dialog: ModelDialog | None = None
        self.test_op = None
        self.tested_label = ""  # the model that the test under way asks
        self._build()
        self.refresh()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        self.add_button = QPushButton("Add model…")
        self.add_button.clicked.connect(self.add_model)
        self.edit_button = QPushButton("Edit…")
        self.edit_button.clicked.connect(self.edit_selected)
        self.remove_button = QPushButton("Remove…")
        self.remove_button.clicked.connect(self.remove_selected)
        self.test_button = QPushButton("Test")
        self.test_button.setToolTip("Send a one-line prompt to the selected model and show its answer")
        self.test_button.clicked.connect(self.test_selected)
        toolbar = QHBoxLayout()
        for button in (self.add_button, self.edit_button, self.remove_button, self.test_button):
            toolbar.addWidget(button)
        toolbar.addStretch(1)

        self.table = QTableWidget(0, len(MODEL_COLUMNS))
        self.table.setHorizontalHeaderLabels(MODEL_COLUMNS)
        one_line_rows(self.table)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.doubleClicked.connect(lambda _: self.edit_selected())
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.hint = QLabel("")
        self.hint.setWordWrap(True)

        self.test_result = QLabel(TEST_HINT)
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.test_result.setMinimumHeight(36)

        models_box = QWidget()
        models_layout = QVBoxLayout(models_box)
        models_layout.setContentsMargins(0, 0, 0, 0)
        models_layout.addLayout(toolbar)
        models_layout.addWidget(self.hint)
        models_layout.addWidget(self.table, 1)
        models_layout.addWidget(self.test_result)

        # response cache
        self.cache_label = QLabel("")
        self.clear_cache_button = QPushButton("Clear cache…")
        self.clear_cache_button.clicked.connect(self.clear_cache)
        cache_note = QLabel("Identical requests (same model, parameters, prompt and sample) are answered from the "
                            "project instead of the model, so they are never paid twice. Failures are never cached.")
        cache_note.setWordWrap(True)
        cache_group = QGroupBox("Response cache")
        cache_layout = QVBoxLayout(cache_group)
        cache_row = QHBoxLayout()
        cache_row.addWidget(self.cache_label, 1)
        cache_row.addWidget(self.clear_cache_button)
        cache_layout.addLayout(cache_row)
        cache_layout.addWidget(cache_note)
        cache_layout.addStretch(1)

        # prices
        self.price_table = QTableWidget(0, len(PRICE_COLUMNS))
        self.price_table.setHorizontalHeaderLabels(PRICE_COLUMNS)
        self.price_table.verticalHeader().hide()
        self.price_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.price_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.price_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.add_price_button = QPushButton("Add price")
        self.add_price_button.clicked.connect(self.add_price_row)
        self.remove_price_button = QPushButton("Remove")
        self.remove_price_button.clicked.connect(self.remove_price_rows)
        self.save_prices_button = QPushButton("Save prices")
        self.save_prices_button.clicked.connect(self.save_prices)
        price_buttons = QHBoxLayout()
        price_buttons.addWidget(self.add_price_button)
        price_buttons.addWidget(self.remove_price_button)
        price_buttons.addStretch(1)
        price_buttons.addWidget(self.save_prices_button)
        self.price_note = QLabel(
            f"The default prices were set on {prices.default_prices_date() or 'an unknown date'}; prices change, so "
            "check your provider's price page. Prices you enter here are kept in the project and replace the "
            "defaults. A name ending in * covers every model name starting with it (e.g. gpt-4o* for dated "
            "versions).")
        self.price_note.setWordWrap(True)
        self.price_note.setStyleSheet("color: palette(mid);")
        price_group = QGroupBox("API prices (US dollars per million tokens)")
        price_layout = QVBoxLayout(price_group)
        price_layout.addWidget(self.price_table, 1)
        price_layout.addLayout(price_buttons)
        price_layout.addWidget(self.price_note)

        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(cache_group)
        bottom.addWidget(price_group)
        bottom.setStretchFactor(0, 1)
        bottom.setStretchFactor(1, 2)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(models_box)
        splitter.addWidget(bottom)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

    # ------------------------------------------------------------------ loading
    def refresh(self) -> None:
        has_project = self.project is not None
        for widget in (self.add_button, self.clear_cache_button, self.add_price_button, self.save_prices_button,
                       self.remove_price_button):
            widget.setEnabled(has_project)
        self._load_models()
        self._load_cache()
        self._load_prices()
        self._update_buttons()

    def _load_models(self) -> None:
        self.table.setRowCount(0)
        if self.project is None:
            self.hint.setText(NO_PROJECT)
            return
        frame = catalog.models_frame(self.project)
        self.hint.setText(NO_MODELS if frame.empty else "")
        self.hint.setVisible(frame.empty)
        specs = {spec.id: spec for spec in catalog.list_models(self.project)}
        with filling(self.table):
            for row in frame.itertuples(index=False):
                n = self.table.rowCount()
                self.table.insertRow(n)
                key, key_tip = self._key_text(specs.get(row.id), row.api_key)
                model = row.ref or ("results imported from files" if row.backend == "external" else "")
                at_once = count(row.requests_at_once)
                values = [row.label, catalog.BACKEND_NAMES.get(row.backend, row.backend), model,
                          row.base_url or ("api.openai.com" if row.backend == "openai" else ""),
                          key or ("no key" if row.backend == "openai" else ""), row.costs, at_once, row.tags,
                          str(row.runs)]
                for column, value in enumerate(values):
                    item = _item(str(value), row.id if column == 0 else None)
                    if column == 2 and row.ref:
                        item.setToolTip(str(row.ref))
                    if column == 4 and key_tip:
                        item.setToolTip(key_tip)
                        if key.endswith(NOT_SET):
                            item.setForeground(QBrush(WARNING_COLOUR))
                    if column == 5:
                        item.setToolTip(COST_TIPS.get(row.costs, ""))
                    if column in (6, 8):
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    self.table.setItem(n, column, item)

    @staticmethod
    def _key_text(spec: ModelSpec | None, source: str) -> tuple[str, str]:
        """Where the API key comes from, and whether that variable is set in this session (never the key)."""
        if spec is None or not source:
            return source, ""
        if spec.api_key_env:
            source = f"variable {spec.api_key_env}"
        elif spec.api_key_keyring:
            source = f"keyring {spec.api_key_keyring}"
        if spec.api_key_env:
            if os.environ.get(spec.api_key_env, "").strip():
                return source, f"The key is read from the environment variable {spec.api_key_env} (it is set)."
            return (f"{source}{NOT_SET}",
                    f"The environment variable {spec.api_key_env} is not set, so runs on this model will fail. "
                    + how_to_set_variable(spec.api_key_env))
        return source, f"The key is read from the system keyring entry '{spec.api_key_keyring}' (service 'palimpsest')."

    def _load_cache(self) -> None:
        if self.project is None:
            self.cache_label.setText("")
            return
        answers, size = cache_size(self.project)
        self.cache_label.setText(describe_size(answers, size))
        self.clear_cache_button.setEnabled(answers > 0)

    def _load_prices(self) -> None:
        self.price_table.setRowCount(0)
        frame = prices.prices_frame(self.project)
        with filling(self.price_table):
            for row in frame.itertuples(index=False):
                self._append_price(row.model, row.input_per_million, row.output_per_million, row.source)

    def _append_price(self, model: str, input_price, output_price, source: str) -> int:
        n = self.price_table.rowCount()
        self.price_table.insertRow(n)
        self.price_table.setItem(n, 0, _item(model, editable=True))
        self.price_table.setItem(n, 1, _item(f"{input_price:g}" if input_price != "" else "", editable=True))
        self.price_table.setItem(n, 2, _item(f"{output_price:g}" if output_price != "" else "", editable=True))
        self.price_table.setItem(n, 3, _item("yours" if source == "project" else source))
        return n

    # ------------------------------------------------------------------ selection
    def selected_model(self) -> ModelSpec | None:
        rows = {i.row() for i in self.table.selectedIndexes()}
        if not rows or self.project is None:
            return None
        model_id = self.table.item(min(rows), 0).data(Qt.ItemDataRole.UserRole)
        return catalog.get_model(self.project, int(model_id))

    def select_label(self, label: str) -> None:
        for row in range(self.table.rowCount()):
            if self.table.item(row, 0).text() == label:
                self.table.selectRow(row)
                return

    def _update_buttons(self) -> None:
        selected = bool(self.table.selectedIndexes()) and self.project is not None
        self.edit_button.setEnabled(selected)
        self.remove_button.setEnabled(selected)
        self.test_button.setEnabled(selected and self.test_op is None)

    # ------------------------------------------------------------------ add, edit, remove
    def add_model(self) -> None:
        if self.require_project():
            self._open_dialog(None)

    def edit_selected(self) -> None:
        spec = self.selected_model()
        if spec is not None:
            self._open_dialog(spec)

    def _open_dialog(self, spec: ModelSpec | None) -> None:
        self.dialog = ModelDialog(self.project, self, spec)
        self.dialog.accepted.connect(self._dialog_saved)
        self.dialog.open()

    def _dialog_saved(self) -> None:
        saved = self.dialog.saved if self.dialog else None
        self.refresh()
        self._models_changed()
        if saved is not None:
            self.select_label(saved.label)
            self.test_result.setText(" ".join(catalog.model_warnings(saved)))

    def remove_selected(self) -> None:
        spec = self.selected_model()
        if spec is None:
            return
        runs, responses = catalog.runs_using(self.project, spec.id)
        if runs:
            question = (f"'{spec.label}' was used by {runs} run(s) holding {responses} response(s). Remove the "
                        "model AND those runs with their responses? This cannot be undone.")
        else:
            question = f"Remove the model '{spec.label}' from this project?"
        if not dialogs.ask(self, question):
            return
        try:
            catalog.remove_model(self.project, spec.id, with_runs=bool(runs))
        except UserError as exc:
            self.show_error(str(exc))
        self.refresh()
        # its runs (and their results) went with it
        self._models_changed(*((RUNS, *KIND_TOPICS.values()) if runs else ()))

    def _models_changed(self, *also: str) -> None:
        """Pages listing the models (their choosers, prices, costs) reload: on screen now, off screen when shown."""
        self.ops.changes.announce({MODELS, *also}, origin=self)

    # ------------------------------------------------------------------ test
    def test_selected(self) -> None:
        spec = self.selected_model()
        if spec is None or self.test_op is not None:
            return
        self.test_result.setText(f"Testing {spec.label}: sending “{catalog.TEST_PROMPT}” …")
        self.tested_label = spec.label
        self.test_op = self.ops.run(
            lambda state: (*catalog.test_model(spec), catalog.model_warnings(spec)),
            label=f"Testing {spec.label}",
            project=self.project,
            on_done=self._tested,
            on_error=self._test_failed,
            on_end=self._test_ended,
        )
        self._update_buttons()

    def _tested(self, result) -> None:
        answer, seconds, warnings = result
        shown = answer.strip() or "(an empty answer)"
        self.test_result.setText(" ".join([f"{self.tested_label} answered in {seconds:.2f} s: {shown}", *warnings]))

    def _test_failed(self, message: str, _details: str) -> None:
        self.test_result.setText(f"{self.tested_label} did not answer. {message}")

    def _test_ended(self) -> None:
        self.test_op = None
        self._update_buttons()

    # ------------------------------------------------------------------ cache
    def clear_cache(self) -> None:
        if self.project is None:
            return
        answers, _ = cache_size(self.project)
        if not dialogs.ask(self, f"Forget all {answers:,} cached answers? Runs keep their responses; only "
                                 "repeating a request will call the model again."):
            return
        clear_cache(self.project)
        self._load_cache()

    # ------------------------------------------------------------------ prices
    def add_price_row(self) -> None:
        row = self._append_price("", "", "", "project")
        self.price_table.scrollToBottom()
        self.price_table.editItem(self.price_table.item(row, 0))

    def remove_price_rows(self) -> None:
        rows = sorted({i.row() for i in self.price_table.selectedIndexes()}, reverse=True)
        defaults = [r for r in rows if self.price_table.item(r, 3).text() == "default"]
        if defaults:
            self.show_info("Default prices stay available; to change one, edit its numbers and save your own.")
        for row in rows:
            if row not in defaults:
                self.price_table.removeRow(row)

    def price_rows(self) -> list[tuple[str, str, str]]:
        cell = lambda r, c: (self.price_table.item(r, c) or QTableWidgetItem("")).text().strip()  # noqa: E731
        return [(cell(r, 0), cell(r, 1), cell(r, 2)) for r in range(self.price_table.rowCount())]

    def save_prices(self) -> None:
        """Keep as the project's own prices every row that is not exactly a default price."""
        if self.project is None:
            return
        defaults = {m: (i, o) for m, i, o in prices.prices_frame(None)[
            ["model", "input_per_million", "output_per_million"]].itertuples(index=False)}
        own = []
        for model, i, o in self.price_rows():
            if not model:
                continue
            try:
                if model in defaults and (float(i), float(o)) == defaults[model]:
                    continue
            except ValueError:
                pass  # replace_prices says what is wrong with the number
            own.append((model, i, o))
        try:
            prices.replace_prices(self.project, own)
        except UserError as exc:
            self.show_error(str(exc))
            return
        self._load_prices()
        self._models_changed(RUNS)  # what runs cost is worked out from these prices
