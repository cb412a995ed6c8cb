"""Year and narrative-time runs on any registered model, through the one job runner.

Run kinds ``validity-year`` and ``validity-narrative-time``; in each, ``responses.item_id`` is a
``validity_passages`` id and every passage is asked once. The raw answer is stored and parsed when read
(``parsers``). Defaults: temperature 0, a short answer (``prompting.DEFAULT_MAX_TOKENS``), and for base
models a stop at the end of the line.

Asking again for the same task, model, template, parameters and passages continues the earlier run
(``jobs.find_or_create_run``): only passages without an answer are asked; ``retry_failed`` asks again
only where the call failed. The run's ``config`` names the task and the passage ids, so the Jobs page
and ``palimpsest continue`` can continue it (``resume_run``). ``estimate_run`` says, before a run, how
many requests and tokens it takes and at most what it costs.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Sequence

from workbench.errors import UserError
from workbench.jobs import JobReport, Unit, run_job
from workbench.models.base import GenerationParams, prompt_request
from workbench.models.catalog import runnable_model
from workbench.probes.validity import TASK_NAMES, TASKS
from workbench.probes.validity.kinds import RUN_KINDS, TaskConfig
from workbench.probes.validity.prompting import DEFAULT_MAX_TOKENS, DEFAULT_TEMPLATES, task_prompt
from workbench.progress import TaskState
from workbench.prompt_templates import Template, get_template, template_by_id
from workbench.runs import Run, find_or_create_run, get_run

if TYPE_CHECKING:
    from workbench.models.base import Backend
    from workbench.models.catalog import ModelSpec
    from workbench.models.prices import CostEstimate
    from workbench.project import Project

TASK_OF_KIND = {kind: task for task, kind in RUN_KINDS.items()}


def check_task(task: str) -> str:
    if task not in TASKS:
        raise UserError(f"'{task}' is not a task here. Choose {' or '.join(TASKS)}.")
    return task


def default_params(task: str, chat: bool, **changes: Any) -> GenerationParams:
    values = {"temperature": 0.0, "max_tokens": DEFAULT_MAX_TOKENS[task], "stop": () if chat else ("\n",), "seed": 0}
    values.update({k: v for k, v in changes.items() if v is not None})
    return GenerationParams.from_dict(values)


def passage_ids(project: "Project", book_ids: Sequence[int] | None = None) -> list[int]:
    """The passages a run covers: every stored passage, or those of ``book_ids``."""
    rows = project.db.execute("SELECT id, book_id FROM validity_passages ORDER BY book_id, id").fetchall()
    chosen = None if book_ids is None else {int(b) for b in book_ids}
    ids = [pid for pid, book in rows if chosen is None or book in chosen]
    if not ids:
        raise UserError("There are no passages to ask about. Sample passages from the books first "
                        "('palimpsest validity passages'), or import them from a file.")
    return ids


def load_passages(project: "Project", ids: Sequence[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        found.update(project.db.execute(
            f"SELECT id, passage FROM validity_passages WHERE id IN ({','.join('?' * len(chunk))})", chunk).fetchall())
    missing = [i for i in ids if i not in found]
    if missing:
        raise UserError(f"{len(missing)} passage(s) of this run no longer exist (they were sampled again). "
                        "Start a new run on the current passages.")
    return found


def task_template(project: "Project", task: str, template: "str | Template | None" = None) -> Template:
    chosen = template if isinstance(template, Template) else get_template(project, template or DEFAULT_TEMPLATES[task])
    if chosen.kind != RUN_KINDS[task]:
        raise UserError(f"The template '{chosen.label}' is a {chosen.kind} template, not one for the "
                        f"{TASK_NAMES[task]} task ({RUN_KINDS[task]}).")
    return chosen


def _opened(project: "Project", spec: "ModelSpec", backend: "Backend | None"):
    if backend is not None:
        return contextlib.nullcontext(backend)
    from workbench.models.catalog import open_backend

    return open_backend(spec, project)


def run_task(project: "Project", task: str, model: "str | int | ModelSpec", *, book_ids: Sequence[int] | None = None,
             template: "str | Template | None" = None, params: dict[str, Any] | None = None,
             state: TaskState | None = None, retry_failed: bool = False, backend: "Backend | None" = None) -> JobReport:
    """Ask ``model`` the ``task`` ('year' or 'narrative-time') about each passage; store every raw answer."""
    check_task(task)
    spec = runnable_model(project, model)
    chosen = task_template(project, task, template)
    ids = passage_ids(project, book_ids)
    with _opened(project, spec, backend) as opened:
        generation = default_params(task, opened.is_chat, **(params or {}))
        run_id = find_or_create_run(project, RUN_KINDS[task], model_id=spec.id, template_id=chosen.id,
                                    params=generation.as_dict(), config=TaskConfig(task=task, passage_ids=tuple(ids)),
                                    total=len(ids))
        return _execute(project, run_id, opened, chosen, ids, generation, state, retry_failed)


def _execute(project, run_id, backend, template, ids, params, state, retry_failed) -> JobReport:
    from workbench.models.calls import generation_process

    passages = load_passages(project, ids)

    def build_request(unit: Unit):
        return prompt_request(backend, task_prompt(template, passages[unit.item_id]), params)

    return run_job(project, run_id, [Unit(i) for i in ids], generation_process(backend, build_request), state,
                   retry_failed=retry_failed)


def estimate_run(project: "Project", task: str, model: "str | int | ModelSpec", *,
                 book_ids: Sequence[int] | None = None, template: "str | Template | None" = None,
                 max_tokens: int | None = None) -> "CostEstimate":
    """Requests, prompt tokens, answer tokens at most, and the most the run can cost (local models: nothing)."""
    from workbench.models.prices import estimate_cost

    check_task(task)
    spec = runnable_model(project, model)
    chosen = task_template(project, task, template)
    ids = passage_ids(project, book_ids)
    prompts = (task_prompt(chosen, text) for text in load_passages(project, ids).values())
    return estimate_cost(spec, prompts, max_tokens or DEFAULT_MAX_TOKENS[task], project=project)


def passage_units(project: "Project", run: Run[TaskConfig]) -> list[Unit]:
    """One unit per passage the run's config lists (imported answers list none)."""
    return [Unit(int(i)) for i in run.config.passage_ids or ()]


def resume_run(project: "Project", run_id: int, state: TaskState | None = None, retry_failed: bool = False) -> JobReport:
    """Continue (or retry the failures of) a year or narrative-time run from what its row recorded."""
    from workbench.models.catalog import get_model, open_backend

    run = get_run(project, run_id)
    if run.config.imported_from:
        raise UserError(f"Run {run_id} holds answers imported from {run.config.imported_from}; it has no model "
                        "to ask. Import the file again to add answers it lacks.")
    ids = [unit.item_id for unit in passage_units(project, run)]
    if run.kind not in TASK_OF_KIND or run.model_id is None or not ids:
        raise UserError(f"Run {run_id} does not say which model and passages it covers, so it cannot be continued.")
    spec = runnable_model(project, get_model(project, int(run.model_id)))
    template = template_by_id(project, run.template_id)
    with open_backend(spec, project) as backend:
        return _execute(project, run_id, backend, template, ids, GenerationParams.from_dict(run.params), state,
                        retry_failed)
