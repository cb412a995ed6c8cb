"""Creating and filling annotation tasks from the Annotate page, as a scholar would: the New task dialog,
passages from books, summaries by a model (local, and a paid API with its cost question and Retry
failed), items from a file, deleting a task, then annotating the new task."""

from __future__ import annotations

import pytest

from tests.fixtures.annotation_data import SECRET_AUTHOR, SECRET_TITLE, add_book, invented_novel, write_csv
from tests.fixtures.annotation_gui import close, open_window, start
from tests.fixtures.fault_proxy import Fault
from ui.annotate.items_dialog import AddItemsDialog
from ui.annotate.task_dialog import NewTaskDialog
from workbench.annotation.items import list_items
from workbench.annotation.tasks import get_task, list_tasks
from workbench.jobs import responses_frame
from workbench.models.catalog import ModelSpec, add_model
from workbench.project import Project

WAIT_MS = 120_000


class Boxes:
    """The message boxes the page would show: errors and questions are recorded; ``answer`` is what
    every question gets."""

    def __init__(self):
        self.errors: list[str] = []
        self.questions: list[str] = []
        self.answer = True

    def ask(self, parent, question):
        self.questions.append(question)
        return self.answer


@pytest.fixture
def boxes(monkeypatch):
    seen = Boxes()
    monkeypatch.setattr("ui.dialogs.show_error", lambda parent, message, details="": seen.errors.append(message))
    monkeypatch.setattr("ui.dialogs.ask", seen.ask)
    return seen


@pytest.fixture
def library(tmp_path):
    """A project with two books (one tagged group=famous) and no tasks yet."""
    path = tmp_path / "study.palimpsest"
    with Project.create(path) as project:
        famous = add_book(project, SECRET_TITLE, SECRET_AUTHOR, invented_novel(1), {"group": "famous"})
        other = add_book(project, "The Lantern Road", "Agnes Merriweather", invented_novel(2), {"group": "obscure"})
    return path, famous, other


def create_through_dialog(qtbot, page, name, kind="narrative-time", **fields) -> NewTaskDialog:
    dialog = page.new_task()
    dialog.name.setText(name)
    dialog.choose_kind(kind)
    for field, value in fields.items():
        widget = getattr(dialog, field)
        widget.setText(value) if isinstance(value, str) else widget.setValue(value)
    dialog.create_button.click()
    assert dialog.message.text() == ""
    qtbot.waitUntil(lambda: not dialog.isVisible())
    return dialog


def wait_idle(qtbot, dialog: AddItemsDialog) -> None:
    qtbot.waitUntil(lambda: dialog.operation is None and dialog.result.text() != "", timeout=WAIT_MS)


def task_rows(page) -> dict[str, list[str]]:
    table = page.tasks_view.table
    return {table.item(r, 0).text(): [table.item(r, c).text() for c in range(table.columnCount())]
            for r in range(table.rowCount())}


# ---------------------------------------------------------------------------------------------- creating
def test_a_task_is_created_through_the_dialog_once_its_settings_pass(qtbot, tmp_path, library, boxes):
    path, _, _ = library
    window = open_window(qtbot, path, tmp_path)
    page = window.show_page("annotate")
    assert page.tabs.currentWidget() is page.tasks_view  # a project without tasks opens where tasks are made
    assert "create one" in page.task_info.text() and "No tasks yet" in page.tasks_view.status.text()

    dialog = page.new_task()
    assert dialog.blinded.isChecked()  # blinded unless the scholar says otherwise
    dialog.create_button.click()
    assert "Give the task a name" in dialog.message.text() and dialog.isVisible()
    dialog.name.setText("judge check")
    dialog.choose_kind("label")
    assert dialog.labels.isVisible()
    dialog.labels.setText("woman, Woman, man")
    dialog.create_button.click()
    assert "appear twice" in dialog.message.text()
    dialog.labels.setText("woman, man, unclear")
    assert "**unclear**" in dialog._shipped_text()  # the shipped label codebook lists the labels
    dialog.codebook_choice.setCurrentIndex(dialog.codebook_choice.findData("own"))
    assert "# judge check" in dialog.codebook.toPlainText()  # one's own version starts from the shipped text
    dialog.codebook.setPlainText("  ")
    dialog.create_button.click()
    assert "codebook is empty" in dialog.message.text()
    dialog.codebook.setPlainText("# Our rules\n\nPick the label the text supports.")
    dialog.per_annotator.setValue(10)
    dialog.overlap.setValue(30)
    dialog.seed.setValue(7)
    assert "3 shared by everyone" in dialog.overlap_hint.text()
    assert list_tasks(page.project) == []  # nothing was created by the refused attempts
    dialog.create_button.click()
    qtbot.waitUntil(lambda: not dialog.isVisible())

    task = get_task(page.project, "judge check")
    assert (task.kind, task.labels, task.blinded) == ("label", ["woman", "man", "unclear"], True)
    assert (task.per_annotator, task.overlap, task.seed) == (10, 0.3, 7)
    assert task.codebook.startswith("# Our rules")
    assert page.task_combo.currentText() == "judge check"
    row = task_rows(page)["judge check"]
    assert row[1] == "labels (woman, man, unclear)" and row[2] == "yes" and row[3] == "0" and row[5] == "30%"
    assert "Add items" in page.tasks_view.status.text()
    qtbot.waitUntil(lambda: not page.findChildren(NewTaskDialog))  # nothing of the dialog stays behind
    close(qtbot, window, WAIT_MS)
    assert boxes.errors == []


