"""Name-cloze runs on any registered model, through the one job runner.

Run kinds (``runs.kind``); in each, ``responses.item_id`` is the passage id and there is one sample:

- ``cloze`` (the kinds are declared in ``kinds``): the prompt template around each passage; the model's raw answer is stored, scored when
  read (``score``). Defaults: temperature 0, at most 16 new tokens; base models stop at ``</name>``
  (chat models are not cut, so an answer naming two people stays visible and is scored wrong).
- ``cloze-logprob`` (local models): the log-probability (natural log, summed over tokens) of the
  expected answer ``<name>GOLD</name>`` right after the prompt (see ``prompting.expected_answer``),
  stored in ``responses.logprob``; ``raw`` holds the scored continuation. Higher = the model finds the
  true name more likely. Analyses average it per book beside exact-match accuracy.

Starting a run with the same model, kind, template, parameters and passages as an earlier one
continues that run (``jobs.find_or_create_run``; only missing passages are asked); ``retry_failed``
redoes only failures. A run's ``config`` records the passage ids, so it can be resumed later from the
Jobs page (``resume_run`` here, ``mlm.resume_mlm`` for the masked-LM baseline, as ``kinds`` declares).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from workbench.errors import UserError
from workbench.jobs import JobReport, Outcome, Unit, run_job
from workbench.models.base import GenerationParams, Message, prompt_request
from workbench.models.calls import noting
from workbench.models.catalog import runnable_model
from workbench.probes.cloze.kinds import CLOZE_KIND, LOGPROB_KIND, ClozeConfig, LogprobConfig
from workbench.probes.cloze.passages import select_passage_ids
from workbench.probes.cloze.prompting import DEFAULT_TEMPLATE, cloze_prompt, expected_answer
from workbench.progress import TaskState
from workbench.prompt_templates import Template, get_template, template_by_id
from workbench.runs import Run, find_or_create_run, get_run

if TYPE_CHECKING:
    from workbench.models.base import Backend
    from workbench.models.catalog import ModelSpec
    from workbench.project import Project

DEFAULT_MAX_TOKENS = 16


def default_params(chat: bool, **changes: Any) -> GenerationParams:
    """Greedy decoding, a few tokens, and for base models a stop after the closing tag."""
    stop = () if chat else ("</name>",)
    values = {"temperature": 0.0, "max_tokens": DEFAULT_MAX_TOKENS, "stop": stop, "seed": 0}
    values.update({k: v for k, v in changes.items() if v is not None})
    return GenerationParams.from_dict(values)


@dataclass
class Selection:
    """Which passages a run covers; conditions combine (AND). Empty: every extracted passage."""

    book_ids: list[int] | None = None
    tags: dict[str, str] | None = None
    book_set: str | None = None
    include_imported: bool = False

    def passage_ids(self, project: "Project") -> list[int]:
        ids = select_passage_ids(
            project, book_ids=self.book_ids, tags=self.tags, book_set=self.book_set,
            origin=None if self.include_imported else "extracted",
        )
        if not ids:
            raise UserError(
                "There are no passages to run on. Extract passages first ('palimpsest cloze extract'), "
                "or check the books and tags you chose."
            )
        return ids


def load_passages(project: "Project", ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """passage id -> (passage, gold) for a run's passages; ``UserError`` if some were deleted since."""
    found: dict[int, tuple[str, str]] = {}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        rows = project.db.execute(
            f"SELECT id, passage, gold FROM cloze_passages WHERE id IN ({','.join('?' * len(chunk))})", chunk
        ).fetchall()
        found.update({r[0]: (r[1], r[2]) for r in rows})
    missing = [i for i in ids if i not in found]
    if missing:
        raise UserError(
            f"{len(missing)} passage(s) of this run no longer exist (they were extracted again). "
            "Start a new run on the current passages."
        )
    return found


_passages = load_passages  # the earlier private name, still used by workbench.probes.cloze.plan


def opened_backend(project: "Project", spec: "ModelSpec", backend: "Backend | None"):
    """The given backend (left open), or one opened for the run (closed afterwards)."""
    if backend is not None:
        return contextlib.nullcontext(backend)
    from workbench.models.catalog import open_backend

    return open_backend(spec, project)


def run_cloze(
    project: "Project",
    model: "str | int | ModelSpec",
    *,
    template: str | Template = DEFAULT_TEMPLATE,
    selection: Selection | None = None,
    passage_ids: Sequence[int] | None = None,
    params: dict[str, Any] | None = None,
    state: TaskState | None = None,
    retry_failed: bool = False,
    backend: "Backend | None" = None,
) -> JobReport:
    """Ask ``model`` to fill the name in each selected passage; store every raw answer.

    ``template`` is a template name (latest version) or a ``Template``; ``params`` change the default
    generation parameters (e.g. ``{"max_tokens": 24}``). ``backend`` lets a caller reuse an open model.
    Returns the job report (``report.run_id`` is the run).
    """
    spec = runnable_model(project, model)
    chosen = template if isinstance(template, Template) else get_template(project, template, kind="cloze")
    if chosen.kind != "cloze":
        raise UserError(f"The template '{chosen.label}' is a {chosen.kind} template, not a cloze template.")
    ids = list(passage_ids) if passage_ids is not None else (selection or Selection()).passage_ids(project)
    with opened_backend(project, spec, backend) as opened:
        generation = default_params(opened.is_chat, **(params or {}))
        run_id = find_or_create_run(project, CLOZE_KIND, model_id=spec.id, template_id=chosen.id,
                                    params=generation.as_dict(), config=ClozeConfig(passage_ids=tuple(ids)),
                                    total=len(ids))
        return _execute_cloze(project, run_id, opened, chosen, ids, generation, state, retry_failed)


