"""Tokens and cost per run, from the usage the job runner sums in ``runs.usage``.

Cached answers cost nothing and are not in the token counts (the runner counts them apart, as
``cached``); ``calls`` is how many requests actually went to the model.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pandas as pd

from workbench.jobs import get_run, run_counts, runs_frame
from workbench.models.catalog import get_model, list_models
from workbench.models.prices import CostEstimate, cost_of_usage, costs_nothing, price_for, rough_token_count

if TYPE_CHECKING:
    from workbench.project import Project

USAGE_KEYS = ("prompt_tokens", "completion_tokens", "calls", "cached")


def run_usage(project: "Project", run_id: int) -> dict[str, float | int | None]:
    run = get_run(project, run_id)
    usage = {key: int(run["usage"].get(key, 0)) for key in USAGE_KEYS}
    specs = {m.id: m for m in list_models(project)}
    usage["cost"] = cost_of_usage(project, specs.get(run["model_id"]), usage)
    return usage


def runs_overview(project: "Project", kind: str | None = None) -> pd.DataFrame:
    """``jobs.runs_frame`` plus tokens, calls, cached answers and cost (NaN where no price is known)."""
    frame = runs_frame(project, kind)
    model_ids = {int(run_id): None if pd.isna(model_id) else int(model_id)
                 for run_id, model_id in zip(frame["id"], frame["model_id"])}
    specs = {m.id: m for m in list_models(project)}
    usages = [json.loads(u or "{}") for u in frame["usage"]] if len(frame) else []
    frame["backend"] = [getattr(specs.get(model_ids.get(run_id)), "backend", None) for run_id in frame["id"]]
    for usage, backend in zip(usages, frame["backend"]):
        if backend == "external":  # imported results: no model was called here
            usage["calls"] = 0
    for key in USAGE_KEYS:
        frame[key] = [int(u.get(key, 0)) for u in usages]
    costs = []
    for run_id, usage in zip(frame["id"], usages):
        cost = cost_of_usage(project, specs.get(model_ids.get(run_id)), usage)
        costs.append(float("nan") if cost is None else cost)
    frame["cost"] = pd.Series(costs, index=frame.index, dtype="float64")
    return frame.drop(columns=["usage", "model_id", "template_id"])


def estimate_continuation(project: "Project", run_id: int, retry_failed: bool = False) -> CostEstimate | None:
    """About what continuing a run (or, ``retry_failed``, asking again for its failures) costs, from the run's
    own record: the items left, answers as long as its settings allow, prompts as long as those it has sent.
    None when that cannot be known yet (no prompt stored, or the run's size unknown)."""
    run = get_run(project, run_id)
    spec = get_model(project, int(run["model_id"]))
    counts = run_counts(project, run_id)
    left = counts["failed"] if retry_failed else max(0, int(run["total"]) - counts["ok"] - counts["failed"])
    local = costs_nothing(spec)
    price = None if local else price_for(project, spec.ref)
    if left == 0:
        return CostEstimate(0, 0, 0, price, local)
    prompts = [row[0] for row in project.db.execute(
        "SELECT prompt FROM responses WHERE run_id = ? AND prompt IS NOT NULL LIMIT 200", [run_id])]
    if not prompts or int(run["total"]) <= 0:
        return None
    per_prompt = sum(rough_token_count(text) for text in prompts) / len(prompts)
    answer_tokens = int(run["params"].get("max_tokens") or 0)
    return CostEstimate(left, round(per_prompt * left), left * answer_tokens, price, local)


def run_cost_text(cost: float | None, backend: str | None, calls: int, model: str | None) -> str:
    """A row of ``runs_overview``'s cost in words: a run that asks no model (an n-gram index, say) costs
    nothing, and so does one that sent nothing."""
    if model is None or (isinstance(model, float) and model != model):
        return "none (no model)"
    return describe_cost(cost, backend, calls)


def describe_cost(cost: float | None, backend: str | None = None, calls: int | None = None) -> str:
    if backend == "external":
        return "imported"
    if backend in ("hf", "gguf"):
        return "free (local)"
    if calls == 0:
        return "$0 (nothing sent)"
    if cost is None or cost != cost:  # NaN
        return "unknown (no price set)"
    if cost == 0:
        return "$0"
    if cost < 0.0001:
        return "< $0.0001"
    return f"${cost:,.4f}" if cost < 0.01 else f"${cost:,.2f}"
