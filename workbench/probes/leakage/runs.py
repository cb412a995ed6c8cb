"""Reading back the responses of this probe's runs (overlap, frequency, membership, surprisal, DE-COP)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from workbench.project import Project


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