# ---------------------------------------------------------------------------------------------- narrative time
def test_passages_from_a_book_then_a_file_then_a_session_on_the_new_task(qtbot, tmp_path, library, boxes):
    path, famous, other = library
    window = open_window(qtbot, path, tmp_path)
    page = window.show_page("annotate")
    create_through_dialog(qtbot, page, "nt", seed=3)

    dialog = page.add_items()
    assert dialog.isModal() and dialog.seed.value() == 3  # the task's seed unless changed
    dialog.books.tag_box.setText("group=famous")
    dialog.books.tick_by_tag()
    assert dialog.books.checked_book_ids() == [famous]
    dialog.per_book.setValue(3)
    dialog.sample_button.click()
    assert not dialog.sample_button.isEnabled() and dialog.progress_row is not None  # progress with Cancel
    wait_idle(qtbot, dialog)
    assert dialog.result.text() == "Added 3 passages from 1 book."
    assert dialog.progress_seen and dialog.progress_seen[-1].done == dialog.progress_seen[-1].total == 1
    items = list_items(page.project, "nt")
    assert len(items) == 3 and {i.book_id for i in items} == {famous} and all(i.origin == "passage" for i in items)
    assert "3 items so far" in dialog.have.text()
    assert task_rows(page)["nt"][3] == "3" and "3 items" in page.task_info.text()

    dialog.sample_button.click()  # the same settings again: nothing twice
    wait_idle(qtbot, dialog)
    assert dialog.result.text().startswith("Added 0 passages") and len(list_items(page.project, "nt")) == 3

    bad = write_csv(tmp_path / "items.csv", ["item_id", "text", "gold"],
                    [["a1", "She waited by the door.", "2 hours"], ["a2", "", ""], ["a3", "He ran home.", "a while"]])
    dialog.import_file(bad)
    qtbot.waitUntil(lambda: dialog.operation is None and bool(boxes.errors), timeout=WAIT_MS)
    assert "line 3" in boxes.errors[0] and "text of item a2 is empty" in boxes.errors[0]
    assert "line 4" in boxes.errors[0] and "nothing was changed" in boxes.errors[0]
    assert len(list_items(page.project, "nt")) == 3  # nothing imported
    good = write_csv(tmp_path / "good.tsv", ["item_id", "text", "gold"],
                     [["a1", "She waited by the door.", "2 hours"], ["a2", "He ran home.", "10 min"]], delimiter="\t")
    dialog.import_file(good)
    wait_idle(qtbot, dialog)
    assert dialog.result.text() == "Imported 2 items from good.tsv."
    assert {i.item_key: i.gold for i in list_items(page.project, "nt") if i.origin == "imported"} == {"a1": "120", "a2": "10"}
    dialog.reject()
    qtbot.waitUntil(lambda: not page.findChildren(AddItemsDialog))  # the book list is gone with it
    assert task_rows(page)["nt"][3] == "5"

    page = start(qtbot, window, "nt", "Ann")
    assert page.session.progress.total == 5
    assert not page.tasks_view.add_button.isEnabled() and not page.tasks_view.new_button.isEnabled()
    assert not window.recent_menu.menuAction().isVisible()  # the task is blinded
    field = page.session_view.bodies["narrative-time"].field
    qtbot.keyClicks(field, "2 hours")
    page.session_view.trigger("answer")
    assert page.session_view.progress_label.text() == "1 / 5"
    page.leave_session()
    assert task_rows(page)["nt"][7] == "Ann 1 of 5"
    close(qtbot, window, WAIT_MS)
    assert boxes.errors[1:] == []


