"""The Annotate page on a larger study: a long keyboard session, the Results tab while tasks are switched,
and adjudicating one disputed item after another."""

import pytest
from PySide6.QtCore import Qt

from tests.fixtures.annotation_data import write_csv
from tests.fixtures.annotation_gui import close, key, open_window, start
from workbench.annotation.adjudication import adjudications_frame
from workbench.annotation.annotation_import import import_annotations
from workbench.annotation.answers import annotations_frame
from workbench.annotation.items import NewItem, add_items, list_items
from workbench.annotation.tasks import create_task
from workbench.project import Project

PASSAGES = 90
SECRET = "Quillfeather-Hidden-Title"


@pytest.fixture
def large_study(tmp_path):
    """A blinded narrative-time task shared by three annotators (two have answered everything), and a label
    task where two annotators disagree on every other item."""
    path = tmp_path / "large.palimpsest"
    project = Project.create(path)
    nt = create_task(project, "nt", "narrative-time", blinded=True, per_annotator=60, overlap=0.5, seed=3)
    meta = {"title": SECRET, "author": "Ottoline Vexhammer", "model": "model-Glockenspiel-9"}
    add_items(project, nt, [NewItem(text=f"Passage {k}: she waited by the door until the carriage came.", meta=meta)
                            for k in range(PASSAGES)])
    keys = [i.item_key for i in list_items(project, nt)]
    rows = [[who, key, f"{(k % 7 + 1) * factor} min"] for who, factor in (("Ann", 1), ("Bob", 40))
            for k, key in enumerate(keys)]
    import_annotations(project, nt, write_csv(tmp_path / "nt.csv", ["annotator", "item_id", "value"], rows))
    lab = create_task(project, "lab", "label", labels=["woman", "man", "unclear"], seed=3)
    add_items(project, lab, [NewItem(text=f"Response {k}", item_key=f"L{k:03d}") for k in range(40)])
    rows = [[who, f"L{k:03d}", "woman" if who == "Ann" or k % 2 else "man"] for who in ("Ann", "Bob") for k in range(40)]
    import_annotations(project, lab, write_csv(tmp_path / "lab.csv", ["annotator", "item_id", "value"], rows))
    project.close()
    return path


def shown_texts(page) -> str:
    view = page.session_view
    body = view.bodies["narrative-time"]
    return " ".join([view.heading.text(), view.details.text(), view.flag_note.text(), body.passage.toPlainText(),
                     page.task_info.text(), page.window().windowTitle()])


