"""Summary-validity items in steps, as the Annotate page makes them: a plan (which model, which books,
how many scenes), what it will ask and cost, the run, retrying what failed, and where each model stands.

The model work itself is ``workbench.summaries.runs.summarize_task`` (two resumable runs through the
job runner); nothing here asks a model any other way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import pandas as pd

from workbench.annotation.items import SCENE_CHARS, is_ready, list_items
from workbench.annotation.passages import char_count, sample_windows, windows
from workbench.annotation.tasks import SUMMARY_VALIDITY, Task, get_task
from workbench.errors import UserError
from workbench.jobs import run_counts
from workbench.models.prices import is_paid as is_paid  # the pages ask this module
from workbench.progress import TaskState
from workbench.runs import follow_ups, get_run, latest_run
from workbench.summaries.runs import (
    DEFAULT_MAX_ATTEMPTS,
    DISTORT_PARAMS,
    DISTORT_RUN,
    DISTORT_TEMPLATE,
    SUMMARY_PARAMS,
    SUMMARY_RUN,
    SUMMARY_TEMPLATE,
    SummaryReport,
    collect_pairs,
    distortions_of,
    run_distortions,
    run_summaries,
    scene_items,
    summaries_of,
    summarize_task,
)

if TYPE_CHECKING:
    from workbench.models.catalog import ModelSpec
    from workbench.models.prices import CostEstimate
    from workbench.project import Project
    from workbench.work import Work

MIN_SCENE_CHARS = 100


@dataclass(frozen=True)
class SummaryPlan:
    """What to make: ``per_book`` scenes of about ``chars`` characters from each book, summarized (and then
    distorted) by the project's model ``model``, answers of at most ``max_tokens`` tokens."""

    model: str
    book_ids: tuple[int, ...]
    per_book: int = 10
    seed: int | None = None
    chars: int = SCENE_CHARS
    max_tokens: int = SUMMARY_PARAMS.max_tokens
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    #: the prompt templates (the latest saved versions of these names)
    summary_template: str = SUMMARY_TEMPLATE
    distort_template: str = DISTORT_TEMPLATE

    def check(self) -> None:
        if not self.model:
            raise UserError("Choose the model that writes the summaries (add one on the Models page first).")
        if not self.book_ids:
            raise UserError("Tick at least one book to take scenes from.")
        if self.per_book < 1:
            raise UserError("Take at least one scene from each book.")
        if self.chars < MIN_SCENE_CHARS:
            raise UserError(f"A scene should be at least {MIN_SCENE_CHARS} characters long.")
        if self.max_tokens < 1:
            raise UserError("Allow the model at least one token per answer.")
        if self.max_attempts < 1:
            raise UserError("Allow at least one attempt per scene.")


def runnable_models(project: "Project") -> list["ModelSpec"]:
    """The project's models that can be asked (results imported from elsewhere cannot)."""
    from workbench.models.catalog import list_models

    return [spec for spec in list_models(project) if spec.backend != "external"]


def _summary_task(project: "Project", task: "Task | str | int") -> Task:
    task = get_task(project, task)
    if task.kind != SUMMARY_VALIDITY:
        raise UserError(f"'{task.name}' is a {task.kind} task; summaries are made for summary-validity tasks.")
    return task


def planned_scenes(project: "Project", task: "Task | str | int", plan: SummaryPlan,
                   state: TaskState | None = None) -> list[str]:
    """The scenes a run of ``plan`` will send to the model: the same sample ``summarize_task`` draws, less
    the scenes that already have both summaries from this model."""
    from workbench.corpus.library import book_text

    task = _summary_task(project, task)
    state = state or TaskState()
    seed = task.seed if plan.seed is None else plan.seed
    ready = {(item.book_id, item.start_char) for item in list_items(project, task)
             if item.origin == "scene" and item.meta.get("model") == plan.model and is_ready(task, item)}
    scenes = []
    for done, book_id in enumerate(plan.book_ids):
        state.check()
        state.progress(done, len(plan.book_ids), f"Reading book {done + 1} of {len(plan.book_ids)}")
        text = book_text(project, book_id)
        for w in sample_windows(windows(text, plan.chars, char_count), plan.per_book, f"{seed}:{book_id}"):
            if (book_id, w.start) in ready:
                continue
            scenes.append(w.text)
    state.progress(len(plan.book_ids), len(plan.book_ids), "Books read")
    return scenes


