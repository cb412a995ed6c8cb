"""REP runs: every role stem of the chosen sets, N completions each, from one model.

A run (``kind='rep'``) covers one model and one or more set versions. Its units are
``(role prompt id, sample)``; sample ``s`` is drawn with seed ``run seed + s``. Base models get the
bare stem to continue; chat models get the set's frame around it. Asking again for the same model,
sets and settings continues the same run (nothing done twice); other settings start a new run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from workbench import jobs
from workbench.errors import UserError
from workbench.jobs import JobReport, Unit
from workbench.models.base import Backend, GenerationParams, Request, prompt_request
from workbench.models.calls import generation_process
from workbench.probes.rep.kinds import REP_KIND, SamplingConfig
from workbench.probes.rep.sets import StoredSet, current_sets, get_set, load_set
from workbench.progress import TaskState
from workbench.runs import Run, get_run

if TYPE_CHECKING:
    from workbench.models.prices import CostEstimate
    from workbench.models.spec import ModelSpec
    from workbench.project import Project

KIND = REP_KIND


@dataclass(frozen=True)
class SamplingSettings:
    samples: int = 50
    temperature: float = 1.0
    max_tokens: int = 100
    seed: int = 0
    top_p: float = 1.0
    # local backends only: generate at least this many tokens (keeps tiny test models talking)
    min_tokens: int = 0

    def check(self) -> None:
        if self.samples < 1:
            raise UserError("The number of samples per prompt must be at least 1.")
        if not 0.0 <= self.temperature <= 5.0:
            raise UserError(f"A temperature of {self.temperature} is out of range; use a value from 0 to 5 (1.0 is usual).")
        if self.max_tokens < 1:
            raise UserError("The maximum number of tokens must be at least 1.")
        if not 0.0 < self.top_p <= 1.0:
            raise UserError("top_p must be above 0 and at most 1.")

    def params(self) -> GenerationParams:
        return GenerationParams(temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens,
                                seed=self.seed, min_tokens=self.min_tokens)


def choose_sets(project: "Project", demographics: Sequence[str] | None, kind: str = "rep") -> list[StoredSet]:
    """The newest version of each named set (all sets of ``kind`` when none are named)."""
    if not demographics:
        sets = current_sets(project, kind)
        if not sets:
            raise UserError("This project has no REP sets. Import one on the Bias page or with 'palimpsest rep sets'.")
        return sets
    chosen = []
    for name in dict.fromkeys(demographics):
        stored = get_set(project, name)
        if stored.kind != kind:
            raise UserError(f"'{name}' is not a {'REP' if kind == 'rep' else 'EEP'} set.")
        chosen.append(stored)
    return chosen


def run_config(sets: Sequence[StoredSet], samples: int) -> SamplingConfig:
    return SamplingConfig(sets=tuple({"id": s.id, "name": s.name, "version": s.version, "hash": s.hash} for s in sets),
                          samples=samples)


def sampling_run(project: "Project", kind: str, model_id: int, sets: Sequence[StoredSet],
                 settings: SamplingSettings) -> int:
    """The REP or EEP run of this model on these set versions with these settings: the earlier one if
    there is one (to continue it), else a new one."""
    return jobs.find_or_create_run(project, kind, model_id=model_id, params=settings.params().as_dict(),
                                   config=run_config(sets, settings.samples))


def units_for(sets: Sequence[StoredSet], samples: int) -> list[Unit]:
    return [Unit(stored.prompt_ids[p.key], s) for stored in sets for p in stored.parsed.prompts for s in range(samples)]


def stem_request(backend: Backend, stored: StoredSet, key: str, params: GenerationParams, sample: int) -> Request:
    """Base models continue the bare stem; chat models get it inside the set's frame."""
    prompt = next(p for p in stored.parsed.prompts if p.key == key)
    frame = stored.parsed.frame
    if backend.is_chat:
        return prompt_request(backend, frame.text(prompt.stem), params, sample=sample, system=frame.system or None)
    return prompt_request(backend, prompt.stem, params, sample=sample)


