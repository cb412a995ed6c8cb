import pytest

from workbench.annotation.answers import annotations_frame
from workbench.annotation.items import NewItem, add_items
from workbench.annotation.session import Session, open_session, true_side
from workbench.annotation.tasks import create_task
from workbench.errors import UserError


class Clock:
    """A hand-driven clock, so timing is checked without waiting."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


def _nt_task(project, n=6, **settings):
    task = create_task(project, "nt", "narrative-time", seed=4, **settings)
    add_items(project, task, [NewItem(text=f"Passage number {k}.") for k in range(n)])
    return task


def test_answers_are_saved_at_once_and_reopening_resumes_at_the_same_item(project):
    _nt_task(project)
    session = open_session(project, "nt", "Ann")
    assert session.progress.text == "0 / 6"
    first = session.current
    session.answer("2 hours")
    second = session.current
    assert second.item_id != first.item_id
    assert session.progress.text == "1 / 6"
    session.answer("3d")
    third = session.current

    again = open_session(project, "nt", "Ann")
    assert again.current.item_id == third.item_id
    assert again.progress.text == "2 / 6"
    saved = annotations_frame(project, "nt")
    assert list(saved["minutes"]) == [120.0, 4320.0]
    assert list(saved["value"]) == ["2 hours", "3 days"]


def test_unreadable_durations_are_refused_and_nothing_is_saved(project):
    _nt_task(project)
    session = open_session(project, "nt", "Ann")
    current = session.current
    with pytest.raises(UserError, match="not a duration"):
        session.answer("a while")
    assert session.current == current
    assert annotations_frame(project, "nt").empty
    session.answer("90", default_unit="minutes")
    assert annotations_frame(project, "nt")["minutes"].tolist() == [90.0]


def test_undo_returns_to_the_item_and_skip_and_revisit(project):
    _nt_task(project, 4)
    session = open_session(project, "nt", "Ann")
    order = session.order
    session.answer("5 min")
    session.skip()
    assert session.current.item_id == order[2]
    assert session.progress.skipped == 1
    assert session.undo()  # takes back the skip
    assert session.current.item_id == order[1]
    session.answer("10 min")
    session.skip()
    session.answer("1 h")
    assert session.finished
    assert session.progress.answered == 3 and session.progress.skipped == 1
    assert session.revisit_skipped() == 1
    assert session.current.item_id == order[2]
    session.answer("1 day")
    assert session.finished and session.progress.answered == 4
    assert session.undo()
    assert session.current.item_id == order[2]
    assert session.progress.answered == 3


def test_flag_keeps_the_item_current_and_survives_the_answer(project):
    _nt_task(project, 3)
    session = open_session(project, "nt", "Ann")
    item = session.current.item_id
    with pytest.raises(UserError, match="why"):
        session.flag("  ")
    session.flag("This is a table of contents")
    assert session.current.item_id == item and session.current.flagged
    assert session.progress.answered == 0
    session.answer("2 min")
    row = annotations_frame(project, "nt").iloc[0]
    assert row["flagged"] and row["comment"] == "This is a table of contents" and row["status"] == "answered"
    assert open_session(project, "nt", "Ann").progress.flagged == 1


def test_seconds_on_an_item_cap_idle_stretches(project):
    _nt_task(project, 3, idle_cap_seconds=300)
    clock = Clock()
    session = open_session(project, "nt", "Ann", clock=clock)
    clock.advance(40)
    session.touch()
    clock.advance(3600)  # an hour away from the desk counts as five minutes
    session.answer("1 h")
    clock.advance(12)
    session.skip()
    clock.advance(7)
    session.undo()  # back to the skipped item: its 12 seconds are kept
    clock.advance(8)
    session.answer("2 h")
    frame = annotations_frame(project, "nt")
    assert frame["seconds"].tolist() == [340.0, 20.0]


def test_time_on_an_item_left_unanswered_counts_when_the_annotator_comes_back(project):
    _nt_task(project, 3)
    clock = Clock()
    session = open_session(project, "nt", "Ann", clock=clock)
    first = session.current.item_id
    clock.advance(25)
    session.pause()  # leaves the session (Esc, closing the window) with the item unanswered
    clock.advance(900)  # away: not counted
    again = open_session(project, "nt", "Ann", clock=clock)
    assert again.current.item_id == first
    clock.advance(10)
    again.answer("3 days")
    assert annotations_frame(project, "nt")["seconds"].tolist() == [35.0]
    assert again.progress.answered == 1


def _sv_task(project, n=8):
    task = create_task(project, "sv", "summary-validity", seed=9)
    add_items(project, task, [NewItem(text=f"Scene {k}.", choices={"true": f"true {k}", "distorted": f"false {k}"})
                              for k in range(n)])
    return task


def test_summary_sides_are_randomized_per_annotator_and_recorded(project):
    task = _sv_task(project)
    ann = open_session(project, "sv", "Ann")
    sides = []
    while not ann.finished:
        view = ann.current
        side = true_side(task, ann.annotator, view.item_id)
        assert view.options[side - 1].startswith("true")
        sides.append(side)
        ann.answer(side, confidence=3)
    assert set(sides) == {1, 2}
    frame = annotations_frame(project, "sv")
    assert frame["correct"].all()
    assert frame["true_side"].tolist() == sides and frame["chosen_side"].tolist() == sides
    assert set(frame["confidence"]) == {3}
    bob = open_session(project, "sv", "Bob")
    bob_sides = [true_side(task, bob.annotator, i) for i in ann.order]
    assert bob_sides != sides  # another annotator sees other sides
    with pytest.raises(UserError, match="1 or summary 2"):
        bob.answer(3)
    bob.answer(3 - true_side(task, bob.annotator, bob.current.item_id))
    assert annotations_frame(project, "sv").query("annotator == 'Bob'")["value"].tolist() == ["distorted"]


def test_label_answers_must_be_in_the_label_set(project):
    task = create_task(project, "lab", "label", labels=["woman", "man", "unclear"])
    add_items(project, task, [NewItem(text="She said so.")])
    session = open_session(project, "lab", "Ann")
    assert session.current.options == ("woman", "man", "unclear")
    with pytest.raises(UserError, match="not one of"):
        session.answer("child")
    session.answer("WOMAN")
    assert annotations_frame(project, "lab")["value"].tolist() == ["woman"]


def test_a_task_without_ready_items_cannot_be_opened(project):
    create_task(project, "empty", "narrative-time")
    with pytest.raises(UserError, match="no items ready"):
        open_session(project, "empty", "Ann")


def test_blinded_views_carry_no_metadata(project, books):
    from workbench.annotation.items import add_book_passages
    from workbench.annotation.tasks import set_blinded

    task = create_task(project, "nt", "narrative-time", blinded=True)
    add_book_passages(project, task, books, per_book=2)
    view = open_session(project, task, "Ann").current
    assert view.details == {} and view.heading.startswith("Item ")
    set_blinded(project, task, False)
    open_view = Session(project, task, "Ann").current
    assert open_view.details["Book"] and open_view.details["Author"]


def test_imported_item_ids_never_head_a_blinded_item_only_its_place_in_the_annotators_order(project, tmp_path):
    """An id from the file (``gpt4o_female_001``) names the model and condition: a blinded session shows
    "Item 2 of 4" (the annotator's own order), never the id; an open task shows the id among its details."""
    from tests.fixtures.annotation_data import write_csv
    from workbench.annotation.item_import import import_items
    from workbench.annotation.tasks import set_blinded

    task = create_task(project, "lab", "label", labels=["woman", "man"], blinded=True, seed=7)
    ids = [f"gpt4o_female_{k:03d}" for k in range(4)]
    import_items(project, task, write_csv(tmp_path / "items.csv", ["item_id", "text", "model"],
                                          [[key, f"Response {k}.", "gpt-4o"] for k, key in enumerate(ids)]))
    session = open_session(project, task, "Ann")
    headings = []
    while session.current is not None:
        view = session.current
        assert all(key not in repr(view) for key in ids) and "gpt" not in repr(view)
        headings.append(view.heading)
        session.answer("woman")
    assert headings == [f"Item {n} of 4" for n in range(1, 5)]
    session.undo()
    assert session.current.heading == "Item 4 of 4"

    set_blinded(project, task, False)
    view = Session(project, task, "Ann").current
    assert view.heading == "Item 4 of 4" and view.details["Item id"] in ids and view.details["Model"] == "gpt-4o"
