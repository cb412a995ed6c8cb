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

if TYPE_CHECKING:
    from workbench.models.base import Backend
    from workbench.models.registry import ModelSpec
    from workbench.project import Project

OPEN_BACKENDS = ("hf", "gguf")


def index_process(index: Any, texts: dict[int, str], ask: Callable[[Any, str, Unit], dict[str, Any]]):
    """A job ``Process`` asking ``ask(index, text, unit)`` for each passage and storing its answer as JSON. A
    server that cannot be reached stops the run (what is done is kept); a query it refuses fails one item."""
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
            yield unit, Outcome(raw=json.dumps(raw))

    return process


def open_model(project: "Project", label: str, need: str) -> "ModelSpec":
    """The project's model ``label``, which must run on this computer (``need`` says what for)."""
    from workbench.models.registry import get_model

    spec = get_model(project, label)
    if spec.backend not in OPEN_BACKENDS:
        raise UserError(f"'{spec.label}' is not an open model on this computer; {need} needs the probability of "
                        "every token. Use a transformers model or a GGUF file.")
    return spec


def run_on_model(project: "Project", run_id: int, spec: "ModelSpec", ids: Sequence[int],
                 make_process: Callable[["Backend", dict[int, str]], Any], state: TaskState | None,
                 retry_failed: bool, backend: "Backend | None" = None, chunk_size: int = 64) -> JobReport:
    """Run a job over the passages ``ids`` on the model (``backend`` if open already, else opened for it)."""
    from workbench.models.registry import open_backend
    from workbench.probes.leakage.passages import passage_texts

    texts = passage_texts(project, ids)
    opened = contextlib.nullcontext(backend) if backend is not None else open_backend(spec, project)
    with opened as live:
        if "score_texts" not in live.capabilities:
            raise UserError(f"'{spec.label}' cannot read a text token by token (a masked model, such as BERT, "
                            "cannot). Choose a text-generating model.")
        return run_job(project, run_id, [Unit(i) for i in ids], make_process(live, texts), state,
                       retry_failed=retry_failed, chunk_size=chunk_size)


def responses(project: "Project", kind: str, *, model_id: int | None = None, config_filter: dict[str, Any] | None = None,
              params_filter: dict[str, Any] | None = None, ok_only: bool = True) -> pd.DataFrame:
    """Responses of every run of ``kind`` (for ``model_id`` if given) whose config has ``config_filter``'s
    values and whose settings have ``params_filter``'s, newest run first; the newest answer per (item, sample)
    is kept. Columns: run_id, model_id, item_id, sample, status, raw, error, logprob, params, config,
    created_at."""
    sql = ("SELECT r.id AS run_id, r.model_id, x.item_id, x.sample, x.status, x.raw, x.error, x.logprob, x.extra,"
           " r.params, r.config, x.created_at FROM responses x JOIN runs r ON r.id = x.run_id WHERE r.kind = ?")
    args: list[Any] = [kind]
    if model_id is not None:
        sql += " AND r.model_id = ?"
        args.append(model_id)
    if ok_only:
        sql += " AND x.status = 'ok'"
    frame = pd.read_sql_query(sql + " ORDER BY r.id DESC, x.item_id, x.sample", project.db.conn, params=args)
    for column, wanted in (("config", config_filter), ("params", params_filter)):
        if wanted:
            values = frame[column].map(lambda c: json.loads(c or "{}"))
            # astype: an empty frame's map is of object dtype, which pandas would read as a list of columns
            keep = values.map(lambda c, wanted=wanted: all(c.get(k) == v for k, v in wanted.items())).astype(bool)
            frame = frame[keep]
    return frame.drop_duplicates(["item_id", "sample"], keep="first").reset_index(drop=True)
