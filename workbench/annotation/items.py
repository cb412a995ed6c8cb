"""The items of an annotation task: passages, scenes with their two summaries, texts to label.

Every item has an ``item_key``: the id annotators see and files use. Items made by Palimpsest get opaque
random numbers (so the number says nothing about the book or the order of sampling); imported items keep
the ids of the file. Hidden metadata (book, title, author, model, condition, group) lives in ``meta`` and
is shown only when the task is not blinded (see ``blinding.py``). ``gold`` (a known answer) is never shown.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import pandas as pd

from workbench.annotation.passages import char_count, context_around, sample_windows, windows, word_count
from workbench.annotation.tasks import NAME_CLOZE, SUMMARY_VALIDITY, Task, get_task
from workbench.errors import UserError
from workbench.progress import TaskState
from workbench.project import now

if TYPE_CHECKING:
    from workbench.project import Project

PASSAGE_WORDS = 250
SCENE_CHARS = 3_000
SCENE_CONTEXT_CHARS = 300


@dataclass(kw_only=True)
class ItemContent:
    """What an item carries besides its text and key: shared by stored items and items to add."""

    context_before: str = ""
    context_after: str = ""
    choices: dict[str, str] | None = None
    gold: str | None = None
    book_id: int | None = None
    start_char: int | None = None
    end_char: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Item(ItemContent):
    """A stored item."""

    id: int
    task_id: int
    item_key: str
    text: str
    origin: str = ""


@dataclass
class NewItem(ItemContent):
    """An item to add. ``item_key`` None: an opaque number is drawn."""

    text: str
    item_key: str | None = None
    origin: str = "added"


_FIELDS = ("id", "task_id", "item_key", "text", "context_before", "context_after", "choices", "gold", "book_id",
           "start_char", "end_char", "meta", "origin")
_COLUMNS = ", ".join(_FIELDS)


def _item(row: Sequence[Any]) -> Item:
    values = dict(zip(_FIELDS, row))
    values["choices"] = json.loads(values["choices"]) if values["choices"] else None
    values["meta"] = json.loads(values["meta"] or "{}")
    return Item(**values)


def is_ready(task: Task, item: Item) -> bool:
    """Whether the item can be shown: a summary-validity item needs both of its summaries."""
    if task.kind != SUMMARY_VALIDITY:
        return True
    return bool(item.choices and item.choices.get("true") and item.choices.get("distorted"))


def list_items(project: "Project", task: "Task | str | int", *, ready_only: bool = False) -> list[Item]:
    task = get_task(project, task)
    rows = project.db.execute(f"SELECT {_COLUMNS} FROM annotation_items WHERE task_id = ? ORDER BY id", [task.id])
    items = [_item(row) for row in rows.fetchall()]
    return [i for i in items if is_ready(task, i)] if ready_only else items


def ready_item_ids(project: "Project", task: Task) -> list[int]:
    """The ids of the items that can be shown (``is_ready``), in id order, without reading their texts."""
    ready = ("choices IS NOT NULL AND COALESCE(json_extract(choices, '$.true'), '') <> ''"
             " AND COALESCE(json_extract(choices, '$.distorted'), '') <> ''") if task.kind == SUMMARY_VALIDITY else "1"
    rows = project.db.execute(f"SELECT id FROM annotation_items WHERE task_id = ? AND {ready} ORDER BY id", [task.id])
    return [item_id for (item_id,) in rows.fetchall()]


def item_count(project: "Project", task_id: int) -> int:
    """How many items the task holds (ready or not)."""
    return project.db.execute("SELECT COUNT(*) FROM annotation_items WHERE task_id = ?", [task_id]).fetchone()[0]


def get_item(project: "Project", item_id: int) -> Item:
    row = project.db.execute(f"SELECT {_COLUMNS} FROM annotation_items WHERE id = ?", [item_id]).fetchone()
    if row is None:
        raise UserError(f"There is no annotation item number {item_id} in this project.")
    return _item(row)


def item_by_key(project: "Project", task: Task, item_key: str) -> Item | None:
    """One item of the task by the key annotators see (None if the task has no such item)."""
    row = project.db.execute(f"SELECT {_COLUMNS} FROM annotation_items WHERE task_id = ? AND item_key = ?",
                             [task.id, str(item_key)]).fetchone()
    return None if row is None else _item(row)


def items_by_key(project: "Project", task: Task) -> dict[str, Item]:
    return {item.item_key: item for item in list_items(project, task)}


def _opaque_keys(existing: set[str], count: int, seed: str) -> list[str]:
    digits = max(5, len(str((len(existing) + count) * 20)))
    rng = random.Random(seed)
    keys: list[str] = []
    taken = set(existing)
    while len(keys) < count:
        key = str(rng.randrange(10 ** (digits - 1), 10**digits))
        if key not in taken:
            taken.add(key)
            keys.append(key)
    return keys


def add_items(project: "Project", task: "Task | str | int", new_items: Iterable[NewItem]) -> list[int]:
    """Add items in one transaction; returns their ids. Keys given must be new to the task."""
    task = get_task(project, task)
    new_items = list(new_items)
    existing = {k for (k,) in project.db.execute("SELECT item_key FROM annotation_items WHERE task_id = ?", [task.id])}
    given = [i.item_key for i in new_items if i.item_key is not None]
    clash = sorted(set(given) & existing) or sorted({k for k in given if given.count(k) > 1})
    if clash:
        raise UserError(f"Item ids already used in task '{task.name}': {', '.join(clash[:5])}. Each item needs its own id.")
    drawn = iter(_opaque_keys(existing | set(given), sum(i.item_key is None for i in new_items),
                              f"{task.seed}:{task.id}:{len(existing)}"))
    stamp = now()
    ids = []
    with project.db.transaction():
        for item in new_items:
            cur = project.db.execute(
                "INSERT INTO annotation_items (task_id, item_key, text, context_before, context_after, choices, gold,"
                " book_id, start_char, end_char, meta, origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [task.id, item.item_key if item.item_key is not None else next(drawn), item.text, item.context_before,
                 item.context_after, json.dumps(item.choices) if item.choices is not None else None, item.gold,
                 item.book_id, item.start_char, item.end_char, json.dumps(item.meta, sort_keys=True), item.origin,
                 stamp],
            )
            ids.append(cur.lastrowid)
    return ids


def set_choices(project: "Project", item_id: int, choices: dict[str, str] | None) -> None:
    with project.db.transaction():
        project.db.execute("UPDATE annotation_items SET choices = ? WHERE id = ?",
                           [json.dumps(choices) if choices is not None else None, item_id])


def book_meta(project: "Project", book_id: int) -> dict[str, Any]:
    """What is hidden when blinded: the book's title, author, year and tags (condition, group, ...)."""
    from workbench.corpus.library import get_book

    book = get_book(project, book_id)
    return {"book_id": book.id, "title": book.title, "author": book.author, "year": book.year, "tags": book.tags}


