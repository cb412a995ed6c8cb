"""The validity probe's model work, planned once for the command line and the Validity page
(``workbench.work.Work``): a model asked the task (year of first publication, or narrative time) about each
sampled passage; its cost estimated from those passages, run resumably, and how it went said in the one
wording."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from workbench.progress import TaskState

if TYPE_CHECKING:
    from workbench.project import Project
    from workbench.work import Work

#: what a validity run changes, for the views that show it
CHANGES = ("validity-results",)


def validity_work(project: "Project", task: str, model: str, *, book_ids: Sequence[int] | None = None,
                  template: str | None = None, max_tokens: int | None = None, retry_failed: bool = False,
                  next_step: str = "ask again for just those to retry them") -> "Work":
    """``model`` answers ``task`` ('year' or 'narrative-time') about every sampled passage of ``book_ids`` (None:
    of every book); ``max_tokens`` the longest answer (the task's default when left out)."""
    from workbench.models.catalog import runnable_model
    from workbench.probes.validity import TASK_NAMES
    from workbench.probes.validity.run import check_task, estimate_run, run_task
    from workbench.work import Work

    check_task(task)
    spec = runnable_model(project, model)
    books = list(book_ids) if book_ids else None
    params = {"max_tokens": int(max_tokens)} if max_tokens else None

    def perform(state: TaskState):
        return run_task(project, task, spec, book_ids=books, template=template, params=params, state=state,
                        retry_failed=retry_failed)

    return Work(project, f"Asking {spec.label}: {TASK_NAMES[task]}", [spec], perform,
                cost=lambda s: estimate_run(project, task, s, book_ids=books, template=template,
                                            max_tokens=max_tokens),
                changes=CHANGES, retry_failed=retry_failed, unit="passages", next_step=next_step)
