"""How REP's runs are continued (the Jobs page, ``palimpsest continue``), as ``kinds`` declares."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench import jobs
from workbench.probes.rep import judge, run
from workbench.progress import TaskState
from workbench.runs import get_run

if TYPE_CHECKING:
    from workbench.project import Project


def resume_judge_run(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> jobs.JobReport:
    from workbench.models.catalog import get_model, open_backend
    from workbench.probes.rep.sets import load_set

    record = get_run(project, run_id)
    spec = get_model(project, record.model_id)
    stored = load_set(project, record.config.set["id"])
    with open_backend(spec, project) as backend:
        report = judge.judge_set(project, backend, spec.id, stored, state,
                                 max_tokens=record.params["max_tokens"], retry_failed=retry_failed)
    return report or jobs.JobReport(run_id=run_id, total=0, done_before=0)


def resume_sampling(project: "Project", run_id: int, state: TaskState, retry_failed: bool) -> jobs.JobReport:
    """Continue a REP or EEP run."""
    return run.continue_run(project, run_id, state, retry_failed=retry_failed)