def test_a_long_session_saves_every_key_and_resumes_where_it_stopped(qtbot, tmp_path, large_study, messages):
    window = open_window(qtbot, large_study, tmp_path)
    page = start(qtbot, window, "nt", "Cat")
    view = page.session_view
    field = view.bodies["narrative-time"].field
    order = list(page.session.order)
    assert len(order) == 60
    for k in range(40):
        qtbot.keyClicks(field, f"{k + 1} min")
        key(qtbot, field, Qt.Key.Key_Return)
        assert SECRET not in shown_texts(page) and "Vexhammer" not in shown_texts(page)
    key(qtbot, field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # take back the 40th
    qtbot.keyClicks(field, "2 hours")
    key(qtbot, field, Qt.Key.Key_Return)
    key(qtbot, field, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)  # skip the 41st
    key(qtbot, field, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)  # flag the 42nd; it stays on screen
    qtbot.keyClicks(view.flag_field, "a table of contents")
    key(qtbot, view.flag_field, Qt.Key.Key_Return)
    assert view.progress_label.text() == "40 / 60"
    key(qtbot, field, Qt.Key.Key_Escape)
    close(qtbot, window)

    with Project.open(large_study) as project:
        frame = annotations_frame(project, "nt")
    cat = frame[frame["annotator"] == "Cat"].set_index("item_id")
    keys = {i.id: i.item_key for i in list_items(Project.open(large_study), "nt")}
    answered = cat[cat["status"] == "answered"]
    assert len(answered) == 40  # one saved answer per Enter, the undone one replaced
    assert answered.loc[keys[order[39]], "value"] == "2 hours"
    assert (answered["seconds"] > 0).all()
    assert cat.loc[keys[order[40]], "status"] == "skipped"
    assert cat.loc[keys[order[41]], "comment"] == "a table of contents"

    window = open_window(qtbot, large_study, tmp_path / "again")
    page = start(qtbot, window, "nt", "Cat")
    assert page.session.current.item_id == order[41]  # resumes at the flagged item, after the skipped one
    assert page.session_view.flag_note.text() == "Flagged: a table of contents"
    assert page.session_view.progress_label.text() == "40 / 60"
    page.leave_session()
    close(qtbot, window)
    assert messages == []


def test_a_label_chosen_for_one_item_is_not_shown_chosen_on_the_next(qtbot, tmp_path, large_study, messages):
    window = open_window(qtbot, large_study, tmp_path)
    page = start(qtbot, window, "lab", "Cat")
    view = page.session_view
    body = view.bodies["label"]
    key(qtbot, view, Qt.Key.Key_2)
    assert [b.property("label") for b in body.group.buttons() if b.isChecked()] == ["man"]
    key(qtbot, view, Qt.Key.Key_Return)
    assert view.progress_label.text() == "1 / 40"
    assert [b.property("label") for b in body.group.buttons() if b.isChecked()] == []  # nothing pre-chosen
    key(qtbot, view, Qt.Key.Key_Return)  # Enter with nothing chosen saves nothing
    assert view.progress_label.text() == "1 / 40" and "Choose a label" in view.message.text()
    key(qtbot, view, Qt.Key.Key_3)
    key(qtbot, view, Qt.Key.Key_Return)
    page.leave_session()
    close(qtbot, window)
    with Project.open(large_study) as project:
        frame = annotations_frame(project, "lab")
    assert frame[frame["annotator"] == "Cat"]["value"].tolist() == ["man", "unclear"]
    assert messages == []


def _keys(table, column=0):
    return [table.item(r, column).text() for r in range(table.rowCount())]


def test_choosing_another_task_on_the_results_tab_shows_that_tasks_results_only(qtbot, tmp_path, large_study, messages):
    window = open_window(qtbot, large_study, tmp_path)
    page = window.show_page("annotate")
    page.task_combo.setCurrentIndex(page.task_combo.findText("nt"))
    page.tabs.setCurrentWidget(page.results)  # starts computing the narrative-time agreement (a bootstrap)
    assert page.results.status.text().startswith("Computing agreement")
    assert all(op.background_read for op in window.ops.operations if op.label == "Computing agreement")
    page.task_combo.setCurrentIndex(page.task_combo.findText("lab"))  # before the first answer is in
    qtbot.waitUntil(lambda: not window.ops.busy, timeout=60_000)
    label_keys = {f"L{k:03d}" for k in range(40)}
    assert page.results.disputes.rowCount() == 20
    assert set(_keys(page.results.disputes)) <= label_keys  # never the narrative-time items
    statistics = _keys(page.results.agreement)
    assert "Krippendorff's alpha (nominal)" in statistics
    assert not any("Spearman" in s for s in statistics)
    assert page.results.status.text() == "20 disputed item(s)."
    close(qtbot, window)
    assert messages == []


def test_adjudicating_keeps_the_place_and_moves_to_the_next_disputed_item(qtbot, tmp_path, large_study, messages):
    window = open_window(qtbot, large_study, tmp_path)
    page = window.show_page("annotate")
    page.task_combo.setCurrentIndex(page.task_combo.findText("lab"))
    page.tabs.setCurrentWidget(page.results)
    results = page.results
    qtbot.waitUntil(lambda: results.disputes.rowCount() == 20, timeout=30_000)
    agreed = [results.disputes.horizontalHeaderItem(c).text() for c in range(results.disputes.columnCount())].index(
        "Agreed value")
    disputed = _keys(results.disputes)
    qtbot.waitUntil(lambda: not window.ops.busy, timeout=30_000)
    results.disputes.selectRow(5)
    for value in ("woman", "Man", "unclear"):
        results.value_field.setText(value)
        key(qtbot, results.value_field, Qt.Key.Key_Return)  # Enter saves, as in a session
    assert not window.ops.busy  # nothing is computed again: the answers did not change
    assert [results.disputes.item(r, agreed).text() for r in (5, 6, 7)] == ["woman", "man", "unclear"]
    assert results.disputes.currentRow() == 8 and _keys(results.disputes) == disputed
    assert "man" not in results.disputes.item(4, agreed).text()
    with Project.open(large_study) as project:
        stored = adjudications_frame(project, "lab").set_index("item_id")["value"].to_dict()
    assert stored == {disputed[5]: "woman", disputed[6]: "man", disputed[7]: "unclear"}
    results.refresh_button.click()  # computed again, the table says the same
    qtbot.waitUntil(lambda: not window.ops.busy, timeout=30_000)
    assert [results.disputes.item(r, agreed).text() for r in (5, 6, 7)] == ["woman", "man", "unclear"]
    close(qtbot, window)
    assert messages == []
