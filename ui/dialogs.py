"""Every message box the app shows goes through here, and so do the windows pages open beside the main one.

While a blinded annotation session is on screen, messages from other work wait. A run failing on the Name cloze
page says "Model gpt-4o did not answer", an import names its books: one such box over the session unblinds
the annotator. Each main window keeps a ``MessageGate``; while it holds (``hold_for`` the blinded page), a
message from anywhere but that page or the window itself is kept, the page shows a neutral note that
something waits, and everything kept is shown once the session ends or pauses. Holding, rather than
showing the message with its names removed: the names come from everywhere (model labels, book titles,
file names, tags, a server's error text), no filter can know them all, and a message that waits loses
nothing but a little time.

Questions need an answer at once. The window's own (quit while work runs?) name nothing and are asked.
One from other work (a paid run's cost estimate finishing on the Name cloze page) is answered No, which in
every question here means "do nothing" (do not start, delete or replace), and is kept as a message saying
so. A window a page opens beside the main one (``show_window``: a book's passages) is hidden while the gate
holds and shown again afterwards.

Tests replace ``show_error`` / ``show_info`` / ``ask`` to collect what pages say, or ``message_box`` /
``question_box`` to see what reaches the screen after the gate.
"""

from __future__ import annotations

from dataclasses import dataclass

import shiboken6
from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox, QWidget


@dataclass(frozen=True)
class Message:
    text: str
    details: str = ""
    error: bool = False


def show_error(parent: QWidget | None, message: str, details: str = "") -> None:
    _deliver(parent, Message(message, details, error=True))


def show_info(parent: QWidget | None, message: str) -> None:
    _deliver(parent, Message(message))


def ask(parent: QWidget | None, question: str) -> bool:
    gate = _holding_gate(parent)
    if gate is not None:
        gate.keep(Message("While you annotated, other work asked a question. It was answered No, so nothing was "
                          f"done; do it again if you still want it.\n\n{question}"))
        return False
    return question_box(parent, question)


def show_window(window: QWidget) -> None:
    """Show a window a page opens beside the main one (not modal): now, or once a blinded session ends."""
    gate = _holding_gate(window)
    if gate is not None:
        gate.keep_window(window)
    else:
        window.show()


def message_box(parent: QWidget | None, message: Message) -> None:
    icon = QMessageBox.Icon.Warning if message.error else QMessageBox.Icon.Information
    box = QMessageBox(icon, "Palimpsest", message.text, parent=parent)
    if message.details:
        box.setDetailedText(message.details)
    box.exec()


def question_box(parent: QWidget | None, question: str) -> bool:
    return QMessageBox.question(parent, "Palimpsest", question) == QMessageBox.StandardButton.Yes


def _deliver(parent: QWidget | None, message: Message) -> None:
    gate = _holding_gate(parent)
    if gate is not None:
        gate.keep(message)
    else:
        message_box(parent, message)


def _holding_gate(parent: QWidget | None) -> "MessageGate | None":
    """The gate that keeps a message from ``parent`` back now, if any. A message without a parent may come
    from anything: any window in a blinded session keeps it."""
    if parent is None:
        gates = (getattr(w, "message_gate", None) for w in QApplication.topLevelWidgets())
        return next((g for g in gates if isinstance(g, MessageGate) and g.holding), None)
    widget = parent
    while widget is not None:
        gate = getattr(widget, "message_gate", None)
        if isinstance(gate, MessageGate):
            return gate if gate.holds(parent) else None
        widget = widget.parentWidget()
    return None


def _within(widget: QWidget | None, ancestor: QWidget) -> bool:
    """Whether ``widget`` is ``ancestor`` or lies inside it (a dialog counts as inside its parent)."""
    while widget is not None:
        if widget is ancestor:
            return True
        widget = widget.parentWidget()
    return False


class MessageGate(QObject):
    """What a main window keeps back while a blinded session is on screen (see the module's docstring)."""

    waiting_changed = Signal(int)  # how many messages wait

    def __init__(self, window: QWidget):
        super().__init__(window)
        self._window = window
        self._session: QWidget | None = None
        self._messages: list[Message] = []
        self._windows: list[QWidget] = []

    @property
    def holding(self) -> bool:
        return self._session is not None

    def holds(self, parent: QWidget) -> bool:
        """Whether a message from ``parent`` waits: yes while holding, unless it comes from the session's
        page or from the window itself."""
        if self._session is None or parent is self._window:
            return False
        return not _within(parent, self._session)

    def hold_for(self, session: QWidget | None) -> None:
        """Hold everything but what comes from ``session`` (the blinded page on screen); None: stop holding
        and show what waited, once the event that ended the session is done."""
        was = self._session
        self._session = session
        if session is not None and was is None:
            for window in QApplication.topLevelWidgets():
                if (isinstance(window, QDialog) and window.isVisible() and _within(window, self._window)
                        and self.holds(window)):
                    window.hide()
                    self.keep_window(window)
        elif session is None and was is not None:
            QTimer.singleShot(0, self.release)

    def keep(self, message: Message) -> None:
        self._messages.append(message)
        self.waiting_changed.emit(len(self._messages))

    def keep_window(self, window: QWidget) -> None:
        if window not in self._windows:
            self._windows.append(window)
            window.installEventFilter(self)  # closed meanwhile (its page replaced it): it stays closed

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Close and watched in self._windows:
            self._windows.remove(watched)
            watched.removeEventFilter(self)
        return False

    def release(self) -> None:
        """Show what waited (unless a session is on screen again by now): the windows, then the messages."""
        if self.holding:
            return
        windows, self._windows = self._windows, []
        for window in windows:
            if shiboken6.isValid(window):
                window.removeEventFilter(self)
                window.show()
        while self._messages and not self.holding:
            message = self._messages.pop(0)
            self.waiting_changed.emit(len(self._messages))
            message_box(self._window, message)
