"""Who annotates which items, in which order.

The rule (fixed for an annotator the first time they open a task, and stored):

1. The task's ready items are put in one pool order, by a hash of the task's seed and the item id (so
   adding items later slots them in without reshuffling the rest).
2. Without ``per_annotator`` every annotator gets every item. Items added later are appended to the end
   of each annotator's queue, in their own seeded order.
3. With ``per_annotator = n`` and ``overlap = f``: the first ``round(f * n)`` items of the pool are the
   *shared* items, given to every annotator (agreement is measured on them). Each annotator also gets
   ``n - round(f * n)`` *own* items from the rest of the pool: the annotator who joined k-th (k = 0, 1, ...)
   takes the next block after annotator k-1's, wrapping around when the pool runs out (so with many
   annotators some own items are seen by two people). Joining later never changes an earlier annotator's
   items.
4. Each annotator's items are put in their own random order, seeded by the task's seed and their name.
"""

from __future__ import annotations

import hashlib
import random
from typing import TYPE_CHECKING, Sequence

from workbench.annotation.annotators import Annotator
from workbench.annotation.items import ready_item_ids
from workbench.annotation.tasks import Task

if TYPE_CHECKING:
    from workbench.project import Project


def stable_hash(*parts: object) -> int:
    """A hash that is the same on every machine and Python run (``hash()`` is salted per process)."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def pool_order(item_ids: Sequence[int], seed: int) -> list[int]:
    return sorted(item_ids, key=lambda item_id: (stable_hash("pool", seed, item_id), item_id))


def choose_items(pool: Sequence[int], per_annotator: int | None, overlap: float, slot: int) -> list[int]:
    """The items of the annotator in ``slot`` (0 for the first to join), before their own shuffle."""
    if per_annotator is None or per_annotator >= len(pool):
        return list(pool)
    shared_n = round(overlap * per_annotator)
    shared, rest = list(pool[:shared_n]), list(pool[shared_n:])
    own_n = min(per_annotator - shared_n, len(rest))
    own = [rest[(slot * own_n + k) % len(rest)] for k in range(own_n)] if rest else []
    return shared + own


def annotator_order(item_ids: Sequence[int], seed: int, annotator_name: str, salt: str = "") -> list[int]:
    ordered = sorted(item_ids)
    random.Random(f"{seed}:{annotator_name}:{salt}").shuffle(ordered)
    return ordered


def assigned_items(project: "Project", task: Task, annotator: Annotator) -> list[int]:
    """This annotator's items in their order, assigning them on first use (one transaction)."""
    db = project.db
    ready = ready_item_ids(project, task)
    with db.transaction():
        if not db.conn.in_transaction:
            db.execute("BEGIN IMMEDIATE")  # two annotators joining at once must not get the same slot
        rows = db.execute(
            "SELECT item_id, slot FROM annotation_assignments WHERE task_id = ? AND annotator_id = ? ORDER BY position",
            [task.id, annotator.id],
        ).fetchall()
        if rows:
            order = [item_id for item_id, _ in rows]
            if task.per_annotator is None:
                have = set(order)  # once, not per item: with thousands of items that was seconds
                extra = [i for i in ready if i not in have]
                if extra:
                    more = annotator_order(extra, task.seed, annotator.name, salt=str(len(order)))
                    _store(project, task, annotator, more, rows[0][1], start=len(order))
                    order += more
            return order
        (slot,) = db.execute(
            "SELECT COUNT(DISTINCT annotator_id) FROM annotation_assignments WHERE task_id = ?", [task.id]
        ).fetchone()
        chosen = choose_items(pool_order(ready, task.seed), task.per_annotator, task.overlap, slot)
        order = annotator_order(chosen, task.seed, annotator.name)
        _store(project, task, annotator, order, slot, start=0)
    return order


def _store(project: "Project", task: Task, annotator: Annotator, order: list[int], slot: int, start: int) -> None:
    project.db.conn.executemany(
        "INSERT INTO annotation_assignments (task_id, annotator_id, item_id, position, slot) VALUES (?, ?, ?, ?, ?)",
        [(task.id, annotator.id, item_id, start + k, slot) for k, item_id in enumerate(order)],
    )
