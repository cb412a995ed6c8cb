"""What annotators may see. Every widget, title and file an annotator meets asks here first.

When a task is blinded, an item is shown by its place in the annotator's own order ("Item 12 of 80") and
its text only: no book, author, year, model, condition or group, no item id (ids come from wherever the
items came from: a colleague's file calls them ``gpt4o_female_001``), and the window title leaves out the
project's file name (which often names the study's conditions). ``gold`` answers are never shown, blinded
or not.
"""

from __future__ import annotations

from typing import Any

from workbench.annotation.items import Item
from workbench.annotation.tasks import Task

APP_NAME = "Palimpsest"


def item_heading(position: int, total: int) -> str:
    """The same for blinded and open tasks: the item's place in the annotator's order, never its id."""
    return f"Item {position} of {total}"


def visible_details(task: Task, item: Item) -> dict[str, str]:
    """Metadata an annotator may see: nothing when blinded; the item's id, book, author, model and tags
    otherwise."""
    if task.blinded:
        return {}
    meta: dict[str, Any] = item.meta
    shown = {"Item id": item.item_key, "Book": meta.get("title"), "Author": meta.get("author"),
             "Year": meta.get("year"), "Model": meta.get("model")}
    shown.update({str(k): v for k, v in (meta.get("tags") or {}).items()})
    shown.update({str(k): v for k, v in meta.items() if k not in ("title", "author", "year", "model", "tags", "book_id")})
    return {k: str(v) for k, v in shown.items() if v not in (None, "")}


def window_title(task: Task | None, project_name: str, section: str = "Annotate") -> str:
    if task is not None and task.blinded:
        return f"{section} — {APP_NAME}"
    return f"{project_name} — {section} — {APP_NAME}" if project_name else f"{section} — {APP_NAME}"
