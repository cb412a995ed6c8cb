"""The session screen: one item at a time, answered with the keyboard, bound to a core ``Session``.

All logic (saving, order, timing, blinding) is in ``workbench.annotation.session``; this view shows
``session.current`` and turns keys into calls.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QButtonGroup,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ui.annotate.fields import PassThroughLineEdit, paragraphs_html, reading_browser
from ui.annotate.keymap import bindings_for, keymap_text
from workbench.annotation.durations import UNITS, parse_duration
from workbench.annotation.session import CONFIDENCE_LEVELS, Session
from workbench.annotation.tasks import LABEL, NAME_CLOZE, NARRATIVE_TIME, SUMMARY_VALIDITY
from workbench.errors import UserError

GLOBAL_KEYS = ["Return", "Enter", "Ctrl+Z", "Ctrl+S", "Ctrl+F", "Ctrl+D", "F1", "Escape"]
SELECTED_STYLE = "QFrame#option[selected=\"true\"] { border: 3px solid #2f6fb3; background: #eef4fb; }"


class NarrativeTimeBody(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.passage = reading_browser("passage")
        self.field = PassThroughLineEdit(GLOBAL_KEYS)
        self.field.setObjectName("duration")
        self.field.setAccessibleName("Time that passes")
        self.field.setPlaceholderText("e.g. 45 min, 2 hours, 3d, 1.5 weeks")
        self.unit = QComboBox()
        self.unit.setObjectName("unit")
        self.unit.setAccessibleName("Unit for a bare number")
        self.unit.addItems(list(UNITS))
        self.unit.setToolTip("Used when you type a number without a unit")
        row = QHBoxLayout()
        row.addWidget(QLabel("How much time passes in this passage?"))
        row.addWidget(self.field, 1)
        row.addWidget(self.unit)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.passage, 1)
        layout.addLayout(row)

    def show_item(self, view) -> None:
        self.passage.setHtml(paragraphs_html(view.text))
        self.field.clear()
        self.field.setFocus()

    def answer_args(self) -> tuple[object, dict]:
        text = self.field.text()
        parse_duration(text, self.unit.currentText())  # refuse bad input before anything is saved
        return text, {"default_unit": self.unit.currentText()}


class NameClozeBody(QWidget):
    """A passage with one name hidden as [MASK] (shown highlighted) and a field for the name."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.passage = reading_browser("passage")
        self.field = PassThroughLineEdit(GLOBAL_KEYS)
        self.field.setObjectName("name")
        self.field.setAccessibleName("The hidden name")
        self.field.setPlaceholderText("the name hidden by [MASK], e.g. Emma")
        self.dont_know = QPushButton("Don't know (Ctrl+D)")
        self.dont_know.setObjectName("dont-know")
        self.dont_know.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        row = QHBoxLayout()
        row.addWidget(QLabel("Which name is hidden?"))
        row.addWidget(self.field, 1)
        row.addWidget(self.dont_know)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.passage, 1)
        layout.addLayout(row)

    def show_item(self, view) -> None:
        shown = paragraphs_html(view.text).replace(
            "[MASK]", '<span style="background:#ffe9a8; font-weight:bold">&nbsp;[MASK]&nbsp;</span>')
        self.passage.setHtml(shown)
        self.field.clear()
        self.field.setFocus()

    def answer_args(self) -> tuple[object, dict]:
        if not self.field.text().strip():
            raise UserError("Type the name you think is hidden, or press Ctrl+D for don't know.")
        return self.field.text(), {}


