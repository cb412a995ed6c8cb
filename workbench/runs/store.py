"""The run store: the one module that reads and writes the ``runs`` table.

A run is one row of ``runs`` (its answers are rows of ``responses``, unique on run, item and sample). Probes
and services ask the store for runs by kind, model and typed config (``runs``, ``latest_run``,
``follow_ups``), never with SQL of their own; the job runner (``workbench.jobs``) asks it to create runs and
to record their status and usage.

Choosing runs reads each run's row once and parses its config once (when a filter or the caller reads it),
never once per answer: a config may name every passage a run covers. ``responses`` then reads only the
chosen runs' answers, linear in the rows read.
"""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
import threading
import time
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import pandas as pd

from workbench import __version__, run_lock
from workbench.errors import ProjectError, UserError
from workbench.project import now
from workbench.project.connection import BUSY_TIMEOUT_MS
from workbench.runs.kinds import RunKind, config_value, kind_string, kind_strings, run_kind, same_value
from workbench.runs.records import Run

log = logging.getLogger(__name__)
#: how long keeping derived numbers beside answers waits for another writer (a run) before leaving it for later
KEEP_WAIT_MS = 1_000

if TYPE_CHECKING:
    from workbench.project import Project

Kinds = "str | RunKind | Sequence[str | RunKind] | None"

_COLUMNS = ("r.id, r.kind, r.model_id, m.label, r.template_id, r.status, r.total, r.note, r.code_version,"
            " r.created_at, r.started_at, r.finished_at, r.params, r.config, r.usage")
_FROM = " FROM runs r LEFT JOIN models m ON m.id = r.model_id"


def _run(row: Sequence[Any]) -> Run:
    (run_id, kind, model_id, model, template_id, status, total, note, code_version, created, started, finished,
     params, config, usage) = row
    return Run(id=int(run_id), kind=kind, model_id=model_id, model=model, template_id=template_id, status=status,
               total=int(total or 0), note=note or "", code_version=code_version, created_at=created,
               started_at=started, finished_at=finished, params_text=params or "{}", config_text=config or "{}",
               usage_text=usage or "{}", read_config=functools.partial(_typed_config, kind))


def _typed_config(kind: str, stored: dict[str, Any]) -> Any:
    declared = run_kind(kind)
    return declared.read_config(stored) if declared is not None else stored


def _ids_json(ids: Iterable[int]) -> str:
    return json.dumps([int(i) for i in ids])


# ---------------------------------------------------------------------------------------------- making runs
def create_run(
    project: "Project",
    kind: "str | RunKind",
    *,
    model_id: int | None = None,
    template_id: int | None = None,
    params: dict[str, Any] | None = None,
    config: Any = None,
    total: int = 0,
    note: str = "",
) -> int:
    """A new (pending) run; ``config`` is the kind's config dataclass (or a dict, stored as it is)."""
    stored = _stored_config(kind, config)
    db = project.db
    with db.transaction():
        cur = db.execute(
            "INSERT INTO runs (kind, model_id, template_id, params, config, status, code_version, created_at, total, note)"
            " VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)",
            [kind_string(kind), model_id, template_id, json.dumps(params or {}, sort_keys=True),
             json.dumps(stored, sort_keys=True), __version__, now(), total, note],
        )
    return cur.lastrowid


