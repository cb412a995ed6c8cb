"""The run side of the Name cloze page: which models, which kind of run, the prompt and its settings.

Produces a ``workbench.probes.cloze.plan.ProbePlan``; the page estimates its cost and runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from workbench.models.catalog import ModelSpec, choice_text
from workbench.probes.cloze.plan import GENERATING_KINDS, KINDS, TEMPLATED_KINDS, ProbePlan
from workbench.probes.cloze.prompting import DEFAULT_TEMPLATE
from workbench.probes.cloze.run import DEFAULT_MAX_TOKENS
from workbench.probes.cloze.views import template_choices

if TYPE_CHECKING:
    import pandas as pd

LABEL_ROLE = Qt.ItemDataRole.UserRole
NO_MODELS = "No models yet: add one on the Models page."
#: imported results are shown below, but nothing can ask them: the hint says so rather than 'no models'
ONLY_IMPORTED = ("No model to ask: {labels} hold imported results, which cannot be asked again. To run the probe, "
                 "add a model on the Models page.")
COST_NOTE = "Local models cost nothing per call; for API models the cost is shown before the run starts."
RUN_TIP = ("Ask the ticked models about the ticked books. Running the same settings again continues where the "
           "last run stopped.")


class RunSettings(QGroupBox):
    run_requested = Signal(bool)  # retry failed only
    view_template_requested = Signal()
    new_template_requested = Signal()
    import_requested = Signal()
    prompt_changed = Signal()  # the kind of run or the template changed: the preview needs redoing

    def __init__(self, parent=None):
        super().__init__("2. Models and prompt", parent)
        self._busy = False
        self.models = QListWidget()
        self.models.setToolTip("Tick the models to ask; they run one after another")
        self.models.itemChanged.connect(lambda _: self._models_changed())
        self.models.setMaximumHeight(self.models.fontMetrics().height() * 6 + 12)
        self.models_hint = QLabel(NO_MODELS)
        self.models_hint.setWordWrap(True)

        self.kind = QComboBox()
        # long descriptions must not force the page wider than a laptop screen
        self.kind.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.kind.setMinimumContentsLength(24)
        for kind, text in KINDS.items():
            self.kind.addItem(text, kind)
        self.kind.currentIndexChanged.connect(lambda _: self._update_enabled())
        self.kind.currentIndexChanged.connect(lambda _: self.prompt_changed.emit())

        self.template = QComboBox()
        self.template.setMinimumContentsLength(8)
        self.template.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.template.currentIndexChanged.connect(lambda _: self.prompt_changed.emit())
        self.view_template_button = QPushButton("View / edit…")
        self.view_template_button.clicked.connect(self.view_template_requested.emit)
        self.new_template_button = QPushButton("New…")
        self.new_template_button.clicked.connect(self.new_template_requested.emit)
        template_row = QHBoxLayout()
        template_row.setContentsMargins(0, 0, 0, 0)
        template_row.addWidget(self.template, 1)
        template_row.addWidget(self.view_template_button)
        template_row.addWidget(self.new_template_button)
        template_box = QWidget()
        template_box.setLayout(template_row)

        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setDecimals(2)
        self.temperature.setValue(0.0)
        self.temperature.setToolTip("0 always gives the model's likeliest answer (as in the paper)")
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, 1024)
        self.max_tokens.setValue(DEFAULT_MAX_TOKENS)
        self.max_tokens.setToolTip("The longest answer the model may give, in tokens (a name needs only a few)")
        self.max_tokens.setSuffix(" tokens")
        settings_row = QHBoxLayout()
        settings_row.setContentsMargins(0, 0, 0, 0)
        settings_row.addWidget(self.temperature)
        settings_row.addSpacing(12)
        longest = QLabel("Longest answer")
        longest.setToolTip(self.max_tokens.toolTip())
        settings_row.addWidget(longest)
        settings_row.addWidget(self.max_tokens)
        settings_row.addStretch(1)
        settings_box = QWidget()
        settings_box.setLayout(settings_row)

        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        self.preview.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.preview.setToolTip("Exactly what the model reads for the first ticked passage (chat models get it as "
                                "one user message)")
        self.preview.setPlaceholderText("The prompt for the first ticked passage appears here.")

        form = QGridLayout()
        form.addWidget(QLabel("Run"), 0, 0)
        form.addWidget(self.kind, 0, 1)
        form.addWidget(QLabel("Prompt"), 1, 0)
        form.addWidget(template_box, 1, 1)
        form.addWidget(self.preview, 2, 1)
        form.addWidget(QLabel("Temperature"), 3, 0)
        form.addWidget(settings_box, 3, 1)
        form.setRowStretch(2, 1)

        self.run_button = QPushButton("Run probe")
        self.run_button.setDefault(True)
        self.run_button.setToolTip(RUN_TIP)
        self.run_button.clicked.connect(lambda: self.run_requested.emit(False))
        self.retry_button = QPushButton("Retry failed only")
        self.retry_button.setToolTip("Ask again only where a model failed (e.g. a server error) with these settings")
        self.retry_button.clicked.connect(lambda: self.run_requested.emit(True))
        self.import_button = QPushButton("Import published results…")
        self.import_button.setToolTip("Add results published elsewhere (gpt4-books TSV files, one per book)")
        self.import_button.clicked.connect(self.import_requested.emit)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.retry_button)
        buttons.addStretch(1)
        self.cost = QLabel(COST_NOTE)
        self.cost.setWordWrap(True)
        self.cost.setStyleSheet("color: palette(dark);")
        # the import sits beside the note, not beside Run: the row of buttons stays narrow on a laptop screen
        footer = QHBoxLayout()
        footer.addWidget(self.cost, 1)
        footer.addWidget(self.import_button, 0, Qt.AlignmentFlag.AlignTop)

        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Models"))
        layout.addWidget(self.models)
        layout.addWidget(self.models_hint)
        layout.addLayout(form, 1)
        layout.addLayout(buttons)
        layout.addLayout(footer)
        self._update_enabled()

    # ------------------------------------------------------------------ loading
    def load_models(self, specs: list[ModelSpec]) -> None:
        """Runnable models (imported results are not); ticks survive reloads."""
        ticked = set(self.checked_models())
        self.models.blockSignals(True)
        self.models.clear()
        imported = [spec.label for spec in specs if spec.backend == "external"]
        for spec in specs:
            if spec.backend == "external":
                continue
            item = QListWidgetItem(choice_text(spec))
            item.setData(LABEL_ROLE, spec.label)
            item.setToolTip(spec.ref)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if spec.label in ticked else Qt.CheckState.Unchecked)
            self.models.addItem(item)
        self.models.blockSignals(False)
        if self.models.count() == 0:
            self.models_hint.setText(ONLY_IMPORTED.format(labels=", ".join(imported)) if imported else NO_MODELS)
        self.models_hint.setVisible(self.models.count() == 0)
        self._update_enabled()

    def load_templates(self, templates: pd.DataFrame) -> None:
        current = self.template.currentData() or DEFAULT_TEMPLATE
        self.template.blockSignals(True)
        self.template.clear()
        for text, name in template_choices(templates):
            self.template.addItem(text, name)
        index = self.template.findData(current)
        self.template.setCurrentIndex(max(index, 0))
        self.template.blockSignals(False)

    def choose_template(self, name: str) -> None:
        index = self.template.findData(name)
        if index >= 0:
            self.template.setCurrentIndex(index)

    def choose_kind(self, kind: str) -> None:
        self.kind.setCurrentIndex(self.kind.findData(kind))

    def set_checked_models(self, labels: list[str]) -> None:
        wanted = set(labels)
        for row in range(self.models.count()):
            item = self.models.item(row)
            item.setCheckState(Qt.CheckState.Checked if item.data(LABEL_ROLE) in wanted else Qt.CheckState.Unchecked)

    # ------------------------------------------------------------------ reading
    def checked_models(self) -> list[str]:
        return [self.models.item(r).data(LABEL_ROLE) for r in range(self.models.count())
                if self.models.item(r).checkState() == Qt.CheckState.Checked]

    def plan(self, book_ids: list[int] | None, *, retry_failed: bool = False) -> ProbePlan:
        return ProbePlan(
            models=self.checked_models(),
            kind=self.kind.currentData(),
            template=self.template.currentData() or DEFAULT_TEMPLATE,
            temperature=self.temperature.value(),
            max_tokens=self.max_tokens.value(),
            book_ids=book_ids,
            retry_failed=retry_failed,
        )

    def choices(self) -> dict:
        """The settings as plain data (kept in the project, so the page opens as it was last used)."""
        return {"models": self.checked_models(), "kind": self.kind.currentData(),
                "template": self.template.currentData(), "temperature": self.temperature.value(),
                "max_tokens": self.max_tokens.value()}

    def apply_choices(self, choices: dict) -> None:
        if choices.get("models"):
            self.set_checked_models(list(choices["models"]))
        if choices.get("kind") in KINDS:
            self.choose_kind(choices["kind"])
        if choices.get("template"):
            self.choose_template(choices["template"])
        if choices.get("temperature") is not None:
            self.temperature.setValue(float(choices["temperature"]))
        if choices.get("max_tokens"):
            self.max_tokens.setValue(int(choices["max_tokens"]))

    def show_preview(self, text: str) -> None:
        self.preview.setPlainText(text)

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self._update_enabled()

    def _models_changed(self) -> None:
        self.cost.setText(COST_NOTE)  # an estimate shown earlier was for other models
        self._update_enabled()

    def _update_enabled(self) -> None:
        kind = self.kind.currentData()
        busy = self._busy
        for widget in (self.template, self.view_template_button):
            widget.setEnabled(kind in TEMPLATED_KINDS)
        for widget in (self.temperature, self.max_tokens):
            widget.setEnabled(kind in GENERATING_KINDS)
        can_run = bool(self.checked_models()) and not busy
        self.run_button.setToolTip(RUN_TIP if self.checked_models() else "Tick one or more models above first.")
        self.run_button.setEnabled(can_run)
        self.retry_button.setEnabled(can_run)
        self.import_button.setEnabled(not busy)
