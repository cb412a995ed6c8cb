"""The masked-LM baseline (run kind ``cloze-mlm``): what an encoder such as BERT puts in the gap.

The model reads the passage alone (no instructions), with ``[MASK]`` replaced by its own mask token,
and its top-1 fill is the answer: ``raw`` is that token as the tokenizer writes it, ``extra`` holds the
top-k fills with probabilities. It is scored by the same scorer as the prompted runs, so it shows how
often a language model would find the name from the context alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

from workbench.errors import UserError
from workbench.jobs import JobReport, Outcome, Unit, run_job
from workbench.models.calls import noting
from workbench.models.catalog import runnable_model
from workbench.probes.cloze import MASK
from workbench.probes.cloze.kinds import MLM_KIND, MlmConfig
from workbench.probes.cloze.run import Selection, load_passages, opened_backend, run_inputs
from workbench.progress import TaskState
from workbench.runs import find_or_create_run

if TYPE_CHECKING:
    from workbench.models.base import Backend
    from workbench.models.catalog import ModelSpec
    from workbench.project import Project

BATCH = 16


def masked_text(passage: str, mask_token: str) -> str:
    """The passage with the probe's ``[MASK]`` written as the model's own mask token."""
    return passage.replace(MASK, mask_token)


def run_mlm(
    project: "Project",
    model: "str | int | ModelSpec",
    *,
    selection: Selection | None = None,
    passage_ids: Sequence[int] | None = None,
    top_k: int = 5,
    state: TaskState | None = None,
    retry_failed: bool = False,
    backend: "Backend | None" = None,
) -> JobReport:
    """Fill each selected passage's mask with a masked language model; store top-1 (and top-k)."""
    spec = runnable_model(project, model)
    ids = list(passage_ids) if passage_ids is not None else (selection or Selection()).passage_ids(project)
    with opened_backend(project, spec, backend) as opened:
        if opened.mask_token is None:
            raise UserError(
                f"'{spec.label}' has no mask token: the baseline needs a masked language model such as BERT."
            )
        run_id = find_or_create_run(project, MLM_KIND, model_id=spec.id, params={"top_k": top_k},
                                    config=MlmConfig(passage_ids=tuple(ids)), total=len(ids))
        return execute_mlm(project, run_id, opened, ids, top_k, state, retry_failed)


def execute_mlm(project, run_id, backend, ids, top_k, state, retry_failed) -> JobReport:
    passages = load_passages(project, ids)
    units = [Unit(i) for i in ids]
    return run_job(project, run_id, units, mlm_process(backend, passages, top_k), state, retry_failed=retry_failed)


def mlm_process(backend: "Backend", passages: dict[int, tuple[str, str]], top_k: int):
    """A job ``Process``: batches of passages through ``fill_mask``; a batch that fails is retried one by
    one so a single bad passage fails alone."""
    mask = backend.mask_token

    def fill(units: Sequence[Unit]) -> list[tuple[Unit, Outcome]]:
        texts = [masked_text(passages[u.item_id][0], mask) for u in units]
        try:
            fills = backend.fill_mask(texts, top_k=top_k)
        except UserError as exc:
            if len(units) == 1:
                return [(units[0], Outcome.failure(str(exc), prompt=texts[0]))]
            return [pair for u in units for pair in fill([u])]
        return [
            (u, Outcome(raw=options[0][0] if options else "", prompt=text,
                        extra={"top_k": [[token, round(float(p), 6)] for token, p in options]}))
            for u, text, options in zip(units, texts, fills)
        ]

    def process(units: Sequence[Unit], state: TaskState) -> Iterable[tuple[Unit, Outcome]]:
        for start in range(0, len(units), BATCH):
            state.check()
            yield from fill(units[start : start + BATCH])

    return noting(process, backend)


def resume_mlm(project: "Project", run_id: int, state: TaskState | None = None,
               retry_failed: bool = False) -> JobReport:
    """Continue (or retry the failures of) a ``cloze-mlm`` run."""
    from workbench.models.catalog import open_backend

    run, ids, spec = run_inputs(project, run_id)
    with open_backend(spec, project) as backend:
        return execute_mlm(project, run_id, backend, ids, int(run.params.get("top_k", 5)), state, retry_failed)
