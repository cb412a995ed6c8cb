"""The Entities tab: entity eliciting prompts (EEPs) and how many of a model's entities come from chosen books.

The scholar ticks models, picks the EEP set (its stems are listed), the sampling settings and the
reference books (a tag such as decade=1950s, or a book set). "Run and compare" samples the stems
(``entities.run_eep``, resumable) and then compares every stored completion of those models with the
books (``overlap_per_response``, ``overlap_summary``, ``compare_stages``), all in the background with
progress and Cancel. "Compare stored completions" skips the sampling, e.g. to try another decade's
books. Clicking a summary row lists its completions; clicking a completion shows it with the
entities it shares with the books marked.

"Fine-tuning data…" opens the dialog that writes decade fine-tuning data from books.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ui.rep.book_choice import BookChoice
from ui.rep.finetune_dialog import FinetuneDialog
from ui.rep.runs_tab import checked, fill_checklist
from ui.widgets.cells_table import fill_table
from ui.widgets.page import ProjectView
from ui.widgets.progress_row import ProgressRow
from ui.widgets.table_style import one_line_rows
from ui.work_op import WorkOp
from workbench.jobs import models_with_runs
from workbench.models.catalog import list_models
from workbench.probes.rep import views
from workbench.probes.rep.decades import model_facts
from workbench.probes.rep.entities import EEP_DEFAULTS, EEP_KIND
from workbench.probes.rep.plans import eep_work
from workbench.probes.rep.run import SamplingSettings
from workbench.probes.rep.sets import current_sets
from workbench.probes.rep.views import EntitiesChoices, EntitiesResult

if TYPE_CHECKING:
    import pandas as pd

    from workbench.jobs import JobReport

COMPLETION_COLUMN, COMPLETION_WIDTH = 2, 200  # in the completions table
MARK_STYLE = "background-color: #ffe58a; font-weight: bold;"
COMPARISON_TITLE = "Base against fine-tuned models (completions with at least one entity)"
OVERLAP_NOTE = (
    "A completion's overlap is the share of its distinct named entities (people, places, organisations, "
    "works ...) that also occur in the chosen books. Completions that name no entity are counted but have "
    "no overlap. Means come with 95% bootstrap intervals."
)


@dataclass
class EepResult:
    """What one background step hands back: the completions compared with the books and what is computed
    from them (``views.entities_result``), or the message of a run that stopped before the comparison."""

    result: EntitiesResult = field(default_factory=EntitiesResult)
    books: str = ""
    reports: list["JobReport"] = field(default_factory=list)
    stopped: str = ""
    choices: EntitiesChoices | None = None  # what the comparison was made for


# ---------------------------------------------------------------------------------------------- display
def highlighted(text: str, entities: list[str]) -> str:
    """``text`` as HTML with each occurrence of the (normalised, lower-case) ``entities`` marked."""
    spans = []
    for entity in entities:
        words = [re.escape(w) for w in entity.split()]
        if words:
            pattern = r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)"
            spans += [m.span() for m in re.finditer(pattern, text, flags=re.IGNORECASE)]
    out, position = [], 0
    for start, end in sorted(spans):
        if start < position:
            continue  # overlaps a mark already made
        out.append(html.escape(text[position:start]))
        out.append(f'<span style="{MARK_STYLE}">{html.escape(text[start:end])}</span>')
        position = end
    out.append(html.escape(text[position:]))
    return "".join(out).replace("\n", "<br>")


def entities_of(row) -> list[str]:
    return [e for e in str(row["common_entities"] or "").split("; ") if e]


# ---------------------------------------------------------------------------------------------- the tab
class EntitiesTab(ProjectView):
    completions_added = Signal()  # a run or a comparison ended: the runs list may have grown

    def __init__(self, ops, parent: QWidget | None = None):
        super().__init__(ops, parent)
        self.work = ops.slot(self)
        self.work.busy_changed.connect(self._set_busy)
        self.choices = EntitiesChoices()  # the models, the books and the EEP set chosen
        self.result = EepResult()
        self.shown_rows = views.no_rows()  # the completions listed in the responses table
        self.models = QListWidget()
        self.models.setObjectName("rep-eep-models")
        self.models.itemChanged.connect(self._models_chosen)
        self.eep_set = QComboBox()
        self.eep_set.setObjectName("rep-eep-set")
        self.eep_set.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.eep_set.setMinimumContentsLength(14)
        self.eep_set.currentIndexChanged.connect(self._set_chosen)
        self.stems = QListWidget()
        self.stems.setObjectName("rep-eep-stems")
        self.stems.setWordWrap(True)
        self.stems.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.stems.setSpacing(2)
        self.stems.setAlternatingRowColors(True)
        self.books = BookChoice()
        self.books.changed.connect(self._books_chosen)
        self.samples = QSpinBox()
        self.samples.setRange(1, 100_000)
        self.samples.setValue(EEP_DEFAULTS.samples)
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.0, 5.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setValue(EEP_DEFAULTS.temperature)
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, 32_000)
        self.max_tokens.setValue(EEP_DEFAULTS.max_tokens)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2_000_000_000)
        self.run_button = QPushButton("Run the prompts and compare")
        self.run_button.setObjectName("rep-eep-run")
        self.run_button.setToolTip("Sample every stem from the ticked models (a run asked for again continues "
                                   "where it stopped), then compare all their completions with the books.")
        self.run_button.clicked.connect(lambda: self.start(run_models=True))
        self.compare_button = QPushButton("Compare stored completions")
        self.compare_button.setObjectName("rep-eep-compare")
        self.compare_button.setToolTip("Compare the completions already stored (of the ticked models, or of all "
                                       "models when none is ticked) with the chosen books, without sampling.")
        self.compare_button.clicked.connect(lambda: self.start(run_models=False))
        self.finetune_button = QPushButton("Fine-tuning data…")
        self.finetune_button.setObjectName("rep-finetune")
        self.finetune_button.setToolTip("Write training data for a decade model from books (chat JSON lines).")
        self.finetune_button.clicked.connect(self.open_finetune)
        self.finetune_dialog: FinetuneDialog | None = None
        self.progress = ProgressRow(self.work)
        self.status = QLabel("Tick models, choose the books, and run the prompts (or compare completions already "
                             "stored).")
        self.status.setObjectName("rep-eep-status")
        self.status.setWordWrap(True)
        self.note = QLabel(OVERLAP_NOTE)
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #555;")
        self.summary = self._table("rep-eep-summary")
        self.summary.itemSelectionChanged.connect(self._summary_picked)
        self.comparison = self._table("rep-eep-comparison")
        self.comparison.setMaximumHeight(64)
        self.comparison_label = QLabel(COMPARISON_TITLE)
        self.comparison_label.setWordWrap(True)
        self.responses = self._table("rep-eep-responses")
        self.responses.itemSelectionChanged.connect(self._response_picked)
        self.responses_label = QLabel("Click a summary row to list its completions.")
        self.responses_label.setObjectName("rep-eep-responses-label")
        self.detail = QTextBrowser()
        self.detail.setObjectName("rep-eep-detail")
        self.detail.setPlaceholderText("Click a completion to read it, with the entities it shares with the books "
                                       "marked.")
        self._layout()

    @staticmethod
    def _table(name: str) -> QTableWidget:
        table = QTableWidget()
        table.setObjectName(name)
        one_line_rows(table)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        return table

    def _layout(self) -> None:
        models_box = QGroupBox("Models")
        models_layout = QVBoxLayout(models_box)
        models_layout.addWidget(self.models, 1)
        models_hint = QLabel("Tag models decade=1950s and fine-tuned on the Models page to compare base and "
                             "fine-tuned models.")
        models_hint.setWordWrap(True)
        models_hint.setStyleSheet("color: #555;")
        models_layout.addWidget(models_hint)
        prompts_box = QGroupBox("Prompts")
        prompts = QVBoxLayout(prompts_box)
        row = QHBoxLayout()
        row.addWidget(QLabel("EEP set"))
        row.addWidget(self.eep_set, 1)
        prompts.addLayout(row)
        prompts.addWidget(self.stems, 1)
        edit_note = QLabel("Edit the stems on the Sets tab.")
        edit_note.setStyleSheet("color: #555;")
        prompts.addWidget(edit_note)
        settings_box = QGroupBox("Reference books and sampling")
        form = QFormLayout(settings_box)
        form.addRow(self.books)
        form.addRow("Completions per stem", self.samples)
        form.addRow("Temperature", self.temperature)
        form.addRow("Most tokens per completion", self.max_tokens)
        form.addRow("Seed (sample i uses seed + i)", self.seed)
        form.addRow(self.run_button)
        form.addRow(self.compare_button)
        choose = QHBoxLayout()
        choose.addWidget(models_box, 3)
        choose.addWidget(prompts_box, 4)
        choose.addWidget(settings_box, 4)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(QLabel("Mean overlap with the books, per model and prompt (click a row)"))
        left_layout.addWidget(self.summary, 1)
        left_layout.addWidget(self.note)
        left_layout.addWidget(self.comparison_label)
        left_layout.addWidget(self.comparison)
        right = QSplitter(Qt.Orientation.Vertical)
        listing = QWidget()
        listing_layout = QVBoxLayout(listing)
        listing_layout.setContentsMargins(0, 0, 0, 0)
        listing_layout.addWidget(self.responses_label)
        listing_layout.addWidget(self.responses, 1)
        right.addWidget(listing)
        right.addWidget(self.detail)
        right.setSizes([260, 120])
        results = QSplitter(Qt.Orientation.Horizontal)
        results.addWidget(left)
        results.addWidget(right)
        results.setSizes([710, 540])
        # the results take the room that is left (their preferred size would push the page past the window)
        results.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        results.setMinimumHeight(260)

        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.finetune_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.addLayout(choose, 4)
        layout.addWidget(self.progress)
        layout.addLayout(top)
        layout.addWidget(results, 7)

    # ------------------------------------------------------------------ the choices
    def _choose(self, **changes) -> None:
        self.choices = self.choices.replace(**changes)

    def _models_chosen(self, *_args) -> None:
        self._choose(models=checked(self.models))

    def _books_chosen(self) -> None:
        tag, book_set = self.books.choice()
        self._choose(tag=tag, book_set=book_set)

    def _set_chosen(self, *_args) -> None:
        self._choose(eep_set=self.eep_set.currentData() or "eep")
        self._show_stems()

    # ------------------------------------------------------------------ loading
    def refresh(self) -> None:
        project = self.project
        keep_models = set(self.choices.models)
        current_set = self.choices.eep_set
        self.books.refresh(project)
        self.eep_set.blockSignals(True)
        self.eep_set.clear()
        self.eep_set.blockSignals(False)
        if project is None:
            self.models.clear()
            self._models_chosen()
            self.stems.clear()
            self.show_result(EepResult())
            return
        with_completions = models_with_runs(project, EEP_KIND)
        entries = []
        for spec in list_models(project):
            if spec.backend == "external" and spec.id not in with_completions:
                continue  # imported results that hold no EEP completions: nothing to run or compare
            facts = model_facts(spec.label, spec.tags)
            about = ", ".join(x for x in (facts.decade and f"decade {facts.decade}", facts.stage) if x)
            entries.append((spec.label, f"{spec.label} ({about})"))
        self.models.blockSignals(True)
        fill_checklist(self.models, entries, keep_models, default=False)
        self.models.blockSignals(False)
        self._models_chosen()
        self.eep_set.blockSignals(True)
        for stored in current_sets(project, "eep"):
            self.eep_set.addItem(f"{stored.parsed.title} (v{stored.version})", stored.name)
        index = self.eep_set.findData(current_set)
        self.eep_set.setCurrentIndex(max(index, 0))
        self.eep_set.blockSignals(False)
        self._set_chosen()

    def _show_stems(self, *_args) -> None:
        self.stems.clear()
        project, name = self.project, self.choices.eep_set
        if project is None or not name:
            return
        stored = next((s for s in current_sets(project, "eep") if s.name == name), None)
        for prompt in stored.parsed.prompts if stored else ():
            item = QListWidgetItem(f"{prompt.key}: {prompt.stem}")
            item.setToolTip(prompt.stem)
            self.stems.addItem(item)

    def settings(self) -> SamplingSettings:
        return SamplingSettings(samples=self.samples.value(), temperature=self.temperature.value(),
                                max_tokens=self.max_tokens.value(), seed=self.seed.value())

    # ------------------------------------------------------------------ running
    def start(self, run_models: bool) -> None:
        project = self.require_project()
        if project is None or self.work.busy:
            return
        choices = self.choices
        models, tag, book_set = list(choices.models), choices.tag, choices.book_set
        if run_models and not models:
            self.show_info("Tick at least one model to run the prompts on.")
            return
        if not (tag or book_set):
            self.show_info("Choose the books to compare with: a tag such as decade=1950s, or a book set.")
            return
        if run_models:
            imported = [m.label for m in list_models(project) if m.label in models and m.backend == "external"]
            if imported:
                self.show_info(f"{', '.join(imported)} holds imported results and cannot be run. Untick it, "
                                    "or use 'Compare stored completions'.")
                return
        settings, books = self.settings(), choices.describe_books()

        def compare(outcome, state) -> EepResult:
            reports = outcome.reports if outcome is not None else []
            if reports and reports[-1].status != "done":
                return EepResult(reports=reports, stopped=reports[-1].message)
            return EepResult(views.entities_result(project, choices, state), books, reports, choices=choices)

        if run_models:  # the prompts first: a paid API says what they cost and asks
            started = WorkOp(self, lambda: eep_work(project, models, settings, set_name=choices.eep_set)
                             .then(compare)) \
                .success(self._eep_done).run()
            if started is not None:
                self.status.setText(f"Working: entity prompts on {len(models)} model(s) …")
            return
        label = "Comparing completions with books"
        self.work.start(lambda state: compare(None, state), label=label, project=project, on_done=self.show_result,
                        on_error=self.show_error, on_cancelled=self.status.setText, on_end=self._ended)
        self.status.setText(f"Working: {label.lower()} …")

    def show_status(self, text: str) -> None:
        """How the prompts went (``WorkOp`` says it here)."""
        self.status.setText(text)

    def _eep_done(self, outcome) -> None:
        if outcome.value is not None:
            self.show_result(outcome.value)
        self.completions_added.emit()

    def _set_busy(self, busy: bool) -> None:
        self.run_button.setEnabled(not busy)
        self.compare_button.setEnabled(not busy)

    def _ended(self) -> None:
        self.completions_added.emit()
        self.refresh()

    def show_result(self, result: EepResult) -> None:
        if result.stopped:
            self.status.setText(result.stopped)
            return
        self.result = result
        fill_table(self.summary, result.result.summary_table)
        fill_table(self.comparison, result.result.comparison_table)
        self.comparison.horizontalHeader().setStretchLastSection(True)
        note = result.result.comparison_note
        self.comparison_label.setText(f"{COMPARISON_TITLE}: {note}." if note else COMPARISON_TITLE)
        self.show_responses(views.no_rows())
        if result.result.per_response.empty:
            return
        new = sum(r.processed for r in result.reports)
        ran = f"{new} new completion(s) sampled. " if result.reports else ""
        self.status.setText(ran + result.result.describe(result.books))

    # ------------------------------------------------------------------ click-through
    def _summary_picked(self) -> None:
        rows = {i.row() for i in self.summary.selectedIndexes()}
        if not rows or self.result.result.summary.empty:
            return
        self.show_summary_row(min(rows))

    def show_summary_row(self, row: int) -> None:
        """List the completions behind summary row ``row`` (a model and a prompt, or all its prompts)."""
        self.show_responses(*self.result.result.summary_row_completions(row))

    def show_responses(self, rows: pd.DataFrame, label: str = "Click a summary row to list its completions.") -> None:
        self.shown_rows = rows
        self.responses_label.setText(label)
        fill_table(self.responses, views.eep_responses_view(rows))
        if not rows.empty:
            last = self.responses.columnCount() - 1  # the matched entities take the remaining width
            self.responses.horizontalHeader().setSectionResizeMode(last, QHeaderView.ResizeMode.Stretch)
            self.responses.setColumnWidth(COMPLETION_COLUMN, COMPLETION_WIDTH)
            for r, text in enumerate(rows["raw"]):
                self.responses.item(r, COMPLETION_COLUMN).setToolTip(text or "")
        self.detail.clear()

    def _response_picked(self) -> None:
        rows = {i.row() for i in self.responses.selectedIndexes()}
        if rows and not self.shown_rows.empty:
            self.show_response(min(rows))

    def show_response(self, row: int) -> None:
        picked = self.shown_rows.iloc[row]
        matched = entities_of(picked)
        if picked["entities"] == 0:
            counts = "This completion names no entity, so it has no overlap."
        else:
            counts = (f"{picked['common']} of its {picked['entities']} distinct named entities occur in the books "
                      f"(overlap {views.overlap_percent(picked['overlap'] * 100)}).")
        listing = ", ".join(html.escape(e) for e in matched) if matched else "none"
        self.detail.setHtml(
            f"<p><b>{html.escape(str(picked['model']))}</b>, prompt {html.escape(str(picked['prompt']))}, "
            f"sample {picked['sample']}. {counts}</p>"
            f"<p>Entities also in the books: {listing}</p>"
            f"<p>{highlighted(picked['raw'] or '', matched)}</p>")

    # ------------------------------------------------------------------ fine-tuning data
    def open_finetune(self) -> None:
        project = self.require_project()
        if project is None:
            return
        if self.finetune_dialog is None:
            self.finetune_dialog = FinetuneDialog(self.ops, self)
        self.finetune_dialog.prepare(project, self.choices.tag, self.choices.book_set)
        self.finetune_dialog.open()
