"""The Classify tab: label completions with a judge model; the lexical baseline; human validation."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
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
from workbench.probes.rep.judge import judges
from workbench.probes.rep.plans import judge_work
from workbench.probes.rep.validation import create_validation_tasks
from workbench.probes.rep.views import AgreementChoices, agreement_table

LEXICAL_NOTE = (
    "The word lists need no run: each completion gets the label of the first listed word among its first "
    "words (the lists are on the Sets tab), or unclear/none. Choose 'Word lists' under Labels from on the "
    "Results tab."
)


class ClassifyTab(ProjectView):
    judged = Signal(str)  # the judge model that just labelled the completions

    def __init__(self, ops, parent: QWidget | None = None):
        super().__init__(ops, parent)
        self.judging = ops.slot(self)
        self.judge = QComboBox()
        self.judge.setObjectName("rep-judge-model")
        self.judge_button = QPushButton("Label every completion with this judge")
        self.judge_button.setObjectName("rep-run-judge")
        self.judge_button.clicked.connect(self.start_judge)
        self.progress = ProgressRow(self.judging)
        self.choices = AgreementChoices()  # the validation task whose labels the judge is compared with
        self.task_name = QLineEdit(self.choices.task)
        self.task_name.setObjectName("rep-validation-task")
        self.task_name.textChanged.connect(lambda text: self._choose(task=text.strip()))
        self.sample = QSpinBox()
        self.sample.setRange(1, 10_000)
        self.sample.setValue(50)
        self.create_button = QPushButton("Create blinded label tasks")
        self.create_button.setObjectName("rep-create-validation")
        self.create_button.clicked.connect(self.create_tasks)
        self.agreement_button = QPushButton("Compare judge with people")
        self.agreement_button.setObjectName("rep-agreement")
        self.agreement_button.clicked.connect(self.compute_agreement)
        self.agreement = QTableWidget()
        self.agreement.setObjectName("rep-agreement-table")
        self.agreement.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.message = QLabel("")
        self.message.setWordWrap(True)

        judge_box = QGroupBox("Judge model")
        judge_layout = QVBoxLayout(judge_box)
        row = QHBoxLayout()
        row.addWidget(QLabel("Judge model"))
        row.addWidget(self.judge, 1)
        row.addWidget(self.judge_button)
        judge_layout.addLayout(row)
        judge_note = QLabel("A language model reads each completion and answers with one of the set's labels. "
                            "Answers that are not exactly one label are counted as 'judge gave no label', "
                            "never dropped.")
        judge_note.setWordWrap(True)
        judge_layout.addWidget(judge_note)
        judge_layout.addWidget(self.progress)
        lexical_box = QGroupBox("Word lists (lexical baseline)")
        note = QLabel(LEXICAL_NOTE)
        note.setWordWrap(True)
        QVBoxLayout(lexical_box).addWidget(note)
        people_box = QGroupBox("Human validation (blind to the judge)")
        form = QFormLayout(people_box)
        form.addRow("Task name", self.task_name)
        form.addRow("Completions per demographic", self.sample)
        buttons = QHBoxLayout()
        buttons.addWidget(self.create_button)
        buttons.addWidget(self.agreement_button)
        buttons.addStretch(1)
        form.addRow(buttons)
        form.addRow(self.message)
        layout = QVBoxLayout(self)
        layout.addWidget(judge_box)
        layout.addWidget(lexical_box)
        layout.addWidget(people_box)
        layout.addWidget(QLabel("The judge against people (once annotators have labelled the tasks on the Annotate page)"))
        layout.addWidget(self.agreement, 1)

    def _choose(self, **changes) -> None:
        self.choices = replace(self.choices, **changes)

    def refresh(self) -> None:
        project = self.project
        current = self.judge.currentText()
        self.judge.clear()
        if project is None:
            return
        self.judge.addItems([spec.label for spec in list_models(project) if spec.backend != "external"])
        used = judges(project)
        if current or used:
            self.judge.setCurrentText(current or used[-1])

    def start_judge(self) -> None:
        project = self.require_project()
        judge = self.judge.currentText()
        if project is None or self.judging.busy:
            return
        if not judge:
            self.show_info("Add a model to use as the judge first (Models page).")
            return
        WorkOp(self, lambda: judge_work(project, judge), slot=self.judging).success(self._judged).run()

    def _judged(self, outcome) -> None:
        self.judged.emit(outcome.labels[0] if outcome.labels else self.judge.currentText())

    def create_tasks(self) -> None:
        project = self.require_project()
        if project is None:
            return
        name, size = self.choices.task, self.sample.value()
        self.ops.run(lambda state: create_validation_tasks(project, name, sample=size),
                     label="Creating validation tasks", project=project, on_error=self.show_error,
                     on_done=self._tasks_created)

    def _tasks_created(self, tasks) -> None:
        names = ", ".join(f"'{t.name}'" for t in tasks)
        self.message.setText(f"Created {names}. Annotators label them on the Annotate page; then compare here.")

    def compute_agreement(self) -> None:
        project = self.require_project()
        if project is None:
            return
        choices = self.choices
        self.ops.run(lambda state: agreement_table(project, choices), label="Comparing the judge with people",
                     project=project, on_error=self.show_error, on_done=self._show_agreement)

    def _show_agreement(self, table) -> None:
        fill_table(self.agreement, table)
        if table.empty:
            self.message.setText("Nobody has labelled these tasks yet: annotators label them on the Annotate page.")
