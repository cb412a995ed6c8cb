"""Long work over items x samples: written as it happens, resumable, cancellable.

A *run* (one row of ``runs``) is a job: a list of work units ``(item_id, sample)`` and a function
that processes a chunk of them, yielding one ``Outcome`` per unit as soon as it exists. The runner

- skips units that already have a stored response (so a re-run after a crash or a cancel continues
  where it stopped, with no duplicates: ``responses`` has a unique key on run, item and sample);
- with ``retry_failed=True`` redoes only the units whose stored response is a failure;
- commits outcomes in small batches (every ``commit_every`` outcomes or ``commit_seconds``), so a
  crash loses at most the batch in flight;
- records item failures as failures (they change denominators) and stops the whole run, keeping
  everything written so far, when an outcome says the backend itself is unusable (``fatal``: server
  down, bad key) -- those units stay pending for the next attempt;
- reports progress with an ETA and honours cooperative cancel;
- takes the run's lock before it works out what is left to do (another program may have done part of it
  while this one waited), and marks a run where every unit failed ``failed``, not ``done``; the run's note
  then says how many failed and why, plus what the process's backend adds (``models.calls.noting``).
"""


from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

import pandas as pd

from workbench import __version__, registry, run_lock
from workbench.errors import CancelledError, UserError
from workbench.progress import TaskState
from workbench.project import now
from workbench.registry import PageSpec, Part
from workbench.run_failures import failure_reasons

if TYPE_CHECKING:
    from workbench.project import Project

PART = Part("jobs", pages=(PageSpec("jobs", "Jobs", "ui.jobs.page:JobsPage"),))

#: the statuses of a run that can be continued, or whose failures can be asked for again
RESUMABLE_STATUSES = ("pending", "cancelled", "interrupted", "done", "failed")


@dataclass(frozen=True, order=True)
class Unit:
    item_id: int
    sample: int = 0


@dataclass
class Outcome:
    """What one unit produced. ``status`` is 'ok' or 'failed'."""

    status: str = "ok"
    raw: str | None = None
    error: str | None = None
    prompt: str | None = None
    logprob: float | None = None
    seed: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    cached: bool = False
    extra: dict[str, Any] | None = None
    # The backend cannot work at all (server down, bad key): stop the run, store nothing for this unit.
    fatal: bool = False

    @classmethod
    def failure(cls, error: str, **kw: Any) -> "Outcome":
        return cls(status="failed", error=error, **kw)


Process = Callable[[Sequence[Unit], TaskState], Iterable[tuple[Unit, Outcome]]]


@dataclass
class JobReport:
    run_id: int
    total: int
    done_before: int
    processed: int = 0
    failed: int = 0
    cached: int = 0
    status: str = "done"  # done, failed (every unit failed), cancelled, interrupted
    message: str = ""
    seconds: float = 0.0
    #: failed units of the run once this execution ended (earlier failures not retried included)
    failed_total: int = 0
    #: the run's note as the execution left it (failures, how failing requests were tried, warnings)
    note: str = ""

    @property
    def done(self) -> int:
        """Items the run has finished with: answered or failed."""
        return self.done_before + self.processed

    @property
    def answered(self) -> int:
        """Items with an answer (a run where every item failed has done them all and answered none)."""
        return max(0, self.done - max(self.failed_total, self.failed))


# Runs being executed by this process, so a "running" row left by a crashed process can be told apart.
_ACTIVE: set[tuple[str, int]] = set()
_ACTIVE_LOCK = threading.Lock()


def create_run(
    project: "Project",
    kind: str,
    *,
    model_id: int | None = None,
    template_id: int | None = None,
    params: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    total: int = 0,
    note: str = "",
) -> int:
    db = project.db
    with db.transaction():
        cur = db.execute(
            "INSERT INTO runs (kind, model_id, template_id, params, config, status, code_version, created_at, total, note)"
            " VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)",
            [
                kind,
                model_id,
                template_id,
                json.dumps(params or {}, sort_keys=True),
                json.dumps(config or {}, sort_keys=True),
                __version__,
                now(),
                total,
                note,
            ],
        )
    return cur.lastrowid


