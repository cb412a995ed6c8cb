"""End to end with tiny real models: prompted runs (base, chat, OpenAI-compatible server), the
log-probability score, the masked-LM baseline, resuming, and the analyses on top."""

from __future__ import annotations

import json
import math

import pytest

from workbench.jobs import get_run, resume_run, run_counts
from workbench.models.catalog import ModelSpec, add_model
from workbench.probes.cloze import MASK
from workbench.probes.cloze.analysis import book_accuracy, passage_results
from workbench.probes.cloze.extract import extract_books
from workbench.probes.cloze.mlm import run_mlm
from workbench.probes.cloze.passages import select_passage_ids
from workbench.probes.cloze.rules import ExtractionSettings
from workbench.probes.cloze.run import Selection, run_cloze, run_logprob
from workbench.prompt_templates import save_template

# The tiny models read at most 512 tokens; the shipped prompt with its examples is longer than that in
# their 400-token vocabulary, so these tests use a short template of their own.
SHORT = "Fill in the name.\n{passage}\nAnswer:"
TALK = {"max_tokens": 4, "min_tokens": 2}  # random tiny models would otherwise stop at once


@pytest.fixture
def extracted(two_books):
    project, long_id, short_id = two_books
    extract_books(project, settings=ExtractionSettings(per_book=3, seed=2))
    save_template(project, "short", SHORT, "cloze")
    return project, long_id, short_id


