"""The Membership tab: an open model reads the passages once; per-book membership scores, and where books
are tagged member=yes / member=no, each score's ROC AUC over books and over passages, a chart of the scores
by member tag and their ROC curves; where the tags are missing, a note says what to tag."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QPushButton

from ui.leakage.analysis_tab import NO_LOCAL_MODEL, AnalysisTab, SourceChooser, model_labels, refill_or_hint
from ui.widgets.combo import refill_names
from ui.widgets.frame_table import Column, count, decimal
from workbench.probes.leakage import membership
from workbench.probes.leakage.views import SCORE_TITLES, MembershipChoices, membership_table
from workbench.run_failures import describe_outcome

NO_REFERENCE = "(no reference model)"
OPEN_MODELS = ("hf", "gguf")


def score(value) -> str:
    return "" if value is None or value != value else f"{float(value):.3g}"


class MembershipTab(AnalysisTab):
    keeps_note_room = True
    def __init__(self, ops, parent=None):
        super().__init__(ops, [
            Column("book", "Book", stretch=True), Column("member", "Member tag"),
            Column("passages", "Passages", count, numeric=True),
            Column("perplexity", SCORE_TITLES["perplexity"], decimal, numeric=True, tooltip="Lower: more likely seen"),
            Column("zlib_ratio", SCORE_TITLES["zlib_ratio"], score, numeric=True, tooltip="Lower: more likely seen"),
            Column("min_k", SCORE_TITLES["min_k"], score, numeric=True, tooltip="Higher: more likely seen"),
            Column("min_k_pp", SCORE_TITLES["min_k_pp"], score, numeric=True, tooltip="Higher: more likely seen"),
            Column("ref_ratio", SCORE_TITLES["ref_ratio"], score, numeric=True, optional=True,
                   tooltip="Lower: more likely seen"),
            Column("ref_diff", SCORE_TITLES["ref_diff"], score, numeric=True, optional=True,
                   tooltip="The model's log-perplexity minus the reference model's (mimir's reference score). "
                           "Lower: more likely seen"),
        ], key="book_id", parent=parent, charts="leakage.membership")
        self.model = QComboBox()
        self.reference = QComboBox()
        self.source = SourceChooser()
        self.k = QDoubleSpinBox()
        self.k.setRange(1, 100)
        self.k.setValue(membership.K_PERCENT)
        self.k.setSuffix(" %")
        self.k.setToolTip("Min-K%: the share of least likely tokens averaged")
        self.run_button = QPushButton("Read the passages")
        self.run_button.clicked.connect(self.run)
        self.lay_out_settings((("Model", self.model), ("Reference", self.reference), ("k", self.k)),
                              (("Passages", self.source), self.run_button))
        self.choices = MembershipChoices()
        self.bind("model", self.model.currentData, self.model.currentIndexChanged)
        self.bind("reference", self.reference.currentData, self.reference.currentIndexChanged)
        self.bind("k_percent", self.k.value, self.k.valueChanged)
        self.bind("source", self.source.source, self.source.changed)
        self.k.valueChanged.connect(self.refresh)
        self.refresh_on_choice(self.model, self.reference)

    def refresh_choices(self) -> None:
        labels = model_labels(self.project, OPEN_MODELS)
        refill_or_hint(self.model, labels, NO_LOCAL_MODEL)
        refill_names(self.reference, labels, blank=NO_REFERENCE)

    def chart_options(self):
        model = self.choices.model
        if not model:
            return None, ("Add a local model on the Models page (a transformers model or a GGUF file), then press "
                          "Read the passages.")
        return ({"model": model, "reference": self.choices.reference, "k": self.choices.k_percent},
                f"Tag books member=yes or member=no (Library page) and let {model} read their passages (Read the "
                "passages): the chart compares the scores of the two groups.")

    def results_query(self):
        return membership_table if self.choices.model else None

    def show_results(self, books) -> None:
        self.table.show_frame(books)
        self.show_note(books.attrs.get("note") or "")

    def run(self) -> None:
        model, reference = self.choices.model, self.choices.reference
        if self.require_project() is None:
            return
        if not model:
            self.show_info("Add a local model (Models page: a transformers model or a GGUF file) first.")
            return
        project, source = self.project, self.choices.source

        def work(state):
            reports = membership.run_membership(project, model, source, reference=reference, state=state)
            return "\n".join(describe_outcome(project, report, f"Passages read by {label}")
                             for report, label in zip(reports, (model, reference)))

        self.start(work, f"Reading passages with {model}", self.summary.show_text)
