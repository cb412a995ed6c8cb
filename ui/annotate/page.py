"""The Annotate page: pick a task and an annotator, annotate with the keyboard, see agreement; and on the
Tasks tab, create tasks, add items to them (passages, model-made summaries, files) and delete them.

Blinded tasks show no book, author, model, condition or group anywhere on this page, and while a blinded
session is on screen the window shows no project or file name (``blinded``; see ``Page.blinded``). Every
decision about what is shown is made in ``workbench.annotation`` (``blinding``, ``session``); this page
only displays it. The dialogs that list books and models exist only while they are open, and are out of
reach during a session.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ui import dialogs
from ui.annotate.codebook import CodebookDialog
from ui.annotate.items_dialog import AddItemsDialog
from ui.annotate.results_view import ResultsView
from ui.annotate.session_view import SessionView
from ui.annotate.task_dialog import NewTaskDialog
from ui.annotate.tasks_view import TasksView
from ui.widgets.page import Page
from workbench.annotation.annotators import add_annotator, list_annotators
from workbench.annotation.blinding import window_title
from workbench.annotation.items import item_count
from workbench.annotation.session import Session
from workbench.annotation.tasks import Task, delete_task, get_task, list_tasks
from workbench.annotation.views import KIND_NAMES, AnnotationChoices, delete_question, progress_text, tasks_table
from workbench.errors import UserError

HELD_NOTE = {
    0: "",
    1: "A message from other work is waiting. It will be shown when you pause or finish the session "
       "(Leave, or Back to the start).",
    2: "{count} messages from other work are waiting. They will be shown when you pause or finish the session "
       "(Leave, or Back to the start).",
}
RESULTS_CLOSED = ("The results (everyone's answers and the agreement) are closed while you annotate, so that "
                  "each judgement stays your own. Leave the session to see them.")


class AnnotatePage(Page):
    def __init__(self, ops, parent=None):
        super().__init__(ops, parent)
        self.task: Task | None = None
        self.session: Session | None = None
        self.choices = AnnotationChoices()  # the task and the annotator chosen, kept as the widgets change
        self.codebook = CodebookDialog(self)

        self.task_combo = QComboBox()
        self.task_combo.setObjectName("task")
        self.task_combo.setAccessibleName("Annotation task")
        self.task_combo.setMinimumWidth(260)
        self.task_combo.currentIndexChanged.connect(self._on_task_chosen)
        self.task_info = QLabel()
        self.task_info.setObjectName("task-info")
        self.codebook_button = QPushButton("Codebook (F1)")
        self.codebook_button.clicked.connect(self.toggle_codebook)
        top = QHBoxLayout()
        top.addWidget(QLabel("Task:"))
        top.addWidget(self.task_combo)
        top.addWidget(self.task_info, 1)
        top.addWidget(self.codebook_button)

        # --- start screen: who is annotating
        self.annotator_combo = QComboBox()
        self.annotator_combo.setObjectName("annotator")
        self.annotator_combo.setAccessibleName("Annotator")
        self.annotator_combo.setMinimumWidth(220)
        self.annotator_combo.currentTextChanged.connect(self._annotator_chosen)
        self.new_annotator = QLineEdit()
        self.new_annotator.setObjectName("new-annotator")
        self.new_annotator.setPlaceholderText("or type a new name")
        self.new_annotator.setToolTip("A new annotator: type the name, then press Add or Start annotating")
        self.new_annotator.setMinimumWidth(200)
        self.new_annotator.returnPressed.connect(self.add_annotator)
        self.add_button = QPushButton("Add")
        self.add_button.clicked.connect(self.add_annotator)
        self.start_button = QPushButton("Start annotating")
        self.start_button.setObjectName("start")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self.start_session)
        self.start_message = QLabel()
        self.start_message.setObjectName("progress-by-annotator")
        self.start_message.setWordWrap(True)
        self.start_message.setTextFormat(Qt.TextFormat.PlainText)
        who = QHBoxLayout()
        who.addWidget(QLabel("Annotator:"))
        who.addWidget(self.annotator_combo)
        who.addWidget(self.new_annotator)
        who.addWidget(self.add_button)
        who.addStretch(1)
        start = QWidget()
        start_layout = QVBoxLayout(start)
        intro = QLabel("Choose your name (or add it), then start. You get your own order of items; every answer "
                       "is saved at once, and you can stop at any time and come back to the same place. "
                       "The codebook is one key away (F1).")
        intro.setWordWrap(True)
        start_layout.addWidget(intro)
        start_layout.addLayout(who)
        start_layout.addWidget(self.start_button, 0, Qt.AlignmentFlag.AlignLeft)
        start_layout.addWidget(self.start_message)
        start_layout.addStretch(1)

        # --- session and finishing screens
        self.session_view = SessionView()
        self.session_view.finished.connect(self._show_finished)
        self.session_view.left.connect(self.leave_session)
        self.session_view.codebook_requested.connect(self.toggle_codebook)
        self.finish_label = QLabel()
        self.finish_label.setObjectName("finished")
        self.finish_label.setStyleSheet("font-size: 14pt;")
        self.finish_label.setWordWrap(True)
        self.revisit_button = QPushButton("Go back to the skipped items")
        self.revisit_button.clicked.connect(self.revisit_skipped)
        done_button = QPushButton("Back to the start")
        done_button.clicked.connect(self.leave_session)
        finish = QWidget()
        finish_layout = QVBoxLayout(finish)
        finish_layout.addWidget(self.finish_label)
        buttons = QHBoxLayout()
        buttons.addWidget(self.revisit_button)
        buttons.addWidget(done_button)
        buttons.addStretch(1)
        finish_layout.addLayout(buttons)
        finish_layout.addStretch(1)

        self.screens = QStackedWidget()
        self.start_screen, self.finish_screen = start, finish
        for screen in (start, self.session_view, finish):
            self.screens.addWidget(screen)

        self.tasks_view = TasksView()
        self.tasks_view.task_chosen.connect(self.choose_task)
        self.tasks_view.new_requested.connect(self.new_task)
        self.tasks_view.add_items_requested.connect(self.add_items)
        self.tasks_view.delete_requested.connect(self.delete_chosen_task)

        self.results = ResultsView(ops)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.screens, "Annotate")
        self.tabs.addTab(self.tasks_view, "Tasks and items")
        self.tabs.addTab(self.results, "Results")
        self.tabs.currentChanged.connect(lambda _: self.results.refresh() if self.tabs.currentWidget() is self.results else None)

        # messages from other work wait while a blinded session is on screen (``ui.dialogs.MessageGate``)
        self.held_note = QLabel()
        self.held_note.setObjectName("messages-waiting")
        self.held_note.setWordWrap(True)
        self.held_note.setStyleSheet("background: #fdf6e3; border: 1px solid #e0c98a; padding: 6px;")
        self.held_note.hide()

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.held_note)
        layout.addWidget(self.tabs, 1)
        self._update_enabled()

    # ------------------------------------------------------------------ page interface
    def set_project(self, project) -> None:
        self.project = None  # the old one may be closed already (save as): nothing reads from it any more
        self.leave_session()
        super().set_project(project)
        if project is not None and self.task_combo.count() == 0:
            self.tabs.setCurrentWidget(self.tasks_view)  # a new study starts by creating a task

    def refresh(self) -> None:
        chosen = self.task.id if self.task is not None else None
        self.task_combo.blockSignals(True)
        self.task_combo.clear()
        if self.project is not None:
            for task in list_tasks(self.project):
                self.task_combo.addItem(task.name, task.id)
        index = self.task_combo.findData(chosen)
        self.task_combo.setCurrentIndex(index if index >= 0 else 0 if self.task_combo.count() else -1)
        self.task_combo.blockSignals(False)
        self._on_task_chosen()

    def _refresh_tasks_view(self) -> None:
        self.tasks_view.load(tasks_table(self.project), self.task.id if self.task is not None else None)

    def on_shown(self) -> None:
        if self.session is None and self.show_due():
            self.refresh()
            if self.tabs.currentWidget() is self.results:
                self.results.refresh()  # answers may have come in (or been imported) meanwhile

    def window_title(self, project_name: str) -> str:
        return window_title(self.task, project_name)

    @property
    def blinded(self) -> bool:
        return self.session is not None and self.session.task.blinded

    def show_messages_waiting(self, count: int) -> None:
        self.held_note.setText(HELD_NOTE[min(count, 2)].format(count=count))
        self.held_note.setVisible(count > 0)

    # ------------------------------------------------------------------ task and annotator
    def _on_task_chosen(self) -> None:
        task_id = self.task_combo.currentData()
        self.task = get_task(self.project, task_id) if self.project is not None and task_id is not None else None
        self.choices = replace(self.choices, task=self.task.id if self.task is not None else None)
        if self.task is None:
            self.task_info.setText("No annotation tasks yet: create one on the Tasks and items tab."
                                   if self.project is not None else "Open a project first.")
        else:
            blind = "blinded" if self.task.blinded else "not blinded"
            items = item_count(self.project, self.task.id)
            labels = f" ({', '.join(self.task.labels)})" if self.task.labels else ""
            self.task_info.setText(f"{KIND_NAMES[self.task.kind]}{labels} · {items} item{'s' * (items != 1)} · {blind}")
        self._refresh_annotators()
        self._show_progress()
        self._refresh_tasks_view()
        self.results.set_task(self.project, self.task, self.choices)
        if self.codebook.isVisible():
            if self.task is not None:
                self.codebook.show_task(self.task)
            else:
                self.codebook.hide()
        self._update_enabled()
        self._refresh_window_title()

    def choose_task(self, task_id: int) -> None:
        index = self.task_combo.findData(task_id)
        if index >= 0 and self.session is None:
            self.task_combo.setCurrentIndex(index)

    def _item_count(self) -> int:
        if self.project is None or self.task is None:
            return 0
        return item_count(self.project, self.task.id)

    def _show_progress(self) -> None:
        if self.project is None or self.task is None:
            self.start_message.clear()
            return
        if self._item_count() == 0:
            self.start_message.setText("This task has no items yet. Add passages, summaries or a file on the "
                                       "Tasks and items tab (Add items…), then come back here to annotate.")
            return
        self.start_message.setText(progress_text(self.project, self.task))

    def _refresh_annotators(self, select: str | None = None) -> None:
        current = select or self.annotator_combo.currentText()
        self.annotator_combo.clear()
        if self.project is not None:
            self.annotator_combo.addItems([a.name for a in list_annotators(self.project)])
        index = self.annotator_combo.findText(current)
        if index >= 0:
            self.annotator_combo.setCurrentIndex(index)
        self._annotator_chosen(self.annotator_combo.currentText())

    def _annotator_chosen(self, name: str) -> None:
        self.choices = replace(self.choices, annotator=name or None)

    def add_annotator(self) -> None:
        if self.project is None:
            return
        try:
            annotator = add_annotator(self.project, self.new_annotator.text())
        except UserError as exc:
            self.show_error(str(exc))
            return
        self.new_annotator.clear()
        self._refresh_annotators(select=annotator.name)

    def _update_enabled(self) -> None:
        ready = self.project is not None and self.task is not None
        in_session = self.session is not None
        for widget in (self.start_button, self.annotator_combo, self.new_annotator, self.add_button):
            widget.setEnabled(ready and not in_session)
        if ready and not in_session and self._item_count() == 0:
            self.start_button.setEnabled(False)
        self.task_combo.setEnabled(self.project is not None and not in_session)
        self.codebook_button.setEnabled(self.task is not None)
        self.tasks_view.set_enabled(self.project is not None and not in_session, self.task is not None)
        # judgements stay independent: nobody sees the others' answers (or the agreement) while annotating
        results = self.tabs.indexOf(self.results)
        self.tabs.setTabEnabled(results, not in_session)
        self.tabs.setTabToolTip(results, RESULTS_CLOSED if in_session else "")

    def _lock_navigation(self, locked: bool) -> None:
        """During a blinded session the other pages (the library shows titles and authors) stay closed."""
        navigation = getattr(self.window(), "nav", None)
        if navigation is not None:
            navigation.setEnabled(not locked)

    def _refresh_window_title(self) -> None:
        window = self.window()
        if hasattr(window, "refresh_title"):
            window.refresh_title()

    # ------------------------------------------------------------------ session
    def start_session(self) -> None:
        if self.project is None or self.task is None:
            return
        if self.new_annotator.text().strip():  # a name typed but not yet added: add it, then start
            self.add_annotator()
            if self.new_annotator.text().strip():
                return  # the name was refused; the message said why
        name = self.choices.annotator or ""
        if not name:
            self.show_error("Type your name in the box beside 'Annotator' (or choose it in the list), then press "
                            "Start annotating.")
            return
        try:
            self.session = Session(self.project, self.task, name)
        except UserError as exc:
            self.show_error(str(exc))
            return
        if not self.session.order:
            self.session = None
            self.show_error(f"Task '{self.task.name}' has no items ready to annotate yet. Add items first.")
            return
        self._update_enabled()
        self._lock_navigation(self.task.blinded)
        self.blinded_changed.emit()
        self.tabs.setCurrentWidget(self.screens)
        self.screens.setCurrentWidget(self.session_view)
        self.session_view.start(self.session)

    def _show_finished(self) -> None:
        progress = self.session.progress
        skipped = f" You skipped {progress.skipped}." if progress.skipped else ""
        flagged = f" {progress.flagged} flagged." if progress.flagged else ""
        self.finish_label.setText(f"All done: {progress.answered} of {progress.total} answered.{skipped}{flagged} "
                                  "Everything is saved. Thank you!")
        self.revisit_button.setVisible(progress.skipped > 0)
        self.screens.setCurrentWidget(self.finish_screen)

    def revisit_skipped(self) -> None:
        if self.session is None:
            return
        self.session.revisit_skipped()
        self.screens.setCurrentWidget(self.session_view)
        self.session_view.show_current()

    def leave_session(self) -> None:
        if self.session is not None and not self.session.project.closed:
            self.session.pause()  # the time spent on an unanswered item counts when the annotator returns
        self.session_view.stop()
        was_blinded = self.blinded
        self.session = None
        self.held_note.hide()  # what waited is shown now
        self._lock_navigation(False)
        if was_blinded:
            self.blinded_changed.emit()
        self.screens.setCurrentWidget(self.start_screen)
        self._update_enabled()
        self._show_progress()
        self._refresh_tasks_view()

    def toggle_codebook(self) -> None:
        if self.task is not None:
            self.codebook.toggle(self.task)

    # ------------------------------------------------------------------ managing tasks
    def new_task(self) -> NewTaskDialog | None:
        """Open the New task dialog (modal, not blocking); the task it creates becomes the chosen one."""
        if self.require_project() is None or self.session is not None:
            return None
        dialog = NewTaskDialog(self.project, self, ops=self.ops)
        dialog.accepted.connect(lambda: self._task_created(dialog.task))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def _task_created(self, task: Task | None) -> None:
        if task is None:
            return
        self.task = task
        self.refresh()
        self.tabs.setCurrentWidget(self.tasks_view)
        self.tasks_view.status.setText(f"Created the task '{task.name}'. Now add items to it: press Add items….")

    def add_items(self) -> AddItemsDialog | None:
        """Open the Add items dialog for the chosen task (modal, not blocking)."""
        if self.require_project() is None or self.task is None or self.session is not None:
            return None
        dialog = AddItemsDialog(self.ops, self.project, self.task, self)
        dialog.items_changed.connect(self._items_changed)
        dialog.open()
        return dialog

    def _items_changed(self) -> None:
        if self.project is not None and self.session is None:
            self.refresh()

    def delete_chosen_task(self) -> bool:
        if self.project is None or self.task is None or self.session is not None:
            return False
        task = self.task
        if not dialogs.ask(self, delete_question(self.project, task)):
            return False
        try:
            delete_task(self.project, task.id)
        except UserError as exc:
            self.show_error(str(exc))
            return False
        self.task = None
        self.refresh()
        self.tasks_view.status.setText(f"Deleted the task '{task.name}'.")
        return True
