"""Long work over items x samples: written as it happens, resumable, cancellable.

A *run* (one row of ``runs``, kept by the run store ``workbench.runs``, which declares the kinds of run too) is a job: a list of work units ``(item_id, sample)`` and a function
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
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

import pandas as pd

from workbench import run_lock
from workbench.errors import CancelledError, UserError
from workbench.parts import PageSpec, Part
from workbench.progress import TaskState
from workbench.project import now
from workbench.run_failures import failure_reasons
from workbench.runs import store
from workbench.runs.kinds import can_resume as can_resume
from workbench.runs.kinds import run_kind
from workbench.runs.records import Unit as Unit
from workbench.runs.store import create_run as create_run
from workbench.runs.store import find_or_create_run as find_or_create_run
from workbench.runs.store import is_active as is_active
from workbench.runs.store import models_with_runs as models_with_runs
from workbench.runs.store import refuse_while_running as refuse_while_running
from workbench.runs.store import run_counts as run_counts
from workbench.runs.store import running_runs as running_runs
from workbench.runs.store import runs_frame as runs_frame

if TYPE_CHECKING:
    from workbench.project import Project

PART = Part("jobs", pages=(PageSpec("jobs", "Jobs", "ui.jobs.page:JobsPage"),))

# The run store's functions above keep the names the runner has always offered them under.


def get_run(project: "Project", run_id: int) -> dict[str, Any]:
    """Run number ``run_id`` as a dict: its columns, with params, config and usage parsed (``UserError`` when
    there is none). ``workbench.runs.get_run`` gives it with its config typed."""
    return store.run_record(project, run_id)


#: the statuses of a run that can be continued, or whose failures can be asked for again
RESUMABLE_STATUSES = ("pending", "cancelled", "interrupted", "done", "failed")


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
        store.add_usage(project, run_id, usage_add)


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
    key = store.begin_execution(project, run_id)
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
            store.set_total(project, run_id, len(units))
            store.set_status(project, run_id, "running")
        except BaseException:
            lock.release()
            raise
    except BaseException:
        store.end_execution(key)  # otherwise the run would stay "already running" until the program restarts
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
        store.set_status(project, run_id, report.status, note=report.note)
    except CancelledError:
        flush()
        report.status = "cancelled"
        report.message = f"Stopped at your request after {report.done} of {report.total}. Start the run again to continue."
        store.set_status(project, run_id, "cancelled", note=report.message)
    except UserError as exc:
        flush()
        report.status = "interrupted"
        report.message = (
            f"{exc} Everything finished so far ({report.done} of {report.total}) is saved; "
            "start the run again to continue."
        )
        store.set_status(project, run_id, "interrupted", note=report.message)
        raise UserError(report.message) from exc
    except BaseException as exc:
        flush()
        report.status = "interrupted"
        store.set_status(project, run_id, "interrupted", note=f"Stopped by an unexpected error: {exc!r}")
        raise
    finally:
        lock.release()
        store.end_execution(key)
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


def responses_frame(project: "Project", run_id: int) -> pd.DataFrame:
    return pd.read_sql_query(
        "SELECT * FROM responses WHERE run_id = ? ORDER BY item_id, sample", project.db.conn, params=[run_id]
    )


# ---------------------------------------------------------------------------------------------- resuming
#: ``fn(project, run_id, state, retry_failed) -> JobReport``: rebuilds a run's units and process from what
#: the run row recorded, then calls ``run_job``. Each run kind's declaration names its own
#: (``workbench.runs.RunKind.resume``); ``can_resume(kind)`` says whether it has one.
Resumer = Callable[["Project", int, TaskState, bool], JobReport]


def resume_run(project: "Project", run_id: int, state: TaskState | None = None, retry_failed: bool = False) -> JobReport:
    """Continue a run where it stopped, or (``retry_failed``) redo only its failed items."""
    run = store.get_run(project, run_id)
    declared = run_kind(run.kind)
    if not can_resume(run.kind):
        raise UserError(
            f"Run {run_id} ({run.kind}) cannot be continued from here. Start it again from the page "
            "that created it; what it finished is kept."
        )
    return declared.resumer()(project, run_id, state or TaskState(), retry_failed)
