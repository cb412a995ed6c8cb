"""Entity eliciting prompts: spaCy entities of completions against those of a decade's books."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import mannwhitneyu

from tests.fixtures.rep_data import external_model, store_run
from workbench import jobs
from workbench.models.base import GenerationParams
from workbench.probes.rep.entities import (
    EEP_KIND,
    book_entities,
    compare_stages,
    load_ner,
    normalise_entity,
    overlap_per_response,
    overlap_share,
    overlap_summary,
    pipeline_id,
    run_eep,
)
from workbench.probes.rep.run import SamplingSettings, run_config
from workbench.probes.rep.sets import get_set


def test_normalise_and_share():
    assert normalise_entity("  The   Marlow Institute's") == "marlow institute"
    assert overlap_share({"john", "chicago", "ford"}, {"john", "mary", "new york"}) == pytest.approx(1 / 3)
    assert overlap_share({"john", "mary", "boston"}, {"john", "mary", "new york"}) == pytest.approx(2 / 3)
    assert np.isnan(overlap_share(set(), {"john"}))


def test_book_entities_are_found_once_and_kept(project, decade_books):
    nlp = load_ner()
    fifties = book_entities(project, decade_books["1950s"], nlp)
    assert {"chicago", "harriet quill"} <= fifties and "seattle" not in fifties
    stored = project.db.execute("SELECT COUNT(*) FROM rep_book_entities").fetchone()[0]
    stamps = project.db.execute("SELECT book_id, created_at FROM rep_entity_extractions ORDER BY book_id").fetchall()
    assert len(stamps) == 2 and stored > 5
    project.db.execute("DELETE FROM rep_book_entities WHERE entity = 'chicago'")  # a re-read would bring it back
    project.db.conn.commit()
    assert "chicago" not in book_entities(project, decade_books["1950s"], nlp)
    assert pipeline_id(nlp).endswith(nlp.meta["version"])


def store_eep(project, model, texts):
    eep = get_set(project, "eep")
    key = eep.parsed.prompts[0].key
    items = {(eep.prompt_ids[key], s): text for s, text in enumerate(texts)}
    return store_run(project, EEP_KIND, model, GenerationParams(temperature=1.0, max_tokens=50, seed=0),
                     run_config([eep], len(texts)), items)


def test_overlap_per_response_against_the_decade_books(project, decade_books):
    external_model(project, "base")
    external_model(project, "tuned-1950s", decade="1950s", **{"fine-tuned": ""})
    store_eep(project, "base", ["We drove to Seattle in the rain.", "nothing here at all"])
    store_eep(project, "tuned-1950s", ["We took the train to Chicago.", "Harriet Quill wrote to Chicago and to Seattle."])
    frame = overlap_per_response(project, tag="decade=1950s")
    by_text = frame.set_index("raw")
    assert by_text.loc["We took the train to Chicago.", "overlap"] == 1.0
    assert by_text.loc["We drove to Seattle in the rain.", "overlap"] == 0.0
    assert np.isnan(by_text.loc["nothing here at all", "overlap"])
    mixed = by_text.loc["Harriet Quill wrote to Chicago and to Seattle."]
    assert mixed["entities"] == 3 and mixed["common"] == 2 and mixed["common_entities"] == "chicago; harriet quill"
    assert set(frame["stage"]) == {"base", "fine-tuned"} and set(frame["prompt"]) == {"saturday_city"}
    nineties = overlap_per_response(project, tag="decade=1990s").set_index("raw")
    assert nineties.loc["We drove to Seattle in the rain.", "overlap"] == 1.0


def test_summary_and_stage_comparison_match_numpy_and_scipy():
    per_response = pd.DataFrame({
        "model": ["b"] * 4 + ["t"] * 4, "decade": [None] * 4 + ["1950s"] * 4,
        "stage": ["base"] * 4 + ["fine-tuned"] * 4, "prompt": ["p", "p", "q", "q"] * 2,
        "overlap": [0.0, 0.5, np.nan, 0.25, 1.0, 0.5, 0.75, np.nan],
    })
    summary = overlap_summary(per_response).set_index(["model", "prompt"])
    assert summary.loc[("b", "all"), "overlap_pct"] == pytest.approx(np.mean([0, 50, 25]))
    assert summary.loc[("b", "all"), "responses"] == 4 and summary.loc[("b", "all"), "with_entities"] == 3
    assert summary.loc[("t", "p"), "ci_low_pct"] < 75 < summary.loc[("t", "p"), "ci_high_pct"]
    compared = compare_stages(per_response).iloc[0]
    expected = mannwhitneyu([1.0, 0.5, 0.75], [0.0, 0.5, 0.25], alternative="two-sided")
    assert compared["p_value"] == pytest.approx(expected.pvalue)
    assert compared["fine_tuned_pct"] == pytest.approx(75) and compared["base_pct"] == pytest.approx(25)


def test_run_eep_samples_every_stem(project, decade_models):
    report = run_eep(project, "tiny-1950s", SamplingSettings(samples=2, max_tokens=8, min_tokens=3))
    assert report.status == "done" and report.total == 2 * len(get_set(project, "eep").parsed.prompts)
    assert jobs.get_run(project, report.run_id)["kind"] == EEP_KIND
    again = jobs.resume_run(project, report.run_id)
    assert again.processed == 0 and again.done == report.total
