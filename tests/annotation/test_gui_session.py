"""The session screens driven with the keyboard, as an annotator would."""

import pytest
from PySide6.QtCore import Qt

from tests.fixtures.annotation_gui import close, key, open_window, start
from workbench.annotation.answers import annotations_frame
from workbench.annotation.items import NewItem, add_items
from workbench.annotation.tasks import create_task
from workbench.project import Project


@pytest.fixture
def study(tmp_path):
    path = tmp_path / "study.palimpsest"
    project = Project.create(path)
    nt = create_task(project, "nt", "narrative-time", seed=5)
    add_items(project, nt, [NewItem(text=f"Passage {k}: she waited by the door.") for k in range(5)])
    sv = create_task(project, "sv", "summary-validity", seed=5)
    add_items(project, sv, [NewItem(text=f"Scene {k}.", choices={"true": f"TRUE {k}", "distorted": f"FALSE {k}"})
                            for k in range(3)])
    lab = create_task(project, "lab", "label", labels=["woman", "man", "unclear"])
    add_items(project, lab, [NewItem(text=f"Response {k}") for k in range(2)])
    project.close()
    return path


def answers(path, task):
    with Project.open(path) as project:
        return annotations_frame(project, task)


def test_narrative_time_session_with_keys_then_close_reopen_and_resume(qtbot, tmp_path, study, messages):
    window = open_window(qtbot, study, tmp_path)
    page = start(qtbot, window, "nt", "Ann")
    view = page.session_view
    field = view.bodies["narrative-time"].field
    order = page.session.order
    assert view.progress_label.text() == "0 / 5"

    qtbot.keyClicks(field, "2 hours")
    key(qtbot, field, Qt.Key.Key_Return)
    assert view.progress_label.text() == "1 / 5" and field.text() == ""

    qtbot.keyClicks(field, "a while")
    key(qtbot, field, Qt.Key.Key_Return)
    assert "not a duration" in view.message.text() and view.progress_label.text() == "1 / 5"
    field.clear()
    qtbot.keyClicks(field, "3d")
    key(qtbot, field, Qt.Key.Key_Return)
    assert view.progress_label.text() == "2 / 5"

    key(qtbot, field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # undo: back to the second item
    assert view.progress_label.text() == "1 / 5" and page.session.current.item_id == order[1]
    qtbot.keyClicks(field, "4")  # a bare number takes the unit in the list
    view.bodies["narrative-time"].unit.setCurrentText("days")
    key(qtbot, field, Qt.Key.Key_Return)

    key(qtbot, field, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)  # skip the third
    assert page.session.current.item_id == order[3]

    key(qtbot, field, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)  # flag the fourth
    assert view.flag_bar.isVisible()
    qtbot.keyClicks(view.flag_field, "reads like a preface")
    key(qtbot, view.flag_field, Qt.Key.Key_Return)
    assert not view.flag_bar.isVisible() and "preface" in view.flag_note.text()
    assert view.progress_label.text() == "2 / 5"  # flagging does not answer
    qtbot.keyClicks(field, "10 min")
    key(qtbot, field, Qt.Key.Key_Return)

    key(qtbot, field, Qt.Key.Key_F1)
    assert page.codebook.isVisible() and "Narrative time" in page.codebook.browser.toPlainText()
    key(qtbot, field, Qt.Key.Key_F1)
    assert not page.codebook.isVisible()

    key(qtbot, field, Qt.Key.Key_Escape)  # leave: everything is saved already
    assert page.screens.currentWidget() is page.start_screen
    close(qtbot, window)

    saved = answers(study, "nt")
    assert saved.query("status == 'answered'")["minutes"].tolist() == [120.0, 5760.0, 10.0]
    assert saved.query("status == 'skipped'")["item_id"].size == 1
    assert saved.query("flagged")["comment"].tolist() == ["reads like a preface"]
    assert (saved.query("status == 'answered'")["seconds"] >= 0).all()

    window = open_window(qtbot, study, tmp_path)
    page = start(qtbot, window, "nt", "Ann")
    assert page.session.order == order
    assert page.session.current.item_id == order[4]  # the first item neither answered nor skipped
    assert page.session_view.progress_label.text() == "3 / 5"
    field = page.session_view.bodies["narrative-time"].field
    qtbot.keyClicks(field, "1 week")
    key(qtbot, field, Qt.Key.Key_Return)
    assert page.screens.currentWidget() is page.finish_screen
    assert "4 of 5 answered" in page.finish_label.text() and page.revisit_button.isVisible()
    page.revisit_button.click()
    assert page.session.current.item_id == order[2]
    close(qtbot, window)
    assert messages == []


def test_summary_validity_session_with_number_keys(qtbot, tmp_path, study, messages):
    window = open_window(qtbot, study, tmp_path)
    page = start(qtbot, window, "sv", "Bob")
    view = page.session_view
    body = view.bodies["summary-validity"]
    picks = []
    for _ in range(2):
        shown = [panel.text() for panel in body.options]
        side = 1 + shown.index(next(t for t in shown if t.startswith("TRUE")))
        picks.append(side)
        key(qtbot, view, Qt.Key.Key_1 if side == 1 else Qt.Key.Key_2)
        assert body.chosen == side and body.options[side - 1].property("selected")
        key(qtbot, view, Qt.Key.Key_Return)
    key(qtbot, view, Qt.Key.Key_Return)  # nothing chosen yet: refused with a hint
    assert "Choose summary 1 or 2" in view.message.text()
    key(qtbot, view, Qt.Key.Key_S)  # bare S skips on choice screens
    assert page.screens.currentWidget() is page.finish_screen
    key(qtbot, view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    close(qtbot, window)
    saved = answers(study, "sv").query("status == 'answered'")
    assert saved["correct"].all() and saved["chosen_side"].tolist() == picks and saved["true_side"].tolist() == picks


def test_label_session_with_digit_keys(qtbot, tmp_path, study, messages):
    window = open_window(qtbot, study, tmp_path)
    page = start(qtbot, window, "lab", "Cat")
    view = page.session_view
    key(qtbot, view, Qt.Key.Key_2)
    key(qtbot, view, Qt.Key.Key_Return)
    key(qtbot, view, Qt.Key.Key_3)
    key(qtbot, view, Qt.Key.Key_Enter)
    close(qtbot, window)
    assert answers(study, "lab")["value"].tolist() == ["man", "unclear"]


def test_results_tab_shows_agreement_and_saves_an_adjudication(qtbot, tmp_path, study, messages):
    with Project.open(study) as project:
        from tests.fixtures.annotation_data import write_csv
        from workbench.annotation.annotation_import import import_annotations
        from workbench.annotation.items import list_items

        keys = [i.item_key for i in list_items(project, "lab")]
        import_annotations(project, "lab", write_csv(tmp_path / "a.csv", ["annotator", "item_id", "value"],
                                                     [["A", keys[0], "woman"], ["B", keys[0], "man"],
                                                      ["A", keys[1], "man"], ["B", keys[1], "man"]]))
    window = open_window(qtbot, study, tmp_path)
    page = window.show_page("annotate")
    page.task_combo.setCurrentIndex(page.task_combo.findText("lab"))
    page.tabs.setCurrentWidget(page.results)
    page.results.refresh_button.click()
    qtbot.waitUntil(lambda: page.results.agreement.rowCount() > 0, timeout=20_000)
    statistics = [page.results.agreement.item(r, 0).text() for r in range(page.results.agreement.rowCount())]
    assert "Krippendorff's alpha (nominal)" in statistics and "Cohen's kappa: A vs B" in statistics
    assert page.results.disputes.rowCount() == 1 and page.results.disputes.item(0, 0).text() == keys[0]
    page.results.disputes.selectRow(0)
    page.results.value_field.setText("woman")
    page.results.save_button.click()
    qtbot.waitUntil(lambda: page.results.disputes.rowCount() == 1 and page.results.disputes.item(0, 4).text() == "woman",
                    timeout=20_000)
    close(qtbot, window)
    assert messages == []


def test_a_typed_name_starts_the_session_without_pressing_add(qtbot, tmp_path, study, messages):
    window = open_window(qtbot, study, tmp_path)
    page = window.show_page("annotate")
    page.task_combo.setCurrentIndex(page.task_combo.findText("nt"))
    page.new_annotator.setText("  Dora ")
    page.start_button.click()
    assert page.session is not None and page.session.annotator.name == "Dora"
    assert page.new_annotator.text() == ""
    page.leave_session()
    close(qtbot, window)
    assert messages == []


def test_a_task_without_items_says_what_to_do_and_cannot_be_started(qtbot, tmp_path, study, messages):
    with Project.open(study) as project:
        create_task(project, "empty", "label", labels=["yes", "no"])
    window = open_window(qtbot, study, tmp_path)
    page = window.show_page("annotate")
    page.task_combo.setCurrentIndex(page.task_combo.findText("empty"))
    assert not page.start_button.isEnabled()
    assert "no items yet" in page.start_message.text() and "Add items" in page.start_message.text()
    page.task_combo.setCurrentIndex(page.task_combo.findText("lab"))
    assert page.start_button.isEnabled()
    close(qtbot, window)
    assert messages == []


def test_agreement_reads_plainly_and_is_there_again_after_visiting_another_page(qtbot, tmp_path, study, messages):
    with Project.open(study) as project:
        from tests.fixtures.annotation_data import write_csv
        from workbench.annotation.annotation_import import import_annotations
        from workbench.annotation.items import list_items

        keys = [i.item_key for i in list_items(project, "nt")]
        rows = [[a, k, f"{m} min"] for a, factor in (("A", 1), ("B", 30)) for k, m in zip(keys, (5, 10, 60, 90, 300))
                for m in [m * factor]]
        import_annotations(project, "nt", write_csv(tmp_path / "a.csv", ["annotator", "item_id", "value"], rows))
    window = open_window(qtbot, study, tmp_path)
    page = window.show_page("annotate")
    page.task_combo.setCurrentIndex(page.task_combo.findText("nt"))
    page.tabs.setCurrentWidget(page.results)
    qtbot.waitUntil(lambda: page.results.agreement.rowCount() > 0, timeout=30_000)
    headers = [page.results.agreement.horizontalHeaderItem(c).text() for c in range(page.results.agreement.columnCount())]
    assert "95% CI" in headers and "95% CI from" not in headers
    dispute_headers = [page.results.disputes.horizontalHeaderItem(c).text()
                       for c in range(page.results.disputes.columnCount())]
    assert dispute_headers[0] == "Item" and "Agreed value" in dispute_headers and "item_id" not in dispute_headers
    window.show_page("library")
    qtbot.waitUntil(lambda: not window.ops.busy, timeout=30_000)
    window.show_page("annotate")
    qtbot.waitUntil(lambda: not window.ops.busy, timeout=30_000)
    assert page.results.agreement.rowCount() > 0
    close(qtbot, window)
    assert messages == []
