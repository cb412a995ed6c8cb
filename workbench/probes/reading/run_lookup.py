"""Finding the run to continue: the run of a kind with exactly the same model, template, parameters and
configuration, else a new one (so starting the same work again continues it)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from workbench.jobs import create_run

if TYPE_CHECKING:
    from workbench.project import Project


def find_or_create_run(project: "Project", kind: str, model_id: int | None, template_id: int | None,
                       params: dict, config: dict) -> int:
    """The newest run with exactly these settings, else a new one."""
    # TODO: replace with workbench.jobs.find_or_create_run once it is on main (issue 10) and delete this module.
    row = project.db.execute(
        "SELECT id FROM runs WHERE kind = ? AND model_id IS ? AND template_id IS ? AND params = ? AND config = ?"
        " ORDER BY id DESC LIMIT 1",
        [kind, model_id, template_id, json.dumps(params, sort_keys=True), json.dumps(config, sort_keys=True)],
    ).fetchone()
    if row is not None:
        return row[0]
    return create_run(project, kind, model_id=model_id, template_id=template_id, params=params, config=config)