def test_a_base_model_answers_every_passage_and_the_run_records_how(extracted, tiny_causal_dir):
    project, long_id, short_id = extracted
    spec = add_model(project, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    report = run_cloze(project, "tiny-base", template="short", params=TALK)
    assert report.status == "done" and report.total == 6 and report.failed == 0
    run = get_run(project, report.run_id)
    assert run["kind"] == "cloze" and run["model_id"] == spec.id
    assert run["params"]["temperature"] == 0.0 and run["params"]["stop"] == ["</name>"]
    template_row = project.db.execute("SELECT name, hash FROM prompt_templates WHERE id = ?", [run["template_id"]]).fetchone()
    assert template_row[0] == "short"
    assert sorted(run["config"]["passage_ids"]) == sorted(select_passage_ids(project))
    stored = project.db.execute("SELECT item_id, prompt, raw FROM responses WHERE run_id = ?", [report.run_id]).fetchall()
    passages = dict(project.db.execute("SELECT id, passage FROM cloze_passages").fetchall())
    for item_id, prompt, raw in stored:
        assert prompt.startswith("Fill in the name.\n") and prompt.endswith("\nAnswer:")
        assert " ".join(passages[item_id].split()) in prompt
        assert raw is not None
    # the same run again continues it: nothing new is asked
    again = run_cloze(project, "tiny-base", template="short", params=TALK)
    assert again.run_id == report.run_id and again.processed == 0
    table = book_accuracy(project, "tiny-base")
    assert set(table["book_id"]) == {long_id, short_id}
    assert (table["n"] == 3).all() and (table["failed"] == 0).all()
    assert table["ci_low"].notna().all()


def test_runs_can_cover_chosen_books_and_be_resumed(extracted, tiny_causal_dir):
    project, long_id, _ = extracted
    add_model(project, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    report = run_cloze(project, "tiny-base", template="short", params=TALK, selection=Selection(book_ids=[long_id]))
    assert report.total == 3
    with project.db.conn:
        project.db.execute("DELETE FROM responses WHERE run_id = ? AND item_id = (SELECT MIN(item_id) FROM responses)", [report.run_id])
    resumed = resume_run(project, report.run_id)  # the job runner's, as the Jobs page calls it
    assert resumed.processed == 1 and run_counts(project, report.run_id)["ok"] == 3


def test_a_chat_model_gets_a_chat_turn(extracted, tiny_chat_dir):
    project, _, _ = extracted
    add_model(project, ModelSpec(label="tiny-chat", backend="hf", ref=str(tiny_chat_dir)))
    report = run_cloze(project, "tiny-chat", template="short", params=TALK)
    assert report.failed == 0
    prompts = [r[0] for r in project.db.execute("SELECT prompt FROM responses WHERE run_id = ?", [report.run_id])]
    assert all(p.startswith("[user]\nFill in the name.") for p in prompts)
    assert get_run(project, report.run_id)["params"]["stop"] == []


def test_log_probability_of_the_gold_answer(extracted, tiny_causal_dir):
    project, _, _ = extracted
    add_model(project, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    report = run_logprob(project, "tiny-base", template="short")
    assert report.failed == 0 and get_run(project, report.run_id)["kind"] == "cloze-logprob"
    rows = project.db.execute(
        "SELECT x.raw, x.logprob, p.gold FROM responses x JOIN cloze_passages p ON p.id = x.item_id WHERE x.run_id = ?",
        [report.run_id],
    ).fetchall()
    assert len(rows) == 6
    for raw, logprob, gold in rows:
        assert raw == f" <name>{gold}</name>"
        assert logprob < 0 and math.isfinite(logprob)
    run_cloze(project, "tiny-base", template="short", params=TALK)
    table = book_accuracy(project, "tiny-base")
    assert (table["logprob_n"] == 3).all() and (table["mean_logprob"] < 0).all()


def test_masked_lm_baseline(extracted, tiny_mlm_dir):
    project, _, _ = extracted
    add_model(project, ModelSpec(label="tiny-bert", backend="hf", ref=str(tiny_mlm_dir)))
    report = run_mlm(project, "tiny-bert", top_k=3)
    assert report.failed == 0 and report.total == 6
    rows = project.db.execute("SELECT prompt, raw, extra FROM responses WHERE run_id = ?", [report.run_id]).fetchall()
    for prompt, raw, extra in rows:
        assert MASK in prompt  # BERT's own mask token is also written [MASK]
        top = json.loads(extra)["top_k"]
        assert len(top) == 3 and top[0][0] == raw
        assert top[0][1] >= top[1][1] >= top[2][1]
    results = passage_results(project, "tiny-bert")
    assert set(results["kind"]) == {"cloze-mlm"} and results["correct"].notna().all()


def test_log_probability_and_masked_lm_runs_are_continued_like_the_others(extracted, tiny_causal_dir, tiny_mlm_dir):
    project, _, _ = extracted
    add_model(project, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    add_model(project, ModelSpec(label="tiny-bert", backend="hf", ref=str(tiny_mlm_dir)))
    for report in (run_logprob(project, "tiny-base", template="short"), run_mlm(project, "tiny-bert", top_k=2)):
        with project.db.transaction():
            project.db.execute("DELETE FROM responses WHERE run_id = ? AND item_id = (SELECT MIN(item_id)"
                               " FROM responses WHERE run_id = ?)", [report.run_id, report.run_id])
        resumed = resume_run(project, report.run_id)  # as the Jobs page calls it
        assert resumed.processed == 1 and run_counts(project, report.run_id)["ok"] == 6
    extra = project.db.execute("SELECT extra FROM responses WHERE run_id = ? ORDER BY id DESC LIMIT 1",
                               [report.run_id]).fetchone()[0]
    assert len(json.loads(extra)["top_k"]) == 2  # the masked-LM run kept its own top k


def test_a_generating_model_cannot_be_the_masked_baseline(extracted, tiny_causal_dir):
    from workbench.errors import UserError

    project, _, _ = extracted
    add_model(project, ModelSpec(label="tiny-base", backend="hf", ref=str(tiny_causal_dir)))
    with pytest.raises(UserError, match="mask token"):
        run_mlm(project, "tiny-base")


def test_through_an_openai_compatible_server(extracted, llama_server):
    project, _, _ = extracted
    add_model(project, ModelSpec(label="tiny-server", backend="openai", ref=llama_server.model,
                                 base_url=llama_server.base_url, params={"chat": True}))
    report = run_cloze(project, "tiny-server", template="short", params={"max_tokens": 4})
    assert report.status == "done" and report.total == 6
    counts = run_counts(project, report.run_id)
    assert counts["ok"] + counts["failed"] == 6 and counts["ok"] > 0
    table = book_accuracy(project, "tiny-server")
    assert table["n"].sum() == counts["ok"] and table["failed"].sum() == counts["failed"]


def test_a_probe_through_a_round_robin_router_in_front_of_two_servers_finds_every_answer_once(
        two_books, llama_server, tiny_gguf_path, tmp_path):
    """Past one machine: two llama.cpp servers behind a router that sends each request to the next server
    (as a LiteLLM proxy or a load balancer in front of vLLM replicas does); the model's requests-at-once
    setting keeps both busy, and every passage is answered exactly once."""
    from tests.fixtures.fault_proxy import FaultProxy
    from tests.fixtures.servers import start_llama_server, stop_server

    project, _, _ = two_books
    extract_books(project, settings=ExtractionSettings(per_book=6, seed=2))
    save_template(project, "short", SHORT, "cloze")
    second = start_llama_server(tiny_gguf_path, tmp_path / "second.log")
    router = FaultProxy(llama_server.root, second.root).start()
    try:
        add_model(project, ModelSpec(label="lab", backend="openai", ref=llama_server.model, base_url=router.base_url,
                                     params={"chat": True, "free": True, "concurrency": 4}))
        report = run_cloze(project, "lab", template="short", params={"max_tokens": 4})
    finally:
        router.stop()
        stop_server(second)
    passages = select_passage_ids(project)
    assert report.status == "done" and report.total == len(passages) == 12 and report.failed == 0
    answers = project.db.execute("SELECT item_id, COUNT(*) FROM responses WHERE run_id = ? GROUP BY item_id",
                                 [report.run_id]).fetchall()
    assert sorted(item for item, _ in answers) == sorted(passages) and {n for _, n in answers} == {1}
    asked = [(i, body) for i, path, body in router.forwarded if path.endswith("/chat/completions")]
    # both servers answered; nothing was asked twice (a passage whose prompt repeats another's is answered
    # from the project's cache)
    assert {i for i, _ in asked} == {0, 1}
    assert len(asked) == len({body for _, body in asked}) == 12 - report.cached
    assert router.max_in_flight > 1  # requests really went out side by side
