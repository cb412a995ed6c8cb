"""The methods export: real runs made with tiny models here, described in Markdown and JSON, never a key."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.cloze_books import write_gpt4books
from tests.fixtures.cloze_texts import novel
from tests.fixtures.rep_data import store_run
from workbench import jobs
from workbench.cli import main
from workbench.corpus.importer import store_book
from workbench.corpus.sources import draft_from_text
from workbench.errors import UserError
from workbench.export.methods import methods_json, methods_record, methods_text, safe_url, write_methods
from workbench.models.base import GenerationParams
from workbench.models.catalog import ModelSpec, add_model
from workbench.probes.cloze.extract import extract_books
from workbench.probes.cloze.gpt4books import import_gpt4books
from workbench.probes.cloze.rules import ExtractionSettings
from workbench.probes.cloze.run import run_cloze
from workbench.probes.rep.run import SamplingSettings, run_config, run_rep
from workbench.probes.rep.sets import get_set
from workbench.prompt_templates import save_template

SHORT = "Fill in the name.\n{passage}\nAnswer:"
FAKE_KEY = "sk-test-" + "9f3b27c1e0a4d6b8" * 3
KEY_VARIABLE = "PALIMPSEST_METHODS_TEST_KEY"


def indented_block(text: str) -> str:
    """How a multi-line text appears inside the Markdown's indented code block."""
    return "\n".join("  " + line if line else "" for line in text.splitlines())


@pytest.fixture
def cloze_run(project, tiny_causal_dir):
    """A name-cloze run of a tiny base model on passages extracted from two made-up books."""
    for stem, scenes, year in (("wet-week", 40, 1851), ("short-story", 6, 1899)):
        draft = draft_from_text(novel(scenes), f"{stem}.txt")
        draft.year = year
        store_book(project, draft)
    extract_books(project, settings=ExtractionSettings(per_book=3, seed=2))
    save_template(project, "short", SHORT, "cloze")
    add_model(project, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir),
                                 tags={"decade": "1950s", "fine-tuned": ""}))
    report = run_cloze(project, "tiny-base", template="short", params={"max_tokens": 4, "min_tokens": 2, "seed": 7})
    assert report.status == "done"
    return report.run_id


def test_a_cloze_run_is_described_with_its_model_parameters_template_and_counts(project, cloze_run, tiny_causal_dir):
    text = methods_text(project)
    run = jobs.get_run(project, cloze_run)
    template = project.db.execute("SELECT hash FROM prompt_templates WHERE id = ?", [run["template_id"]]).fetchone()[0]
    assert f"### Run {cloze_run}: tiny-base, name cloze, prompted model" in text
    assert (f"- **Model:** **tiny-base**, Hugging Face transformers, `{tiny_causal_dir}` "
            "(tags decade=1950s, fine-tuned).") in text
    assert ("- **Generation:** temperature 0, top-p 1, at most 4 new tokens, at least 2 new tokens, 1 sample per "
            "passage, seed 7, stops at `</name>`.") in text
    assert (f"*short*, version 1 (written or edited in this project), SHA-256 `{template[:16]}…`, sent as plain "
            "text. Full text:") in text
    assert indented_block(SHORT) in text
    assert "6 requests (6 passages × 1 sample): 6 answered, 0 failed, 0 not yet asked; 6 model calls" in text
    candidates = project.db.execute("SELECT SUM(candidates), MIN(candidates), MAX(candidates) FROM cloze_extractions"
                                    ).fetchone()
    assert (f"- **Candidates:** {candidates[0]} in all; per book median {(candidates[1] + candidates[2]) / 2:g} "
            f"(range {candidates[1]}-{candidates[2]}); no book had fewer than the passages asked for.") in text
    assert "windows of 40-60 tokens (50 preferred)" in text and "up to 3 passages per book, seed 2" in text
    assert "Up to 3 such passages per book were drawn at random with seed 2" in text  # the procedure paragraph
    assert f"ran {run['started_at'][:16].replace('T', ' ')} UTC" in text
    for statistic in ("Wilson score interval (95%)", "Wilcoxon signed-rank test", "McNemar's exact test",
                      "Spearman's rank correlation"):
        assert f"- **{statistic}**" in text
    assert "Kruskal-Wallis" not in text  # only the statistics of the probes present
    first_prompt = project.db.execute("SELECT prompt FROM responses WHERE run_id = ? ORDER BY item_id LIMIT 1",
                                      [cloze_run]).fetchone()[0]
    assert indented_block(first_prompt) in text

    record = json.loads(methods_json(project))
    described = record["runs"][0]
    assert record["format"] == "palimpsest-methods/1" and record["project"] == "study.palimpsest"
    assert described["template"]["text"] == SHORT and described["template"]["sha256"] == template
    assert described["counts"]["ok"] == 6 and described["generation"]["seed"] == 7
    assert described["cloze"]["candidates"]["total"] == candidates[0]
    assert described["cloze"]["extraction"][0]["excluded_words"]  # the word lists in full, for provenance


def test_a_rep_run_names_its_set_version_stems_and_frame(project, tiny_chat_dir):
    add_model(project, ModelSpec(label="tiny-chat", backend="hf", ref=str(tiny_chat_dir)))
    report = run_rep(project, "tiny-chat", ["race"], SamplingSettings(samples=2, max_tokens=6, seed=5))
    race = get_set(project, "race")
    text = methods_text(project, [report.run_id])
    assert f"version {race.version}, SHA-256 `{race.hash[:16]}…`" in text
    for role in race.parsed.roles:
        assert f"| {role.key} | {role.stem} |" in text
    assert indented_block(race.parsed.frame.instruction) in text
    assert "The set used here is race (" in text
    assert "Every stem was put to each model twice at temperature 1 (top-p 1, at most 6 new tokens), the i-th " \
           "sample drawn with seed 5 + i." in text
    assert "- **Prompts** went to the model as chat messages." in text
    assert "10 requests (5 stems × 2 samples): 10 answered, 0 failed" in text
    assert "- **Chi-square test of independence**" in text and "- **Kruskal-Wallis H test**" in text
    record = methods_record(project, [report.run_id])
    assert record["runs"][0]["sets"][0]["sha256"] == race.hash


