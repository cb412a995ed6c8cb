"""The REP probe's model work, planned once for the command line and the Bias page (``workbench.work.Work``):
REP prompts on some models, the entity eliciting prompts, and a judge labelling completions. Each looks its
models up once, estimates every stem ``samples`` times (answers as long as allowed), runs resumably, and says
how it went."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from workbench.progress import TaskState

if TYPE_CHECKING:
    from workbench.probes.rep.run import SamplingSettings
    from workbench.project import Project
    from workbench.work import Work

#: what REP work changes, for the views that show it
CHANGES = ("rep-results",)


def _specs(project: "Project", models: Sequence[str]):
    from workbench.models.catalog import runnable_model

    return [runnable_model(project, label) for label in models]


def rep_work(project: "Project", models: Sequence[str], demographics: Sequence[str] | None,
             settings: "SamplingSettings", *, retry_failed: bool = False) -> "Work":
    """The REP prompts of ``demographics`` (None: every set) on each of ``models`` in turn."""
    from workbench.probes.rep.run import estimate_sampling_cost, run_rep
    from workbench.work import Work

    settings.check()
    specs = _specs(project, models)

    def perform(state: TaskState):
        reports = []
        for spec in specs:
            state.check()
            reports.append(run_rep(project, spec, demographics, settings, state, retry_failed=retry_failed))
        return reports

    return Work(project, f"REP prompts on {', '.join(models)}", specs, perform,
                cost=lambda spec: estimate_sampling_cost(project, spec, demographics, settings),
                changes=CHANGES, retry_failed=retry_failed, unit="completions")


def eep_work(project: "Project", models: Sequence[str], settings: "SamplingSettings", *,
             set_name: str = "eep") -> "Work":
    """The entity eliciting prompts on each of ``models`` in turn (stopping at the first run that did not end)."""
    from workbench.probes.rep.entities import run_eep
    from workbench.probes.rep.run import estimate_sampling_cost
    from workbench.work import Work

    settings.check()
    specs = _specs(project, models)

    def perform(state: TaskState):
        reports = []
        for spec in specs:
            state.check()
            reports.append(run_eep(project, spec, settings, set_name=set_name, state=state))
            if reports[-1].status != "done":
                break
        return reports

    return Work(project, f"Entity eliciting prompts on {', '.join(models)}", specs, perform,
                cost=lambda spec: estimate_sampling_cost(project, spec, [set_name], settings, kind="eep"),
                changes=CHANGES, unit="completions")


def judge_work(project: "Project", judge: str, demographics: Sequence[str] | None = None, *,
               max_tokens: int | None = None, retry_failed: bool = False) -> "Work":
    """``judge`` labels every REP completion it has not labelled yet (one run per set version)."""
    from workbench.probes.rep.judge import DEFAULT_MAX_TOKENS, estimate_judge_cost, run_judge
    from workbench.work import Work

    tokens = DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens
    specs = _specs(project, [judge])
    return Work(project, f"Judge {judge}", specs,
                lambda state: run_judge(project, specs[0], demographics, state, max_tokens=tokens,
                                        retry_failed=retry_failed),
                cost=lambda spec: estimate_judge_cost(project, spec, demographics, max_tokens=tokens),
                changes=CHANGES, retry_failed=retry_failed, unit="labels")