def _existing_spans(project: "Project", task: Task, origin: str) -> set[tuple]:
    rows = project.db.execute(
        "SELECT book_id, start_char, json_extract(meta, '$.model') FROM annotation_items WHERE task_id = ? AND origin = ?",
        [task.id, origin],
    )
    return {tuple(row) for row in rows.fetchall()}


def add_book_passages(
    project: "Project",
    task: "Task | str | int",
    book_ids: Sequence[int],
    *,
    per_book: int = 20,
    seed: int | None = None,
    words: int = PASSAGE_WORDS,
    state: TaskState | None = None,
) -> dict[int, int]:
    """Narrative-time items: ``per_book`` passages of whole sentences (~``words`` words) from each book.

    Seeded per book (the task's seed unless given); running it again adds nothing twice. Returns the
    number of passages added per book.
    """
    from workbench.corpus.library import book_text

    task = get_task(project, task)
    if task.kind == SUMMARY_VALIDITY:
        raise UserError("Summary-validity items are scenes with two summaries: make them with 'annotate summarize'.")
    if task.kind == NAME_CLOZE:
        raise UserError("Name-cloze items are the passages the models answered: make the task with "
                        "'palimpsest cloze human-task', which takes them from the project's name-cloze passages.")
    state = state or TaskState()
    seed = task.seed if seed is None else seed
    have = _existing_spans(project, task, "passage")
    added: dict[int, int] = {}
    for done, book_id in enumerate(book_ids):
        state.check()
        state.progress(done, len(book_ids), f"Sampling passages from book {done + 1} of {len(book_ids)}")
        text = book_text(project, book_id)
        chosen = sample_windows(windows(text, words, word_count), per_book, f"{seed}:{book_id}")
        meta = book_meta(project, book_id)
        new = [
            NewItem(text=w.text, book_id=book_id, start_char=w.start, end_char=w.end, meta=meta, origin="passage")
            for w in chosen
            if (book_id, w.start, None) not in have
        ]
        add_items(project, task, new)
        added[book_id] = len(new)
    state.progress(len(book_ids), len(book_ids), "Passages sampled")
    return added


