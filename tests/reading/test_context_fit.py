"""How much book a model is shown: with no word limit, what fits its context (read from the model itself, or a
server model's n_ctx), so that late questions in a long book are cut, not failed; with a word limit that
cannot fit, the run is refused before anything is sent, saying how many words fit."""

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from workbench.errors import UserError
from workbench.models.catalog import ModelSpec, add_model, open_backend
from workbench.probes.reading.questions import QuestionSettings, build_questions, question_count
from workbench.probes.reading.run import ANSWER_RUN, run_questions


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


def _completions(proxy):
    return [r for r in proxy.posts() if r.path.startswith("/v1/") and "tokenize" not in r.path]


def test_a_run_that_cannot_fit_a_servers_context_is_refused_before_any_call(project, summarized_book, fault_proxy):
    """A server started with --n_ctx 512 and given as n_ctx=512: 2,000 words of the book before each question
    cannot fit, so nothing is sent and the message says how many words do; with that many, nothing fails."""
    question_set = build_questions(project, summarized_book.book_id,
                                   QuestionSettings(every=4, options=3, reconstruction=0))
    spec = add_model(project, ModelSpec(label="small-server", backend="openai", ref="tiny",
                                        base_url=fault_proxy.base_url, params={"n_ctx": 512}))
    with pytest.raises(UserError) as refused:
        run_questions(project, spec, book_ids=[summarized_book.book_id], context_words=2000)
    message = str(refused.value)
    assert "With 2,000 words of the book" in message and "Nothing was sent." in message
    assert "512 tokens read at once, as its n_ctx setting says" in message, message
    longest = int(re.search(r"the longest is ([\d,]+) tokens", message).group(1).replace(",", ""))
    assert longest > 512
    words = int(re.search(r"--context-words (\d+)\b", message).group(1))
    assert 20 < words < 500
    assert _completions(fault_proxy) == []  # only the server's tokenizer was asked
    assert project.db.execute("SELECT COUNT(*) FROM runs WHERE kind = ?", [ANSWER_RUN]).fetchone()[0] == 0

    (report,) = run_questions(project, spec, book_ids=[summarized_book.book_id], context_words=words)
    assert report.failed_total == 0 and report.done == question_count(project, question_set.id)
    cut = project.db.execute("SELECT json_extract(extra, '$.context_words') FROM responses WHERE run_id = ?"
                             " AND json_extract(extra, '$.truncated')", [report.run_id]).fetchall()
    assert cut and {n for (n,) in cut} == {words}


def test_without_a_word_limit_a_server_of_known_context_gets_what_fits(project, summarized_book, fault_proxy):
    build_questions(project, summarized_book.book_id, QuestionSettings(every=4, options=3, reconstruction=0))
    spec = add_model(project, ModelSpec(label="small-server", backend="openai", ref="tiny",
                                        base_url=fault_proxy.base_url, params={"n_ctx": 512}))
    (report,) = run_questions(project, spec, book_ids=[summarized_book.book_id])
    assert report.failed_total == 0
    words = [n for (n,) in project.db.execute("SELECT json_extract(extra, '$.context_words') FROM responses"
                                                " WHERE run_id = ? AND json_extract(extra, '$.truncated')",
                                                [report.run_id]).fetchall()]
    assert words and min(words) > 20  # cut to what fits, counted with the server's own tokenizer


def test_a_local_model_is_refused_too_and_reconstruction_with_long_passages_says_what_to_build(
        project, summarized_book, tiny_gguf_path):
    build_questions(project, summarized_book.book_id, QuestionSettings(every=4, options=3, reconstruction=2))
    spec = add_model(project, ModelSpec(label="tiny-gguf", backend="gguf", ref=str(tiny_gguf_path),
                                        params={"n_ctx": 512}))
    with pytest.raises(UserError) as refused:  # a corrected summary may take 300 tokens: the scene's text won't fit
        run_questions(project, spec, book_ids=[summarized_book.book_id], context_words=2000)
    message = str(refused.value)
    assert "512 tokens read at once, as the model was opened" in message
    assert "--context-words" in message and "reconstruction questions do not fit" in message
    assert "--reconstruction 0" in message
    assert project.db.execute("SELECT COUNT(*) FROM runs WHERE kind = ?", [ANSWER_RUN]).fetchone()[0] == 0


class _Reporting(BaseHTTPRequestHandler):
    """Answers what llama.cpp's server (``/props``) or vLLM (``max_model_len`` in ``/v1/models``) says of the
    context it serves; everything else is 404."""
    replies: dict[str, dict] = {}

    def do_GET(self):  # noqa: N802 (the http.server name)
        reply = self.replies.get(self.path)
        body = json.dumps(reply).encode() if reply is not None else b"{}"
        self.send_response(200 if reply is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("replies, expected", [
    ({"/props": {"default_generation_settings": {"n_ctx": 3072}}}, 3072),  # llama.cpp's server
    ({"/v1/models": {"data": [{"id": "other", "max_model_len": 100}, {"id": "tiny", "max_model_len": 8192}]}}, 8192),
    ({"/v1/models": {"data": [{"id": "tiny"}]}}, None),  # llama-cpp-python says nothing: give n_ctx
])
def test_a_server_that_says_what_it_reads_is_taken_at_its_word(replies, expected):
    from workbench.models.openai_backend import OpenAIBackend
    from workbench.probes.reading.fitting import model_context

    handler = type("Replies", (_Reporting,), {"replies": replies})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with OpenAIBackend("tiny", base_url=f"http://127.0.0.1:{server.server_address[1]}/v1") as backend:
            found = model_context(backend)
        assert (found.tokens, found.source) == (expected, "as the server reports") if expected else found is None
        with OpenAIBackend("tiny", base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", n_ctx=2048) as backend:
            assert model_context(backend).tokens == 2048  # what the model's setting says comes first
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("value", ["4k", 0, True])
def test_a_server_models_context_is_a_number_of_tokens(value):
    from workbench.models.openai_backend import OpenAIBackend

    with pytest.raises(UserError, match="n_ctx is the number of tokens"):
        OpenAIBackend("tiny", base_url="http://127.0.0.1:9/v1", n_ctx=value)


def test_every_books_questions_are_checked_before_any_is_asked(project, summarized_book, tmp_path, tiny_gguf_path):
    from tests.fixtures.reading_books import reading_book

    other = reading_book(project, tmp_path, seed=1, title="The Inn", tag="x")
    build_questions(project, summarized_book.book_id, QuestionSettings(every=4, options=3, reconstruction=0))
    build_questions(project, other.book_id, QuestionSettings(every=4, options=3, reconstruction=2))
    spec = add_model(project, ModelSpec(label="tiny-gguf", backend="gguf", ref=str(tiny_gguf_path),
                                        params={"n_ctx": 512}))
    with pytest.raises(UserError) as refused:  # the first book fits; the second's reconstruction prompts do not
        run_questions(project, spec, context_words=30)
    message = str(refused.value)
    assert message.startswith("The questions on The Inn (original text) do not all fit 'tiny-gguf'.")
    assert "reconstruction questions do not fit" in message and "read-along" not in message
    assert project.db.execute("SELECT COUNT(*) FROM runs WHERE kind = ?", [ANSWER_RUN]).fetchone()[0] == 0