def sets_of_run(project: "Project", run: Run[SamplingConfig]) -> list[StoredSet]:
    return [load_set(project, entry["id"]) for entry in run.config.sets]


def sampling_units(project: "Project", run: Run[SamplingConfig]) -> list[Unit]:
    """Every stem of the run's set versions, ``samples`` times."""
    return units_for(sets_of_run(project, run), run.config.samples)


def execute(project: "Project", run_id: int, backend: Backend, state: TaskState | None = None, *,
            retry_failed: bool = False) -> JobReport:
    """Do (or continue) the units of a REP or EEP run with an open backend."""
    run = get_run(project, run_id)
    sets = sets_of_run(project, run)
    params = GenerationParams.from_dict(run.params)
    where = {pid: (stored, key) for stored in sets for key, pid in stored.prompt_ids.items()}

    def build(unit: Unit) -> Request:
        stored, key = where[unit.item_id]
        return stem_request(backend, stored, key, params, unit.sample)

    units = units_for(sets, run.config.samples)
    return jobs.run_job(project, run_id, units, generation_process(backend, build), state, retry_failed=retry_failed)


def sampling_prompts(sets: Sequence[StoredSet], chat: bool) -> list[str]:
    """The text each stem is sent as, once per stem: in the set's frame for chat models, bare otherwise."""
    texts = []
    for stored in sets:
        frame = stored.parsed.frame
        for prompt in stored.parsed.prompts:
            texts.append("\n".join(t for t in (frame.system, frame.text(prompt.stem)) if t) if chat else prompt.stem)
    return texts


def estimate_sampling_cost(project: "Project", model: "str | ModelSpec", demographics: Sequence[str] | None = None,
                           settings: SamplingSettings = SamplingSettings(), kind: str = KIND) -> "CostEstimate":
    """Requests, tokens and the most a REP (or, ``kind='eep'``, EEP) run of ``model`` can cost: every stem
    ``settings.samples`` times, each answer as long as allowed (completions already made are counted too)."""
    from workbench.models.catalog import runnable_model
    from workbench.models.prices import estimate_cost

    settings.check()
    spec = runnable_model(project, model)
    sets = choose_sets(project, demographics, kind)
    chat = spec.params.get("chat", True) is not False  # API models are chat models unless set otherwise
    return estimate_cost(spec, sampling_prompts(sets, chat), settings.max_tokens, samples=settings.samples,
                         project=project)


def start_rep_run(project: "Project", model: "str | ModelSpec", demographics: Sequence[str] | None = None,
                  settings: SamplingSettings = SamplingSettings()) -> int:
    """Find or create the run for ``model`` and these sets and settings; returns its id."""
    from workbench.models.catalog import runnable_model

    settings.check()
    spec = runnable_model(project, model)
    sets = choose_sets(project, demographics)
    return sampling_run(project, KIND, spec.id, sets, settings)


def run_rep(project: "Project", model: "str | ModelSpec", demographics: Sequence[str] | None = None,
            settings: SamplingSettings = SamplingSettings(), state: TaskState | None = None, *,
            retry_failed: bool = False) -> JobReport:
    """Sample every role stem ``settings.samples`` times from ``model``; resumable."""
    run_id = start_rep_run(project, model, demographics, settings)
    return continue_run(project, run_id, state, retry_failed=retry_failed)


def continue_run(project: "Project", run_id: int, state: TaskState | None = None, *,
                 retry_failed: bool = False) -> JobReport:
    """Continue a REP or EEP run where it stopped (or redo only its failures)."""
    from workbench.models.catalog import get_model, open_backend

    spec = get_model(project, get_run(project, run_id).model_id)
    with open_backend(spec, project) as backend:
        return execute(project, run_id, backend, state, retry_failed=retry_failed)