def find_or_create_run(
    project: "Project",
    kind: str,
    *,
    model_id: int | None,
    params: dict[str, Any],
    config: dict[str, Any],
    template_id: int | None = None,
    match_template: bool = True,
    total: int = 0,
) -> int:
    """The run that asking for this work again should continue; a new (pending) run when there is none.

    Two runs are the same run when they have the same ``kind``, the same model (``model_id``; None matches
    None), the same prompt template (``template_id``, None matching None; not compared when
    ``match_template`` is False), the same generation ``params`` and the same ``config``. Params and config
    are compared whole, as the JSON values they are stored as (key order, tuple or list, 1 or 1.0 do not
    matter; any other difference does). So a probe's config must name everything that decides its items
    (name cloze: the passage ids; REP: the set versions and samples per prompt; summaries: the task, model
    and attempts) and nothing that changes from one start to the next. Of several equal runs the newest is
    taken.

    ``match_template=False`` is for runs whose template is kept only for the record, their prompts being
    fixed by the config already (the REP judge: its prompt comes from the set version named in config).
    ``total`` is the run's number of units if known now (``run_job`` sets it anyway).

    The look-up and the creation happen in one write transaction, so two programs asking at once for the
    same work cannot both create a run.
    """
    wanted_params, wanted_config = _as_json_value(params), _as_json_value(config)
    sql = "SELECT id, params, config FROM runs WHERE kind = ? AND model_id IS ?"
    args: list[Any] = [kind, model_id]
    if match_template:
        sql += " AND template_id IS ?"
        args.append(template_id)
    with project.db.transaction():
        for run_id, stored_params, stored_config in project.db.execute(sql + " ORDER BY id DESC", args).fetchall():
            if (json.loads(stored_params or "{}"), json.loads(stored_config or "{}")) == (wanted_params, wanted_config):
                return run_id
        return create_run(project, kind, model_id=model_id, template_id=template_id, params=params, config=config,
                          total=total)


def _as_json_value(value: Any) -> Any:
    """``value`` as it reads back from the database (tuples become lists, keys become strings)."""
    return json.loads(json.dumps(value, sort_keys=True))


def get_run(project: "Project", run_id: int) -> dict[str, Any]:
    row = project.db.execute("SELECT * FROM runs WHERE id = ?", [run_id]).fetchone()
    if row is None:
        raise UserError(f"There is no run number {run_id} in this project.")
    cols = [d[0] for d in project.db.execute("SELECT * FROM runs LIMIT 0").description]
    run = dict(zip(cols, row))
    for key in ("params", "config", "usage"):
        run[key] = json.loads(run[key] or "{}")
    return run


def is_active(project: "Project", run_id: int) -> bool:
    """True while this program or another one on this computer executes the run."""
    with _ACTIVE_LOCK:
        if (str(project.path.resolve()), run_id) in _ACTIVE:
            return True
    return run_lock.held_elsewhere(project.path, run_id)


def stored_units(project: "Project", run_id: int) -> dict[Unit, str]:
    rows = project.db.execute("SELECT item_id, sample, status FROM responses WHERE run_id = ?", [run_id]).fetchall()
    return {Unit(item, sample): status for item, sample, status in rows}


def pending_units(project: "Project", run_id: int, units: Sequence[Unit], *, retry_failed: bool = False) -> list[Unit]:
    stored = stored_units(project, run_id)
    if retry_failed:
        return [u for u in units if stored.get(u) == "failed"]
    return [u for u in units if u not in stored]


_INSERT = (
    "INSERT INTO responses (run_id, item_id, sample, status, prompt, raw, error, logprob, seed,"
    " prompt_tokens, completion_tokens, latency_ms, cached, extra, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT(run_id, item_id, sample) DO UPDATE SET status = excluded.status, prompt = excluded.prompt,"
    " raw = excluded.raw, error = excluded.error, logprob = excluded.logprob, seed = excluded.seed,"
    " prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens,"
    " latency_ms = excluded.latency_ms, cached = excluded.cached, extra = excluded.extra,"
    " created_at = excluded.created_at"
)


