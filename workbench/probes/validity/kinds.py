"""The downstream tasks' kinds of run, declared once (``workbench.runs``): one per task; in each,
``responses.item_id`` is a ``validity_passages`` id. A run asks a model (``run``), or holds answers imported
from a file (``predictions``)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.probes.validity import NARRATIVE_TIME, YEAR
from workbench.runs import RunKind, declare_run_kind, optional


@dataclass(frozen=True)
class TaskConfig:
    """A task run's config: the task, and the passages it asks (``passage_ids``); answers imported from a file
    name their passages by number and digest instead, with the file's name and format."""

    task: str = ""
    passage_ids: tuple[int, ...] | None = optional()
    passages: int | None = optional()
    passages_sha256: str | None = optional()
    imported_from: str | None = optional()
    format: str | None = optional()


YEAR_KIND = declare_run_kind(RunKind(
    "validity-year", "year of first publication from a passage", "passage", config=TaskConfig,
    resume="workbench.probes.validity.run:resume_run", units="workbench.probes.validity.run:passage_units"))
NARRATIVE_TIME_KIND = declare_run_kind(RunKind(
    "validity-narrative-time", "narrative time of a passage", "passage", config=TaskConfig,
    resume="workbench.probes.validity.run:resume_run", units="workbench.probes.validity.run:passage_units"))

#: task -> its kind of run
RUN_KINDS = {YEAR: YEAR_KIND, NARRATIVE_TIME: NARRATIVE_TIME_KIND}