class OptionPanel(QFrame):
    clicked = Signal()

    def __init__(self, number: int, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("option")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title = QLabel(f"<b>Summary {number}</b>  (press {number})")
        self.body = reading_browser(f"summary-{number}")
        self.body.setAccessibleName(f"Summary {number}")
        self.body.setStyleSheet("QTextBrowser { font-size: 12pt; border: none; background: transparent; }")
        self.body.setMinimumHeight(120)
        self.body.viewport().installEventFilter(self)  # a click anywhere on the summary chooses it
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.body, 1)
        self.setProperty("selected", False)

    def set_text(self, text: str) -> None:
        self.body.setPlainText(text)

    def text(self) -> str:
        return self.body.toPlainText()

    def set_selected(self, selected: bool) -> None:
        self.setProperty("selected", selected)
        self.style().unpolish(self)
        self.style().polish(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.MouseButtonPress:
            self.clicked.emit()
        return False

    def mousePressEvent(self, event) -> None:
        self.clicked.emit()
        super().mousePressEvent(event)


class SummaryBody(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setStyleSheet(SELECTED_STYLE)
        self.scene = reading_browser("scene")
        self.options = [OptionPanel(1), OptionPanel(2)]
        self.chosen: int | None = None
        for number, panel in enumerate(self.options, start=1):
            panel.clicked.connect(lambda n=number: self.choose(n))
        self.confidence = QComboBox()
        self.confidence.setObjectName("confidence")
        self.confidence.setAccessibleName("Confidence")
        self.confidence.addItem("Confidence: not given", None)
        for level, name in CONFIDENCE_LEVELS.items():
            self.confidence.addItem(f"Confidence: {name}", level)
        self.confidence.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        options = QHBoxLayout()
        for panel in self.options:
            options.addWidget(panel, 1)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(QLabel("Which summary is true to the scene? (The grey text is context only.)"))
        lower_layout.addLayout(options, 1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.confidence)
        lower_layout.addLayout(row)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.scene)
        splitter.addWidget(lower)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([440, 300])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

    def show_item(self, view) -> None:
        self.scene.setHtml(paragraphs_html(view.context_before, muted=True) + paragraphs_html(view.text)
                           + paragraphs_html(view.context_after, muted=True))
        for panel, text in zip(self.options, view.options):
            panel.set_text(text)
        self.confidence.setCurrentIndex(0)
        self.choose(None)

    def choose(self, number: int | None) -> None:
        self.chosen = number
        for k, panel in enumerate(self.options, start=1):
            panel.set_selected(k == number)

    def answer_args(self) -> tuple[object, dict]:
        if self.chosen is None:
            raise UserError("Choose summary 1 or 2 first (press 1 or 2), then Enter.")
        return self.chosen, {"confidence": self.confidence.currentData()}


class LabelBody(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.text = reading_browser("text")
        self.buttons_row = QHBoxLayout()
        self.group = QButtonGroup(self)
        self.group.setExclusive(True)
        self.chosen: int | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.text, 1)
        layout.addWidget(QLabel("Which label fits this text?"))
        layout.addLayout(self.buttons_row)

    def show_item(self, view) -> None:
        self.text.setHtml(paragraphs_html(view.text))
        if [b.property("label") for b in self.group.buttons()] != list(view.options):
            for button in self.group.buttons():
                self.group.removeButton(button)
                button.deleteLater()
            for number, label in enumerate(view.options, start=1):
                button = QPushButton(f"{number}  {label}" if number <= 9 else label)
                button.setCheckable(True)
                button.setProperty("label", label)
                button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
                button.clicked.connect(lambda _=False, n=number: self.choose(n))
                self.group.addButton(button, number)
                self.buttons_row.addWidget(button)
        self.choose(None)

    def choose(self, number: int | None) -> None:
        if number is not None and self.group.button(number) is None:
            return
        self.chosen = number
        # An exclusive group refuses to uncheck its checked button: the label answered on the previous item
        # would stay pressed on the next one (a cue, and not what Enter saves). Clear it with exclusivity off.
        self.group.setExclusive(False)
        for button in self.group.buttons():
            button.setChecked(self.group.id(button) == number)
        self.group.setExclusive(True)

    def answer_args(self) -> tuple[object, dict]:
        if self.chosen is None:
            raise UserError("Choose a label first (press its number), then Enter.")
        return self.group.button(self.chosen).property("label"), {}


class SessionView(QWidget):
    """Shows one session; emits ``finished`` when no item is left and ``left`` when the annotator leaves."""

    finished = Signal()
    left = Signal()
    changed = Signal()  # an answer, skip, undo or flag was saved
    codebook_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.session: Session | None = None
        self.heading = QLabel()
        self.heading.setObjectName("item-heading")
        self.heading.setStyleSheet("font-size: 14pt; font-weight: bold;")
        self.details = QLabel()
        self.details.setObjectName("item-details")
        self.details.setStyleSheet("color: #555;")
        self.progress_label = QLabel()
        self.progress_label.setObjectName("progress")
        self.progress_label.setStyleSheet("font-size: 14pt;")
        self.progress_bar = QProgressBar()
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setMaximumWidth(220)
        self.flag_note = QLabel()
        self.flag_note.setObjectName("flag-note")
        self.flag_note.setStyleSheet("color: #a05a00;")
        header = QHBoxLayout()
        header.addWidget(self.heading)
        header.addWidget(self.details)
        header.addStretch(1)
        header.addWidget(self.flag_note)
        header.addWidget(self.progress_bar)
        header.addWidget(self.progress_label)

        self.bodies = {NARRATIVE_TIME: NarrativeTimeBody(), SUMMARY_VALIDITY: SummaryBody(), LABEL: LabelBody(),
                       NAME_CLOZE: NameClozeBody()}
        self.bodies[NAME_CLOZE].dont_know.clicked.connect(lambda: self.trigger("dont-know"))
        self.stack = QStackedWidget()
        for body in self.bodies.values():
            self.stack.addWidget(body)

        self.message = QLabel()
        self.message.setObjectName("message")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b00020;")
        self.flag_bar = QWidget()
        self.flag_field = PassThroughLineEdit(GLOBAL_KEYS)
        self.flag_field.setObjectName("flag-comment")
        self.flag_field.setAccessibleName("Why flag this item")
        self.flag_field.setPlaceholderText("Why flag this item? (Enter saves, Esc cancels)")
        flag_layout = QHBoxLayout(self.flag_bar)
        flag_layout.setContentsMargins(0, 0, 0, 0)
        flag_layout.addWidget(QLabel("Flag:"))
        flag_layout.addWidget(self.flag_field, 1)
        self.flag_bar.hide()

        self.answer_button = QPushButton("Answer and next (Enter)")
        self.answer_button.setObjectName("answer")
        self.answer_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.answer_button.clicked.connect(lambda: self.trigger("answer"))
        buttons = QHBoxLayout()
        for text, action in (("Undo (Ctrl+Z)", "undo"), ("Skip (Ctrl+S)", "skip"), ("Flag… (Ctrl+F)", "flag"),
                             ("Codebook (F1)", "codebook"), ("Leave (Esc)", "escape")):
            button = QPushButton(text)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.clicked.connect(lambda _=False, a=action: self.trigger(a))
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.answer_button)
        self.keys_label = QLabel()
        self.keys_label.setObjectName("keymap")
        self.keys_label.setWordWrap(True)
        self.keys_label.setStyleSheet("color: #666;")

        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.message)
        layout.addWidget(self.flag_bar)
        layout.addLayout(buttons)
        layout.addWidget(self.keys_label)
        self._shortcuts: list[QShortcut] = []
        self._activity = _ActivityFilter(self)

    # ------------------------------------------------------------------ binding
    def start(self, session: Session) -> None:
        self.session = session
        kind = session.task.kind
        self.stack.setCurrentWidget(self.bodies[kind])
        for shortcut in self._shortcuts:
            shortcut.setParent(None)
            shortcut.deleteLater()
        self._shortcuts = []
        for binding in bindings_for(kind):
            shortcut = QShortcut(QKeySequence(binding.key), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(lambda a=binding.action: self.trigger(a))
            self._shortcuts.append(shortcut)
        self.keys_label.setText(keymap_text(kind, len(session.task.choices)))
        QApplication.instance().installEventFilter(self._activity)
        self.show_current()

    def stop(self) -> None:
        QApplication.instance().removeEventFilter(self._activity)
        self.session = None

    @property
    def body(self):
        return self.stack.currentWidget()

    def show_current(self) -> None:
        session = self.session
        self.message.clear()
        self._close_flag_bar()
        if session is None:
            return
        progress = session.progress
        self.progress_label.setText(progress.text)
        self.progress_bar.setMaximum(max(progress.total, 1))
        self.progress_bar.setValue(progress.answered)
        view = session.current
        if view is None:
            self.finished.emit()
            return
        self.heading.setText(view.heading)
        self.details.setText("  ·  ".join(f"{k}: {v}" for k, v in view.details.items()))
        self.flag_note.setText(f"Flagged: {view.comment}" if view.flagged else "")
        self.body.show_item(view)
        if not isinstance(self.body, (NarrativeTimeBody, NameClozeBody)):
            self.body.setFocus()
        self._settle()

    def _settle(self) -> None:
        """Lay the screen out for the new texts now, not on a later turn of the event loop: the heading was laid
        out while empty (the first item, or a screen just switched to), so until then "Item n of N" and the
        progress were drawn squeezed to a few pixels (and a picture of the window taken then showed them so)."""
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)

    # ------------------------------------------------------------------ actions
    def trigger(self, action: str) -> None:
        if self.session is None:
            return
        handlers: dict[str, Callable[[], None]] = {
            "answer": self._answer, "undo": self._undo, "skip": self._skip, "flag": self._flag,
            "codebook": self.codebook_requested.emit, "escape": self._escape, "dont-know": self._dont_know,
        }
        if action.startswith("choose-"):
            if self.flag_bar.isVisible():
                return
            self.body.choose(int(action.split("-")[1]))
            return
        try:
            handlers[action]()
        except UserError as exc:
            self.message.setText(str(exc))

    def _answer(self) -> None:
        if self.flag_bar.isVisible():
            self._save_flag()
            return
        value, options = self.body.answer_args()
        self.session.answer(value, **options)
        self.changed.emit()
        self.show_current()

    def _dont_know(self) -> None:
        if self.flag_bar.isVisible():
            return
        self.session.dont_know()
        self.changed.emit()
        self.show_current()

    def _undo(self) -> None:
        if not self.session.undo():
            self.message.setText("Nothing to undo yet.")
            return
        self.changed.emit()
        self.show_current()

    def _skip(self) -> None:
        self.session.skip()
        self.changed.emit()
        self.show_current()

    def _flag(self) -> None:
        self.flag_bar.show()
        view = self.session.current
        self.flag_field.setText(view.comment if view else "")
        self.flag_field.setFocus()

    def _save_flag(self) -> None:
        self.session.flag(self.flag_field.text())
        self.changed.emit()
        self.show_current()

    def _close_flag_bar(self) -> None:
        if self.flag_bar.isVisible():
            self.flag_bar.hide()
            if isinstance(self.body, (NarrativeTimeBody, NameClozeBody)):
                self.body.field.setFocus()

    def _escape(self) -> None:
        if self.flag_bar.isVisible():
            self._close_flag_bar()
            return
        self.left.emit()


class _ActivityFilter(QObject):
    """Tells the session about key presses and clicks inside the view, so idle time can be capped."""

    def __init__(self, view: SessionView):
        super().__init__(view)
        self.view = view

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.KeyPress, QEvent.Type.MouseButtonPress, QEvent.Type.Wheel):
            session = self.view.session
            if session is not None and isinstance(obj, QWidget) and (obj is self.view or self.view.isAncestorOf(obj)):
                session.touch()
        return False
