"""Items made elsewhere: a CSV or TSV with ``item_id`` and ``text`` and an optional ``gold``.

Summary-validity files also need ``summary`` (the true one) and ``distorted``. Any other column is kept
as hidden metadata (e.g. model, condition, group), shown only when the task is not blinded. The whole
file is checked first; if anything is wrong, nothing is imported and every problem is listed by line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from workbench.annotation.durations import parse_duration
from workbench.annotation.items import NewItem, add_items, items_by_key
from workbench.annotation.tasks import LABEL, NARRATIVE_TIME, SUMMARY_VALIDITY, Task, get_task
from workbench.errors import UserError
from workbench.tabular import read_rows, refuse

if TYPE_CHECKING:
    from workbench.project import Project

BASE_COLUMNS = ("item_id", "text")


def import_items(project: "Project", task: "Task | str | int", path: str | Path) -> int:
    task = get_task(project, task)
    required = BASE_COLUMNS + (("summary", "distorted") if task.kind == SUMMARY_VALIDITY else ())
    header, rows = read_rows(path, required, ("gold",))
    existing = set(items_by_key(project, task))
    seen: dict[str, int] = {}
    problems: list[str] = []
    new: list[NewItem] = []
    extra_columns = [h for h in header if h and h not in required and h != "gold"]
    for row in rows:
        v = row.values
        key = v["item_id"]
        where = f"line {row.line}"
        if not key:
            problems.append(f"{where}: the item_id is empty.")
            continue
        if key in seen:
            problems.append(f"{where}: item_id {key} already appears on line {seen[key]}.")
            continue
        seen[key] = row.line
        if key in existing:
            problems.append(f"{where}: task '{task.name}' already has an item {key}.")
        if not v["text"].strip():
            problems.append(f"{where}: the text of item {key} is empty.")
        gold = v.get("gold", "").strip() or None
        if gold is not None:
            gold, problem = _check_gold(task, gold)
            if problem:
                problems.append(f"{where}: {problem}")
        choices = None
        if task.kind == SUMMARY_VALIDITY:
            choices = {"true": v["summary"].strip(), "distorted": v["distorted"].strip()}
            if not choices["true"] or not choices["distorted"]:
                problems.append(f"{where}: item {key} needs both a summary and a distorted summary.")
            elif choices["true"] == choices["distorted"]:
                problems.append(f"{where}: the two summaries of item {key} are identical.")
        meta = {c: v[c] for c in extra_columns if v.get(c, "") != ""}
        new.append(NewItem(text=v["text"].strip(), item_key=key, choices=choices, gold=gold, meta=meta, origin="imported"))
    refuse(path, problems)
    add_items(project, task, new)
    return len(new)


def _check_gold(task: Task, gold: str) -> tuple[str, str]:
    if task.kind == LABEL:
        match = next((label for label in task.labels if label.lower() == gold.lower()), None)
        if match is None:
            return gold, f"gold label '{gold}' is not one of {', '.join(task.labels)}."
        return match, ""
    if task.kind == NARRATIVE_TIME:
        try:
            return f"{parse_duration(gold, default_unit='minutes').minutes:g}", ""
        except UserError as exc:
            return gold, f"gold duration: {exc}"
    if gold.lower() not in ("true", "distorted"):
        return gold, "gold of a summary-validity item is not used; leave the column out."
    return gold.lower(), ""
