"""The LLM judge: any registered model labels each REP completion with the set's template.

One judge run (``kind='rep-judge'``) per judge model and set version; its units are the ids of the
REP responses it labels (``item_id`` = response id, sample 0). The judge's raw answers are stored
like any other response; ``parser.parse_label`` turns them into labels when results are read, so a
changed synonym list re-scores without calling the judge again. Judging again picks up completions
added since, and skips those already judged.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Sequence

from workbench import jobs
from workbench.errors import UserError
from workbench.jobs import JobReport, Unit
from workbench.models.base import Backend, GenerationParams, Request, prompt_request
from workbench.models.calls import generation_process
from workbench.probes.rep.kinds import JUDGE_KIND, REP_KIND, JudgeConfig
from workbench.probes.rep.sets import StoredSet, load_set
from workbench.progress import TaskState
from workbench.prompt_templates import register_kind, save_template
from workbench.runs import Run, run_ids, runs

if TYPE_CHECKING:
    from workbench.models.prices import CostEstimate
    from workbench.models.spec import ModelSpec
    from workbench.probes.rep.setfile import RepSet
    from workbench.project import Project

KIND = JUDGE_KIND
DEFAULT_MAX_TOKENS = 16

register_kind(KIND, required=["response"], allowed=["stem", "response", "role", "labels"],
              description="REP judge: labels one completion (the text comes from the REP set file)")


def judge_params(max_tokens: int = DEFAULT_MAX_TOKENS) -> GenerationParams:
    # Greedy and seeded: the same completion gets the same verdict.
    return GenerationParams(temperature=0.0, max_tokens=max_tokens, seed=0)


def sets_in_use(project: "Project", demographics: Sequence[str] | None = None) -> list[StoredSet]:
    """Every set version some REP run used (restricted to ``demographics`` if given)."""
    ids: dict[int, None] = {}
    for run in runs(project, REP_KIND):
        for entry in run.config.sets:
            if not demographics or entry["name"] in demographics:
                ids[entry["id"]] = None
    return [load_set(project, set_id) for set_id in ids]


def completions_of(project: "Project", stored: StoredSet) -> dict[int, tuple[int, str]]:
    """response id -> (role prompt id, completion) for the successful REP completions of a set version."""
    prompt_ids = list(stored.prompt_ids.values())
    rows = project.db.execute(
        "SELECT x.id, x.item_id, x.raw FROM responses x WHERE x.run_id IN (SELECT value FROM json_each(?))"
        f" AND x.status = 'ok' AND x.item_id IN ({','.join('?' * len(prompt_ids))}) ORDER BY x.id",
        [json.dumps(run_ids(project, REP_KIND)), *prompt_ids],
    ).fetchall()
    return {response_id: (item_id, raw or "") for response_id, item_id, raw in rows}


def judge_template_text(parsed: "RepSet") -> str:
    """The set's judge template as one text, kept in the project's prompt templates for the record."""
    return f"[system]\n{parsed.judge_system}\n\n[user]\n{parsed.judge_prompt}\n"


def judge_set(project: "Project", backend: Backend, model_id: int, stored: StoredSet,
              state: TaskState | None = None, *, max_tokens: int = DEFAULT_MAX_TOKENS,
              retry_failed: bool = False) -> JobReport | None:
    completions = completions_of(project, stored)
    if not completions:
        return None
    params = judge_params(max_tokens)
    config = JudgeConfig(set={"id": stored.id, "name": stored.name, "version": stored.version, "hash": stored.hash})
    template = save_template(project, f"rep-judge-{stored.name}", judge_template_text(stored.parsed), KIND)
    # The template is kept for the record; the set version in config already fixes what the judge is asked.
    run_id = jobs.find_or_create_run(project, KIND, model_id=model_id, params=params.as_dict(), config=config,
                                     template_id=template.id, match_template=False)
    by_id = stored.prompt_by_id()

    def build(unit: Unit) -> Request:
        prompt_id, completion = completions[unit.item_id]
        role = by_id[prompt_id]
        system, user = stored.parsed.judge_messages(role, completion)
        return prompt_request(backend, user, params, system=system or None)

    units = [Unit(response_id, 0) for response_id in completions]
    return jobs.run_job(project, run_id, units, generation_process(backend, build), state, retry_failed=retry_failed)


def run_judge(project: "Project", judge: "str | ModelSpec", demographics: Sequence[str] | None = None,
              state: TaskState | None = None, *, max_tokens: int = DEFAULT_MAX_TOKENS,
              retry_failed: bool = False) -> list[JobReport]:
    """Label every REP completion (of ``demographics``, or all) with the model called ``judge``."""
    from workbench.models.catalog import open_backend, runnable_model

    spec = runnable_model(project, judge)
    sets = sets_in_use(project, demographics)
    if not sets:
        raise UserError("There are no REP completions to classify yet. Run the REP prompts on a model first.")
    reports = []
    with open_backend(spec, project) as backend:
        for stored in sets:
            report = judge_set(project, backend, spec.id, stored, state, max_tokens=max_tokens,
                               retry_failed=retry_failed)
            if report is not None:
                reports.append(report)
    return reports


def estimate_judge_cost(project: "Project", judge: "str | ModelSpec", demographics: Sequence[str] | None = None, *,
                        max_tokens: int = DEFAULT_MAX_TOKENS) -> "CostEstimate":
    """Requests, tokens and the most judging costs: one call per completion this judge has not labelled yet."""
    from workbench.models.catalog import runnable_model
    from workbench.models.prices import estimate_cost

    spec = runnable_model(project, judge)
    judged = {item for item, in project.db.execute(
        "SELECT x.item_id FROM responses x WHERE x.run_id IN (SELECT value FROM json_each(?)) AND x.status = 'ok'",
        [json.dumps(run_ids(project, KIND, model_id=spec.id))])}
    prompts = []
    for stored in sets_in_use(project, demographics):
        by_id = stored.prompt_by_id()
        for response_id, (prompt_id, completion) in completions_of(project, stored).items():
            if response_id not in judged:
                system, user = stored.parsed.judge_messages(by_id[prompt_id], completion)
                prompts.append(f"{system}\n{user}" if system else user)
    return estimate_cost(spec, prompts, max_tokens, project=project)


def judge_runs(project: "Project", judge: str) -> dict[int, list[int]]:
    """set id -> this judge model's rep-judge run ids, newest first."""
    by_set: dict[int, list[int]] = {}
    for run in reversed(runs(project, KIND, model_label=judge)):
        by_set.setdefault(run.config.set["id"], []).append(run.id)
    return by_set


def judges(project: "Project") -> list[str]:
    """Labels of the models that have judged REP completions in this project."""
    return sorted({run.model for run in runs(project, KIND) if run.model is not None})


def judge_units(project: "Project", run: Run[JudgeConfig]) -> list[Unit]:
    """One unit per successful REP completion of the run's set version (those added since included)."""
    return [Unit(response_id, 0) for response_id in completions_of(project, load_set(project, run.config.set["id"]))]
