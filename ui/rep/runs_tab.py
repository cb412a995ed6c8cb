"""The Runs tab: choose models, demographics and sampling settings; runs go to the background."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from ui.widgets.cells_table import fill_table
from ui.widgets.page import ProjectView
from ui.widgets.progress_row import ProgressRow
from ui.work_op import WorkOp
from workbench.models.catalog import list_models
from workbench.probes.rep.decades import model_facts
from workbench.probes.rep.plans import rep_work
from workbench.probes.rep.run import SamplingSettings
from workbench.probes.rep.sets import current_sets
from workbench.probes.rep.views import runs_table


def checked(widget: QListWidget) -> list[str]:
    return [widget.item(i).data(Qt.ItemDataRole.UserRole) for i in range(widget.count())
            if widget.item(i).checkState() == Qt.CheckState.Checked]


def fill_checklist(widget: QListWidget, entries: list[tuple[str, str]], keep: set[str], default: bool) -> None:
    widget.clear()
    for key, text in entries:
        item = QListWidgetItem(text)
        item.setData(Qt.ItemDataRole.UserRole, key)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        on = key in keep if keep else default
        item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        widget.addItem(item)


class RunsTab(ProjectView):
    completions_added = Signal()  # a run ended: the results count again

    def __init__(self, ops, parent: QWidget | None = None):
        super().__init__(ops, parent)
        self.work = ops.slot(self)
        self.models = QListWidget()
        self.models.setObjectName("rep-run-models")
        self.demographics = QListWidget()
        self.demographics.setObjectName("rep-run-demographics")
        self.samples = QSpinBox()
        self.samples.setRange(1, 100_000)
        self.samples.setValue(50)
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.0, 5.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setValue(1.0)
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, 32_000)
        self.max_tokens.setValue(100)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2_000_000_000)
        self.start_button = QPushButton("Run the prompts")
        self.start_button.setObjectName("rep-start-run")
        self.start_button.clicked.connect(self.start)
        self.progress = ProgressRow(self.work)
        self.runs = QTableWidget()
        self.runs.setObjectName("rep-runs")
        self.runs.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)

        choose = QHBoxLayout()
        for title, widget, hint in (
                ("Models", self.models, "Tag models decade=1950s (and fine-tuned) on the Models page to compare "
                                        "decades."),
                ("Demographics", self.demographics, "The roles and their word lists are on the Sets tab.")):
            box = QGroupBox(title)
            box_layout = QVBoxLayout(box)
            box_layout.addWidget(widget, 1)
            note = QLabel(hint)
            note.setWordWrap(True)
            note.setStyleSheet("color: #555;")
            box_layout.addWidget(note)
            choose.addWidget(box, 1)
        settings = QGroupBox("Sampling")
        form = QFormLayout(settings)
        form.addRow("Completions per stem", self.samples)
        form.addRow("Temperature", self.temperature)
        form.addRow("Most tokens per completion", self.max_tokens)
        form.addRow("Seed (sample i uses seed + i)", self.seed)
        form.addRow(self.start_button)
        choose.addWidget(settings)
        layout = QVBoxLayout(self)
        layout.addLayout(choose, 2)
        layout.addWidget(self.progress)
        layout.addWidget(QLabel("Runs (a run asked for again continues where it stopped)"))
        self.runs_hint = QLabel("No REP runs yet: tick one or more models and demographics above, then press "
                                "Run the prompts.")
        self.runs_hint.setWordWrap(True)
        layout.addWidget(self.runs_hint)
        layout.addWidget(self.runs, 3)

    def refresh(self) -> None:
        project = self.project
        keep_models, keep_sets = set(checked(self.models)), set(checked(self.demographics))
        if project is None:
            self.models.clear()
            self.demographics.clear()
            self.runs.setRowCount(0)
            return
        entries = []
        for spec in list_models(project):
            if spec.backend == "external":  # imported results cannot be run
                continue
            facts = model_facts(spec.label, spec.tags)
            about = ", ".join(x for x in (facts.decade and f"decade {facts.decade}", facts.stage) if x)
            entries.append((spec.label, f"{spec.label} ({about})"))
        fill_checklist(self.models, entries, keep_models, default=False)
        fill_checklist(self.demographics, [(s.name, s.parsed.title) for s in current_sets(project, "rep")],
                       keep_sets, default=True)
        table = runs_table(project)
        fill_table(self.runs, table)
        self.runs_hint.setVisible(table.empty)

    def settings(self) -> SamplingSettings:
        return SamplingSettings(samples=self.samples.value(), temperature=self.temperature.value(),
                                max_tokens=self.max_tokens.value(), seed=self.seed.value())

    def start(self) -> None:
        project = self.require_project()
        if project is None or self.work.busy:
            return
        models, demographics = checked(self.models), checked(self.demographics)
        if not models or not demographics:
            self.show_info("Tick at least one model and one demographic to run.")
            return
        settings = self.settings()
        WorkOp(self, lambda: rep_work(project, models, demographics, settings)).success(self._done).run()

    def _done(self, _outcome) -> None:
        self.completions_added.emit()