def test_deleting_a_task_asks_first(qtbot, tmp_path, library, boxes):
    path, famous, _ = library
    window = open_window(qtbot, path, tmp_path)
    page = window.show_page("annotate")
    create_through_dialog(qtbot, page, "keep me")
    create_through_dialog(qtbot, page, "pilot")
    boxes.answer = False
    assert not page.delete_chosen_task()
    assert "Delete the task 'pilot'? Its 0 items are deleted" in boxes.questions[0]
    assert [t.name for t in list_tasks(page.project)] == ["keep me", "pilot"]
    boxes.answer = True
    page.tasks_view.delete_button.click()
    assert [t.name for t in list_tasks(page.project)] == ["keep me"]
    assert list(task_rows(page)) == ["keep me"] and page.task_combo.currentText() == "keep me"
    assert page.tasks_view.status.text() == "Deleted the task 'pilot'."
    close(qtbot, window, WAIT_MS)


# ---------------------------------------------------------------------------------------------- summary validity
@pytest.fixture
def scene_library(tmp_path):
    path = tmp_path / "scenes.palimpsest"
    with Project.create(path) as project:
        book = add_book(project, "Scenes", "An Author", invented_novel(21, chapters=2, paragraphs=8))
    return path, book


def summary_dialog(qtbot, window, book: int, model: str, *, per_book: int, attempts: int = 3) -> AddItemsDialog:
    page = window.show_page("annotate")
    create_through_dialog(qtbot, page, "sv", "summary-validity")
    dialog = page.add_items()
    dialog.books.set_checked([book])
    dialog.model.setCurrentIndex(dialog.model.findData(model))
    dialog.per_book.setValue(per_book)
    dialog.chars.setValue(200)  # tiny models read at most 512 tokens
    dialog.max_tokens.setValue(16)
    dialog.attempts.setValue(attempts)
    return dialog


