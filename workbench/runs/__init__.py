"""Runs: the kinds of run, each declared once in its probe (``kinds``), and the store that reads and writes
them (``store``), the one place with SQL against the ``runs`` table.

- ``RunKind`` / ``declare_run_kind``: a kind's string, typed config, resumer, units and words;
- ``runs(project, kind, model_id=..., **config)``, ``latest_run``, ``follow_ups``, ``get_run``: runs found by
  kind, model and typed config; ``create_run`` / ``find_or_create_run``: new runs, or the earlier one that the
  same work continues; ``delete_runs``, ``update_configs``; ``responses``: the chosen runs' answers.

The job runner (``workbench.jobs``) executes runs through the store.
"""

from workbench.runs.kinds import (
    Resumer,
    RunKind,
    can_resume,
    config_dict,
    declare_run_kind,
    declared_kinds,
    forget_run_kind,
    kind_name,
    optional,
    run_kind,
)
from workbench.runs.records import Run, Unit
from workbench.runs.store import (
    RESPONSE_COLUMNS,
    create_run,
    delete_runs,
    find_or_create_run,
    follow_ups,
    get_run,
    is_active,
    keep_in_extras,
    latest_run,
    model_run_counts,
    models_with_runs,
    parse_json_texts,
    refuse_while_running,
    responses,
    run_counts,
    run_ids,
    run_record,
    running_runs,
    runs,
    runs_frame,
    runs_per_model,
    set_status,
    update_configs,
)

__all__ = [
    "RESPONSE_COLUMNS", "Resumer", "Run", "RunKind", "Unit", "can_resume", "config_dict", "create_run",
    "declare_run_kind", "declared_kinds", "delete_runs", "find_or_create_run", "follow_ups", "forget_run_kind",
    "get_run", "is_active", "keep_in_extras", "kind_name", "latest_run", "model_run_counts", "models_with_runs", "optional",
    "parse_json_texts", "refuse_while_running", "responses", "run_counts", "run_ids", "run_kind", "run_record", "running_runs", "runs",
    "runs_frame", "runs_per_model", "set_status", "update_configs",
]
