"""How many items a task holds, as the Annotate page shows it: every item, ready to annotate or not."""

from workbench.annotation.items import NewItem, add_items, item_count, ready_item_ids
from workbench.annotation.tasks import create_task


def test_a_tasks_items_are_counted_ready_or_not(project):
    summaries = create_task(project, "sv", "summary-validity", seed=1)
    add_items(project, summaries, [NewItem(text="Scene 1.", choices={"true": "t", "distorted": "d"}),
                                   NewItem(text="Scene 2.", choices={"true": "t", "distorted": "d"}),
                                   NewItem(text="Scene 3.")])  # its summaries failed: not shown, still an item
    times = create_task(project, "nt", "narrative-time", seed=1)
    add_items(project, times, [NewItem(text="A passage.")])
    empty = create_task(project, "empty", "narrative-time", seed=1)
    assert item_count(project, summaries.id) == 3 and len(ready_item_ids(project, summaries)) == 2
    assert item_count(project, times.id) == 1
    assert item_count(project, empty.id) == 0