def add_book_scenes(
    project: "Project",
    task: "Task | str | int",
    book_ids: Sequence[int],
    *,
    model: str,
    per_book: int = 10,
    seed: int | None = None,
    chars: int = SCENE_CHARS,
    context_chars: int = SCENE_CONTEXT_CHARS,
) -> list[int]:
    """Summary-validity items (without summaries yet): scenes of whole sentences (~``chars`` characters)
    with ``context_chars`` of context on each side, one item per scene and summarizing model."""
    from workbench.corpus.library import book_text

    task = get_task(project, task)
    if task.kind != SUMMARY_VALIDITY:
        raise UserError(f"Scenes with summaries belong to summary-validity tasks; '{task.name}' is a {task.kind} task.")
    seed = task.seed if seed is None else seed
    have = _existing_spans(project, task, "scene")
    for book_id in book_ids:
        text = book_text(project, book_id)
        chosen = sample_windows(windows(text, chars, char_count), per_book, f"{seed}:{book_id}")
        meta = {**book_meta(project, book_id), "model": model}
        new = []
        for w in chosen:
            if (book_id, w.start, model) in have:
                continue
            before, after = context_around(text, w.start, w.end, context_chars)
            new.append(NewItem(text=w.text, context_before=before, context_after=after, book_id=book_id,
                               start_char=w.start, end_char=w.end, meta=meta, origin="scene"))
        add_items(project, task, new)
    rows = project.db.execute(
        "SELECT id FROM annotation_items WHERE task_id = ? AND origin = 'scene' AND json_extract(meta, '$.model') = ?"
        f" AND book_id IN ({','.join('?' * len(book_ids))}) ORDER BY id",
        [task.id, model, *book_ids],
    )
    return [r[0] for r in rows.fetchall()]


def items_frame(project: "Project", task: "Task | str | int", *, include_hidden: bool = True) -> pd.DataFrame:
    """One row per item: key, text and (if asked) the hidden metadata, gold and source span."""
    task = get_task(project, task)
    rows = []
    for item in list_items(project, task):
        row: dict[str, Any] = {"item_id": item.item_key, "text": item.text, "ready": is_ready(task, item)}
        if task.kind == SUMMARY_VALIDITY:
            row["summary"] = (item.choices or {}).get("true")
            row["distorted"] = (item.choices or {}).get("distorted")
        if include_hidden:
            row.update({"gold": item.gold, "book_id": item.book_id, "start_char": item.start_char,
                        "end_char": item.end_char, "origin": item.origin,
                        "title": item.meta.get("title"), "author": item.meta.get("author"),
                        "model": item.meta.get("model"), "meta": json.dumps(item.meta, sort_keys=True)})
        rows.append(row)
    return pd.DataFrame(rows)

