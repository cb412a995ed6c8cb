"""What this probe's runs share: reading their responses back, the job process that queries an n-gram index,
and running a job on an open model (membership scores and surprisal)."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import pandas as pd

from workbench.errors import UserError
from workbench.jobs import JobReport, Outcome, Unit, run_job
from workbench.progress import TaskState
from workbench.runs import responses as stored_responses
from workbench.runs import runs

if TYPE_CHECKING:
    from workbench.models.base import Backend
    from workbench.models.catalog import ModelSpec
    from workbench.project import Project

OPEN_BACKENDS = ("hf", "gguf")


def index_process(index: Any, texts: dict[int, str], ask: Callable[[Any, str, Unit], dict[str, Any]],
                  extra: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None):
    """A job ``Process`` asking ``ask(index, text, unit)`` for each passage and storing its answer as JSON (and
    ``extra(answer)`` beside it, in the response's ``extra``, when given). A server that cannot be reached
    stops the run (what is done is kept); a query it refuses fails one item."""
    from workbench.probes.leakage.remote_index import ServerUnavailable

    def process(units: Sequence[Unit], state: TaskState) -> Iterable[tuple[Unit, Outcome]]:
        for unit in units:
            state.check()
            try:
                raw = ask(index, texts[unit.item_id], unit)
            except ServerUnavailable as exc:
                yield unit, Outcome.failure(str(exc), fatal=True)
                return
            except UserError as exc:
                yield unit, Outcome.failure(str(exc))
                continue
            yield unit, Outcome(raw=json.dumps(raw), extra=extra(raw) if extra is not None else None)

    return process


def open_model(project: "Project", label: str, need: str) -> "ModelSpec":
    """The project's model ``label``, which must run on this computer (``need`` says what for)."""
    from workbench.models.catalog import get_model

    spec = get_model(project, label)
    if spec.backend not in OPEN_BACKENDS:
        raise UserError(f"'{spec.label}' is not an open model on this computer; {need} needs the probability of "
                        "every token. Use a transformers model or a GGUF file.")
    return spec


def run_on_model(project: "Project", run_id: int, spec: "ModelSpec", ids: Sequence[int],
                 make_process: Callable[["Backend", dict[int, str]], Any], state: TaskState | None,
                 retry_failed: bool, backend: "Backend | None" = None, chunk_size: int = 64) -> JobReport:
    """Run a job over the passages ``ids`` on the model (``backend`` if open already, else opened for it)."""
    from workbench.models.catalog import open_backend
    from workbench.probes.leakage.passages import passage_texts

    texts = passage_texts(project, ids)
    opened = contextlib.nullcontext(backend) if backend is not None else open_backend(spec, project)
    with opened as live:
        if "score_texts" not in live.capabilities:
            raise UserError(f"'{spec.label}' cannot read a text token by token (a masked model, such as BERT, "
                            "cannot). Choose a text-generating model.")
        return run_job(project, run_id, [Unit(i) for i in ids], make_process(live, texts), state,
                       retry_failed=retry_failed, chunk_size=chunk_size)


RESPONSE_COLUMNS = ["run_id", "model_id", "item_id", "sample", "status", "raw", "error", "logprob", "extra", "params",
                    "config", "created_at"]


def matching_runs(project: "Project", kind: str, *, model_id: int | None = None,
                  config_filter: dict[str, Any] | None = None,
                  params_filter: dict[str, Any] | None = None) -> list[tuple[int, int | None, str, str]]:
    """The runs of ``kind`` (for ``model_id`` if given) whose config has ``config_filter``'s values (the run
    store compares them on the kind's typed config) and whose settings have ``params_filter``'s, newest first,
    as (run id, model id, params, config) with params and config as stored (JSON text). Each run's config and
    settings are read and parsed once."""
    found = runs(project, kind, model_id=model_id, **(config_filter or {}))
    return [(run.id, run.model_id, run.params_text, run.config_text) for run in reversed(found)
            if all(run.params.get(k) == v for k, v in (params_filter or {}).items())]


def responses(project: "Project", kind: str, *, model_id: int | None = None, config_filter: dict[str, Any] | None = None,
              params_filter: dict[str, Any] | None = None, ok_only: bool = True,
              item_ids: Sequence[int] | None = None, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Responses of every run of ``kind`` (for ``model_id`` if given) whose config has ``config_filter``'s
    values and whose settings have ``params_filter``'s, newest run first; the newest answer per (item, sample)
    is kept (of ``item_ids`` only, if given). Columns: run_id, model_id, item_id, sample, status, raw, error, logprob, extra, params, config,
    created_at; only ``columns`` (with run_id, item_id and sample) when given: a reader of 57,000 answers
    that needs their text and its run's settings reads nothing else.

    Linear in the answers read: the runs are chosen first (each run's config parsed once: a run's config
    may name every passage it covers), then only their answers are read. The params and config columns hold
    the run's stored JSON text, one string per run shared by its rows (never parse them per row)."""
    keys = ("run_id", "item_id", "sample")
    wanted = RESPONSE_COLUMNS if columns is None else \
        [*keys, *(c for c in RESPONSE_COLUMNS if c in columns and c not in keys)]
    found = matching_runs(project, kind, model_id=model_id, config_filter=config_filter, params_filter=params_filter)
    if not found:
        return pd.DataFrame(columns=wanted)
    stored = None if columns is None else [c for c in wanted if c not in ("model_id", "params", "config")]
    frame = stored_responses(project, [run_id for run_id, *_ in found], ok_only=ok_only, item_ids=item_ids,
                             columns=stored)
    by_run = {name: {run[0]: run[n] for run in found} for n, name in ((1, "model_id"), (2, "params"), (3, "config"))}
    for name in ("model_id", "params", "config"):
        if name in wanted:  # params and config: the same string object on every row of a run
            frame[name] = frame["run_id"].map(by_run[name])
    return frame[wanted]
