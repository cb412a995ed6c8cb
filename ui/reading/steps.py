"""The Reading page's steps, one box each, in the order of the work: scenes, summaries, names, questions,
asking a model. The boxes hold the settings and a button; the page does the work."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from workbench.probes.reading.questions import VARIANTS

WHOLE_TEXT = "all that fits"
EVERY_LEVEL = "every level"


def _spin(low: int, high: int, value: int, tooltip: str, special: str = "") -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    box.setToolTip(tooltip)
    if special:
        box.setSpecialValueText(special)
    return box


def _variants() -> QComboBox:
    combo = QComboBox()
    for variant in VARIANTS:
        combo.addItem("original names" if variant == "original" else "substituted names", variant)
    combo.setToolTip("Ask about the book as written, or about the book with its character names replaced "
                     "(a control for models that know the book)")
    return combo


def _box(title: str, form: QFormLayout, *buttons: QPushButton) -> QGroupBox:
    box = QGroupBox(title)
    layout = QVBoxLayout(box)
    layout.addLayout(form)
    row = QHBoxLayout()
    row.addStretch(1)
    for button in buttons:
        row.addWidget(button)
    layout.addLayout(row)
    return box


class Steps(QWidget):
    cut_requested = Signal()
    summarize_requested = Signal()
    import_requested = Signal()
    substitute_requested = Signal()
    questions_requested = Signal()
    ask_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.book = QComboBox()
        self.book.setToolTip("The book of the library to read")
        self.status = QLabel("")
        self.status.setWordWrap(True)

        self.scene_words = _spin(50, 20_000, 800, "About how many words a scene has (cut at paragraphs or sentences)")
        self.cut_button = QPushButton("Cut into scenes")
        self.cut_button.clicked.connect(self.cut_requested)
        scenes = QFormLayout()
        scenes.addRow("Words per scene", self.scene_words)

        self.summary_model = QComboBox()
        self.summary_model.setToolTip("The model that summarizes every scene and writes a false version of each")
        self.hierarchical = QCheckBox("Also summaries of summaries")
        self.hierarchical.setToolTip("Join the summaries of consecutive scenes, level by level, up to the whole book")
        self.summarize_button = QPushButton("Summarize")
        self.summarize_button.clicked.connect(self.summarize_requested)
        self.import_button = QPushButton("Import summaries…")
        self.import_button.setToolTip("A CSV file with the columns scene, summary and false_summary")
        self.import_button.clicked.connect(self.import_requested)
        summaries = QFormLayout()
        summaries.addRow("Model", self.summary_model)
        summaries.addRow("", self.hierarchical)

        self.name_seed = _spin(0, 10**6, 0, "Seed of the replacement names")
        self.substitute_button = QPushButton("Substitute names")
        self.substitute_button.clicked.connect(self.substitute_requested)
        names = QFormLayout()
        names.addRow("Seed", self.name_seed)

        self.every = _spin(1, 100, 5, "A checkpoint (where questions are asked) after every this many scenes")
        self.options = _spin(3, 12, 6, "Choices per question, 'None of the above' included")
        self.question_variant = _variants()
        self.question_seed = _spin(0, 10**6, 0, "Seed of the options drawn and their order")
        self.max_level = _spin(-1, 20, -1, "With summaries of summaries: the highest level whose parts get "
                               "reconstruction questions (0: the scenes only)", EVERY_LEVEL)
        self.questions_button = QPushButton("Build questions")
        self.questions_button.clicked.connect(self.questions_requested)
        questions = QFormLayout()
        questions.addRow("Ask after every", self.every)
        questions.addRow("Choices", self.options)
        questions.addRow("Text", self.question_variant)
        questions.addRow("Seed", self.question_seed)
        questions.addRow("Summary levels", self.max_level)

        self.ask_model = QComboBox()
        self.ask_model.setToolTip("The model to ask")
        self.ask_variant = _variants()
        self.context_words = _spin(0, 2_000_000, 0, "Show at most this many words of the book before each question "
                                   "(cut from the start); 'all that fits' gives a local model what fits its context "
                                   "and an API model everything", WHOLE_TEXT)
        self.context_words.setSingleStep(1000)
        self.ask_button = QPushButton("Ask the questions")
        self.ask_button.clicked.connect(self.ask_requested)
        ask = QFormLayout()
        ask.addRow("Model", self.ask_model)
        ask.addRow("Text", self.ask_variant)
        ask.addRow("Words of book shown", self.context_words)
        self.context_hint = QLabel("")  # what an API model will be shown when no limit is set (the page fills it)
        self.context_hint.setWordWrap(True)
        self.context_hint.setVisible(False)

        layout = QVBoxLayout(self)
        book_row = QFormLayout()
        book_row.addRow("Book", self.book)
        layout.addLayout(book_row)
        layout.addWidget(self.status)
        layout.addWidget(_box("1. Scenes", scenes, self.cut_button))
        layout.addWidget(_box("2. Summaries", summaries, self.import_button, self.summarize_button))
        layout.addWidget(_box("3. Names", names, self.substitute_button))
        layout.addWidget(_box("4. Questions", questions, self.questions_button))
        ask_box = _box("5. Ask a model", ask, self.ask_button)
        ask_box.layout().insertWidget(1, self.context_hint)  # below the settings, full width
        layout.addWidget(ask_box)
        layout.addStretch(1)
        self.buttons = [self.cut_button, self.summarize_button, self.import_button, self.substitute_button,
                        self.questions_button, self.ask_button]

    def chosen_max_level(self) -> int | None:
        """The highest summary level with reconstruction questions; None: every level there is."""
        return None if self.max_level.value() < 0 else self.max_level.value()

    def set_busy(self, busy: bool) -> None:
        for button in self.buttons:
            button.setEnabled(not busy)
