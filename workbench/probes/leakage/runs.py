"""Run bookkeeping this probe shares between its analyses (overlap, membership, surprisal, DE-COP)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.jobs import create_run

if TYPE_CHECKING:
    from workbench.project import Project


def find_or_create_run(project: "Project", kind: str, *, model_id: int | None, params: dict[str, Any],
                       config: dict[str, Any], template_id: int | None = None) -> int:
    """The run with exactly these settings (to continue it), else a new one.

    TODO: use ``workbench.jobs.find_or_create_run`` (same matching rule: kind, model, template, params and
    config compared as JSON values) once it is on main; only this call changes."""
    wanted = (json.loads(json.dumps(params, sort_keys=True)), json.loads(json.dumps(config, sort_keys=True)))
    with project.db.transaction():
        rows = project.db.execute(
            "SELECT id, params, config FROM runs WHERE kind = ? AND model_id IS ? AND template_id IS ? ORDER BY id DESC",
            [kind, model_id, template_id]).fetchall()
        for run_id, stored_params, stored_config in rows:
            if (json.loads(stored_params or "{}"), json.loads(stored_config or "{}")) == wanted:
                return run_id
        return create_run(project, kind, model_id=model_id, template_id=template_id, params=params, config=config,
                          total=len(config.get("passage_ids") or ()))


def responses(project: "Project", kind: str, *, model_id: int | None = None, config_filter: dict[str, Any] | None = None,
              ok_only: bool = True) -> pd.DataFrame:
    """Responses of every run of ``kind`` (for ``model_id`` if given) whose config has ``config_filter``'s
    values, newest run first; the newest answer per (item, sample) is kept. Columns: run_id, model_id,
    item_id, sample, status, raw, error, logprob, params, config, created_at."""
    sql = ("SELECT r.id AS run_id, r.model_id, x.item_id, x.sample, x.status, x.raw, x.error, x.logprob, x.extra,"
           " r.params, r.config, x.created_at FROM responses x JOIN runs r ON r.id = x.run_id WHERE r.kind = ?")
    args: list[Any] = [kind]
    if model_id is not None:
        sql += " AND r.model_id = ?"
        args.append(model_id)
    if ok_only:
        sql += " AND x.status = 'ok'"
    frame = pd.read_sql_query(sql + " ORDER BY r.id DESC, x.item_id, x.sample", project.db.conn, params=args)
    if config_filter:
        configs = frame["config"].map(lambda c: json.loads(c or "{}"))
        keep = configs.map(lambda c: all(c.get(k) == v for k, v in config_filter.items()))
        frame = frame[keep]
    return frame.drop_duplicates(["item_id", "sample"], keep="first").reset_index(drop=True)