def _execute_cloze(project, run_id, backend, template, ids, params, state, retry_failed) -> JobReport:
    from workbench.models.calls import generation_process

    passages = load_passages(project, ids)

    def build_request(unit: Unit):
        return prompt_request(backend, cloze_prompt(template, passages[unit.item_id][0]), params)

    units = [Unit(i) for i in ids]
    return run_job(project, run_id, units, generation_process(backend, build_request), state, retry_failed=retry_failed)


def run_logprob(
    project: "Project",
    model: "str | int | ModelSpec",
    *,
    template: str | Template = DEFAULT_TEMPLATE,
    selection: Selection | None = None,
    passage_ids: Sequence[int] | None = None,
    state: TaskState | None = None,
    retry_failed: bool = False,
    backend: "Backend | None" = None,
) -> JobReport:
    """Score the gold answer's log-probability after each prompt (local models: hf, gguf)."""
    spec = runnable_model(project, model)
    chosen = template if isinstance(template, Template) else get_template(project, template, kind="cloze")
    ids = list(passage_ids) if passage_ids is not None else (selection or Selection()).passage_ids(project)
    with opened_backend(project, spec, backend) as opened:
        if "continuation_logprob" not in opened.capabilities:
            raise UserError(
                f"'{spec.label}' cannot score a given answer (only local models can). "
                "Use exact-match accuracy for this model instead."
            )
        run_id = find_or_create_run(project, LOGPROB_KIND, model_id=spec.id, template_id=chosen.id, params={},
                                    config=LogprobConfig(passage_ids=tuple(ids), chat=opened.is_chat), total=len(ids))
        return _execute_logprob(project, run_id, opened, chosen, ids, state, retry_failed)


def _execute_logprob(project, run_id, backend, template, ids, state, retry_failed) -> JobReport:
    passages = load_passages(project, ids)
    units = [Unit(i) for i in ids]
    return run_job(project, run_id, units, logprob_process(backend, template, passages), state, retry_failed=retry_failed)


def logprob_process(backend: "Backend", template: Template, passages: dict[int, tuple[str, str]]):
    """A job ``Process``: one ``continuation_logprob`` call per passage."""

    def process(units: Sequence[Unit], state: TaskState) -> Iterable[tuple[Unit, Outcome]]:
        for unit in units:
            state.check()
            passage, gold = passages[unit.item_id]
            prompt = cloze_prompt(template, passage)
            context: str | tuple[Message, ...] = (Message("user", prompt),) if backend.is_chat else prompt
            answer = expected_answer(gold, chat=backend.is_chat)
            try:
                value = backend.continuation_logprob(context, answer)
            except UserError as exc:
                yield unit, Outcome.failure(str(exc), prompt=prompt)
                continue
            yield unit, Outcome(raw=answer, prompt=prompt, logprob=value)

    return noting(process, backend)


# ---------------------------------------------------------------------------- resuming from the Jobs page


def passage_units(project: "Project", run: Run) -> list[Unit]:
    """One unit per passage the run's config lists (an import of published results lists none)."""
    return [Unit(int(i)) for i in run.config.passage_ids or ()]


def run_inputs(project: "Project", run_id: int) -> tuple[Run, list[int], "ModelSpec"]:
    """A stored name-cloze run, its passage ids and its model, checked so that the run can be continued."""
    from workbench.models.catalog import get_model

    run = get_run(project, run_id)
    ids = [unit.item_id for unit in passage_units(project, run)]
    if run.model_id is None or not ids:
        raise UserError(f"Run {run_id} does not say which model and passages it covers, so it cannot be continued.")
    return run, ids, runnable_model(project, get_model(project, int(run.model_id)))


def resume_run(project: "Project", run_id: int, state: TaskState | None = None, retry_failed: bool = False) -> JobReport:
    """Continue (or retry the failures of) a ``cloze`` or ``cloze-logprob`` run (``mlm`` continues its own)."""
    from workbench.models.catalog import open_backend

    run, ids, spec = run_inputs(project, run_id)
    with open_backend(spec, project) as backend:
        if run.kind == CLOZE_KIND:
            template = template_by_id(project, run.template_id)
            params = GenerationParams.from_dict(run.params)
            return _execute_cloze(project, run_id, backend, template, ids, params, state, retry_failed)
        if run.kind == LOGPROB_KIND:
            template = template_by_id(project, run.template_id)
            return _execute_logprob(project, run_id, backend, template, ids, state, retry_failed)
    raise UserError(f"Run {run_id} is a {run.kind} run, not a prompted name-cloze run.")
