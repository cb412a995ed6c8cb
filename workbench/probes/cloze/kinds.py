"""The name cloze's kinds of run, declared once (``workbench.runs``); in each, ``responses.item_id`` is the
passage id (a ``cloze_passages`` row) and there is one sample.

- ``cloze``: the prompted model's answers (``run``), or published results imported from files (``gpt4books``);
- ``cloze-logprob``: the log-probability of the true name after the prompt (``run``);
- ``cloze-mlm``: the masked-language-model baseline (``mlm``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from workbench.runs import RunKind, declare_run_kind, optional


@dataclass(frozen=True)
class ClozeConfig:
    """A prompted run's config: the passages it asks (``passage_ids``). An import of published results names
    its files instead (``format``, ``imported_from``, and per file its name, rows and book): its responses
    say which passages it holds."""

    passage_ids: tuple[int, ...] | None = optional()
    format: str | None = optional()
    imported_from: str | None = optional()
    files: tuple[Mapping[str, Any], ...] | None = optional()


@dataclass(frozen=True)
class LogprobConfig:
    """A log-probability run's config: its passages, and whether the model read the prompt as a chat."""

    passage_ids: tuple[int, ...] = ()
    chat: bool = False


@dataclass(frozen=True)
class MlmConfig:
    """A masked-LM baseline run's config: its passages."""

    passage_ids: tuple[int, ...] = ()


def _mlm_generation(run: dict) -> str:
    return f"the {run['generation'].get('top_k', 5)} most probable fillers kept; the first is the answer"


CLOZE_KIND = declare_run_kind(RunKind(
    "cloze", "name cloze, prompted model", "passage", config=ClozeConfig,
    resume="workbench.probes.cloze.run:resume_run", units="workbench.probes.cloze.run:passage_units"))
LOGPROB_KIND = declare_run_kind(RunKind(
    "cloze-logprob", "name cloze, log-probability of the true name", "passage",
    generation=lambda _run: "no text generated: the expected answer is scored", config=LogprobConfig,
    resume="workbench.probes.cloze.run:resume_run", units="workbench.probes.cloze.run:passage_units"))
MLM_KIND = declare_run_kind(RunKind(
    "cloze-mlm", "name cloze, masked-language-model baseline", "passage", generation=_mlm_generation,
    config=MlmConfig, resume="workbench.probes.cloze.mlm:resume_mlm", units="workbench.probes.cloze.run:passage_units"))

#: the kinds whose responses point at ``cloze_passages`` rows
RUN_KINDS = (CLOZE_KIND, MLM_KIND, LOGPROB_KIND)
#: the kinds whose answers are names (scored against the passage's name)
ANSWER_KINDS = (CLOZE_KIND, MLM_KIND)