def estimate_plan_cost(project: "Project", task: "Task | str | int", plan: SummaryPlan,
                       state: TaskState | None = None) -> "CostEstimate":
    """Requests, tokens and the most a run of ``plan`` can cost: one summary and one distorted version per
    scene still to do (each answer as long as allowed; retries of unusable answers come on top)."""
    from workbench.models.catalog import get_model
    from workbench.models.prices import estimate_cost
    from workbench.prompt_templates import get_template

    plan.check()
    spec = get_model(project, plan.model)
    scenes = planned_scenes(project, task, plan, state)
    summary = get_template(project, plan.summary_template, kind=SUMMARY_TEMPLATE)
    distort = get_template(project, plan.distort_template, kind=DISTORT_TEMPLATE)
    longest_summary = " ".join(["word"] * plan.max_tokens)  # the distortion prompt quotes a summary this long at most
    prompts = [summary.render(scene=scene) for scene in scenes]
    prompts += [distort.render(summary=longest_summary)] * len(scenes)
    return estimate_cost(spec, prompts, plan.max_tokens, project=project)


def run_plan(project: "Project", task: "Task | str | int", plan: SummaryPlan, state: TaskState | None = None
             ) -> SummaryReport:
    """Sample the scenes and have the model summarize and distort them (``summarize_task``). Running the
    same plan again continues where it stopped; a cancelled run returns what it finished."""
    from workbench.models.catalog import get_model, open_backend

    plan.check()
    task = _summary_task(project, task)
    spec = get_model(project, plan.model)
    with open_backend(spec, project) as backend:
        return summarize_task(
            project, task, backend, model_label=spec.label, model_id=spec.id, book_ids=list(plan.book_ids),
            per_book=plan.per_book, seed=plan.seed, chars=plan.chars, max_attempts=plan.max_attempts,
            summary_params=replace(SUMMARY_PARAMS, max_tokens=plan.max_tokens),
            distort_params=replace(DISTORT_PARAMS, max_tokens=plan.max_tokens), state=state,
            summary_template=plan.summary_template, distort_template=plan.distort_template,
        )


def latest_runs(project: "Project", task: "Task | str | int", model_label: str) -> tuple[int | None, int | None]:
    """The latest summary run of ``model_label`` for the task and the distortion run that follows it."""
    task = get_task(project, task)
    summary = latest_run(project, SUMMARY_RUN, annotation_task=task.id, model=model_label)
    if summary is None:
        return None, None
    distort = follow_ups(project, summary, DISTORT_RUN)
    return summary.id, distort[-1].id if distort else None


def report_for(project: "Project", task: "Task | str | int", model_label: str) -> SummaryReport | None:
    """Where the model's items of the task stand (None if the model has made none)."""
    task = get_task(project, task)
    summary_run, distort_run = latest_runs(project, task, model_label)
    if summary_run is None:
        return None
    item_ids = scene_items(project, task.id, model_label)
    summaries = summaries_of(project, summary_run)
    distorted = distortions_of(project, distort_run, summaries) if distort_run is not None else {}
    ready = sum(1 for item in list_items(project, task) if item.id in set(item_ids) and is_ready(task, item))
    return SummaryReport(
        items=len(item_ids), summaries_ok=len(summaries), summaries_failed=run_counts(project, summary_run)["failed"],
        distorted_ok=len(distorted),
        distorted_failed=run_counts(project, distort_run)["failed"] if distort_run is not None else 0,
        ready=ready, summary_run=summary_run, distort_run=distort_run if distort_run is not None else 0,
    )


def retry_failed(project: "Project", task: "Task | str | int", model_label: str,
                 state: TaskState | None = None) -> SummaryReport:
    """Ask the model again for the scenes whose summary or distorted version failed (and any not asked
    yet, such as the distorted versions of summaries that failed before), through the same two runs;
    then give the items whatever pairs now exist."""
    from workbench.models.catalog import get_model, open_backend

    task = _summary_task(project, task)
    state = state or TaskState()
    summary_run, distort_run = latest_runs(project, task, model_label)
    if summary_run is None:
        raise UserError(f"The model '{model_label}' has made no summaries for '{task.name}' yet.")
    model_id = get_run(project, summary_run).model_id
    if model_id is None:
        raise UserError(f"The model '{model_label}' is no longer in the project; add it again on the Models page.")
    item_ids = scene_items(project, task.id, model_label)
    steps = [(run_summaries, summary_run)] + ([(run_distortions, distort_run)] if distort_run is not None else [])
    with open_backend(get_model(project, model_id), project) as backend:
        for run, run_id in steps:
            # the job runner's retry takes only failed units; units never asked (e.g. distortions of summaries
            # that failed before) go first
            for failed_only in (False, True):
                if state.cancelled:
                    break
                run(project, run_id, backend, item_ids, state, retry_failed=failed_only)
    if distort_run is not None:
        collect_pairs(project, summary_run, distort_run, item_ids)
    return report_for(project, task, model_label)


