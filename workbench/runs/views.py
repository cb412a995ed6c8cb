"""What the Jobs page shows of the project's runs, as queries of a Qt-free state: ``RunsChoices`` holds the page's
options (which kind of run, whose), ``runs_frame`` is the runs with their counts, tokens and cost (what
``palimpsest runs`` prints), ``runs_table`` the same rows as the page writes them, and ``run_details`` the text about
one run, in the words of ``workbench.wording`` (as every page writes them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.wording import missing, parameters, run_about, when  # noqa: F401 (the Jobs page's words)
from workbench.wording import run_kind as kind_words
from workbench.wording import status as status_words

if TYPE_CHECKING:
    from workbench.project import Project

#: the columns ``palimpsest runs`` prints (then ``backend``, dropped before printing)
RUN_FRAME_COLUMNS = ["id", "kind", "what", "model", "status", "total", "ok", "failed", "calls", "cached",
                     "prompt_tokens", "completion_tokens", "cost", "created_at", "finished_at", "note"]
#: the Jobs page's columns
RUN_TABLE_COLUMNS = ["Run", "Kind", "Model", "About", "Status", "Answered", "Failed", "Model calls", "Tokens in / out",
                     "Cost", "Finished"]


@dataclass(frozen=True)
class RunsChoices:
    """The runs listed: of one ``kind`` only (None: every kind) and of one ``model`` only (None: every model)."""
    kind: str | None = None
    model: str | None = None


# ------------------------------------------------------------------------------------------------ words
def text(value: Any) -> str:
    """A cell's text: empty for missing values."""
    return "" if missing(value) else str(value)


# ------------------------------------------------------------------------------------------------ queries
def run_kinds(project: "Project") -> list[tuple[str, str]]:
    """The kinds of run the project has, as (words, kind): the page's choice of kind."""
    from workbench.jobs import runs_frame as stored

    kinds = sorted({str(k) for k in stored(project)["kind"].dropna()})
    return sorted(((kind_words(k), k) for k in kinds), key=lambda pair: pair[0].lower())


def runs_frame(project: "Project", choices: RunsChoices) -> pd.DataFrame:
    """The runs of the choices, oldest first: status, counts, tokens, calls, cost (``RUN_FRAME_COLUMNS``, then
    ``backend``)."""
    from workbench.models.usage import runs_overview

    frame = runs_overview(project, choices.kind)
    if choices.model is not None:
        frame = frame[frame["model"] == choices.model]
    frame = frame.sort_values("id").reset_index(drop=True)
    frame = frame.assign(what=[kind_words(kind) for kind in frame["kind"]])
    return frame[RUN_FRAME_COLUMNS + ["backend"]]


def _calls(calls: int, cached: int) -> str:
    return f"{calls:,} (+{cached:,} from cache)" if cached else f"{calls:,}"


def runs_table(project: "Project", choices: RunsChoices, frame: pd.DataFrame | None = None,
               configs: dict[int, dict] | None = None) -> pd.DataFrame:
    """The runs of the choices as the Jobs page writes them, newest first (``RUN_TABLE_COLUMNS``), with ``id`` and the raw
    ``status``, ``kind``, ``ok``, ``failed``, ``total`` beside them. ``configs``: run id -> stored configuration,
    read once per run (a run's configuration never changes)."""
    from workbench.jobs import get_run, is_active
    from workbench.models.usage import run_cost_text

    frame = runs_frame(project, choices) if frame is None else frame
    frame = frame.sort_values("id", ascending=False)
    configs = {} if configs is None else configs
    rows = []
    for record in frame.to_dict("records"):
        run_id = int(record["id"])
        if run_id not in configs:
            try:
                configs[run_id] = get_run(project, run_id)["config"]
            except Exception:  # a run deleted meanwhile: nothing to say about it
                configs[run_id] = {}
        rows.append({
            "Run": str(run_id), "Kind": kind_words(record["kind"]), "Model": text(record["model"]),
            "About": run_about(record["kind"], configs[run_id]),
            "Status": "running" if is_active(project, run_id) else status_words(record["status"]),
            "Answered": f"{int(record['ok']):,} of {int(record['total']):,}", "Failed": f"{int(record['failed']):,}",
            "Model calls": _calls(int(record["calls"]), int(record["cached"])),
            "Tokens in / out": f"{record['prompt_tokens']:,} / {record['completion_tokens']:,}",
            "Cost": run_cost_text(record["cost"], record["backend"], int(record["calls"]), record["model"]),
            "Finished": when(record["finished_at"]),
            "id": run_id, "kind": record["kind"], "status": record["status"], "ok": int(record["ok"]),
            "failed": int(record["failed"]), "total": int(record["total"]), "model": text(record["model"]),
            "note": text(record["note"]), "created_at": record["created_at"], "finished_at": record["finished_at"]})
    return pd.DataFrame(rows, columns=RUN_TABLE_COLUMNS + ["id", "kind", "status", "ok", "failed", "total", "model",
                                                           "note", "created_at", "finished_at"])


def run_details(project: "Project", run_id: int, record: dict) -> str:
    """What the page says about one run (a row of ``runs_table``): its notes, what it was about, when, its settings,
    and why items failed."""
    from workbench.jobs import get_run
    from workbench.run_failures import failure_reasons

    lines = [f"Run {run_id} ({kind_words(record['kind'])}), model {text(record['model']) or 'none'}: "
             f"{record['status']}."]
    if text(record.get("note")):
        lines.append(text(record["note"]))
    run = get_run(project, run_id)
    about = run_about(record["kind"], run["config"])
    if about:
        lines.append(f"About: {about}.")
    started, finished = when(record["created_at"]), when(record["finished_at"])
    lines.append(f"Started {started}" + (f", finished {finished}." if finished else "."))
    if run["params"]:
        lines.append("Settings: " + parameters(dict(sorted(run["params"].items()))) + ".")
    reasons = failure_reasons(project, run_id)
    if reasons:
        lines.append("Why items failed:")
        lines.extend(f"  {n:,} × {error}" for error, n in reasons[:5])
    return "\n".join(lines)