def test_summaries_by_a_local_model_made_from_the_page(qtbot, tmp_path, scene_library, tiny_causal_dir, boxes):
    path, book = scene_library
    with Project.open(path) as project:
        add_model(project, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    window = open_window(qtbot, path, tmp_path)
    dialog = summary_dialog(qtbot, window, book, "tiny-base", per_book=2)
    assert "local model" in dialog.cost.text() and not dialog.retry_button.isEnabled()
    dialog.summarize_button.click()
    wait_idle(qtbot, dialog)
    assert boxes.questions == []  # a local model costs nothing: no question

    project = dialog.project
    runs = project.db.execute("SELECT id, kind, status, model_id FROM runs ORDER BY id").fetchall()
    assert [(kind, status) for _, kind, status, _ in runs] == [("summary", "done"), ("summary-distort", "done")]
    assert all(model_id is not None for *_, model_id in runs)
    assert dialog.progress_seen and any(p.total == 2 for p in dialog.progress_seen)
    assert dialog.result.text() == ("2 scenes: 2 summaries ok, 0 failed; 2 changed versions ok, 0 failed. "
                                    "2 items ready to annotate.")
    assert (dialog.last_report.summaries_ok, dialog.last_report.summaries_failed) == (2, 0)
    assert "tiny-base: 2 scenes, 2 ready" in dialog.models_status.text()
    assert "2 items so far (2 ready to annotate)" in dialog.have.text()
    dialog.reject()
    page = start(qtbot, window, "sv", "Ann")
    assert page.session.progress.total == 2
    close(qtbot, window, WAIT_MS)
    assert boxes.errors == []


def test_a_paid_api_asks_with_a_cost_estimate_and_failed_summaries_are_retried(qtbot, tmp_path, scene_library,
                                                                              fault_proxy, boxes):
    path, book = scene_library
    with Project.open(path) as project:
        add_model(project, ModelSpec(label="server", backend="openai", ref="tiny", base_url=fault_proxy.base_url,
                                     params={"chat": False, "max_retries": 0, "concurrency": 1}))
    window = open_window(qtbot, path, tmp_path)
    dialog = summary_dialog(qtbot, window, book, "server", per_book=1, attempts=1)
    assert "(API server, paid)" in dialog.model.currentText() and "paid API" in dialog.cost.text()

    boxes.answer = False  # the estimate is shown, nothing is sent
    dialog.summarize_button.click()
    wait_idle(qtbot, dialog)
    assert boxes.questions[0].startswith("Summaries by server for 'sv'.")  # the one wording of planned work
    assert "server is a paid API: 2 requests" in boxes.questions[0] and "up to 1 times in all" in boxes.questions[0]
    assert dialog.result.text().startswith("Nothing was started. server is a paid API: 2 requests")
    assert fault_proxy.posts() == [] and dialog.project.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0

    boxes.answer = True
    fault_proxy.script(Fault.server_error(500))  # the one summary fails (one attempt allowed)
    dialog.summarize_button.click()
    qtbot.waitUntil(lambda: dialog.last_report is not None and dialog.operation is None, timeout=WAIT_MS)
    report = dialog.last_report
    assert (report.summaries_ok, report.summaries_failed, report.ready) == (0, 1, 0)
    assert "0 summaries ok, 1 failed" in dialog.result.text() and "Retry failed" in dialog.result.text()
    assert "1 summaries and 0 changed versions failed" in dialog.models_status.text()
    assert dialog.retry_button.isEnabled()

    dialog.last_report = None
    dialog.attempts.setValue(3)
    dialog.retry_button.click()
    qtbot.waitUntil(lambda: len(boxes.questions) == 3, timeout=WAIT_MS)  # once its cost is estimated
    assert boxes.questions[-1].startswith("Asking server again for the failed")
    assert "server is a paid API: 1 requests" in boxes.questions[-1], boxes.questions[-1]
    qtbot.waitUntil(lambda: dialog.last_report is not None and dialog.operation is None, timeout=WAIT_MS)
    report = dialog.last_report
    # the failed summary was asked again, then its changed version was made (it had never been asked)
    assert (report.summaries_ok, report.summaries_failed, report.distorted_ok, report.ready) == (1, 0, 1, 1)
    assert dialog.result.text() == ("1 scenes: 1 summaries ok, 0 failed; 1 changed versions ok, 0 failed. "
                                    "1 item ready to annotate.")
    assert responses_frame(dialog.project, report.summary_run)["status"].tolist() == ["ok"]
    assert not dialog.retry_button.isEnabled()
    close(qtbot, window, WAIT_MS)
    assert boxes.errors == []


def test_cancelling_summaries_keeps_what_was_done(qtbot, tmp_path, scene_library, fault_proxy, boxes):
    path, book = scene_library
    with Project.open(path) as project:
        add_model(project, ModelSpec(label="server", backend="openai", ref="tiny", base_url=fault_proxy.base_url,
                                     params={"chat": False, "max_retries": 0, "concurrency": 1}))
    window = open_window(qtbot, path, tmp_path)
    dialog = summary_dialog(qtbot, window, book, "server", per_book=3, attempts=1)
    fault_proxy.always(Fault.slow(0.3))
    dialog.summarize_button.click()
    # the estimate comes first; the run starts once it is answered
    qtbot.waitUntil(lambda: dialog.operation is not None and dialog.operation.label == "Summaries by server for 'sv'"
                    and bool(dialog.progress_seen), timeout=WAIT_MS)
    dialog.progress_row.cancel_button.click()
    qtbot.waitUntil(lambda: dialog.last_report is not None and dialog.operation is None, timeout=WAIT_MS)
    assert "Stopped at your request" in dialog.result.text()
    assert dialog.project.db.execute("SELECT status FROM runs WHERE kind = 'summary'").fetchone()[0] == "cancelled"
    fault_proxy.always(None)
    close(qtbot, window, WAIT_MS)


def test_save_as_with_a_task_chosen_moves_the_page_to_the_copy(qtbot, tmp_path, library, boxes, monkeypatch):
    path, _, _ = library
    window = open_window(qtbot, path, tmp_path)
    page = window.show_page("annotate")
    create_through_dialog(qtbot, page, "pilot")
    target = tmp_path / "copy.palimpsest"
    monkeypatch.setattr("ui.main_window.QFileDialog.getSaveFileName", lambda *a, **k: (str(target), ""))
    window.save_as_dialog()
    assert page.project is window.project and page.project.path == target
    assert page.task_combo.currentText() == "pilot" and list(task_rows(page)) == ["pilot"]
    close(qtbot, window, WAIT_MS)
    assert boxes.errors == []
