import pytest

from tests.fixtures.annotation_data import write_csv
from workbench.annotation.annotation_import import import_annotations
from workbench.annotation.annotators import list_annotators
from workbench.annotation.answers import annotations_frame
from workbench.annotation.item_import import import_items
from workbench.annotation.items import list_items
from workbench.annotation.tasks import create_task
from workbench.errors import UserError


def _count(project, table):
    return project.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_items_from_tsv_with_gold_and_hidden_metadata(project, tmp_path):
    task = create_task(project, "lab", "label", labels=["woman", "man", "unclear"])
    path = write_csv(tmp_path / "items.tsv", ["item_id", "text", "gold", "model"],
                     [["r1", "The nurse, she said.", "Woman", "m1"], ["r2", "A tall man.", "", "m2"],
                      ["r3", "Line one\nline two", "unclear", ""]], delimiter="\t")
    assert import_items(project, task, path) == 3
    items = {i.item_key: i for i in list_items(project, task)}
    assert items["r1"].gold == "woman" and items["r2"].gold is None
    assert items["r1"].meta == {"model": "m1"} and items["r3"].meta == {}
    assert items["r3"].text == "Line one\nline two"


def test_bad_item_files_are_refused_with_line_numbers_and_nothing_is_imported(project, tmp_path):
    task = create_task(project, "lab", "label", labels=["a", "b"])
    path = write_csv(tmp_path / "items.csv", ["item_id", "text", "gold"],
                     [["x1", "fine", "a"], ["x2", "", ""], ["x1", "again", ""], ["", "no id", ""], ["x5", "ok", "c"]])
    with pytest.raises(UserError) as info:
        import_items(project, task, path)
    message = str(info.value)
    assert "line 3: the text of item x2 is empty" in message
    assert "line 4: item_id x1 already appears on line 2" in message
    assert "line 5: the item_id is empty" in message
    assert "line 6: gold label 'c' is not one of a, b" in message
    assert "nothing was changed" in message
    assert _count(project, "annotation_items") == 0


def test_summary_validity_items_need_both_summaries(project, tmp_path):
    task = create_task(project, "sv", "summary-validity")
    missing = write_csv(tmp_path / "a.csv", ["item_id", "text"], [["s1", "scene"]])
    with pytest.raises(UserError, match="lacks the column\\(s\\) summary, distorted"):
        import_items(project, task, missing)
    path = write_csv(tmp_path / "b.csv", ["item_id", "text", "summary", "distorted"],
                     [["s1", "scene", "It rains.", "It snows."], ["s2", "scene", "Same.", "Same."]])
    with pytest.raises(UserError, match="line 3: the two summaries of item s2 are identical"):
        import_items(project, task, path)
    assert _count(project, "annotation_items") == 0


def _items(project, tmp_path, task):
    import_items(project, task, write_csv(tmp_path / "items.csv", ["item_id", "text"], [[f"i{k}", f"t {k}"] for k in range(4)]))


def test_answers_import_adds_new_annotators_and_reads_units(project, tmp_path):
    task = create_task(project, "nt", "narrative-time")
    _items(project, tmp_path, task)
    path = write_csv(tmp_path / "answers.csv", ["annotator", "item_id", "value", "unit", "seconds", "comment", "flagged"],
                     [["Ann", "i0", "2 hours", "", "31.5", "", ""], ["Ann", "i1", "3", "days", "", "odd one", "yes"],
                      ["Bob", "i0", "90", "", "", "", ""]])
    assert import_annotations(project, task, path) == {"answers": 3, "new_annotators": 2}
    frame = annotations_frame(project, task)
    assert frame["minutes"].tolist() == [120.0, 4320.0, 90.0]
    assert frame["origin"].tolist() == ["import"] * 3
    assert frame["flagged"].tolist() == [False, True, False] and frame["seconds"].iloc[0] == 31.5
    assert [a.name for a in list_annotators(project)] == ["Ann", "Bob"]


def test_bad_answer_files_are_refused_with_line_numbers_and_nothing_is_imported(project, tmp_path):
    task = create_task(project, "nt", "narrative-time")
    _items(project, tmp_path, task)
    path = write_csv(tmp_path / "answers.csv", ["annotator", "item_id", "value"], [
        ["Ann", "i0", "2 hours"],
        ["Ann", "i9", "1 hour"],
        ["Ann", "i0", "3 hours"],
        ["Bob", "i1", "0 min"],
        ["Bob", "i2", "-5 min"],
        ["Cat", "i3", "a while"],
        ["", "i3", "1 h"],
    ])
    with pytest.raises(UserError) as info:
        import_annotations(project, task, path)
    message = str(info.value)
    for expected in ("line 3: task 'nt' has no item 'i9'", "line 4: Ann already answered item i0 on line 2",
                     "line 5: '0 min' is zero", "line 6: '-5 min' is negative", "line 7: 'a while' is not a duration",
                     "line 8: the annotator's name is empty"):
        assert expected in message
    assert _count(project, "annotations") == 0 and _count(project, "annotators") == 0


def test_labels_outside_the_set_and_answers_already_in_the_project_are_refused(project, tmp_path):
    task = create_task(project, "lab", "label", labels=["woman", "man"])
    _items(project, tmp_path, task)
    good = write_csv(tmp_path / "good.csv", ["annotator", "item_id", "value"], [["Ann", "i0", "Man"]])
    import_annotations(project, task, good)
    assert annotations_frame(project, task)["value"].tolist() == ["man"]
    bad = write_csv(tmp_path / "bad.csv", ["annotator", "item_id", "value"],
                    [["Bob", "i1", "woman"], ["Bob", "i2", "robot"], ["Ann", "i0", "woman"]])
    with pytest.raises(UserError) as info:
        import_annotations(project, task, bad)
    assert "line 3: 'robot' is not a label" in str(info.value)
    assert "line 4: Ann already has an answer for item i0" in str(info.value)
    assert len(annotations_frame(project, task)) == 1 and len(list_annotators(project)) == 1


def test_files_that_are_not_tables_are_refused_plainly(project, tmp_path):
    task = create_task(project, "lab", "label", labels=["a", "b"])
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(UserError, match="empty"):
        import_annotations(project, task, empty)
    latin = tmp_path / "latin.csv"
    latin.write_bytes("annotator,item_id,value\nZo\xe9,i0,a\n".encode("latin-1"))
    with pytest.raises(UserError, match="not UTF-8"):
        import_annotations(project, task, latin)
    wrong = write_csv(tmp_path / "wrong.csv", ["who", "item", "value"], [["a", "b", "c"]])
    with pytest.raises(UserError, match="lacks the column\\(s\\) annotator, item_id"):
        import_annotations(project, task, wrong)