def _write(project: "Project", run_id: int, batch: list[tuple[Unit, Outcome]]) -> None:
    if not batch:
        return
    db = project.db
    stamp = now()
    rows = [
        (
            run_id,
            u.item_id,
            u.sample,
            o.status,
            o.prompt,
            o.raw,
            o.error,
            o.logprob,
            o.seed,
            o.prompt_tokens,
            o.completion_tokens,
            o.latency_ms,
            int(o.cached),
            json.dumps(o.extra) if o.extra else None,
            stamp,
        )
        for u, o in batch
    ]
    usage_add = {
        "prompt_tokens": sum(o.prompt_tokens or 0 for _, o in batch if not o.cached),
        "completion_tokens": sum(o.completion_tokens or 0 for _, o in batch if not o.cached),
        "calls": sum(1 for _, o in batch if not o.cached),
        "cached": sum(1 for _, o in batch if o.cached),
    }
    with db.transaction():
        db.conn.executemany(_INSERT, rows)
        usage = json.loads(db.execute("SELECT usage FROM runs WHERE id = ?", [run_id]).fetchone()[0] or "{}")
        for key, value in usage_add.items():
            usage[key] = usage.get(key, 0) + value
        db.execute("UPDATE runs SET usage = ? WHERE id = ?", [json.dumps(usage, sort_keys=True), run_id])


def _set_status(project: "Project", run_id: int, status: str, note: str | None = None) -> None:
    db = project.db
    fields = {"status": status}
    if status == "running":
        fields["started_at"] = now()
    elif status in ("done", "failed", "cancelled", "interrupted"):
        fields["finished_at"] = now()
    if note is not None:
        fields["note"] = note
    sets = ", ".join(f"{k} = ?" for k in fields)
    with db.transaction():
        db.execute(f"UPDATE runs SET {sets} WHERE id = ?", [*fields.values(), run_id])


def run_job(
    project: "Project",
    run_id: int,
    units: Sequence[Unit],
    process: Process,
    state: TaskState | None = None,
    *,
    retry_failed: bool = False,
    chunk_size: int = 64,
    commit_every: int = 16,
    commit_seconds: float = 1.0,
) -> JobReport:
    """Execute (or continue) a run. Returns a report; raises ``UserError`` if the backend is unusable."""
    state = state or TaskState()
    units = list(dict.fromkeys(units))
    key = (str(project.path.resolve()), run_id)
    with _ACTIVE_LOCK:
        if key in _ACTIVE:
            raise UserError(f"Run {run_id} is already running. Wait for it to finish or cancel it first.")
        _ACTIVE.add(key)
    lock = run_lock.RunLock(project.path, run_id)
    try:
        if not lock.acquire():
            raise UserError(f"Run {run_id} is running in another Palimpsest window or command on this computer. "
                            "Wait for it to finish (or stop it there), then continue it here.")
        try:
            # Only now, with the run's lock held, is what is left to do known: another program that ran it
            # while this one waited for the lock has done part of it (or all).
            stored = stored_units(project, run_id)
            todo = pending_units(project, run_id, units, retry_failed=retry_failed)
            done_before = sum(1 for u in units if u in stored and not (retry_failed and stored[u] == "failed"))
            failed_before = sum(1 for u in units if stored.get(u) == "failed") if not retry_failed else 0
            report = JobReport(run_id=run_id, total=len(units), done_before=done_before)
            with project.db.transaction():
                project.db.execute("UPDATE runs SET total = ? WHERE id = ?", [len(units), run_id])
            _set_status(project, run_id, "running")
        except BaseException:
            lock.release()
            raise
    except BaseException:
        with _ACTIVE_LOCK:  # otherwise the run would stay "already running" until the program restarts
            _ACTIVE.discard(key)
        raise
    started = time.monotonic()
    buffer: list[tuple[Unit, Outcome]] = []
    last_commit = time.monotonic()

    def flush() -> None:
        nonlocal last_commit
        _write(project, run_id, buffer)
        buffer.clear()
        last_commit = time.monotonic()

    def report_progress() -> None:
        elapsed = time.monotonic() - started
        remaining = len(todo) - report.processed
        eta = elapsed / report.processed * remaining if report.processed else None
        state.progress(
            report.done,
            report.total,
            f"{report.done} of {report.total} done",
            failed=failed_before + report.failed,
            eta_seconds=eta,
        )

    try:
        state.progress(report.done, report.total, f"{report.done} of {report.total} done", failed=failed_before,
                       force=True)
        for start in range(0, len(todo), chunk_size):
            state.check()
            chunk = todo[start : start + chunk_size]
            with contextlib.closing(_as_generator(process(chunk, state))) as outcomes:
                for unit, outcome in outcomes:
                    if outcome.fatal:
                        flush()
                        raise UserError(outcome.error or "The model could not be reached.")
                    buffer.append((unit, outcome))
                    report.processed += 1
                    report.failed += outcome.status != "ok"
                    report.cached += bool(outcome.cached)
                    if len(buffer) >= commit_every or time.monotonic() - last_commit >= commit_seconds:
                        flush()
                    report_progress()
                    state.partial((unit, outcome))
        flush()
        stored = stored_units(project, run_id)
        report.failed_total = sum(1 for u in units if stored.get(u) == "failed")
        report.status = "failed" if units and report.failed_total == len(units) else "done"
        report.note = _closing_note(project, run_id, report, process)
        if report.status == "failed":
            report.message = report.note  # what pages and commands show for a run that did not finish
        _set_status(project, run_id, report.status, note=report.note)
    except CancelledError:
        flush()
        report.status = "cancelled"
        report.message = f"Stopped at your request after {report.done} of {report.total}. Start the run again to continue."
        _set_status(project, run_id, "cancelled", note=report.message)
    except UserError as exc:
        flush()
        report.status = "interrupted"
        report.message = (
            f"{exc} Everything finished so far ({report.done} of {report.total}) is saved; "
            "start the run again to continue."
        )
        _set_status(project, run_id, "interrupted", note=report.message)
        raise UserError(report.message) from exc
    except BaseException as exc:
        flush()
        report.status = "interrupted"
        _set_status(project, run_id, "interrupted", note=f"Stopped by an unexpected error: {exc!r}")
        raise
    finally:
        lock.release()
        with _ACTIVE_LOCK:
            _ACTIVE.discard(key)
        report.seconds = time.monotonic() - started
    report_progress()
    return report


