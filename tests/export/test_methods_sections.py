"""Probes describe themselves in the methods text: a section registered for a kind is used for its runs."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.rep_data import external_model, store_run
from workbench import jobs
from workbench.export import methods
from workbench.export.methods import (
    MethodsSection,
    RunFacts,
    RunKind,
    Statistic,
    methods_json,
    methods_text,
    register_methods,
)
from workbench.models.base import GenerationParams
from workbench.probes.rep.run import run_config
from workbench.probes.rep.sets import get_set


@pytest.fixture
def echo_section(monkeypatch):
    """A made-up probe, 'echo', registered for this test only (the registered sections are restored after)."""
    monkeypatch.setattr(methods, "_SECTIONS", {s.key: s for s in methods.sections()})
    return register_methods(MethodsSection(
        key="echo",
        title="Echoing phrases",
        kinds=(RunKind("echo", "echo probe, repeating phrases", "phrase",
                       generation=lambda run: f"each phrase said {run['echo']['times']} times"),),
        facts=lambda project, run: RunFacts({"echo": {"times": run["config"]["times"], "phrases": 3}}, items=3),
        lines=lambda run, seen: [f"- **Phrases:** {run['echo']['phrases']}, each repeated."],
        procedure=lambda runs: f"Every model repeated each phrase ({len(runs)} run).",
        statistics=lambda: [Statistic("Echo count", "for how often a phrase came back", "Python `len`")],
        order=15,  # after the name cloze, before REP
    ))


def test_a_registered_section_describes_its_runs_and_an_unknown_kind_is_other(project, echo_section):
    gender = get_set(project, "gender")
    external_model(project, "outside")
    rep_id = store_run(project, "rep", "outside", GenerationParams(temperature=1.0, max_tokens=20, seed=0),
                       run_config([gender], 1), {(gender.prompt_ids[r.key], 0): " a man" for r in gender.parsed.roles})
    echo_id = jobs.create_run(project, "echo", model_id=None, params={}, config={"times": 2})
    other_id = jobs.create_run(project, "unheard-of", model_id=None, params={}, config={})

    text = methods_text(project)
    procedure, rest = text.split("## Models")
    assert "### Echoing phrases\n\nEvery model repeated each phrase (1 run)." in procedure
    assert procedure.index("### Echoing phrases") < procedure.index("### Role-specific elicitation prompts (REPs)")
    assert f"### Run {echo_id}: echo probe, repeating phrases\n" in rest
    assert ("- **Generation:** each phrase said 2 times.\n- **Phrases:** 3, each repeated.\n"
            "- **Counts:** 3 requests (3 phrases × 1 sample): 0 answered, 0 failed, 3 not yet asked.") in rest
    statistics = rest.split("## Statistics")[1]
    assert "### Echoing phrases\n\n- **Echo count** for how often a phrase came back; computed with Python `len`." \
        in statistics
    assert statistics.index("### Echoing phrases") < statistics.index("### Role-specific elicitation prompts")
    # A kind no section claims: the shared facts only, no paragraph and no statistics of its own.
    assert f"### Run {other_id}: unheard-of\n\n- **Model:** none.\n- **Generation:** none recorded.\n" \
           "- **Counts:** 0 requests (0 items × 1 sample)" in rest

    record = json.loads(methods_json(project))
    runs = {r["id"]: r for r in record["runs"]}
    assert runs[echo_id]["probe"] == "echo" and runs[echo_id]["echo"] == {"times": 2, "phrases": 3}
    assert runs[other_id]["probe"] == "other" and runs[other_id]["description"] == "unheard-of"
    assert runs[rep_id]["probe"] == "rep"
    assert list(record["procedures"]) == ["echo", "rep"] and "other" not in record["statistics"]
    assert record["statistics"]["echo"] == [
        {"name": "Echo count", "used_for": "for how often a phrase came back", "implementation": "Python `len`"}]


def test_a_run_kind_belongs_to_one_section(echo_section):
    with pytest.raises(ValueError, match="'echo' is already described"):
        register_methods(MethodsSection(key="another", title="Another", kinds=(RunKind("echo", "echo", "x"),)))


def test_every_probe_registers_its_section_through_its_part():
    assert [s.key for s in methods.sections()] == ["name-cloze", "continuation", "rep", "rep-judge", "rep-eep", "summaries", "reading",
                                                   "leakage", "downstream-validity", "exposure-report"]
    kinds = {k.kind for s in methods.sections() for k in s.kinds}
    assert kinds == {"cloze", "cloze-logprob", "cloze-mlm", "continuation", "rep", "rep-judge", "rep-eep", "summary",
                     "summary-distort", "reading-summary", "reading-false-summary", "reading-answer",
                     "leakage-overlap", "leakage-chance", "leakage-frequency", "membership", "surprisal",
                     "decop-paraphrase", "decop",
                     "validity-year", "validity-narrative-time"}
