"""REP's kinds of run, declared once (``workbench.runs``).

- ``rep``: N completions of every role stem of the chosen REP sets (``run``); ``responses.item_id`` is the
  role prompt's id, the sample its number;
- ``rep-eep``: the same for the entity eliciting prompts of an EEP set (``entities``);
- ``rep-judge``: a judge model's label for each REP completion of one set version (``judge``);
  ``responses.item_id`` is the REP response's id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from workbench.runs import RunKind, declare_run_kind


@dataclass(frozen=True)
class SamplingConfig:
    """A REP or EEP run's config: the set versions it samples (id, name, version, hash of each) and the
    completions per stem."""

    sets: tuple[Mapping[str, Any], ...] = ()
    samples: int = 1


@dataclass(frozen=True)
class JudgeConfig:
    """A judge run's config: the set version (id, name, version, hash) whose completions it labels."""

    set: Mapping[str, Any] | None = None


REP_KIND = declare_run_kind(RunKind(
    "rep", "role-specific elicitation prompts (REP)", "stem", config=SamplingConfig,
    resume="workbench.probes.rep.resume:resume_sampling", units="workbench.probes.rep.run:sampling_units"))
JUDGE_KIND = declare_run_kind(RunKind(
    "rep-judge", "REP judge labelling completions", "completion", config=JudgeConfig,
    resume="workbench.probes.rep.resume:resume_judge_run", units="workbench.probes.rep.judge:judge_units"))
EEP_KIND = declare_run_kind(RunKind(
    "rep-eep", "entity eliciting prompts (EEP)", "stem", config=SamplingConfig,
    resume="workbench.probes.rep.resume:resume_sampling", units="workbench.probes.rep.run:sampling_units"))

#: every kind of run the REP page lists
RUN_KINDS = (REP_KIND, JUDGE_KIND, EEP_KIND)