def models_overview(project: "Project", task: "Task | str | int") -> pd.DataFrame:
    """One row per model that made items for the task: scenes, ready items, failed summaries and failed
    distorted versions."""
    task = get_task(project, task)
    labels = [r[0] for r in project.db.execute(
        "SELECT DISTINCT json_extract(meta, '$.model') FROM annotation_items WHERE task_id = ? AND origin = 'scene'"
        " ORDER BY 1", [task.id]).fetchall() if r[0]]
    rows = []
    for label in labels:
        report = report_for(project, task, label)
        if report is None:
            continue
        rows.append({"model": label, "scenes": report.items, "ready": report.ready,
                     "summaries_failed": report.summaries_failed, "distorted_failed": report.distorted_failed})
    return pd.DataFrame(rows, columns=["model", "scenes", "ready", "summaries_failed", "distorted_failed"])



# ---------------------------------------------------------------------------------------------- as planned work
#: what the summary work changes, for the views that show it
CHANGES = ("summaries", "annotation-items")


def _retries_note(attempts: int) -> str:
    return (f"Each scene needs a summary and then a changed version of it; an unusable answer is asked again (up to "
            f"{attempts} times in all), which costs more than this.")


def summary_items_work(project: "Project", task: "Task | str | int", plan: SummaryPlan) -> "Work":
    """``run_plan`` as a ``workbench.work.Work`` (the Annotate page's items dialog and ``annotate summarize``):
    the model looked up once, the cost of every scene still to do, the question saying that retries of
    unusable answers come on top; its outcome's ``value`` is the ``SummaryReport``."""
    from workbench.models.catalog import runnable_model
    from workbench.work import Work, WorkOutcome

    plan.check()
    task = _summary_task(project, task)
    spec = runnable_model(project, plan.model)
    return Work(project, f"Summaries by {spec.label} for '{task.name}'", [spec],
                lambda state: WorkOutcome(value=run_plan(project, task.id, plan, state)),
                cost=lambda s: estimate_plan_cost(project, task.id, plan), changes=CHANGES, unit="scenes",
                note=_retries_note(plan.max_attempts), headline=lambda outcome: outcome.value.describe())


def retry_work(project: "Project", task: "Task | str | int", model_label: str) -> "Work":
    """``retry_failed`` as a ``workbench.work.Work``: about what asking again for the failed summaries and changed
    versions costs (from the prompts the two runs sent; the changed versions of the summaries made now come on
    top, and are said to)."""
    from workbench.models.catalog import runnable_model
    from workbench.models.usage import estimate_continuation
    from workbench.work import Work, WorkOutcome

    task = _summary_task(project, task)
    summary_run, distort_run = latest_runs(project, task, model_label)
    if summary_run is None:
        raise UserError(f"The model '{model_label}' has made no summaries for '{task.name}' yet.")
    spec = runnable_model(project, model_label)

    def cost(s: "ModelSpec") -> "CostEstimate | None":
        from workbench.models.prices import CostEstimate

        found = [estimate_continuation(project, run, retry_failed=True) for run in (summary_run, distort_run)
                 if run is not None]
        if any(e is None for e in found):
            return None
        return CostEstimate(sum(e.requests for e in found), sum(e.prompt_tokens for e in found),
                            sum(e.max_completion_tokens for e in found), found[0].price, found[0].local)

    return Work(project, f"Asking {spec.label} again for the failed summaries of '{task.name}'", [spec],
                lambda state: WorkOutcome(value=retry_failed(project, task.id, model_label, state)), cost=cost,
                changes=CHANGES, retry_failed=True, unit="scenes", note=_retries_note(DEFAULT_MAX_ATTEMPTS),
                headline=lambda outcome: outcome.value.describe())
