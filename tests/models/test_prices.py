"""Prices: the default table, the project's own prices, run costs and estimates before a run."""

from __future__ import annotations

import math

import pytest

import workbench.models.catalog as registry
from workbench import jobs
from workbench.errors import UserError
from workbench.models import prices
from workbench.models.catalog import ModelSpec
from workbench.models.usage import describe_cost, run_usage, runs_overview


def test_the_default_table_says_when_it_was_set_and_to_check_it():
    frame = prices.prices_frame()
    assert {"gpt-4o*", "gpt-4o-mini*"} <= set(frame["model"])
    assert set(frame["source"]) == {"default"}
    note = prices.default_prices_note()
    assert "2025-06-01" in note and "check" in note.lower()


def test_the_longest_matching_prefix_wins():
    mini = prices.price_for(None, "gpt-4o-mini-2024-07-18")
    big = prices.price_for(None, "gpt-4o-2024-08-06")
    assert mini.model == "gpt-4o-mini*" and big.model == "gpt-4o*"
    assert mini.input_per_million < big.input_per_million
    assert prices.price_for(None, "my-local-llama") is None


def test_the_projects_prices_override_the_defaults(project):
    prices.set_price(project, "gpt-4o-mini*", 1.0, 2.0)
    prices.set_price(project, "tiny", 10, 20)
    price = prices.price_for(project, "gpt-4o-mini")
    assert (price.input_per_million, price.output_per_million, price.source) == (1.0, 2.0, "project")
    frame = prices.prices_frame(project).set_index("model")
    assert frame.loc["gpt-4o-mini*", "source"] == "project" and frame.loc["gpt-4o*", "source"] == "default"
    assert prices.remove_price(project, "gpt-4o-mini*")
    assert prices.price_for(project, "gpt-4o-mini").source == "default"
    prices.replace_prices(project, [("a", 1, 1), ("", 5, 5), ("b", "2.5", 0)])
    assert set(prices.prices_frame(project).query("source == 'project'")["model"]) == {"a", "b"}


@pytest.mark.parametrize("value", ["cheap", -1, float("nan")])
def test_bad_prices_are_refused(project, value):
    with pytest.raises(UserError, match="price"):
        prices.set_price(project, "m", value, 1)


def test_a_runs_cost_comes_from_its_token_usage(project):
    spec = registry.add_model(project, ModelSpec(label="api", backend="openai", ref="tiny",
                                                 base_url="http://127.0.0.1:9/v1"))
    prices.set_price(project, "tiny", 2.0, 10.0)
    run_id = jobs.create_run(project, "test", model_id=spec.id)
    outcomes = {1: jobs.Outcome(raw="a", prompt_tokens=1000, completion_tokens=100),
                2: jobs.Outcome(raw="b", prompt_tokens=1000, completion_tokens=100),
                3: jobs.Outcome(raw="c", prompt_tokens=1000, completion_tokens=100, cached=True)}
    jobs.run_job(project, run_id, [jobs.Unit(i) for i in outcomes],
                 lambda units, state: [(u, outcomes[u.item_id]) for u in units])
    usage = run_usage(project, run_id)
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["calls"], usage["cached"]) == (2000, 200, 2, 1)
    assert usage["cost"] == pytest.approx((2000 * 2.0 + 200 * 10.0) / 1e6)
    row = runs_overview(project).iloc[0]
    assert row["cost"] == pytest.approx(usage["cost"]) and row["model"] == "api"
    assert describe_cost(usage["cost"]) == "$0.0060"


def test_a_run_without_a_known_price_has_an_unknown_cost(project):
    spec = registry.add_model(project, ModelSpec(label="api", backend="openai", ref="unpriced",
                                                 base_url="http://127.0.0.1:9/v1"))
    run_id = jobs.create_run(project, "test", model_id=spec.id)
    assert run_usage(project, run_id)["cost"] is None
    assert math.isnan(runs_overview(project).iloc[0]["cost"])
    assert describe_cost(None) == "unknown (no price set)"
    assert describe_cost(None, "external") == "imported" and describe_cost(0.0, "gguf") == "free (local)"


def test_estimate_before_a_run():
    api = ModelSpec(label="api", backend="openai", ref="gpt-4o-mini")
    estimate = prices.estimate_cost(api, ["x" * 400, "y" * 40], max_tokens=50, samples=3)
    assert estimate.requests == 6
    per_pass = prices.rough_token_count("x" * 400) + prices.rough_token_count("y" * 40)
    assert per_pass > 0  # characters / 4, or tiktoken's count when installed
    assert estimate.prompt_tokens == per_pass * 3
    assert estimate.max_completion_tokens == 300
    assert estimate.cost == pytest.approx((per_pass * 3 * 0.15 + 300 * 0.60) / 1e6)
    assert "at most about $" in estimate.describe()
    local = prices.estimate_cost(ModelSpec(label="l", backend="gguf", ref="x.gguf"), ["abc"], 10)
    assert local.cost == 0.0 and "costs nothing" in local.describe()
    unknown = prices.estimate_cost(ModelSpec(label="u", backend="openai", ref="mystery"), ["abc"], 10)
    assert unknown.cost is None and "cannot be estimated" in unknown.describe()


def test_an_api_model_is_paid_until_the_scholar_marks_it_free(project):
    """A server on 127.0.0.1 may forward to a paid service: only the scholar's 'free' makes it cost nothing."""
    loopback = registry.add_model(project, ModelSpec(label="here", backend="openai", ref="gpt-4o-mini",
                                                     base_url="http://127.0.0.1:8080/v1"))
    assert prices.is_paid(loopback)
    assert prices.estimate_cost(loopback, ["abc"], 10).cost > 0
    free = registry.update_model(project, loopback.id, params={"free": True})
    assert not prices.is_paid(free)
    estimate = prices.estimate_cost(free, ["abc"], 10, project=project)
    assert estimate.cost == 0.0 and "costs nothing" in estimate.describe()
    run_id = jobs.create_run(project, "test", model_id=free.id)
    jobs.run_job(project, run_id, [jobs.Unit(1)],
                 lambda units, state: [(u, jobs.Outcome(raw="a", prompt_tokens=10**6, completion_tokens=10**6))
                                       for u in units])
    assert run_usage(project, run_id)["cost"] == 0.0
    assert prices.is_paid(ModelSpec(label="text", backend="openai", ref="x", params={"free": "maybe"}))  # not a yes


def test_free_is_a_parameter_of_api_models_only(project):
    with pytest.raises(UserError, match="no parameter free"):
        registry.add_model(project, ModelSpec(label="l", backend="gguf", ref="x.gguf", params={"free": True}))