def _closing_note(project: "Project", run_id: int, report: JobReport, process: Process) -> str:
    """What a finished run's note says: how many items failed and why most often, then what the process's
    backend adds (how often a failing request was tried; warnings about how the model was loaded)."""
    parts = []
    if report.failed_total:
        count = (f"All {report.total} items failed" if report.failed_total == report.total
                 else f"{report.failed_total} of {report.total} items failed")
        reasons = failure_reasons(project, run_id)
        parts.append(f"{count} (most common reason: {reasons[0][0]})." if reasons else f"{count}.")
    run_notes = getattr(process, "run_notes", None)  # ``models.calls.noting``
    if run_notes is not None:
        parts += run_notes(failures=bool(report.failed_total))
    return " ".join(parts)


def _as_generator(outcomes: Iterable[tuple[Unit, Outcome]]) -> Iterator[tuple[Unit, Outcome]]:
    """A closable iterator, so that stopping early (fatal, cancel) stops the process's requests too."""
    if hasattr(outcomes, "close") and hasattr(outcomes, "__next__"):
        return outcomes  # type: ignore[return-value]
    return (pair for pair in outcomes)


def running_runs(project: "Project", *, kinds: Sequence[str] | None = None,
                 run_ids: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """The runs (of ``kinds``, or among ``run_ids``) that this program or another one on this computer is
    executing right now: id, kind and model label of each."""
    sql = ("SELECT r.id, r.kind, COALESCE(m.label, '') FROM runs r LEFT JOIN models m ON m.id = r.model_id"
           " WHERE r.status = 'running'")
    params: list[Any] = []
    if kinds is not None:
        sql += f" AND r.kind IN ({','.join('?' * len(kinds))})"
        params += list(kinds)
    if run_ids is not None:
        sql += " AND r.id IN (SELECT value FROM json_each(?))"
        params.append(json.dumps(list(run_ids)))
    rows = project.db.execute(sql + " ORDER BY r.id", params).fetchall()
    return [{"id": i, "kind": kind, "model": model} for i, kind, model in rows if is_active(project, i)]


def refuse_while_running(project: "Project", doing: str, *, kinds: Sequence[str] | None = None,
                         run_ids: Sequence[int] | None = None) -> None:
    """Raise ``UserError`` naming the run when a run that ``doing`` would take answers from is being executed
    (here or in another program): nothing may delete answers a run is writing."""
    running = running_runs(project, kinds=kinds, run_ids=run_ids)
    if not running:
        return
    named = "; ".join(f"run {r['id']} ({r['kind']}{', ' + r['model'] if r['model'] else ''})" for r in running)
    raise UserError(
        f"{'A run is' if len(running) == 1 else 'Runs are'} asking a model right now, in this window or another "
        f"program: {named}. To {doing} would delete the answers it is writing. Wait until it has finished, or "
        "cancel it (Jobs page, or Ctrl+C where it runs), then try again.")


def run_counts(project: "Project", run_id: int) -> dict[str, int]:
    rows = project.db.execute(
        "SELECT status, COUNT(*) FROM responses WHERE run_id = ? GROUP BY status", [run_id]
    ).fetchall()
    counts = {"ok": 0, "failed": 0}
    counts.update({status: n for status, n in rows})
    return counts


def models_with_runs(project: "Project", kind: str) -> set[int]:
    """The ids of the models that have at least one run of ``kind``."""
    rows = project.db.execute("SELECT DISTINCT model_id FROM runs WHERE kind = ?", [kind]).fetchall()
    return {model_id for model_id, in rows}


def runs_frame(project: "Project", kind: str | None = None) -> pd.DataFrame:
    """Every run with its model label, status (a crashed run shows as 'interrupted') and counts."""
    sql = (
        "SELECT r.id, r.kind, m.label AS model, r.status, r.total, r.created_at, r.finished_at, r.note, r.usage,"
        " (SELECT COUNT(*) FROM responses x WHERE x.run_id = r.id AND x.status = 'ok') AS ok,"
        " (SELECT COUNT(*) FROM responses x WHERE x.run_id = r.id AND x.status = 'failed') AS failed"
        " FROM runs r LEFT JOIN models m ON m.id = r.model_id"
    )
    params: list[Any] = []
    if kind is not None:
        sql += " WHERE r.kind = ?"
        params.append(kind)
    frame = pd.read_sql_query(sql + " ORDER BY r.id", project.db.conn, params=params)
    frame["status"] = [
        "interrupted" if status == "running" and not is_active(project, run_id) else status
        for run_id, status in zip(frame["id"], frame["status"])
    ]
    return frame


def responses_frame(project: "Project", run_id: int) -> pd.DataFrame:
    return pd.read_sql_query(
        "SELECT * FROM responses WHERE run_id = ? ORDER BY item_id, sample", project.db.conn, params=[run_id]
    )


def iter_chunks(seq: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(seq), size):
        yield seq[start : start + size]


# ---------------------------------------------------------------------------------------------- resuming
#: ``fn(project, run_id, state, retry_failed) -> JobReport``: rebuilds a run's units and process from
#: what the run row recorded, then calls ``run_job``. Probes register one per run kind.
Resumer = Callable[["Project", int, TaskState, bool], JobReport]

_RESUMERS: dict[str, Resumer] = {}


def register_resumer(kind: str, fn: Resumer) -> Resumer:
    """Let runs of ``kind`` be continued (or their failures retried) from the Jobs page and the CLI."""
    _RESUMERS[kind] = fn
    return fn


def _resumer(kind: str) -> Resumer | None:
    if kind not in _RESUMERS:
        # Every part's resumers, so that a run is found even when its probe's page or command has not been
        # used in this session; an optional part that is not installed cannot resume its runs here.
        registry.load("resumers", skip_missing=True)
    return _RESUMERS.get(kind)


def can_resume(kind: str) -> bool:
    return _resumer(kind) is not None


def resume_run(project: "Project", run_id: int, state: TaskState | None = None, retry_failed: bool = False) -> JobReport:
    """Continue a run where it stopped, or (``retry_failed``) redo only its failed items."""
    run = get_run(project, run_id)
    fn = _resumer(run["kind"])
    if fn is None:
        raise UserError(
            f"Run {run_id} ({run['kind']}) cannot be continued from here. Start it again from the page "
            "that created it; what it finished is kept."
        )
    return fn(project, run_id, state or TaskState(), retry_failed)