def find_or_create_run(
    project: "Project",
    kind: "str | RunKind",
    *,
    model_id: int | None,
    params: dict[str, Any],
    config: Any,
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
    taken. ``config`` is the kind's config dataclass (its ``optional`` fields count only when set), or a dict.

    ``match_template=False`` is for runs whose template is kept only for the record, their prompts being
    fixed by the config already (the REP judge: its prompt comes from the set version named in config).
    ``total`` is the run's number of units if known now (``run_job`` sets it anyway).

    The look-up and the creation happen in one write transaction, so two programs asking at once for the
    same work cannot both create a run.
    """
    stored = _stored_config(kind, config)
    wanted_params, wanted_config = _as_json_value(params), _as_json_value(stored)
    sql = "SELECT id, params, config FROM runs WHERE kind = ? AND model_id IS ?"
    args: list[Any] = [kind_string(kind), model_id]
    if match_template:
        sql += " AND template_id IS ?"
        args.append(template_id)
    with project.db.transaction():
        for run_id, stored_params, stored_config in project.db.execute(sql + " ORDER BY id DESC", args).fetchall():
            if (json.loads(stored_params or "{}"), json.loads(stored_config or "{}")) == (wanted_params, wanted_config):
                return run_id
        return create_run(project, kind, model_id=model_id, template_id=template_id, params=params, config=stored,
                          total=total)


def _stored_config(kind: "str | RunKind", config: Any) -> dict[str, Any]:
    if config is None or isinstance(config, dict):
        return dict(config or {})
    declared = run_kind(kind)
    if declared is None:
        raise TypeError(f"Run kind {kind_string(kind)!r} is not declared, so its config must be a dict.")
    return declared.stored_config(config)


def _as_json_value(value: Any) -> Any:
    """``value`` as it reads back from the database (tuples become lists, keys become strings)."""
    return json.loads(json.dumps(value, sort_keys=True))


# ---------------------------------------------------------------------------------------------- finding runs
def get_run(project: "Project", run_id: int) -> Run:
    """Run number ``run_id``; ``UserError`` when there is none."""
    row = project.db.execute(f"SELECT {_COLUMNS}{_FROM} WHERE r.id = ?", [run_id]).fetchone()
    if row is None:
        raise UserError(f"There is no run number {run_id} in this project.")
    return _run(row)


def run_record(project: "Project", run_id: int) -> dict[str, Any]:
    """Run number ``run_id`` as a dict of its columns, params, config and usage parsed (the methods text's
    record); ``UserError`` when there is none."""
    cur = project.db.execute("SELECT * FROM runs WHERE id = ?", [run_id])
    row = cur.fetchone()
    if row is None:
        raise UserError(f"There is no run number {run_id} in this project.")
    run = dict(zip([d[0] for d in cur.description], row))
    for key in ("params", "config", "usage"):
        run[key] = json.loads(run[key] or "{}")
    return run


def runs(project: "Project", kind: Kinds = None, *, model_id: int | None = None,
         model_label: str | Sequence[str] | None = None, run_ids: Sequence[int] | None = None,
         with_responses: bool = False, **config: Any) -> list[Run]:
    """The runs of ``kind`` (one kind, several, or every kind), oldest first; only those of the model
    ``model_id`` (or of the model(s) labelled ``model_label``), among ``run_ids``, that hold at least one
    response (``with_responses``), and whose config has each of ``config``'s values.

    Config values are compared as the JSON values they are stored as (a tuple equals a list): for one
    declared kind on its typed config (``RunKind.config``: a missing key reads as the field's default, and
    naming a field the config lacks is a ``TypeError``), for several kinds or all on the configs as stored (a
    run whose config lacks the key does not match). Each run's config is read once, and only when a config
    filter is given or the caller reads it."""
    kinds = None if kind is None else kind_strings(kind)
    typed = False
    if config and kinds is not None and len(kinds) == 1:
        declared = run_kind(kinds[0])
        if declared is not None and declared.config is not None:
            typed = True
            unknown = sorted(set(config) - set(declared.fields()))
            if unknown:
                raise TypeError(f"A {kinds[0]!r} run's config has no field {unknown[0]!r}.")
    sql = f"SELECT {_COLUMNS}{_FROM} WHERE 1"
    args: list[Any] = []
    if kinds is not None:
        sql += " AND r.kind IN (SELECT value FROM json_each(?))"
        args.append(json.dumps(kinds))
    if model_id is not None:
        sql += " AND r.model_id = ?"
        args.append(int(model_id))
    if model_label is not None:
        sql += " AND m.label IN (SELECT value FROM json_each(?))"
        args.append(json.dumps([model_label] if isinstance(model_label, str) else list(model_label)))
    if run_ids is not None:
        sql += " AND r.id IN (SELECT value FROM json_each(?))"
        args.append(_ids_json(run_ids))
    if with_responses:
        sql += " AND EXISTS (SELECT 1 FROM responses x WHERE x.run_id = r.id)"
    found = [_run(row) for row in project.db.execute(sql + " ORDER BY r.id", args).fetchall()]
    if config:
        found = [run for run in found if all(
            (same_value(config_value(run.config, key), value) if typed else key in run.stored
             and same_value(run.stored[key], value)) for key, value in config.items())]
    return found


def run_ids(project: "Project", kind: Kinds = None, **filters: Any) -> list[int]:
    """The ids of ``runs(project, kind, **filters)``, oldest first."""
    return [run.id for run in runs(project, kind, **filters)]


def latest_run(project: "Project", kind: Kinds, **filters: Any) -> Run | None:
    """The newest of ``runs(project, kind, **filters)``; None when there is none."""
    found = runs(project, kind, **filters)
    return found[-1] if found else None


def follow_ups(project: "Project", run: "Run | int", kind: "str | RunKind") -> list[Run]:
    """The runs of ``kind`` that build on ``run`` (their config's ``follows`` field names it), oldest first."""
    declared = run_kind(kind)
    if declared is None or declared.follows is None:
        raise TypeError(f"Run kind {kind_string(kind)!r} does not declare which run it follows.")
    return runs(project, declared, **{declared.follows: run.id if isinstance(run, Run) else int(run)})


def models_with_runs(project: "Project", kind: "str | RunKind") -> set[int]:
    """The ids of the models that have at least one run of ``kind``."""
    rows = project.db.execute("SELECT DISTINCT model_id FROM runs WHERE kind = ?", [kind_string(kind)]).fetchall()
    return {model_id for model_id, in rows}


def runs_per_model(project: "Project") -> dict[int | None, int]:
    """model id -> how many runs it has."""
    return dict(project.db.execute("SELECT model_id, COUNT(*) FROM runs GROUP BY model_id").fetchall())


def model_run_counts(project: "Project", model_id: int) -> tuple[int, int]:
    """How many runs use the model, and how many responses they hold."""
    found, answers = project.db.execute(
        "SELECT COUNT(DISTINCT r.id), COUNT(x.id) FROM runs r LEFT JOIN responses x ON x.run_id = r.id"
        " WHERE r.model_id = ?", [model_id]).fetchone()
    return found, answers


def runs_frame(project: "Project", kind: "str | RunKind | None" = None) -> pd.DataFrame:
    """Every run with its model label, status (a crashed run shows as 'interrupted') and counts."""
    sql = (
        "SELECT r.id, r.kind, m.label AS model, r.status, r.total, r.created_at, r.finished_at, r.note, r.usage,"
        " (SELECT COUNT(*) FROM responses x WHERE x.run_id = r.id AND x.status = 'ok') AS ok,"
        " (SELECT COUNT(*) FROM responses x WHERE x.run_id = r.id AND x.status = 'failed') AS failed,"
        " r.model_id, r.template_id"
        " FROM runs r LEFT JOIN models m ON m.id = r.model_id"
    )
    params: list[Any] = []
    if kind is not None:
        sql += " WHERE r.kind = ?"
        params.append(kind_string(kind))
    frame = pd.read_sql_query(sql + " ORDER BY r.id", project.db.conn, params=params)
    frame["status"] = [
        "interrupted" if status == "running" and not is_active(project, run_id) else status
        for run_id, status in zip(frame["id"], frame["status"])
    ]
    return frame


# ---------------------------------------------------------------------------------------------- answers
def run_counts(project: "Project", run_id: int) -> dict[str, int]:
    """The run's stored answers by status (``ok`` and ``failed`` always present)."""
    rows = project.db.execute(
        "SELECT status, COUNT(*) FROM responses WHERE run_id = ? GROUP BY status", [run_id]
    ).fetchall()
    counts = {"ok": 0, "failed": 0}
    counts.update({status: n for status, n in rows})
    return counts


RESPONSE_COLUMNS = ["run_id", "item_id", "sample", "status", "raw", "error", "logprob", "extra", "created_at"]


def responses(project: "Project", run_ids: Sequence[int], *, ok_only: bool = True,
              item_ids: Sequence[int] | None = None, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The answers of ``run_ids``, the newest run's answer per (item, sample) (newer runs have larger ids), of
    ``item_ids`` only if given, ordered newest run first, then by item and sample. Columns:
    ``RESPONSE_COLUMNS``, or only ``columns`` (with run_id, item_id and sample) when given: a reader of 57,000
    answers that needs only their text reads nothing else. Only these runs' answers are read: linear in the
    rows read."""
    keys = ("run_id", "item_id", "sample")
    wanted = list(RESPONSE_COLUMNS) if columns is None else \
        [*keys, *(c for c in RESPONSE_COLUMNS if c in columns and c not in keys)]
    if not run_ids:
        return pd.DataFrame(columns=wanted)
    sql = f"SELECT {', '.join(wanted)} FROM responses WHERE run_id IN (SELECT value FROM json_each(?))"
    args = [_ids_json(run_ids)]
    if ok_only:
        sql += " AND status = 'ok'"
    if item_ids is not None:
        sql += " AND item_id IN (SELECT value FROM json_each(?))"
        args.append(_ids_json(item_ids))
    sql += " ORDER BY run_id DESC, item_id, sample"
    if columns is None:
        frame = pd.read_sql_query(sql, project.db.conn, params=args)
    else:  # the rows as they come (pandas' reader converts every column, text included, a second time)
        frame = pd.DataFrame(project.db.execute(sql, args).fetchall() or None, columns=wanted)
    return frame.drop_duplicates(["item_id", "sample"], keep="first").reset_index(drop=True)


#: answers' JSON texts parsed per call of ``parse_json_texts``: one call for 57,000 holds the interpreter lock for
#: half a second, and the window (whose thread needs that lock to paint) freezes as long; 2,000 still held it
#: 50-96 ms per call (the overlap answers' derived numbers), 500 some 15-25 ms
PARSE_CHUNK = 500


def parse_json_texts(texts: Sequence[str | None]) -> list[Any]:
    """Each of ``texts`` (JSON, or None / "" for none) parsed: a chunk of them per ``json.loads`` of a joined
    array (fast), the lock let go between chunks; a chunk holding a damaged text is read one by one (that text:
    None)."""
    parsed: list[Any] = []
    for start in range(0, len(texts), PARSE_CHUNK):
        chunk = texts[start : start + PARSE_CHUNK]
        try:
            parsed.extend(json.loads("[" + ",".join(t if type(t) is str and t else "null" for t in chunk) + "]"))
        except ValueError:
            parsed.extend(_parsed_or_none(t) for t in chunk)
        time.sleep(0)  # let the window's thread take the lock between chunks
    return parsed


def _parsed_or_none(text: str | None) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------- changing runs
def keep_in_extras(project: "Project", key: str, rows: Sequence[tuple[int, int, int, Any]]) -> bool:
    """Set ``key`` of the ``extra`` of stored answers: ``rows`` of (run_id, item_id, sample, value). For numbers
    derived from an answer, kept beside an answer stored before they were (the next read takes them from there
    instead of deriving them again). Merged here, not by SQLite's JSON functions: an answer's numbers may hold
    NaN, which Python's JSON writes and SQLite's refuses. False, with nothing written, where the project cannot
    be written now (read-only, or busy past the wait): they are derived again at the next read."""
    if not rows:
        return True
    db = project.db
    values = {(int(r), int(i), int(s)): value for r, i, s, value in rows}
    db.conn.execute(f"PRAGMA busy_timeout = {KEEP_WAIT_MS}")  # a read does not wait long on a run's writes
    try:
        with db.transaction():
            stored = db.execute(
                "SELECT run_id, item_id, sample, extra FROM responses WHERE run_id IN (SELECT value FROM json_each(?))"
                " AND item_id IN (SELECT value FROM json_each(?))",
                [_ids_json({r for r, _, _ in values}), _ids_json({i for _, i, _ in values})]).fetchall()
            updates = []
            for run_id, item_id, sample, extra in stored:
                value = values.get((run_id, item_id, sample))
                if value is not None:
                    merged = _parsed_or_none(extra)
                    merged = {**(merged if isinstance(merged, dict) else {}), key: value}
                    updates.append((json.dumps(merged), run_id, item_id, sample))
            db.conn.executemany("UPDATE responses SET extra = ? WHERE run_id = ? AND item_id = ? AND sample = ?",
                                updates)
    except (ProjectError, sqlite3.OperationalError) as exc:
        log.info("Numbers derived from %d answers were not kept with them (%s); they are derived again when read.",
                 len(rows), exc)
        return False
    finally:
        db.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return True


def set_status(project: "Project", run_id: int, status: str, note: str | None = None, *,
               started: bool = False) -> None:
    """Record the run's status: 'running' stamps its start, an end ('done', 'failed', 'cancelled',
    'interrupted') its finish (``started`` stamps both, for a run made whole at once, such as an import)."""
    stamp = now()
    fields: dict[str, Any] = {"status": status}
    if status == "running" or started:
        fields["started_at"] = stamp
    if status in ("done", "failed", "cancelled", "interrupted"):
        fields["finished_at"] = stamp
    if note is not None:
        fields["note"] = note
    sets = ", ".join(f"{k} = ?" for k in fields)
    with project.db.transaction():
        project.db.execute(f"UPDATE runs SET {sets} WHERE id = ?", [*fields.values(), run_id])


def set_total(project: "Project", run_id: int, total: int) -> None:
    """Record how many units the run has."""
    with project.db.transaction():
        project.db.execute("UPDATE runs SET total = ? WHERE id = ?", [int(total), run_id])


def add_usage(project: "Project", run_id: int, added: dict[str, int]) -> None:
    """Add ``added`` (tokens, calls, cached answers) to the run's usage; inside the caller's transaction when
    there is one, so that a batch of answers and its usage are written together."""
    db = project.db
    with db.transaction():
        usage = json.loads(db.execute("SELECT usage FROM runs WHERE id = ?", [run_id]).fetchone()[0] or "{}")
        for key, value in added.items():
            usage[key] = usage.get(key, 0) + value
        db.execute("UPDATE runs SET usage = ? WHERE id = ?", [json.dumps(usage, sort_keys=True), run_id])


def update_configs(project: "Project", run_ids: Sequence[int], changes: dict[str, Any]) -> None:
    """Set ``changes``' keys in the stored config of each of ``run_ids`` (the other keys kept as they are)."""
    db = project.db
    with db.transaction():
        for run_id, config in db.execute("SELECT id, config FROM runs WHERE id IN (SELECT value FROM json_each(?))",
                                         [_ids_json(run_ids)]).fetchall():
            stored = {**json.loads(config or "{}"), **changes}
            db.execute("UPDATE runs SET config = ? WHERE id = ?", [json.dumps(stored, sort_keys=True), run_id])


def delete_runs(project: "Project", run_ids: Sequence[int], *, doing: str) -> int:
    """Delete the runs with their answers, refusing (``UserError``) while one of them is being executed
    (``doing``: what the user asked for, as in 'delete the task X'); returns how many were deleted."""
    ids = [int(i) for i in run_ids]
    with project.db.transaction():
        refuse_while_running(project, doing, run_ids=ids)
        return project.db.execute("DELETE FROM runs WHERE id IN (SELECT value FROM json_each(?))",
                                  [_ids_json(ids)]).rowcount


# ---------------------------------------------------------------------------------------------- runs at work
# Runs being executed by this process, so a "running" row left by a crashed process can be told apart.
_ACTIVE: set[tuple[str, int]] = set()
_ACTIVE_LOCK = threading.Lock()


def begin_execution(project: "Project", run_id: int) -> tuple[str, int]:
    """Mark the run as executed by this program (``UserError`` when it already is); returns the key that
    ``end_execution`` takes."""
    key = (str(project.path.resolve()), run_id)
    with _ACTIVE_LOCK:
        if key in _ACTIVE:
            raise UserError(f"Run {run_id} is already running. Wait for it to finish or cancel it first.")
        _ACTIVE.add(key)
    return key


def end_execution(key: tuple[str, int]) -> None:
    with _ACTIVE_LOCK:
        _ACTIVE.discard(key)


def is_active(project: "Project", run_id: int) -> bool:
    """True while this program or another one on this computer executes the run."""
    with _ACTIVE_LOCK:
        if (str(project.path.resolve()), run_id) in _ACTIVE:
            return True
    return run_lock.held_elsewhere(project.path, run_id)


def running_runs(project: "Project", *, kinds: Sequence["str | RunKind"] | None = None,
                 run_ids: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """The runs (of ``kinds``, or among ``run_ids``) that this program or another one on this computer is
    executing right now: id, kind and model label of each."""
    sql = ("SELECT r.id, r.kind, COALESCE(m.label, '') FROM runs r LEFT JOIN models m ON m.id = r.model_id"
           " WHERE r.status = 'running'")
    params: list[Any] = []
    if kinds is not None:
        sql += " AND r.kind IN (SELECT value FROM json_each(?))"
        params.append(json.dumps(kind_strings(list(kinds))))
    if run_ids is not None:
        sql += " AND r.id IN (SELECT value FROM json_each(?))"
        params.append(_ids_json(run_ids))
    rows = project.db.execute(sql + " ORDER BY r.id", params).fetchall()
    return [{"id": i, "kind": kind, "model": model} for i, kind, model in rows if is_active(project, i)]


def refuse_while_running(project: "Project", doing: str, *, kinds: Sequence["str | RunKind"] | None = None,
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