def test_no_api_key_and_no_key_name_ever_appears(project, monkeypatch, tmp_path):
    monkeypatch.setenv(KEY_VARIABLE, FAKE_KEY)
    add_model(project, ModelSpec(label="api-model", backend="openai", ref="gpt-test",
                                 base_url="http://127.0.0.1:9/v1", api_key_env=KEY_VARIABLE))
    # Palimpsest refuses such an address, but a project edited by other tools might still hold one.
    with project.db.transaction():
        project.db.execute("UPDATE models SET base_url = ? WHERE label = 'api-model'",
                           ["http://scholar:hunter2@127.0.0.1:9/v1?api-key=abc123"])
    gender = get_set(project, "gender")
    run_id = store_run(project, "rep", "api-model", GenerationParams(temperature=1.0, max_tokens=20, seed=0),
                       run_config([gender], 1),
                       {(gender.prompt_ids[role.key], 0): " a woman" for role in gender.parsed.roles})
    with project.db.conn:  # a note that quotes a server's message with a key in it
        project.db.execute("UPDATE runs SET note = ? WHERE id = ?", [f"The server said: bad key {FAKE_KEY}", run_id])
    outputs = [methods_text(project), methods_json(project)]
    paths = write_methods(project, tmp_path / "methods.md")
    outputs += [p.read_text(encoding="utf-8") for p in paths]
    assert main(["methods", str(project.path), "--json", "--out", str(tmp_path / "m.json")]) == 0
    outputs.append((tmp_path / "m.json").read_text(encoding="utf-8"))
    for output in outputs:
        assert FAKE_KEY not in output and FAKE_KEY[8:] not in output
        assert KEY_VARIABLE not in output
        assert "hunter2" not in output and "abc123" not in output and "scholar" not in output
        assert "http://127.0.0.1:9/v1" in output
    assert "OpenAI-compatible API, `gpt-test`, served at http://127.0.0.1:9/v1" in outputs[0]
    assert "The server said: bad key [key hidden]" in outputs[0]
    json.loads(outputs[1])


def test_imported_published_results_are_described_as_imported(project, tmp_path):
    rows = [("<name>Jane</name>", "Jane", "She said [MASK] was late."), ("<name>Tom</name>", "Bill", "[MASK] ran.")]
    run_id = int(import_gpt4books(project, [write_gpt4books(tmp_path, "pg1234", rows)], "gpt-4-published")
                 ["run_id"].iloc[0])
    text = methods_text(project)
    assert f"### Run {run_id}: gpt-4-published, name cloze, results imported from elsewhere" in text
    assert "- **Counts:** 2 answers imported for 2 passages; 0 failed." in text
    assert "- **Passages:** 2 from 1 book, 2 of them imported (from pg1234.tsv)." in text
    assert "Published passages and answers were imported" in text
    assert "Each model saw every passage once" not in text and "Prompt template" not in text


def test_safe_url_keeps_only_scheme_host_port_and_path():
    assert safe_url("https://user:pw@api.example.org:8443/v1/?key=x#frag") == "https://api.example.org:8443/v1/"
    assert safe_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert safe_url(None) is None and safe_url("") is None


def test_choosing_runs_and_refusing_unknown_ones(project, tmp_path):
    gender = get_set(project, "gender")
    add_model(project, ModelSpec(label="outside", backend="external", tags={"decade": "1990s"}))
    ids = [store_run(project, "rep", "outside", GenerationParams(temperature=1.0, max_tokens=20, seed=s),
                     run_config([gender], 1), {(gender.prompt_ids[r.key], 0): " a man" for r in gender.parsed.roles})
           for s in (0, 1)]
    text = methods_text(project, [ids[1]])
    assert f"### Run {ids[1]}:" in text and f"### Run {ids[0]}:" not in text
    assert f"the same text as in run {ids[0]}" not in text
    both = methods_text(project)
    assert f"the same text as in run {ids[0]}." in both  # a set is quoted once, then referred to
    with pytest.raises(UserError, match="There is no run number 99"):
        methods_text(project, [99])
    with pytest.raises(UserError, match="Markdown"):
        write_methods(project, tmp_path / "methods.pdf")
    assert write_methods(project, tmp_path / "plain")[0].name == "plain.md"


def test_empty_project_gets_a_sentence(project):
    with pytest.raises(UserError, match="no runs yet"):
        methods_text(project)


def test_the_command_line(project, cloze_run, tmp_path, capsys):
    path = str(project.path)
    project.close()
    assert main(["methods", path, "--run", str(cloze_run)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("# Methods") and f"### Run {cloze_run}: tiny-base" in printed
    assert main(["methods", path, "--out", str(tmp_path / "paper" / "methods.md")]) == 0
    assert "Wrote" in capsys.readouterr().out
    assert (tmp_path / "paper" / "methods.md").read_text(encoding="utf-8") .startswith("# Methods")
    record = json.loads((tmp_path / "paper" / "methods.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in record["runs"]] == [cloze_run]
    assert main(["methods", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["model"]["label"] == "tiny-base"
    assert main(["methods", path, "--run", "42"]) == 1
    assert "There is no run number 42" in capsys.readouterr().err
