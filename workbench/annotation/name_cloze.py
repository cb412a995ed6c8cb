"""Human name cloze: a task whose items are masked passages given by the name-cloze probe.

Annotation is a service below the probes, so it does not read the probe's passages itself: the probe passes
them in as plain data (``create_name_cloze_task``), as the REP probe passes texts to ``create_label_task``.
Each passage keeps its gold name in ``gold`` (never shown) and the probe's passage id, the book and its title,
author and year in the hidden ``meta`` (shown only when the task is not blinded, which it is by default).

Answers are stored as typed (``value``), an empty value meaning "don't know". Annotation does not score them:
the name-cloze probe reads them back (``annotations_frame``, ``items_frame``) and scores them with the very
function that scores a model's answers, so a person and a model giving the same string get the same mark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping

from workbench.annotation.items import NewItem, add_items
from workbench.annotation.tasks import NAME_CLOZE, Task, create_task, delete_task, get_task
from workbench.errors import UserError

if TYPE_CHECKING:
    from workbench.project import Project


def create_name_cloze_task(
    project: "Project",
    name: str,
    passages: Iterable[Mapping[str, Any]],
    *,
    codebook: str | None = None,
    blinded: bool = True,
    per_annotator: int | None = None,
    overlap: float = 0.2,
    seed: int = 0,
) -> Task:
    """A name-cloze task with its items, created together (nothing is left behind if a passage is invalid).

    Each passage is a mapping with ``text`` (the passage, its name replaced by ``[MASK]``), ``gold`` (the
    hidden name), and optionally ``book_id`` and ``meta`` (hidden metadata: the probe puts its passage id,
    title, author and year there). Items get opaque keys, so their ids say nothing about the book."""
    task = create_task(project, name, NAME_CLOZE, codebook=codebook, blinded=blinded, per_annotator=per_annotator,
                       overlap=overlap, seed=seed)
    try:
        new = []
        for k, passage in enumerate(passages, start=1):
            text = str(passage.get("text") or "").strip()
            gold = str(passage.get("gold") or "").strip()
            if not text or not gold:
                raise UserError(f"Passage {k} has no text or no hidden name; it cannot be annotated.")
            new.append(NewItem(text=text, gold=gold, book_id=passage.get("book_id"),
                               meta=dict(passage.get("meta") or {}), origin="passage"))
        if not new:
            raise UserError("There are no passages to put in the task: choose books that have name-cloze passages.")
        add_items(project, task, new)
    except BaseException:
        delete_task(project, task)
        raise
    return get_task(project, task.id)


def name_cloze_tasks(project: "Project") -> list[Task]:
    """Every name-cloze task of the project, oldest first."""
    from workbench.annotation.tasks import list_tasks

    return [task for task in list_tasks(project) if task.kind == NAME_CLOZE]
