"""How much book a local model is shown when no word limit is given: what fits its context, read from the
model itself (``Backend.context_tokens``), so that late questions in a long book are cut, not failed."""

from workbench.models.registry import ModelSpec, add_model, open_backend
from workbench.probes.reading.questions import QuestionSettings, build_questions
from workbench.probes.reading.run import run_questions


def test_a_transformers_model_reports_its_positions(project, tiny_causal_dir):
    spec = add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(tiny_causal_dir),
                                        params={"device": "cpu"}))
    with open_backend(spec, project) as backend:
        assert backend.context_tokens == 512  # the tiny model's max_position_embeddings


def test_a_gguf_model_reports_the_context_it_was_opened_with(project, tiny_gguf_path):
    spec = add_model(project, ModelSpec(label="tiny-gguf", backend="gguf", ref=str(tiny_gguf_path),
                                        params={"n_ctx": 256}))
    with open_backend(spec, project) as backend:
        assert backend.context_tokens == 256


def test_late_questions_get_the_end_of_the_book_that_fits_a_small_model(project, summarized_book, tiny_causal_dir):
    build_questions(project, summarized_book.book_id, QuestionSettings(every=4, options=3, reconstruction=0))
    spec = add_model(project, ModelSpec(label="tiny", backend="hf", ref=str(tiny_causal_dir),
                                        params={"device": "cpu"}))
    (report,) = run_questions(project, spec, book_ids=[summarized_book.book_id])
    rows = project.db.execute("SELECT status, error, json_extract(extra, '$.truncated'),"
                              " json_extract(extra, '$.context_words') FROM responses WHERE run_id = ?",
                              [report.run_id]).fetchall()
    assert rows and report.failed_total == 0, [r[1] for r in rows if r[0] != "ok"][:2]
    cut = [words for _, _, truncated, words in rows if truncated]
    assert cut and min(cut) > 20  # the book (about 2,000 words) was cut to what fits, not to nothing


def test_an_api_model_is_warned_that_its_context_is_unknown_even_when_marked_free():
    from workbench.probes.reading.run import context_note

    paid = ModelSpec(label="api", backend="openai", ref="m")
    free = ModelSpec(label="here", backend="openai", ref="m", params={"free": True})
    local = ModelSpec(label="local", backend="gguf", ref="m.gguf")
    assert "Set 'Words' to about the model's context" in context_note(paid, "'Words'")
    assert context_note(free, "'Words'") == context_note(paid, "'Words'").replace("'api'", "'here'")
    assert context_note(local, "'Words'") == ""
