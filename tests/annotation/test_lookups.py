"""The narrow lookups a session and an adjudication use instead of reading every item of a large task."""

import pytest

from workbench.annotation.adjudication import adjudicate, adjudications_frame
from workbench.annotation.annotators import add_annotator
from workbench.annotation.assignment import assigned_items
from workbench.annotation.items import NewItem, add_items, item_by_key, list_items, ready_item_ids, set_choices
from workbench.annotation.tasks import create_task
from workbench.errors import UserError


def test_ready_ids_are_the_items_a_summary_validity_session_can_show(project):
    task = create_task(project, "sv", "summary-validity", seed=2)
    ids = add_items(project, task, [
        NewItem(text="both", choices={"true": "T", "distorted": "D"}),
        NewItem(text="none"),
        NewItem(text="true only", choices={"true": "T"}),
        NewItem(text="empty distorted", choices={"true": "T", "distorted": ""}),
        NewItem(text="both again", choices={"true": "T2", "distorted": "D2"}),
    ])
    expected = [i.id for i in list_items(project, task, ready_only=True)]
    assert expected == [ids[0], ids[4]]
    assert ready_item_ids(project, task) == expected
    order = assigned_items(project, task, add_annotator(project, "Ann"))
    assert sorted(order) == expected
    set_choices(project, ids[2], {"true": "T", "distorted": "D3"})  # made ready later: joins the queue
    assert sorted(assigned_items(project, task, add_annotator(project, "Ann"))) == sorted(expected + [ids[2]])


def test_every_item_added_later_joins_a_returning_annotators_queue_once(project):
    task = create_task(project, "lab", "label", labels=["a", "b"], seed=4)
    add_items(project, task, [NewItem(text=f"t{k}") for k in range(300)])
    ann = add_annotator(project, "Ann")
    first = assigned_items(project, task, ann)
    add_items(project, task, [NewItem(text=f"later {k}") for k in range(50)])
    second = assigned_items(project, task, ann)
    assert second[:300] == first and len(second) == len(set(second)) == 350
    assert assigned_items(project, task, ann) == second


def test_an_adjudication_finds_its_item_by_key_in_its_own_task_only(project):
    one = create_task(project, "one", "label", labels=["a", "b"])
    two = create_task(project, "two", "label", labels=["a", "b"])
    add_items(project, one, [NewItem(text="in one", item_key="K1"), NewItem(text="shared key", item_key="S")])
    add_items(project, two, [NewItem(text="in two", item_key="K2"), NewItem(text="shared key two", item_key="S")])
    assert item_by_key(project, one, "K2") is None
    assert item_by_key(project, two, "S").text == "shared key two"
    with pytest.raises(UserError, match="has no item K2"):
        adjudicate(project, one, "K2", "a")
    adjudicate(project, two, "S", "B")
    assert adjudications_frame(project, two)[["item_id", "value"]].values.tolist() == [["S", "b"]]
    assert adjudications_frame(project, one).empty


def test_disputed_items_are_the_ones_apart_with_every_annotators_answer(project, tmp_path):
    from tests.fixtures.annotation_data import task_with_answers
    from workbench.annotation.adjudication import disagreements

    nt = task_with_answers(project, tmp_path, "narrative-time", {
        "Ann": ["10 min", "1 hour", "2 days", "5 min", None],
        "Bob": ["20 min", "3 hours", "2 days", None, "1 min"],
        "Cat": [None, "1 hour", "1 week", None, None],
    }, name="nt")
    frame = disagreements(project, nt)
    assert list(frame.columns) == ["item_id", "Ann", "Bob", "Cat", "spread", "adjudicated"]
    # i0 is exactly twice (not more than the factor); i3 and i4 have one answer each
    assert frame.values.tolist() == [["i1", "1 hour", "3 hours", "1 hour", "3.0x", ""],
                                     ["i2", "2 days", "2 days", "1 week", "3.5x", ""]]
    adjudicate(project, nt, "i2", "3 days")
    assert disagreements(project, nt)["adjudicated"].tolist() == ["", "3 days"]
    assert disagreements(project, nt, factor=1.5)["item_id"].tolist() == ["i0", "i1", "i2"]

    lab = task_with_answers(project, tmp_path, "label", {
        "Bob": ["a", "a", "b", "c", "a"], "Ann": ["a", "b", None, "b", None], "Cat": [None, "c", "b", "a", None],
    }, labels=["a", "b", "c"], name="lab")
    frame = disagreements(project, lab)
    assert frame.values.tolist() == [["i1", "b", "a", "c", "3 different", ""],
                                     ["i3", "b", "c", "a", "3 different", ""]]
